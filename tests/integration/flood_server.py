"""A language server that answers a file's opening with a flood: FLOOD `publishDiagnostics`
of it at once (one diagnostic each), as a server that republishes every file of a large
workspace after each change does (slow_server.py's `--rename DIRECTORY`: 100 files opened
or changed, 100 publishes each)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, reply, send

FLOOD = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            reply(msg_id, {"capabilities": {"textDocumentSync": 1}})
        elif method == "exit":
            return
        elif method == "textDocument/didOpen":
            uri = message["params"]["textDocument"]["uri"]
            where = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
            for i in range(FLOOD):
                send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
                    "uri": uri, "diagnostics": [{"range": where, "message": f"note {i}", "severity": 3}]}})
        elif msg_id is not None:  # shutdown, and anything else asked
            reply(msg_id, None)


if __name__ == "__main__":
    main()
