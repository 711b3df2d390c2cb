"""A language server whose code actions are commands that misbehave on purpose, for the
tests of a command's edits (test_command_edits.py).

`command_server.py <outside file>`: on any file it offers one action per command below;
running one sends `workspace/applyEdit` requests back (waiting for each answer, as servers
do) and replies as the command says:
- `inside_outside`: an edit of the file, then one of `<outside file>`, then replies;
- `inside_fails`: an edit of the file, then fails the command;
- `after_reply`: replies first, then sends an edit of the file and one of `<outside file>`;
- `two_files`: an edit of the file and one of its sibling `b.fault`, then replies;
- `overwrite_b`: a rename of the sibling `c.fault` onto `b.fault`, which exists, with
  LSP's `overwrite`, then replies; `overwrite_changed_b` first writes `b.fault` itself;
- `rename_c`: a rename of `c.fault` to `d.fault`, which does not exist, then replies.
Each other edit inserts a line at the top of its file. The answers it got are written to
`<outside file>.answers` (one JSON line each), for the test to read. It publishes no
diagnostics for every file it hears of, so that reports need not wait for them.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, reply, send

OUTSIDE = Path(sys.argv[1])
COMMANDS = ["inside_outside", "inside_fails", "after_reply", "two_files", "overwrite_b",
            "overwrite_changed_b", "rename_c"]
_ids = itertools.count(1)


def insert(uri: str, text: str) -> dict[str, Any]:
    top = {"line": 0, "character": 0}
    return {"changes": {uri: [{"range": {"start": top, "end": top}, "newText": text}]}}


def apply_edit(edit: dict[str, Any]) -> Any:
    """Send an applyEdit and wait for its answer (other messages meanwhile are answered null)."""
    ident = f"srv-{next(_ids)}"
    send({"jsonrpc": "2.0", "id": ident, "method": "workspace/applyEdit", "params": {"edit": edit}})
    while (message := read()) is not None:
        if message.get("id") == ident and "method" not in message:
            result = message.get("result")
            with OUTSIDE.with_suffix(".answers").open("a") as out:
                out.write(json.dumps(result) + "\n")
            return result
        if message.get("id") is not None and "method" in message:
            reply(message["id"], None)
    sys.exit(0)


def run(name: str, uri: str, msg_id: Any) -> None:
    outside = OUTSIDE.as_uri()
    sibling = uri.rsplit("/", 1)[0] + "/b.fault"
    if name == "after_reply":
        reply(msg_id, None)
        apply_edit(insert(uri, f"# {name}\n"))
        apply_edit(insert(outside, f"# {name}\n"))
        return
    if name == "rename_c":
        folder = uri.rsplit("/", 1)[0]
        apply_edit({"documentChanges": [{"kind": "rename", "oldUri": folder + "/c.fault",
                                         "newUri": folder + "/d.fault"}]})
        reply(msg_id, None)
        return
    if name in ("overwrite_b", "overwrite_changed_b"):
        if name == "overwrite_changed_b":
            Path(sibling.removeprefix("file://")).write_text("changed = 1\n")
        folder = uri.rsplit("/", 1)[0]
        apply_edit({"documentChanges": [{"kind": "rename", "oldUri": folder + "/c.fault",
                                         "newUri": sibling, "options": {"overwrite": True}}]})
        reply(msg_id, None)
        return
    apply_edit(insert(uri, f"# {name}\n"))
    if name == "inside_outside":
        apply_edit(insert(outside, f"# {name}\n"))
    elif name == "two_files":
        apply_edit(insert(sibling, f"# {name}\n"))
    elif name == "inside_fails":
        send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32603, "message": "it broke"}})
        return
    reply(msg_id, None)


def main() -> None:
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            reply(msg_id, {"capabilities": {
                "textDocumentSync": 1, "codeActionProvider": True,
                "executeCommandProvider": {"commands": COMMANDS}}})
        elif method == "shutdown":
            reply(msg_id, None)
        elif method == "exit":
            return
        elif method in ("textDocument/didOpen", "textDocument/didChange"):
            document = params["textDocument"]  # no diagnostics, said at once (no wait for them)
            send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                  "params": {"uri": document["uri"], "version": document.get("version"),
                             "diagnostics": []}})
        elif method == "textDocument/codeAction":
            uri = params["textDocument"]["uri"]
            reply(msg_id, [{"title": f"run {name}", "kind": "quickfix",
                            "command": {"title": name, "command": name, "arguments": [uri]}}
                           for name in COMMANDS])
        elif method == "workspace/executeCommand":
            run(params["command"], params["arguments"][0], msg_id)
        elif msg_id is not None:
            reply(msg_id, None)


if __name__ == "__main__":
    main()
