"""Changes to the world at the two moments an edit is most exposed, for the edit tests.

- `during_approval`: while an `ask` prompt waits for the human (`edit_policy`, and the
  gateway's `edit_decision`), after the edit was planned and checked.
- `when_switching`: after every check and the journal, right before Neovim renames the
  new files into place, so that the switch itself fails part-way.

Tests run as root, for whom file modes are no obstacle to writing: an immutable flag
(`chattr +i`) makes a file really unwritable.
"""

from __future__ import annotations

import inspect
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.editor import Decision
from lsap_bridge.host import edit_policy
from lsap_bridge.server import current_client
from lsap_bridge.service import Response
from tests.integration.harness import Bridge


def chattr(flag: str, path: Path) -> None:
    result = subprocess.run(["chattr", flag, str(path)], capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"chattr {flag} is not available here: {result.stderr.strip()}")


@contextmanager
def immutable(path: Path) -> Iterator[None]:
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@contextmanager
def during_approval(bridge: Bridge, action: Callable[[], Any]) -> Iterator[list[str]]:
    """`edit_policy = 'ask'`, and `action` runs while the prompt is open (then the human
    approves; an awaitable it returns is awaited: the prompt waits in the service's loop);
    yields what the human was asked. Requests must come from an agent (`as_agent`): the
    human's own commands are never asked about."""
    gateway = bridge.embedded.gateway
    session, decide = bridge.service.session, gateway.edit_decision
    approve, asked = session.approve_edit, []

    async def human_approves_late(client: str, summary: str, preview: str,
                                  timeout: float) -> Decision:
        asked.append(f"{client}: {summary}")
        done = action()
        if inspect.isawaitable(done):
            await done
        return Decision("apply")

    session.approve_edit = edit_policy(gateway)
    gateway.edit_decision = human_approves_late  # type: ignore[method-assign]
    try:
        yield asked
    finally:
        session.approve_edit = approve
        gateway.edit_decision = decide  # type: ignore[method-assign]


def as_agent(bridge: Bridge, payload: dict[str, Any]) -> Response:
    """A request from an agent (`current_client` set, as the socket does)."""

    async def ask() -> Response:
        current_client.set("agent-7")
        return await bridge.service.handle(payload)

    return bridge.loop.run(ask())


@contextmanager
def when_switching(bridge: Bridge, action: Callable[[dict[str, Any]], None]) -> Iterator[None]:
    """`action(op)` runs for each file right before Neovim switches the files of the next
    edit (the plan's ops, see lua/lsap/edits.lua)."""
    gateway = bridge.embedded.gateway
    apply = gateway.apply_edits

    async def switch(plan: dict[str, Any]) -> dict[str, Any]:
        for op in plan["ops"]:
            action(op)
        return await apply(plan)

    gateway.apply_edits = switch  # type: ignore[method-assign]
    try:
        yield
    finally:
        gateway.apply_edits = apply  # type: ignore[method-assign]


@contextmanager
def failing_switch(bridge: Bridge, victim: Path) -> Iterator[None]:
    """The next edit's switch fails at `victim`, once every check has passed, after the
    files before it were switched, which must then go back. A file with a buffer (which
    Neovim writes) turns immutable; for another, its new content vanishes from beside it."""

    def break_victim(op: dict[str, Any]) -> None:
        if op["path"] != str(victim):
            return
        if op["steps"] is not None:
            chattr("+i", victim)
            # The flag moved the file's change time, which Neovim's check would see as a
            # write: the stamp planned is made the flagged file's, so the write itself fails.
            stat = os.stat(victim)
            op["stamp"] = {**op["stamp"], "csec": stat.st_ctime_ns // 10**9,
                           "cnsec": stat.st_ctime_ns % 10**9}
        else:
            Path(op["temp"]).unlink()

    with immutable(victim), when_switching(bridge, break_victim):
        yield
