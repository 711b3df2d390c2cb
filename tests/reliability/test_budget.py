"""Agents' connections bounded together, on the real socket over a real headless Neovim (and
the embedded daemon for the service's own memory): past the total, the clients that leave
their replies unread are closed first and new calls are `busy`; idle or junk TCP
connections that never authenticate cannot keep the owner out."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection
from lsap_bridge.fair_share import MIB, Limits
from lsap_bridge.server import SocketServer
from lsap_bridge.wire import TOO_BUSY
from tests import stress
from tests.conftest import EXAMPLE
from tests.integration.harness import Bridge

from .clients import Raw, request_line, sleepy_server
from .processes import rss_kb, schedstat, start_daemon, tree

# The latencies of milliseconds are stress figures (`tests/stress.py`), not asserted here.
pytestmark = pytest.mark.integration

HOVER = {"mode": "hover", "locate": "shop/models.py:Product@class <|>Product"}
SCHEMA = request_line(0, "schema", None)  # a large reply: every mode's JSON Schema, ~50 KB


def never_reads(path: str | Path, stop: threading.Event, sent: list[int]) -> None:
    """A client that asks for large replies as fast as it may and reads none of them."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(str(path))
    sock.settimeout(0.2)
    try:
        while not stop.is_set():
            try:
                sock.sendall(SCHEMA * 20)
                sent[0] += 20
            except TimeoutError:
                continue  # the service stopped reading from it
            except OSError:
                return  # closed by the service
    finally:
        sock.close()


@pytest.fixture
def tight(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "total", Limits(memory=4 * MIB, total=MIB // 2, stall=60))


def test_past_the_total_the_clients_that_do_not_read_are_closed_first(
    tight: SocketServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lsap.server")
    stop, sent = threading.Event(), [0]
    floods = [threading.Thread(target=never_reads, args=(tight.path, stop, sent)) for _ in range(8)]
    for flood in floods:
        flood.start()
    polite = Raw(tight.path)
    peak = 0.0
    try:
        until = time.monotonic() + 6
        while time.monotonic() < until:
            assert polite.call("ping", None)["result"] == "pong"
            counts = polite.call("info", None)["result"]["scheduler"]
            peak = max(peak, counts["memory_mib"])
            time.sleep(0.05)
    finally:
        stop.set()
        for flood in floods:
            flood.join(10)
        polite.close()
    closed = [r.getMessage() for r in caplog.records if "together held more than 0.5 MiB" in r.getMessage()]
    assert closed, [r.getMessage() for r in caplog.records][:3]
    # within the total, give or take the replies written after the last check (one each)
    assert peak <= 0.5 + 0.5, peak


@pytest.fixture
def small_total(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "small-total", Limits(total=4 * MIB))


def test_past_the_total_a_new_call_is_busy_with_a_retry_hint(small_total: SocketServer) -> None:
    """Calls read and not answered count too: one client, no unread replies to drop."""
    client = Raw(small_total.path)
    padding = "x" * (512 * 1024)
    try:
        client.send(b"".join(request_line(i, "sleep", {"seconds": 1, "pad": padding}) for i in range(20)))
        replies = [client.reply() for _ in range(20)]
    finally:
        client.close()
    busy = [r for r in replies if "error" in r]
    assert [r["result"] for r in replies[len(busy):]] == ["slept"] * (20 - len(busy))
    assert 8 <= len(busy) <= 13, [r["id"] for r in busy]  # past 4 MiB of 0.5 MiB calls
    error = busy[0]["error"]
    assert error["code"] == TOO_BUSY and error["data"]["code"] == "busy", error
    assert "4 MiB (`agent_limits.total_mib`)" in error["message"], error
    assert 0.5 <= error["data"]["retry_after"] <= 60


FLOOD = ("import sys, threading, time; from tests.reliability.test_budget import never_reads; "
         "stop, sent = threading.Event(), [0]; "
         "floods = [threading.Thread(target=never_reads, args=(sys.argv[1], stop, sent), daemon=True)"
         " for _ in range(int(sys.argv[2]))]; "
         "[f.start() for f in floods]; time.sleep(float(sys.argv[3])); stop.set(); print(sent[0])")
FLOOD_BOUND = 0.1  # seconds: the bound on a hover while the 50 flood the service


@dataclass(frozen=True)
class Hover:
    """One tick of the probe: the flooded daemon's hover, and the control's asked beside it."""

    at: float  # seconds since the phase began
    took: float  # the flooded daemon's hover, from asking to its answer
    ran: float  # its loop on a CPU meanwhile: its own work, the flood's included
    waited: float  # its loop runnable but waiting for a CPU: the machine's load
    control: float  # the control's hover, in the same tick
    control_ran: float  # the control's loop on a CPU meanwhile: a hover's own work, now

    @property
    def off(self) -> float:
        """The hover's seconds with the loop neither running nor waiting to: waiting for its
        Neovim's answer (as the control's hover does all along), or blocked."""
        return self.took - self.ran - self.waited

    def __str__(self) -> str:
        return (f"{self.took * 1000:.0f} ms at {self.at:.1f} s (loop ran {self.ran * 1000:.0f}, "
                f"waited for a CPU {self.waited * 1000:.0f}; control {self.control * 1000:.0f})")


@pytest.mark.slow
@pytest.mark.stress
def test_fifty_clients_that_never_read_keep_the_service_within_its_total(
    shop: Path, tmp_path: Path, reap: set[int]
) -> None:
    """The embedded daemon, default limits (150 MiB over all connections); the 50 clients in
    a process of their own, so that their threads do not slow the probe's. A normal client's
    hover stays under FLOOD_BOUND from the 50's first connection on (their burst included),
    counted without the time its daemon's loop waited for a CPU (the kernel's count: what a
    loaded machine adds, seen at load 8 as a hover of 481 ms beside the control's 9 ms), and
    give or take a control: a second daemon over a copy of the project that no flood
    reaches, asked by the same probe in the same 0.1 s tick, so that its hovers meet the same
    machine (the other tests, the 50's own CPU) at the same moments. Both figures are
    measured in this run: nothing here assumes the machine to itself."""
    process, info = start_daemon(shop, reap)
    reap.update(tree(process.pid))
    control_root = tmp_path / "control" / "shop"
    shutil.copytree(EXAMPLE, control_root)
    control_process, control_info = start_daemon(control_root, reap)
    reap.update(tree(control_process.pid))
    probe = Connection(info.socket, timeout=30, name="probe")
    control = Connection(control_info.socket, timeout=30, name="probe")
    assert probe.call("request", HOVER)["ok"]
    assert control.call("request", HOVER)["ok"]
    base = peak = rss_kb(process.pid)

    def hover(conn: Connection) -> float:
        asked = time.monotonic()
        assert conn.call("request", HOVER)["ok"]
        return time.monotonic() - asked

    def timed(conn: Connection, pid: int) -> tuple[float, float, float]:
        """A hover's seconds, and its daemon's loop's on a CPU and waiting for one meanwhile."""
        before = schedstat(pid)
        took = hover(conn)
        after = schedstat(pid)
        assert before is not None and after is not None, f"the daemon {pid} is gone"
        return took, after[0] - before[0], after[1] - before[1]

    def hovers(seconds: float) -> list[Hover]:
        """A tick each 0.1 s (the two hovers one after the other, which first alternating);
        the peak RSS meanwhile."""
        nonlocal peak
        out: list[Hover] = []
        since = time.monotonic()
        until = since + seconds
        while time.monotonic() < until:
            at = time.monotonic() - since
            if len(out) % 2:
                controlled, control_ran, _ = timed(control, control_process.pid)
                took, ran, waited = timed(probe, process.pid)
            else:
                took, ran, waited = timed(probe, process.pid)
                controlled, control_ran, _ = timed(control, control_process.pid)
            out.append(Hover(at, took, ran, waited, controlled, control_ran))
            peak = max(peak, rss_kb(process.pid))
            time.sleep(0.1)
        return out

    idle = hovers(3.0)  # before the flood: the machine's own noise, for the report
    flood = subprocess.Popen([sys.executable, "-c", FLOOD, info.socket, "50", "20"],
                             stdout=subprocess.PIPE, cwd=Path(__file__).parents[2])
    reap.add(flood.pid)
    try:
        ticks = hovers(18)
        counts = probe.call("info", None)["scheduler"]
        sent = int(flood.communicate(timeout=30)[0] or 0)
    finally:
        flood.kill()
        probe.close()
        control.close()

    def ms(seconds: list[float]) -> str:
        ordered = sorted(seconds)
        return (f"max {ordered[-1] * 1000:.0f}, then {ordered[-2] * 1000:.0f}, "
                f"median {statistics.median(ordered) * 1000:.0f} ms")

    net = sorted(t.took - t.waited for t in ticks)
    controls = sorted(t.control for t in ticks)
    report = (f"daemon RSS {base // 1024} -> peak {peak // 1024} MB (+{(peak - base) // 1024}); "
              f"{sent} schema calls sent; {counts['connections']} connections holding "
              f"{counts['memory_mib']} MiB; {len(ticks)} hovers in the flood: "
              f"{ms([t.took for t in ticks])}, less its loop's wait for a CPU {ms(net)}; the loop ran "
              f"{ms([t.ran for t in ticks])}, waited {ms([t.waited for t in ticks])}, neither "
              f"{ms([t.off for t in ticks])}; the control's hovers {ms(controls)}, "
              f"its loop ran {ms([t.control_ran for t in ticks])}; "
              f"before the flood: {ms([t.took for t in idle])}, its loop ran {ms([t.ran for t in idle])}, "
              f"the control's {ms([t.control for t in idle])}; the slowest: "
              + "; ".join(str(t) for t in sorted(ticks, key=lambda t: -t.took)[:4]))
    print("\nTOTAL:", report)
    assert counts["connections"] == 51, report  # all 50 still there: none was read to death
    assert peak - base <= 150 * 1024, report
    # The bound, 100 ms, on each hover less what its loop waited for a CPU (the
    # kernel's count of the machine's load, not the service's doing), past the control's
    # hover over the same seconds (its Neovim's answer, under the same load). Before the fix
    # the burst made every mode's schema on the loop (0.3-0.5 s held) and wrote thousands of
    # refusals and large replies; several hovers took over 100 ms (0.38, 0.17, 0.12 s). One
    # tick may meet a hiccup that the control, a moment apart, missed: the slowest has only
    # a looser bound.
    stress.figure("a hover in the flood, the second slowest past the control's", net[-2] - controls[-2],
                  at_most=FLOOD_BOUND, detail=report)
    stress.figure("a hover in the flood, the slowest past the control's", net[-1] - controls[-1],
                  at_most=2.5 * FLOOD_BOUND, detail=report)


# -- TCP before authentication ------------------------------------------------------------------


@pytest.fixture
def tcp(bridge: Bridge) -> Iterator[tuple[SocketServer, tuple[str, int]]]:
    path = Path(os.environ["XDG_RUNTIME_DIR"]) / "tcp-auth.sock"
    server = SocketServer(bridge.service, path)
    bridge.loop.run(server.start())
    bridge.loop.run(server.start_tcp())
    assert server.tcp_address is not None
    yield server, server.tcp_address
    bridge.loop.run(server.close())


def authenticate(address: tuple[str, int], token: str) -> tuple[float, Any]:
    """Seconds from connecting to the `auth` answer, and what `info` says after."""
    asked = time.monotonic()
    with socket.create_connection(address, timeout=5) as owner:
        lines = owner.makefile("rb")
        owner.sendall(request_line(0, "auth", {"token": token}))
        assert json.loads(lines.readline())["result"] == {"ok": True}
        took = time.monotonic() - asked
        owner.sendall(request_line(1, "info", None))
        return took, json.loads(lines.readline())["result"]["scheduler"]


@pytest.mark.stress
def test_a_hundred_idle_loopback_connections_do_not_keep_the_owner_out(
    tcp: tuple[SocketServer, tuple[str, int]]
) -> None:
    server, address = tcp
    assert server.token is not None
    idle = [socket.create_connection(address, timeout=5) for _ in range(100)]
    try:
        time.sleep(0.3)  # all accepted: the oldest are dropped as the newer arrive
        waits = []
        for _ in range(stress.trials(10)):
            took, counts = authenticate(address, server.token)
            waits.append(took)
            assert counts["unauthenticated"] <= server.limits.unauthenticated, counts
        dropped = 0
        for sock in idle:
            sock.settimeout(0.01)
            with contextlib.suppress(TimeoutError):
                dropped += sock.recv(1) != b"x"  # an error line, or the end: it was dropped
    finally:
        for sock in idle:
            sock.close()
    stress.figure("the owner's auth beside 100 idle connections, the slowest", max(waits), at_most=1.0)
    assert dropped >= 100 - server.limits.unauthenticated, dropped
    print(f"\nAUTH: owner authenticated in max {max(waits) * 1000:.0f} ms with 100 idle "
          f"connections; {dropped} of them dropped")
