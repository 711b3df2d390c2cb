"""The socket under load and abuse, on a real headless Neovim with basedpyright: memory per
connection is bounded by the limits (not by the client), calls past the in-flight limit
wait in a bounded queue and only past it are `busy`, turns are fair across connections and
the human goes first, nothing big is read before TCP authentication, and a session that
stops says `session_gone`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import AsyncSession, ClientError, Connection, call_session
from lsap_bridge.discovery import SessionInfo
from lsap_bridge.fair_share import MIB, Limits
from lsap_bridge.mcp_server import Forwarder
from lsap_bridge.server import SocketServer
from lsap_bridge.wire import TOO_BUSY
from tests import stress
from tests.integration.harness import Bridge
from tests.integration.human import HumanNvim, register_remote_plugin

from .clients import Raw, request_line, sleepy_server
from .processes import names, rss_kb, start_daemon, tree

# The latencies are stress figures (`tests/stress.py`), not asserted here.
pytestmark = pytest.mark.integration

HOVER = {"mode": "hover", "locate": "shop/models.py:Product@class <|>Product"}


def sleeps(n: int, seconds: float, first_id: int = 0) -> bytes:
    return b"".join(request_line(first_id + i, "sleep", {"seconds": seconds}) for i in range(n))


# -- the queue ----------------------------------------------------------------------------------


@pytest.fixture
def small(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "small", Limits(in_flight=4, queue=10))


def test_calls_past_in_flight_wait_and_only_past_the_queue_are_busy(small: SocketServer) -> None:
    hog, polite = Raw(small.path), Raw(small.path)
    try:
        hog.send(sleeps(20, 1.0))
        refused = [hog.reply() for _ in range(6)]  # at once: 4 run, 10 wait, 6 are refused
        assert sorted(r["id"] for r in refused) == list(range(14, 20)), refused
        for reply in refused:
            error = reply["error"]
            assert error["code"] == TOO_BUSY and error["data"]["code"] == "busy", error
            assert 0.1 <= error["data"]["retry_after"] <= 60
            assert "10 calls waiting" in error["message"] and "send it again" in error["message"]
        assert polite.call("ping", None)["result"] == "pong"  # another client is not held back
        done = [hog.reply() for _ in range(14)]
        assert sorted(r["id"] for r in done) == list(range(14)), done
        assert all(r["result"] == "slept" for r in done)
        assert hog.call("ping", None)["result"] == "pong", "the queue empties as answers go out"
    finally:
        hog.close()
        polite.close()


def test_a_hundred_parallel_mcp_tool_calls_all_answer(bridge: Bridge, socket_server: SocketServer) -> None:
    """As `lsap mcp` forwards them: 100 tool calls at once, one connection, all answered."""
    info = SessionInfo("mcp-parallel", "editor", os.getpid(), str(socket_server.path), [str(bridge.root)])
    info.publish()
    before = set(socket_server.connections)
    forwarder = Forwarder(bridge.root, None)

    async def parallel() -> list[tuple[str, bool]]:
        return await asyncio.gather(
            *(forwarder.call("lsap_query", {"request": HOVER}) for _ in range(100)))

    try:
        results = bridge.loop.run(parallel())
        opened = set(socket_server.connections) - before
    finally:
        info.file.unlink()
        if forwarder.conn is not None:
            bridge.loop.run(forwarder.conn.close())
    assert len(results) == 100
    assert [failed for _, failed in results].count(True) == 0, [t for t, f in results if f][:2]
    assert all("Product" in text for text, _ in results)
    assert len(opened) == 1, "the tool calls share one connection, and its queue"


# -- fairness and the human ---------------------------------------------------------------------


@pytest.fixture
def narrow(bridge: Bridge) -> Iterator[tuple[SocketServer, list[float]]]:
    started: list[float] = []
    for server in sleepy_server(bridge, "narrow", Limits(in_flight=2, running=2), started):
        yield server, started


@pytest.mark.stress
def test_turns_are_fair_across_connections(narrow: tuple[SocketServer, list[float]]) -> None:
    server, started = narrow
    greedy, other = Raw(server.path), Raw(server.path)
    try:
        greedy.send(sleeps(30, 0.1))
        time.sleep(0.05)
        asked = time.monotonic()
        reply = other.call("sleep", {"seconds": 0.1}, msg_id="mine")
        waited = time.monotonic() - asked
        ran_before = len(started) - 1  # the calls started before it answered, its own aside
        assert reply["result"] == "slept"
        # Its turn comes after one of the greedy client's calls, not after all thirty: counted
        # in calls started (2 at a time; its own in the second or third pair, and the pair
        # that starts as it answers), not in seconds. Without turns it would be 30.
        assert ran_before <= 10, started
        stress.figure("another connection's call beside 30 queued", waited, at_most=0.6)
        assert [greedy.reply()["result"] for _ in range(30)] == ["slept"] * 30
    finally:
        greedy.close()
        other.close()


def test_no_agent_call_starts_while_a_human_command_runs(
    bridge: Bridge, narrow: tuple[SocketServer, list[float]]
) -> None:
    server, started = narrow
    ran: list[tuple[float, float]] = []

    async def command(_params: list[Any]) -> None:
        begin = asyncio.get_running_loop().time()
        await asyncio.sleep(1.0)
        ran.append((begin, asyncio.get_running_loop().time()))

    agent = Raw(server.path)
    try:
        agent.send(sleeps(12, 0.2))
        time.sleep(0.1)
        bridge.loop.run(server.scheduler.ahead(command)([]))
        assert [agent.reply()["result"] for _ in range(12)] == ["slept"] * 12
    finally:
        agent.close()
    (begin, end), = ran
    assert not [t for t in started if begin < t < end], (begin, end, started)
    assert len([t for t in started if t >= end]) >= 8, "the agent's calls went on afterwards"


# -- memory -------------------------------------------------------------------------------------


@pytest.fixture
def tight(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "tight", Limits(memory=1 * MIB, stall=1.5))


def test_a_client_that_stops_reading_is_no_longer_read_then_closed(
    tight: SocketServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lsap.server")
    reader = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    reader.connect(str(tight.path))
    reader.settimeout(0.2)
    schema = request_line(0, "schema", None)  # a large reply (every mode's JSON Schema)
    sent, stalled, closed_after = 0, None, None
    started = time.monotonic()
    polite = Raw(tight.path)
    try:
        while time.monotonic() - started < 20:
            try:
                reader.sendall(schema * 50)
                sent += 50
            except TimeoutError:
                stalled = stalled or time.monotonic()  # the server stopped reading from it
            except OSError:
                closed_after = time.monotonic()
                break
            assert polite.call("ping", None)["result"] == "pong"
    finally:
        reader.close()
        polite.close()
    assert stalled is not None and closed_after is not None, (sent, stalled, closed_after)
    assert 0.3 < closed_after - stalled < 8
    logged = [r.getMessage() for r in caplog.records if "closed the connection" in r.getMessage()]
    assert logged and "unread for 1.5 s" in logged[0], logged


@pytest.mark.slow
@pytest.mark.stress
def test_a_client_that_never_reads_leaves_the_host_bounded_and_others_served(
    shop: Path, reap: set[int]
) -> None:
    """100,000 requests from a client that reads nothing, against the embedded daemon."""
    process, info = start_daemon(shop, reap)
    reap.update(tree(process.pid))
    probe = Connection(info.socket, timeout=30, name="probe")
    assert probe.call("request", HOVER)["ok"]
    base = peak = rss_kb(process.pid)
    flood = b"".join(request_line(i, "request", {"request": HOVER}) for i in range(100_000))
    flooder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    flooder.connect(info.socket)
    flooder.settimeout(0.2)
    sent, stop = [0], threading.Event()

    def write() -> None:
        while sent[0] < len(flood) and not stop.is_set():
            try:
                sent[0] += flooder.send(flood[sent[0]:sent[0] + (1 << 16)])
            except TimeoutError:
                continue
            except OSError:
                return

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    latencies: list[float] = []
    until = time.monotonic() + 20
    try:
        while time.monotonic() < until:
            for method, params in (("info", None), ("request", {"request": HOVER})):
                asked = time.monotonic()
                answer = probe.call(method, params)
                latencies.append(time.monotonic() - asked)
                assert method == "info" or answer["ok"], answer
            peak = max(peak, rss_kb(process.pid))
            time.sleep(0.2)
        held_back = sent[0] < len(flood)
    finally:
        stop.set()
        flooder.close()
        writer.join(5)
    asked = time.monotonic()
    assert probe.call("request", {"request": HOVER})["ok"]
    after = time.monotonic() - asked
    probe.close()
    report = (f"host RSS {base // 1024} -> peak {peak // 1024} MB; flooder sent "
              f"{sent[0] * 100 // len(flood)} % of its requests; probe max "
              f"{max(latencies) * 1000:.0f} ms, after {after * 1000:.0f} ms")
    print("\nFLOOD:", report)
    assert held_back, report
    assert peak - base < 50 * 1024, report
    stress.figure("a probe's call beside 100,000 unread requests, the slowest", max(latencies), at_most=1.0)
    stress.figure("a probe's hover after the flood", after, at_most=1.0)


# -- TCP before authentication ------------------------------------------------------------------


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return register_remote_plugin(tmp_path_factory.mktemp("rplugin"))


def host_pid(editor: HumanNvim) -> int:
    """The remote-plugin host serving the socket: Neovim's Python child."""
    found = [pid for pid in tree(editor.process.pid)  # whole command lines: `names` cuts them
             if b"neovim.start" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(found) == 1, names(tree(editor.process.pid))
    return found[0]


@pytest.mark.slow
@pytest.mark.stress
def test_unauthenticated_tcp_floods_hold_nothing(env: dict[str, str], shop: Path, reap: set[int]) -> None:
    editor = HumanNvim(shop, env, ["basedpyright"], {"tcp": "127.0.0.1:0", "agent_limits": {"queue": 300}})
    reap.add(editor.process.pid)
    try:
        host, port = editor.session.tcp.rsplit(":", 1)
        address = (host, int(port))
        client = socket.create_connection(address, timeout=30)
        lines = client.makefile("rb")

        def call(msg_id: int, method: str, params: Any) -> Any:
            client.sendall(request_line(msg_id, method, params))
            reply = json.loads(lines.readline())
            assert "result" in reply, reply
            return reply["result"]

        assert call(0, "auth", {"token": editor.session.token})["ok"]
        assert call(1, "info", None)["limits"]["queue"] == 300  # setup()'s agent_limits
        assert call(2, "request", {"request": HOVER})["ok"]
        pid = host_pid(editor)
        base = peak = rss_kb(pid)
        stop = threading.Event()
        connections = [0]

        def attack() -> None:  # an endless line, again and again
            chunk = b"{" + b"x" * (1 << 16)
            while not stop.is_set():
                try:
                    with socket.create_connection(address, timeout=2) as conn:
                        connections[0] += 1
                        while not stop.is_set():
                            conn.sendall(chunk)
                except OSError:
                    time.sleep(0.05)

        attackers = [threading.Thread(target=attack, daemon=True) for _ in range(60)]
        for attacker in attackers:
            attacker.start()
        latencies = []
        until = time.monotonic() + 10
        n = 3
        while time.monotonic() < until:
            asked = time.monotonic()
            assert call(n, "request", {"request": HOVER})["ok"]
            latencies.append(time.monotonic() - asked)
            peak = max(peak, rss_kb(pid))
            n += 1
            time.sleep(0.1)
        stop.set()
        for attacker in attackers:
            attacker.join(5)
        time.sleep(1)
        end = rss_kb(pid)
        report = (f"host RSS {base // 1024} -> peak {peak // 1024} -> {end // 1024} MB over "
                  f"{connections[0]} connections; hover max {max(latencies) * 1000:.0f} ms")
        print("\nTCP:", report)
        assert connections[0] >= 60, report
        assert peak - base < 8 * 1024 and end - base < 4 * 1024, report
        stress.figure("a hover beside 60 unauthenticated TCP floods, the slowest", max(latencies), at_most=1.0)
        # a connection that sends anything but `auth` first is answered and closed
        with socket.create_connection(address, timeout=10) as rude:
            rude.sendall(request_line(1, "ping", None))
            replies = rude.makefile("rb")
            refused = json.loads(replies.readline())["error"]
            assert refused["data"]["code"] == "denied" and "auth" in refused["message"]
            assert replies.readline() == b""
        client.close()
    finally:
        editor.close()


# -- the session going away ---------------------------------------------------------------------


@pytest.fixture
def single(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "single", Limits(in_flight=1))


def test_a_stopping_session_answers_session_gone(bridge: Bridge, single: SocketServer) -> None:
    client = Raw(single.path)
    try:
        client.send(sleeps(3, 30))
        time.sleep(0.3)
        bridge.loop.run(single.close("the test stopped it"))
        replies = sorted((client.reply() for _ in range(3)), key=lambda r: r["id"])
    finally:
        client.close()
    assert [r["error"]["data"] for r in replies] == [
        {"code": "session_gone", "started": True, "applied": []},
        {"code": "session_gone", "started": False, "applied": []},
        {"code": "session_gone", "started": False, "applied": []},
    ]
    assert "the test stopped it" in replies[1]["error"]["message"]
    assert "send it again" in replies[1]["error"]["message"]


def dead_session(tmp_path: Path) -> SessionInfo:
    """A session whose socket nobody listens on any more."""
    dead = tmp_path / "dead.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(dead))
    listener.close()
    return SessionInfo("dead", "daemon", 0, str(dead), ["/"])


def test_a_call_is_sent_again_when_its_session_went_away_before_running_it(
    small: SocketServer, tmp_path: Path
) -> None:
    dead = dead_session(tmp_path)
    live = SessionInfo("live", "daemon", 0, str(small.path), ["/"])
    found = iter([dead, live])
    assert call_session(lambda: next(found), "ping", None) == "pong"
    # sent once more only: gone again, the error is the caller's
    found = iter([dead] * 2)
    with pytest.raises(ClientError) as refused:
        call_session(lambda: next(found), "ping", None)
    assert refused.value.code == "session_gone"


def test_an_asyncio_call_is_sent_again_when_its_session_went_away_before_running_it(
    small: SocketServer, tmp_path: Path
) -> None:
    """`lsap mcp`'s side of the same rule: the shared connection is found anew, once."""
    dead = dead_session(tmp_path)
    live = SessionInfo("live", "daemon", 0, str(small.path), ["/"])

    async def ping(found: Iterator[SessionInfo]) -> Any:
        session = AsyncSession(lambda: next(found))
        try:
            return await session.send("ping")
        finally:
            await session.close()

    assert asyncio.run(ping(iter([dead, live]))) == "pong"
    with pytest.raises(ClientError) as refused:
        asyncio.run(ping(iter([dead] * 2)))
    assert refused.value.code == "session_gone"


# -- options ------------------------------------------------------------------------------------


def test_agent_limits_in_setup_are_checked_and_match_the_service(bridge: Bridge) -> None:
    defaults = bridge.lua("return require('lsap').defaults.agent_limits")
    assert Limits.of(defaults) == Limits()
    error = bridge.lua("local ok, err = pcall(require('lsap').setup, {agent_limits = {queue = 0}});"
                       " return err")
    assert error == '(lsap) option "agent_limits.queue" must be a whole number >= 1, got 0'
