"""ruff (`ruff server`): lints and formats Python, configured by ruff.toml or pyproject.toml."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter(names=("ruff",), config_files=("ruff.toml", ".ruff.toml", "pyproject.toml"))
