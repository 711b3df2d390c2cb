"""lsap.nvim: share the language servers attached to Neovim with AI coding agents."""

__version__ = "0.1.0"
