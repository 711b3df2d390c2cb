"""A language server with pull diagnostics that answers each `textDocument/diagnostic`
after DELAY seconds (argv[1]) unless it is cancelled first, which it acknowledges at once
with `RequestCancelled`, as ruff and basedpyright do. It reports one diagnostic per file,
"pulled", on the first line. For the test of a bridge request cancelled by Neovim's own
pull refresh (test_edit_reports_human.py). With `--rename`, it also renames: every whole
word of the document that is the one at the position (a server that answers its diagnostics
after an edit at once: test_edit_pending.py)."""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, reply, send

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] != "--rename" else 1.0
RENAMES = "--rename" in sys.argv
texts: dict[str, str] = {}  # per URI, as the last didOpen or didChange (full sync) sent it
REPORT = {"kind": "full", "items": [{"range": {"start": {"line": 0, "character": 0},
                                               "end": {"line": 0, "character": 1}},
                                     "severity": 2, "message": "pulled", "source": "pull"}]}
pending: dict[Any, threading.Event] = {}


def later(msg_id: Any, cancelled: threading.Event) -> None:
    if not cancelled.wait(DELAY):
        pending.pop(msg_id, None)
        reply(msg_id, REPORT)


def rename(params: dict[str, Any]) -> dict[str, Any] | None:
    """The edit renaming the word at the position, everywhere in its document."""
    uri, at = params["textDocument"]["uri"], params["position"]
    lines = texts.get(uri, "").split("\n")
    line = lines[at["line"]] if at["line"] < len(lines) else ""
    word = next((m.group(0) for m in re.finditer(r"\w+", line) if m.start() <= at["character"] <= m.end()), None)
    if word is None:
        return None
    edits = [{"range": {"start": {"line": n, "character": m.start()}, "end": {"line": n, "character": m.end()}},
              "newText": params["newName"]}
             for n, text in enumerate(lines) for m in re.finditer(rf"\b{word}\b", text)]
    return {"changes": {uri: edits}}


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            reply(msg_id, {"capabilities": {"textDocumentSync": 1, "renameProvider": RENAMES, "diagnosticProvider": {
                "interFileDependencies": False, "workspaceDiagnostics": False}}})
        elif method == "textDocument/didOpen":
            texts[params["textDocument"]["uri"]] = params["textDocument"]["text"]
        elif method == "textDocument/didChange":
            texts[params["textDocument"]["uri"]] = params["contentChanges"][-1]["text"]
        elif method == "textDocument/rename":
            reply(msg_id, rename(params))
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
