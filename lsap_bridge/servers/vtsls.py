"""vtsls (VS Code's TypeScript extension over LSP): it publishes a file's diagnostics only when
they change, so a clean file is never published; they are pulled through tsserver's own
requests instead (`servers/tsserver.py`)."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter(names=("vtsls",), config_files=("tsconfig.json", "jsconfig.json"), exclude_files=("tsconfig.json",),
                  pulls_through_tsserver=True)
