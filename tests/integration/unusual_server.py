"""A language server offering a method none of lsap's modes names (linked editing ranges),
to show that the bridge asks Neovim about any method rather than a list of its own."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, send

RANGES = {"ranges": [{"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}]}


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"capabilities": {
                "linkedEditingRangeProvider": True, "textDocumentSync": 1}}})
        elif method == "textDocument/linkedEditingRange":
            send({"jsonrpc": "2.0", "id": msg_id, "result": RANGES})
        elif method == "shutdown":
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})
        elif method == "exit":
            return
        elif msg_id is not None:
            send({"jsonrpc": "2.0", "id": msg_id, "result": None})


if __name__ == "__main__":
    main()
