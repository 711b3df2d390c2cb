"""Requests that cost CPU, on the real socket over a real headless Neovim: sizes past which
the work grows out of bounds are refused at once with the limit named, and the work below
them runs off the event loop, so another client's `ping` keeps its pace meanwhile."""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import cpu, resolve
from lsap_bridge.lsreq.parser import MAX_LINES
from lsap_bridge.models import MAX_FIND
from lsap_bridge.server import SocketServer

from .clients import Raw

pytestmark = [pytest.mark.integration, pytest.mark.serial]  # timing and floods: run alone


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
            assert took < 0.5, took
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


def test_the_longest_find_does_not_hold_another_clients_ping(
    socket_server: SocketServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst a client may send: a find at the limit that matches nowhere exactly, so
    every tier computes. Measured against the same find computed on the loop."""
    longest = words(MAX_FIND)
    idle, _, _ = ping_delays_during(socket_server, lambda: time.sleep(1.5))  # the machine's own noise
    delays, took, result = ping_delays_during_a_find(socket_server, longest)
    assert not result["ok"] and result["error"]["code"] == "not_found", result["text"][:300]
    with monkeypatch.context() as inline:  # the same work on the loop, as before: the baseline
        inline.setattr(resolve, "off_loop", lambda heavy, work: cpu.off_loop(False, work))
        held, took_inline, _ = ping_delays_during_a_find(socket_server, words(MAX_FIND, seed=26))
    report = (f"the find computed {took:.2f} s, {len(delays)} pings meanwhile: {ms(delays)}; "
              f"on the loop ({took_inline:.2f} s): {ms(held)}; nothing running: {ms(idle)}")
    print("\nPING:", report)
    assert took > 0.1, "the find must cost enough for the test to mean something: " + report
    assert len(delays) >= 5, report
    assert max(held) > 0.1, "on the loop it holds the ping: " + report
    # The typical ping keeps its pace; the worst one does not yet: the worker shares the
    # interpreter's lock with the loop, and a C scorer holding it for a long slice delays a
    # ping by up to 0.1-0.2 s (issue 25 stays open for it; measured max 9-49 ms at load 2,
    # 72-219 ms at load 8-12, against 0.3 s on the loop; nothing running: < 5 ms).
    assert statistics.median(delays) < 0.05 + max(idle), report
    assert max(delays) < max(held), report


def test_a_100_kb_find_is_refused_without_holding_another_clients_ping(socket_server: SocketServer) -> None:
    delays, took, result = ping_delays_during_a_find(socket_server, words(100_000))
    assert not result["ok"] and f"over the limit of {MAX_FIND}" in result["text"], result["text"][:300]
    assert took < 0.5 and all(d < 0.05 for d in delays), (took, delays)


def test_the_work_goes_to_a_worker_only_when_heavy() -> None:
    on: list[str] = []

    def where() -> str:
        on.append(threading.current_thread().name)
        return "done"

    import asyncio

    async def both() -> None:
        assert await cpu.off_loop(False, where) == "done"
        assert await cpu.off_loop(True, where) == "done"

    asyncio.run(both())
    assert on[0] == threading.current_thread().name and on[1].startswith("lsap-cpu"), on
