"""Work abandoned by its clients is cancelled, on the real socket over a real headless Neovim:
calls whose server requests are held (a server that answers no hover) are cancelled when
their client goes, the server hears `$/cancelRequest` for each, and the calls queued behind
them are dropped, never sent; a flood of clients that
connect, send and close at once while the service's loop is held never refuses another
client's connection, which is then answered."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection
from lsap_bridge.fair_share import Limits
from lsap_bridge.server import SocketServer
from tests.integration.harness import Bridge

from .clients import Raw, request_line, sleepy_server
from .test_abandoned import settled

pytestmark = pytest.mark.integration

HELD = Path(__file__).with_name("held_server.py")
RUNNING = Limits().in_flight  # hovers of one connection held at the server, then abandoned
QUEUED = 4  # more on the same connection, waiting behind them, then dropped
FLOOD = 400  # connections made while the loop is held: more than a default listen backlog (100)
# Hang detection only (the work takes well under a second): generous for a loaded machine.
WITHIN = 60.0


@pytest.fixture
def events(bridge: Bridge) -> Iterator[tuple[SocketServer, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    for server in sleepy_server(bridge, "abandoned-work"):
        server.on_event = seen.append
        yield server, seen


def lines(log: Path, what: str) -> int:
    return log.read_text().split().count(what) if log.exists() else 0


def until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WITHIN
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_abandoned_calls_are_cancelled_at_the_server(
        bridge: Bridge, events: tuple[SocketServer, list[dict[str, Any]]], tmp_path: Path) -> None:
    server, seen = events
    log, notes = tmp_path / "held.log", bridge.root / "held.slow"
    notes.write_text("alpha beta\n")
    client = bridge.lua(
        "local path, python, held, log, root = ...;"
        "local buf = require('lsap.transport.disk').open(path);"
        "return vim.lsp.start({name = 'held', cmd = {python, held, log}, root_dir = root}, {bufnr = buf})",
        str(notes), sys.executable, str(HELD), str(log), str(bridge.root))
    try:
        hover = {"request": {"mode": "hover", "locate": "held.slow@beta"}}
        stats = bridge.embedded.gateway.stats
        before = stats["cancelled"]
        agent = Raw(server.path)
        agent.send(b"".join(request_line(n, "request", hover) for n in range(RUNNING + QUEUED)))
        until(lambda: lines(log, "hover") == RUNNING, "the server got the hovers running")
        agent.close()
        until(lambda: lines(log, "cancel") == RUNNING, "the server heard every hover cancelled")
        counts = settled(server.path)
        assert (counts["running"], counts["queued"]) == (0, 0), counts
        done = [e for e in seen if e["phase"] == "done" and e["what"].startswith("hover")]
        assert [e["text"] for e in done] == ["cancelled: the client went away"] * RUNNING
        assert lines(log, "hover") == RUNNING  # those queued were dropped, never sent
        assert stats["cancelled"] - before == RUNNING  # as `info` counts them
        other = Raw(server.path)
        try:
            assert other.call("ping", None)["result"] == "pong"
        finally:
            other.close()
    finally:
        bridge.lua("vim.lsp.stop_client(...)", client)
        notes.unlink()


def test_a_flood_of_abandoned_connections_never_refuses_another_client(
        events: tuple[SocketServer, list[dict[str, Any]]], bridge: Bridge) -> None:
    """While the service's loop is held (a loaded machine), connections wait in the listen
    backlog: the flood's and, behind them, an agent's, which is answered once it turns."""
    server, _ = events
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait(WITHIN)

    bridge.loop.loop.call_soon_threadsafe(hold)
    held.wait(WITHIN)

    def abandon(n: int) -> bool:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(server.path))
            sock.send(request_line(n, "info", None))
        except BlockingIOError:
            return False  # refused: the backlog is full
        finally:
            sock.close()
        return True

    try:
        with ThreadPoolExecutor(8) as pool:
            accepted = sum(pool.map(abandon, range(FLOOD)))
        assert accepted == FLOOD  # none refused
        agent = Connection(str(server.path), timeout=WITHIN)  # the lsap client, as the CLI connects
    finally:
        release.set()
    try:
        assert agent.call("ping") == "pong"
    finally:
        agent.close()
    counts = settled(server.path)
    assert (counts["running"], counts["queued"]) == (0, 0), counts
