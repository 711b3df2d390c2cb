"""A deliberately slow language server: hover and references answer after SLOW_SECONDS.

It stands in for a server busy indexing, to show the editor keeps answering meanwhile.
With `--indexing` it also reports `$/progress` work that never ends, as a server does
while it indexes a large workspace. With `--rename FILE`, a rename (answered at once)
turns the first word of FILE into `renamed`, whatever was asked: an edit to approve; with
`--rename DIRECTORY`, that of every file in it (an edit of many files, a while to apply),
and the references are those words, and every file's diagnostics none.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import reply, send, serve

SLOW_SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
INDEXING = "--indexing" in sys.argv
RENAMED = Path(sys.argv[sys.argv.index("--rename") + 1]) if "--rename" in sys.argv else None


def slow(msg_id: Any, result: Any) -> None:
    time.sleep(SLOW_SECONDS)
    reply(msg_id, result)


def rename_edit() -> dict[str, Any]:
    assert RENAMED is not None
    changes = {}
    for path in sorted(RENAMED.iterdir()) if RENAMED.is_dir() else [RENAMED]:
        word = path.read_text().split()[0]
        where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": len(word)}}
        changes[path.resolve().as_uri()] = [{"range": where, "newText": "renamed"}]
    return {"changes": changes}


def answer(method: str, msg_id: Any) -> bool:
    if method == "initialized" and INDEXING:
        send({"jsonrpc": "2.0", "id": "progress", "method": "window/workDoneProgress/create",
              "params": {"token": "index"}})
        send({"jsonrpc": "2.0", "method": "$/progress", "params": {
            "token": "index", "value": {"kind": "begin", "title": "Indexing"}}})
    elif method == "textDocument/hover":
        hover = {"contents": {"kind": "markdown", "value": "slow answer"}}
        threading.Thread(target=slow, args=(msg_id, hover), daemon=True).start()
    elif method in ("textDocument/didOpen", "textDocument/didChange") and RENAMED is not None and RENAMED.is_dir():
        for uri in rename_edit()["changes"]:  # no problem anywhere: diagnostics settle at once
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                  "params": {"uri": uri, "diagnostics": []}})
    elif method == "textDocument/references" and RENAMED is not None and RENAMED.is_dir():
        reply(msg_id, [{"uri": uri, "range": edits[0]["range"]} for uri, edits in rename_edit()["changes"].items()])
    elif method == "textDocument/references":
        threading.Thread(target=slow, args=(msg_id, []), daemon=True).start()
    elif method == "textDocument/rename" and RENAMED is not None:
        reply(msg_id, rename_edit())
    elif method == "textDocument/documentSymbol":
        reply(msg_id, [])
    else:
        return False
    return True


def main() -> None:
    serve({"hoverProvider": True, "referencesProvider": True, "renameProvider": RENAMED is not None,
           "documentSymbolProvider": True, "textDocumentSync": 1}, answer)


if __name__ == "__main__":
    main()
