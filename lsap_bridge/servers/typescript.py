"""typescript-language-server (`ts_ls`): tsserver over LSP, configured by tsconfig.json or
jsconfig.json; its refactorings and `configure` go through `typescript.tsserverRequest`
(`actions.lsp_calls.TSSERVER`, found among the commands it announces, not by its name)."""

from __future__ import annotations

from .adapter import Adapter

ADAPTER = Adapter(names=("ts_ls", "tsserver", "typescript-language-server"),
                  config_files=("tsconfig.json", "jsconfig.json"),
                  exclude_files=("tsconfig.json",))
