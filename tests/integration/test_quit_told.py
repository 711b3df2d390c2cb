""":qa! in the human's Neovim (a real terminal) while an agent's rename, applied already,
waits for the diagnostics after it (issue 44, item 7): the agent is told the edit was
applied, with its change id, not "send it again"; and its retry in the next session, the
anchor gone, says the request was applied already rather than a bare `not_found`."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import ClientError, Connection

from .nvim_home import wait_for
from .test_quit import Quits

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

RENAME = {"mode": "rename", "locate": "notes.ren@hello", "new_name": "renamed"}


@pytest.fixture(scope="module")
def quits(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Quits]:
    quits = Quits(tmp_path_factory.mktemp("told"))
    yield quits
    quits.term.close()


def journals_of(socket: str) -> str:
    """The session's journal directory, as its discovery file beside the socket gives it."""
    info = json.loads(Path(socket).with_suffix(".json").read_text())
    return str(info["journals"])


def ask(socket: str, answer: dict[str, Any]) -> None:
    """The agent's rename as `lsap` sends it (the session's journals known); its answer, or
    the error it got (code, message, data), fills `answer`."""
    try:
        with Connection(socket, name="claude", journals=journals_of(socket)) as conn:
            answer.update(conn.call("request", {"request": dict(RENAME)}))
    except ClientError as exc:
        answer.update(error=exc.code, message=str(exc), data=exc.data)


def test_quit_after_a_rename_landed_tells_the_agent_it_was_applied(quits: Quits) -> None:
    quits.notes.write_text("hello world\n")
    pid = quits.nvim(quits.human, "notes.ren")
    socket = quits.socket(pid)
    journals = Path(quits.human.env["XDG_STATE_HOME"]) / "nvim" / "lsap" / "journal"
    assert Path(journals_of(socket)) == journals
    answer: dict[str, Any] = {}
    agent = threading.Thread(target=ask, args=(socket, answer), daemon=True)
    agent.start()
    quits.term.wait("a apply · r refuse", 30)
    quits.term.keys(":Lsap approval", "Enter")
    quits.term.keys("a")
    # Applied: the rename now waits for diagnostics `ren` never publishes (15 s at most).
    wait_for(lambda: quits.notes.read_text().startswith("renamed") or None, 30, "the rename to land")
    quits.quit("told", pid)
    agent.join(15)
    assert not agent.is_alive(), "the agent still waits after Neovim quit"
    assert answer.get("error") == "session_gone", answer
    found = re.search(r"its edit was applied: change (\d+)", str(answer.get("message")))
    assert found is not None and "do not send the request again" in str(answer["message"]), answer
    assert answer["data"].get("applied") == [found.group(1)], answer

    # The agent sends it again, to the next session: the anchor is gone, and it is told why.
    pid = quits.nvim(quits.human, "notes.ren")
    socket = quits.socket(pid)
    try:
        with Connection(socket, name="claude") as conn:
            again = conn.call("request", {"request": dict(RENAME)})
    finally:
        quits.quit("told again", pid)
    assert not again["ok"] and again["error"]["code"] == "not_found", again
    assert f"this request was applied already, as change {found.group(1)}" in again["text"], again
