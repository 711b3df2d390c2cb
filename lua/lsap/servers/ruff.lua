-- ruff: lint, fixes, organise imports and formatting beside the type checker (code actions);
-- a group of its own, so it runs beside Python's type checker, not instead.
return {
  preference = { 2, 1 },
  package = { pip = 'ruff' },
  config = {
    cmd = { 'ruff', 'server' },
    filetypes = { 'python' },
    root_markers = { 'pyproject.toml', 'ruff.toml', '.ruff.toml', 'setup.py', 'setup.cfg', '.git' },
  },
}
