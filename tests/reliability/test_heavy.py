"""Requests that cost CPU, on the real socket over a real headless Neovim: sizes past which
the work grows out of bounds are refused at once with the limit named, and the work below
them runs off the event loop, so another client's `ping` keeps its pace meanwhile."""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import cpu, resolve
from lsap_bridge.client import Connection
from lsap_bridge.locate.matcher import INLINE_FIND
from lsap_bridge.lsreq import executor
from lsap_bridge.lsreq.parser import MAX_LINES
from lsap_bridge.models import MAX_FIND
from lsap_bridge.server import SocketServer
from tests import stress

from .clients import Raw
from .processes import running, start_daemon, tree

# The latencies of milliseconds are stress figures (`tests/stress.py`), not asserted here.
pytestmark = pytest.mark.integration


def words(n: int, seed: int = 25) -> str:
    """n characters of words that are nowhere in the example: no exact match, every tier runs."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < n:
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(3, 9)))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]


def locate(find: str) -> dict[str, Any]:
    return {"request": {"mode": "locate", "locate": {"file_path": "shop/models.py", "find": find}}}


@pytest.mark.stress
def test_a_megabyte_find_or_text_block_is_refused_at_once(socket_server: SocketServer) -> None:
    client = Raw(socket_server.path)
    try:
        for params in (locate("x" * 1_000_000),
                       {"request": {"mode": "locate", "locate": "shop/models.py@" + "x" * 1_000_000}}):
            asked = time.monotonic()
            result = client.call("request", params)["result"]
            took = time.monotonic() - asked
            assert not result["ok"] and result["error"]["code"] == "invalid_request", result
            assert f"over the limit of {MAX_FIND}" in result["text"], result["text"][:300]
            assert "give a scope" in result["text"]
            stress.figure("a megabyte find refused", took, at_most=0.5)
            assert took < 5.0, took  # a hang bound: 10x the target; matching it would take minutes
        block = "\n".join(["*** Begin Language Server Request", "*** File: shop/models.py",
                           *(["@@ class Product"] * MAX_LINES), "*** End Language Server Request"])
        result = client.call("text", {"text": block})["result"]
        assert not result["ok"] and f"over the limit of {MAX_LINES}" in result["text"], result["text"][:300]
        assert "split it" in result["text"]
        long_line = "\n".join(["*** Begin Language Server Request", "*** File: shop/models.py",
                               "@@ " + "x" * (MAX_FIND + 1), "*** End Language Server Request"])
        result = client.call("text", {"text": long_line})["result"]
        assert not result["ok"] and f"over the limit of {MAX_FIND}" in result["text"], result["text"][:300]
    finally:
        client.close()


# Pings one after another from a process of its own (so that only the service shares the
# interpreter with the work it offloads) until its stdin closes: `[[sent at, seconds], ...]`.
PINGER = """
import json, select, sys, time
from tests.reliability.clients import Raw
client = Raw(sys.argv[1])
print("ready", flush=True)
out = []
while not select.select([sys.stdin], [], [], 0)[0]:
    asked = time.time()
    assert client.call("ping", None)["result"] == "pong"
    out.append((asked, time.time() - asked))
    time.sleep(0.01)
print(json.dumps(out))
"""


def ping_delays_during(socket_server: SocketServer, work: Callable[[], Any]) -> tuple[list[float], float, Any]:
    """Another client's ping delays while `work()` runs: (delays, its seconds, its result)."""
    pinger = subprocess.Popen([sys.executable, "-c", PINGER, str(socket_server.path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=Path(__file__).parents[2])
    try:
        assert pinger.stdout is not None and pinger.stdout.readline() == "ready\n"
        time.sleep(0.2)
        asked = time.time()
        result = work()
        answered = time.time()
    finally:
        out, _ = pinger.communicate("", timeout=30)
    delays = [took for at, took in json.loads(out) if asked <= at <= answered]
    return delays, answered - asked, result


def ping_delays_during_a_find(socket_server: SocketServer, find: str) -> tuple[list[float], float, Any]:
    def ask() -> Any:
        finder = Raw(socket_server.path, timeout=120)
        try:
            return finder.call("request", locate(find))["result"]
        finally:
            finder.close()

    return ping_delays_during(socket_server, ask)


def ms(delays: list[float]) -> str:
    if not delays:
        return "none"
    return f"max {max(delays) * 1000:.1f} ms, median {statistics.median(delays) * 1000:.1f} ms"


@pytest.mark.stress
def test_a_100_kb_find_does_not_delay_another_clients_ping_beyond_50_ms(
    socket_server: SocketServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst a client may send: a 100 KB find (near the limit) that matches nowhere
    exactly, so every tier computes, for seconds, in a worker process. Measured against the
    machine's own noise and against a shorter find computed on the loop."""
    idle, _, _ = ping_delays_during(socket_server, lambda: time.sleep(1.0))  # the machine's own noise
    delays, took, result = ping_delays_during_a_find(socket_server, words(100_000))
    assert not result["ok"] and result["error"]["code"] == "not_found", result["text"][:300]
    with monkeypatch.context() as inline:  # a find of 8 KB on the loop, as before: the baseline
        inline.setattr(resolve, "off_loop", lambda heavy, work, *args: cpu.off_loop(False, work, *args))
        held, took_inline, _ = ping_delays_during_a_find(socket_server, words(8192, seed=26))
    report = (f"the find computed {took:.2f} s, {len(delays)} pings meanwhile: {ms(delays)}; "
              f"8 KB on the loop ({took_inline:.2f} s): {ms(held)}; nothing running: {ms(idle)}")
    print("\nPING:", report)
    assert delays, report  # another client was answered while the find computed
    # The figures (stress): the find must cost enough for the test to mean something, and
    # on the loop it holds the ping (one waited, or none was answered while it ran).
    stress.figure("100 kB find: its seconds", took, at_least=1.0, detail=report)
    stress.figure("100 kB find: pings meanwhile", len(delays), "pings", at_least=20, detail=report)
    stress.figure("8 kB find on the loop: the ping held", max(held) if held else took_inline, at_least=0.1,
                  detail=report)
    # The bound. A loaded machine adds its own noise (a ping that waits for a core
    # while nothing runs here): that much is not the find's.
    stress.figure("100 kB find: ping delay past the idle noise", max(delays) - max(idle), at_most=0.05,
                  detail=report)


def test_long_anchors_matched_in_a_worker_answer_as_on_the_loop(
    socket_server: SocketServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A find over `INLINE_FIND` with no exact match, and a text block's anchors longer than
    that together, go to a worker process: the file's lines, its symbol tree, the needle and
    the matches (or the errors) cross it and come back as the loop would have computed them."""
    sent: list[bool] = []

    def spy(heavy: bool, work: Callable[..., Any], *args: Any) -> Any:
        sent.append(heavy)
        return cpu.off_loop(heavy, work, *args)

    monkeypatch.setattr(resolve, "off_loop", spy)
    monkeypatch.setattr(executor, "off_loop", spy)
    client = Raw(socket_server.path, timeout=60)
    try:
        lines = (Path(socket_server.service.workspace.roots[0]) / "shop/models.py").read_text().splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("class Order"))
        find = "\n".join(lines[start:]).replace("quantities", "quantitys").replace("class Order", "class <|>Order")
        assert len(find) > INLINE_FIND
        result = client.call("request", locate(find))["result"]
        assert result["ok"], result["text"][:300]
        assert f"shop/models.py:{start + 1}:7" in result["text"] and "fuzzy" in result["text"], result["text"][:600]
        result = client.call("request", locate("x" * (MAX_FIND + 1)))["result"]
        assert not result["ok"] and f"over the limit of {MAX_FIND}" in result["text"], result["text"][:300]
        # A text block's anchors, longer together than INLINE_FIND: the file's lines and its
        # symbol tree cross to the worker, the lines found (or the errors) come back.
        anchors = [line for line in lines if len(line.strip()) > 20 and lines.count(line) == 1]
        assert sum(map(len, anchors)) > INLINE_FIND
        block = "\n".join(["*** Begin Language Server Request", "*** File: shop/models.py",
                           *(f"@@ {line}" for line in anchors), "@@ nowhere in the file at all",
                           "*** End Language Server Request"])
        text = client.call("text", {"text": block})["result"]["text"]
        assert text.count("<error:") == 1, text
        assert "'nowhere in the file at all' is not in shop/models.py after line" in text, text
        assert all(f"@@ {line.strip()}" in text for line in anchors), text
        assert sent == [True, True], sent
    finally:
        client.close()


def test_the_work_goes_to_a_worker_process_only_when_heavy() -> None:
    async def both() -> tuple[int, int]:
        return await cpu.off_loop(False, os.getpid), await cpu.off_loop(True, os.getpid)

    here, there = asyncio.run(both())
    assert here == os.getpid() and there != os.getpid() and there in cpu.running(), (here, there)
    cpu.shutdown()
    assert cpu.running() == [] and not running(there)


def test_a_cancelled_call_stops_its_work_and_the_next_one_runs() -> None:
    """A worker cannot be interrupted, only ended: cancelling a call whose work runs kills
    the pool, and the next call starts a new one."""
    async def cancel_then_ask() -> tuple[list[int], int]:
        work = asyncio.ensure_future(cpu.off_loop(True, time.sleep, 60))
        deadline = time.monotonic() + 10
        while not cpu.running() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # the sleep has reached a worker
        workers = cpu.running()
        work.cancel()
        with pytest.raises(asyncio.CancelledError):
            await work
        return workers, await cpu.off_loop(True, os.getpid)

    try:
        workers, fresh = asyncio.run(cancel_then_ask())
        assert workers and fresh not in workers
        assert wait_gone(workers, 2.0), [pid for pid in workers if running(pid)]
    finally:
        cpu.shutdown()


WORKERS_OF_A_KILLED_SESSION = """
import asyncio, os, time
from lsap_bridge import cpu
async def main():
    await cpu.off_loop(True, os.getpid)
    print(" ".join(map(str, cpu.running())), flush=True)
    time.sleep(60)
asyncio.run(main())
"""


def test_the_workers_die_with_a_session_killed_by_sigkill(reap: set[int]) -> None:
    # (Its semaphore tracker, left to clean up after it, warns on stderr: not shown.)
    session = subprocess.Popen([sys.executable, "-c", WORKERS_OF_A_KILLED_SESSION], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=Path(__file__).parents[2])
    reap.add(session.pid)
    assert session.stdout is not None
    workers = [int(pid) for pid in session.stdout.readline().split()]
    reap.update(workers)
    assert workers and all(running(pid) for pid in workers), workers
    session.kill()
    session.wait(5)
    assert wait_gone(workers, 3.0), [pid for pid in workers if running(pid)]


def wait_gone(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(running(pid) for pid in pids)


def test_the_daemon_ends_its_workers_when_it_stops(shop: Path, reap: set[int]) -> None:
    """`lsap daemon stop` after a long find: the worker processes and their semaphore
    tracker end with the daemon (Lifecycle ends the pool), none is left."""
    process, info = start_daemon(shop, reap)
    with Connection(info.socket, timeout=60) as conn:
        result = conn.call("request", locate(words(2000)))
        assert result["error"]["code"] == "not_found", result["text"][:300]
        helpers = {pid for pid in tree(process.pid) if b"multiprocessing" in cmdline(pid)}
        reap.update(helpers)
        assert len(helpers) >= 2, helpers  # a worker at least, and the tracker
        conn.call("shutdown")
    process.wait(15)
    assert wait_gone(sorted(helpers), 3.0), [pid for pid in helpers if running(pid)]


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
