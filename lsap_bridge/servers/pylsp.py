"""pylsp: its plugins (pycodestyle, flake8) read setup.cfg and pyproject.toml. Its (jedi's)
renames replace whole files: the edit engine narrows any such edit (`edits/text.py`), so the quirk
needs no declaration here."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter(names=("pylsp",), config_files=("pyproject.toml", "setup.cfg"))
