"""A deliberately slow language server: hover answers after SLOW_SECONDS.

It stands in for a server busy indexing, to show the editor keeps answering meanwhile.
With `--indexing` it also reports `$/progress` work that never ends, as a server does
while it indexes a large workspace.
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


def slow_hover(msg_id: Any) -> None:
    time.sleep(SLOW_SECONDS)
    reply(msg_id, {"contents": {"kind": "markdown", "value": "slow answer"}})


def answer(method: str, msg_id: Any) -> bool:
    if method == "initialized" and INDEXING:
        send({"jsonrpc": "2.0", "id": "progress", "method": "window/workDoneProgress/create",
              "params": {"token": "index"}})
        send({"jsonrpc": "2.0", "method": "$/progress", "params": {
            "token": "index", "value": {"kind": "begin", "title": "Indexing"}}})
    elif method == "textDocument/hover":
        threading.Thread(target=slow_hover, args=(msg_id,), daemon=True).start()
    elif method == "textDocument/documentSymbol":
        reply(msg_id, [])
    else:
        return False
    return True


def main() -> None:
    serve({"hoverProvider": True, "documentSymbolProvider": True, "textDocumentSync": 1}, answer)


if __name__ == "__main__":
    main()
