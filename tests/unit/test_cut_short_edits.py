"""Told what happened (issue 44, item 7): a rename whose call is cut short by Neovim going
away after the journal committed its edit says that the edit was applied, with its change
(`surface.APPLIED`, `edits.Completed`), instead of "send it again"; the change set is kept;
a retry of that very rename says it was applied already rather than a bare `not_found`;
the socket's `session_gone` for a call cut off after its edit names the change too, and so
does a client whose session died before answering (from the change sets on disk)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from lsap_bridge import changes
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.client import cut_off
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pipeline import Response, answer
from lsap_bridge.server import SocketServer
from lsap_bridge.session.warm import Session
from lsap_bridge.surface import APPLIED
from lsap_bridge.workspace import Workspace
from tests.fakes import FakeEditor, client

NAME = {"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 13}}
USE = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 7}}
METHODS = frozenset({"textDocument/documentSymbol", "textDocument/rename", "textDocument/references",
                     "textDocument/diagnostic"})
RENAME = {"mode": "rename", "locate": "m.py:Product", "new_name": "Item"}


class QuittingEditor(FakeEditor):
    """Neovim that commits the journal, switches the files and quits before it answers."""

    async def apply_edits(self, plan: dict[str, Any]) -> dict[str, Any]:
        Path(plan["marker"]).touch()  # committed: from here on the edit completes
        raise LsapError(ErrorCode.SESSION_GONE, "Neovim is gone: the connection closed")


class SwitchingEditor(FakeEditor):
    """Neovim that switches the files and answers."""

    async def apply_edits(self, plan: dict[str, Any]) -> dict[str, Any]:
        Path(plan["marker"]).touch()
        for op in plan["ops"]:
            os.rename(op["temp"], op["path"])
        return {"ok": True}


def quitting_session(root: Path, editor: type[FakeEditor] = QuittingEditor) -> Session:
    """m.py holds a class and a use of it; `editor` applies the rename (by default: quits)."""
    path = root / "m.py"
    path.write_text("class Product:\n    pass\nProduct()\n")

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            whole = {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 8}}
            name = path.read_text().split()[1].rstrip(":")  # the class as the file names it now
            return LspAnswer([{"name": name, "kind": 5, "range": whole, "selectionRange": NAME}])
        if call.method == "textDocument/references":
            return LspAnswer([{"uri": path.as_uri(), "range": r} for r in (NAME, USE)])
        if call.method == "textDocument/rename":
            new = call.params["newName"]
            return LspAnswer({"changes": {path.as_uri(): [{"range": NAME, "newText": new},
                                                          {"range": USE, "newText": new}]}})
        if "Item" in path.read_text():  # after the rename: not analysed again in time
            return LspAnswer(error={"code": -32801, "message": "content modified"})
        return LspAnswer({"kind": "full", "items": []})

    return Session(editor(answer, clients=[client("basedpyright", METHODS)]), Workspace.of(root))


def rename(session: Session) -> tuple[Response, list[str]]:
    """The rename as the socket runs it: its call's list of applied changes set first."""
    assert "rename" in REGISTRY

    async def run() -> tuple[Response, list[str]]:
        applied: list[str] = []
        APPLIED.set(applied)
        return await answer(session, dict(RENAME), "cli"), applied

    return asyncio.run(run())


def test_a_rename_cut_short_after_its_journal_committed_says_it_was_applied(tmp_path: Path) -> None:
    session = quitting_session(tmp_path)
    response, applied = rename(session)
    assert (tmp_path / "m.py").read_text() == "class Item:\n    pass\nItem()\n"  # completed
    assert response.error is not None and response.error.code == ErrorCode.SESSION_GONE
    [change] = applied
    assert f"its edit was applied: change {change}" in response.error.message
    assert "applied already" not in response.error.message  # this call's own change
    assert str(response.error.hint).startswith("do not send the request again")
    editor = session.gateway
    assert isinstance(editor, FakeEditor) and editor.journals is not None
    kept = changes.find(Path(editor.journals.name), session.workspace, change)
    assert kept is not None and kept.files[0].after == ["class Item:", "    pass", "Item()"]
    # Sent again: its anchor is gone, and the answer says why.
    again, _ = rename(session)
    assert again.error is not None and again.error.code == ErrorCode.NOT_FOUND
    assert again.error.message.startswith(f"this request was applied already, as change {change} at ")
    assert f"lsap undo {change}" in str(again.error.hint)


class ApplyingService:
    """An edit request that applies its change 7 (as the edit engine notes it), then waits
    for the diagnostics after it; any other request waits before it applies anything."""

    async def handle(self, payload: Any) -> Response:
        applied = APPLIED.get()
        if payload.get("applies") and applied is not None:
            applied.append("7")
        await asyncio.sleep(30)
        return Response("never")


def test_the_session_gone_answer_names_the_change_a_call_applied(tmp_path: Path) -> None:
    """The session stops (its Neovim exited) while two calls run: the one that had applied
    its edit is told so, with the change, the other that it may be sent again."""

    async def main() -> list[dict[str, Any]]:
        server = SocketServer(ApplyingService(), tmp_path / "s.sock")  # type: ignore[arg-type]
        await server.start()
        replies = []
        for applies in (True, False):
            reader, writer = await asyncio.open_unix_connection(str(server.path))
            writer.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "request",
                                     "params": {"request": {"applies": applies}}}).encode() + b"\n")
            await writer.drain()
            replies.append((reader, writer))
        await asyncio.sleep(0.2)
        await server.close("its Neovim exited")
        out = [json.loads(await reader.readline())["error"] for reader, _ in replies]
        for _, writer in replies:
            writer.close()
        return out

    applied, not_applied = asyncio.run(main())
    assert applied["data"] == {"code": "session_gone", "started": True, "applied": ["7"]}
    assert "its edit was applied: change 7" in applied["message"]
    assert "do not send the request again" in applied["message"]
    assert not_applied["data"] == {"code": "session_gone", "started": True, "applied": []}
    assert "before it applied any edit; send it again" in not_applied["message"]


def test_a_client_cut_off_reads_what_its_call_applied(tmp_path: Path) -> None:
    """The session died before answering (its process gone): the change sets it published
    the directory of (`SessionInfo.journals`) say what this client's call applied."""
    for who, when in (("claude", 10.0), ("claude", 20.0), ("other", 21.0), ("claude", 22.0)):
        changes._new(tmp_path, changes.ChangeSet("", who, when, "rename", None, []))
    error = cut_off(str(tmp_path), "claude", 15.0)  # the call was sent at 15
    assert error.code == "session_gone" and error.data == {"started": True, "applied": ["2", "4"]}
    assert "its edit was applied: change 2, 4" in str(error) and "do not send the request again" in str(error)
    assert cut_off("", "claude", 15.0).data == {"started": True}  # no journals known: as before


def test_diagnostics_after_an_edit_say_first_what_was_not_compared(tmp_path: Path) -> None:
    session = quitting_session(tmp_path, SwitchingEditor)
    response, _ = rename(session)
    assert response.ok and response.status == "incomplete", response.text
    after = response.text.split("### Diagnostics after the rename\n\n")[1]
    assert after.startswith("1 file not compared yet: m.py (basedpyright did not report diagnostics")
    assert "`lsap check` compares it (the rename is applied: do not send it again)." in after
    assert "No new diagnostics in the changed" not in after
    # The headline says first that the rename is applied, and what was not compared.
    head = response.text.splitlines()[0]
    assert head == "# Rename: `Product` → `Item`: applied; 1 file not compared yet (`lsap check` compares it)"
