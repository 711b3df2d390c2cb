"""The one wait of every edit's diagnostics after (`Diagnostics.after_edit`, issue 44 item 4):
bounded by the edit's `diagnostics_wait` (else the session's), as a deadline that the push
wait, the pulls and the looks after files came or went all keep; what is not confirmed by
then is pending, with the reason."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge.diagnostics import DiagnosticMap
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.models import Wait
from lsap_bridge.session.diagnosed import PULL
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace
from tests.fakes import FakeEditor, client

HANG = 30.0  # a server that never answers in a test's time
BOUND = 10.0  # no wait below takes this long: a hang bound, 10x the longest (1 s) asked


@dataclass
class Waiting(FakeEditor):
    """A fake editor whose pulls never answer (`pulls`), and whose push waits are recorded
    with their deadlines."""

    pulls: bool = False
    deadlines: list[float | None] = field(default_factory=list)

    async def lsp(self, calls: list[LspCall], timeout: float | None = None, guard: Any = None,
                  taking: Any = None) -> list[LspAnswer]:
        if any(c.method == PULL for c in calls):
            await asyncio.sleep(HANG)
        return await super().lsp(calls, timeout, guard, taking)

    async def pushed_diagnostics(self, bufnrs: list[int], exclude_clients: list[int],
                                 after_sync: bool = False, until: float | None = None) -> dict[int, dict[str, Any]]:
        self.deadlines.append(None if until is None else until - time.monotonic())
        return await super().pushed_diagnostics(bufnrs, exclude_clients, after_sync, until)


def waited(tmp_path: Path, editor: Waiting, wait: Wait | None = None, structural: bool = False) -> DiagnosticMap:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    session = Session(editor, Workspace.of(tmp_path))

    async def run() -> DiagnosticMap:
        return await asyncio.wait_for(session.diagnostics.after_edit([path], structural, wait), BOUND)

    return asyncio.run(run())


def editor(**fields: Any) -> Waiting:
    return Waiting(lambda call: LspAnswer(None), **fields)


def test_a_pull_not_answered_within_the_wait_is_pending(tmp_path: Path) -> None:
    puller = client("ruff", frozenset({PULL}))
    found = waited(tmp_path, editor(clients=[puller], pulls=True), wait=0.2)
    [(path, reason)] = found.pending.items()
    assert path.name == "m.py"
    assert reason == "ruff did not report diagnostics (no answer within the edit's diagnostics_wait)"


def test_the_push_wait_ends_at_the_deadline_of_the_edit_s_wait_else_the_session_s(tmp_path: Path) -> None:
    asked = editor(diagnostics_wait=0.5)
    waited(tmp_path, asked, wait=0.8)
    waited(tmp_path, asked)  # the session's
    waited(tmp_path, asked, wait="settled")
    first, session, settled = asked.deadlines
    assert first is not None and 0 < first <= 0.8 and session is not None and 0 < session <= 0.5
    assert settled is None  # the look's own bounds


def test_after_files_came_or_went_diagnostics_not_held_within_the_wait_are_pending(tmp_path: Path) -> None:
    found = waited(tmp_path, editor(), wait=0.5, structural=True)
    assert found.pending and all("had not held yet after files were created or deleted (the edit waits 0.5 s"
                                 in reason for reason in found.pending.values()), found.pending
    looked = editor()
    held = waited(tmp_path, looked, wait="settled", structural=True)
    assert not held.pending and len(looked.deadlines) == 3  # two more looks, a second apart, the same
