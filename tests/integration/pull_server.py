"""A language server with pull diagnostics that answers each `textDocument/diagnostic`
after DELAY seconds (argv[1]) unless it is cancelled first, which it acknowledges at once
with `RequestCancelled`, as ruff and basedpyright do. It reports one diagnostic per file,
"pulled", on the first line. For the test of a bridge request cancelled by Neovim's own
pull refresh (test_edit_reports_human.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, reply, send

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
REPORT = {"kind": "full", "items": [{"range": {"start": {"line": 0, "character": 0},
                                               "end": {"line": 0, "character": 1}},
                                     "severity": 2, "message": "pulled", "source": "pull"}]}
pending: dict[Any, threading.Event] = {}


def later(msg_id: Any, cancelled: threading.Event) -> None:
    if not cancelled.wait(DELAY):
        pending.pop(msg_id, None)
        reply(msg_id, REPORT)


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            reply(msg_id, {"capabilities": {"textDocumentSync": 1, "diagnosticProvider": {
                "interFileDependencies": False, "workspaceDiagnostics": False}}})
        elif method == "exit":
            return
        elif method == "textDocument/diagnostic":
            pending[msg_id] = threading.Event()
            threading.Thread(target=later, args=(msg_id, pending[msg_id]), daemon=True).start()
        elif method == "$/cancelRequest":
            cancelled = pending.pop((message.get("params") or {}).get("id"), None)
            if cancelled is not None:
                cancelled.set()
                send({"jsonrpc": "2.0", "id": message["params"]["id"],
                      "error": {"code": -32800, "message": "cancelled"}})
        elif msg_id is not None:
            reply(msg_id, None)


if __name__ == "__main__":
    main()
