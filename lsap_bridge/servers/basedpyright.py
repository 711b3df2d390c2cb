"""basedpyright and pyright: they read their excludes from pyrightconfig.json or pyproject.toml."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter(
    names=("basedpyright", "pyright"),
    config_files=("pyrightconfig.json", "pyproject.toml"),
    exclude_files=("pyrightconfig.json",),
    exclude_tools=("pyright", "basedpyright"),
    short_while_working=False,
)
