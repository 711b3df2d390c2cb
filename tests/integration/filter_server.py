"""A real language server behind a filter that drops part of its renames.

`filter_server.py <server command…>` runs the server and passes every message through,
except the answers to `textDocument/rename`: of those only the edits of the document the
rename was asked about are kept. That is the shape of a rename that misses uses in other
files (basedpyright once answered 1 edit where `references` found 5 uses in 2 files), for
the bridge's guard rail to catch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import relay, send


def only(uri: str, edit: Any) -> Any:
    """The WorkspaceEdit's changes of `uri` alone."""
    if not isinstance(edit, dict):
        return edit
    kept = dict(edit)
    if edit.get("changes"):
        kept["changes"] = {u: e for u, e in edit["changes"].items() if u == uri}
    if edit.get("documentChanges"):
        kept["documentChanges"] = [c for c in edit["documentChanges"]
                                   if (c.get("textDocument") or {}).get("uri") == uri]
    return kept


def main() -> None:
    renames: dict[Any, str] = {}  # request id -> the document asked about

    def asked(message: dict[str, Any]) -> None:
        if message.get("method") == "textDocument/rename":
            renames[message["id"]] = message["params"]["textDocument"]["uri"]

    def answered(message: dict[str, Any]) -> None:
        uri = renames.pop(message.get("id"), None) if "method" not in message else None
        if uri is not None and "result" in message:
            message["result"] = only(uri, message["result"])
        send(message)

    relay(sys.argv[1:], answered, asked)


if __name__ == "__main__":
    main()
