"""A language server that misbehaves on purpose, for fault injection.

`fault_server.py <pid file> <hover behaviour>`; the behaviour of hover (and of the other
requests) is read per request from `<pid file>.mode` when that file exists, so a test can
change it while the server runs:
- `ok`: answer normally;
- `indexing`: report work in progress ("Indexing", `$/progress`) and never answer (the
  work ends with the next answer);
- `hang`: never answer (a server stuck in a loop);
- `exit`: die at once without answering (a crash mid-request);
- `garbage`: answer with results of the wrong shape;
- `busy`: compute forever, reading nothing more (so `shutdown`, `exit` and the end of its
  stdin go unseen) and ignoring SIGTERM: only SIGKILL ends it.
The server writes its pid to the pid file, so a test can also SIGKILL it.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, send

PID_FILE = Path(sys.argv[1])
DEFAULT_MODE = sys.argv[2] if len(sys.argv) > 2 else "ok"
SPAN = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}
GARBAGE: dict[str, Any] = {
    "textDocument/hover": {"contents": 42, "range": "everywhere"},
    "textDocument/definition": [{"uri": 7, "range": None}, "not a location", {"targetUri": []}],
    "textDocument/references": [
        {"uri": "file:///nowhere.x", "range": {"start": "a", "end": {}}},
        5,
    ],
    "textDocument/documentSymbol": [{"name": None, "kind": "class", "range": 3}, None, "x"],
}

def mode() -> str:
    override = PID_FILE.with_suffix(".mode")
    return override.read_text().strip() if override.exists() else DEFAULT_MODE


def good(method: str, params: dict[str, Any]) -> Any:
    uri = params.get("textDocument", {}).get("uri")
    if method == "textDocument/hover":
        return {"contents": {"kind": "markdown", "value": "fine answer"}}
    if method in ("textDocument/definition", "textDocument/references"):
        return [{"uri": uri, "range": SPAN}]
    if method == "textDocument/documentSymbol":
        return []
    return None


def progress(value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "index", "value": value}})


def main() -> None:
    PID_FILE.write_text(str(os.getpid()))
    indexing = False  # work in progress reported and not ended
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg_id,
                    "result": {
                        "capabilities": {
                            "hoverProvider": True,
                            "definitionProvider": True,
                            "referencesProvider": True,
                            "documentSymbolProvider": True,
                            "textDocumentSync": 1,
                        }
                    },
                }
            )
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        elif method == "exit":
            return
        elif msg_id is not None and method in GARBAGE:
            behaviour = mode()
            if behaviour == "indexing":
                if not indexing:
                    progress({"kind": "begin", "title": "Indexing", "percentage": 40})
                    indexing = True
                continue
            if indexing:
                progress({"kind": "end"})
                indexing = False
            if behaviour == "hang":
                continue
            if behaviour == "exit":
                os._exit(3)
            if behaviour == "busy":
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                while True:
                    sum(range(10_000))
            result = (
                GARBAGE[method]
                if behaviour == "garbage"
                else good(method, message.get("params", {}))
            )
            send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        elif msg_id is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})


if __name__ == "__main__":
    main()
