"""Calls abandoned at every point of their life, on the real socket over a real headless
Neovim: whatever a client does before it goes away, every slot it took is given back, so
`info` shows nothing running or waiting afterwards and normal clients are all answered."""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgpack
import pytest

from lsap_bridge.server import SocketServer
from tests.integration.harness import Bridge

from .clients import Raw, connect, request_line, sleepy_server

pytestmark = pytest.mark.integration

LOCATE = {"mode": "locate", "locate": "shop/models.py:Product@class <|>Product"}


SLEEPS: list[float] = []  # when each `sleep` call began: the abandoned calls that did run


@pytest.fixture
def chaos(bridge: Bridge) -> Iterator[SocketServer]:
    SLEEPS.clear()
    yield from sleepy_server(bridge, "chaos", started=SLEEPS)


def packed(msg_id: int, method: str, params: Any) -> bytes:
    data: bytes = msgpack.packb([0, msg_id, method, [params]], use_bin_type=True)
    return data


def settled(path: Path, within: float = 10.0) -> dict[str, Any]:
    """The scheduler's counts once nothing runs or waits (or as they are after `within`)."""
    until = time.monotonic() + within
    while True:
        client = Raw(path, timeout=5)
        try:
            counts: dict[str, Any] = client.call("info", None)["result"]["scheduler"]
        finally:
            client.close()
        if (counts["running"], counts["queued"]) == (0, 0) or time.monotonic() > until:
            return counts
        time.sleep(0.1)


def fifty_answer(path: Path) -> list[Any]:
    """50 normal calls in parallel, each on its own connection: the results."""

    def one(i: int) -> Any:
        client = Raw(path, timeout=20)
        try:
            reply = client.call("request", {"request": LOCATE}, msg_id=i)
        finally:
            client.close()
        return reply.get("result", reply)

    with ThreadPoolExecutor(50) as pool:
        return list(pool.map(one, range(50)))


def assert_served(path: Path) -> None:
    counts = settled(path)
    assert (counts["running"], counts["queued"]) == (0, 0), counts
    results = fifty_answer(path)
    assert all(isinstance(r, dict) and r.get("ok") for r in results), [
        r for r in results if not (isinstance(r, dict) and r.get("ok"))][:2]


def test_connect_send_close_hundreds_of_times_gives_every_slot_back(chaos: SocketServer) -> None:
    """The leak of issue #25: calls cancelled by the connection going away before their
    task ever started kept their running slot, until no agent call was answered at all."""
    for i in range(400):
        sock = connect(chaos.path)
        sock.sendall(request_line(i, "info", None) if i % 2 else packed(i, "info", None))
        sock.close()
    counts = settled(chaos.path)
    assert (counts["running"], counts["queued"]) == (0, 0), counts
    client = Raw(chaos.path, timeout=5)
    try:
        assert client.call("ping", None)["result"] == "pong"
    finally:
        client.close()


# -- every point of a call's life ---------------------------------------------------------------


def line(json_framing: bool, msg_id: int, method: str, params: Any) -> bytes:
    return request_line(msg_id, method, params) if json_framing else packed(msg_id, method, params)


def abandon(path: Path, n: int, rng: random.Random) -> int:
    """One abandoned client of kind `n % 6`: the calls it sent."""
    kind, framing = n % 6, rng.random() < 0.5
    sock = connect(path)
    try:
        if kind == 0:  # connect, send, close: the call has not started yet
            sock.sendall(line(framing, n, rng.choice(["info", "ping", "schema"]), None))
            return 1
        if kind == 1:  # a call into Neovim, and gone before its answer
            sock.sendall(line(framing, n, "request", {"request": LOCATE}))
            return 1
        if kind == 2:  # close while it runs
            sock.sendall(line(framing, n, "sleep", {"seconds": 0.3}))
            time.sleep(0.05 + rng.random() * 0.2)  # long enough to start on a loaded machine
            return 1
        if kind == 3:  # large replies left unread: ~50 KB each
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"".join(line(framing, n * 100 + i, "schema", None) for i in range(12)))
            time.sleep(rng.random() * 0.05)
            return 12
        if kind == 4:  # more than in flight: some run, the rest wait in its queue
            sock.sendall(b"".join(line(framing, n * 100 + i, "sleep", {"seconds": 0.05})
                                  for i in range(20)))
            return 20
        whole = line(framing, n, "request", {"request": LOCATE})  # half a message
        sock.sendall(whole[:rng.randint(1, len(whole) - 1)])
        return 1
    finally:
        sock.close()


def normal(path: Path, n: int) -> None:
    client = Raw(path, timeout=30)
    try:
        reply = client.call("request", {"request": LOCATE}, msg_id=n)
        assert reply["result"]["ok"], reply
    finally:
        client.close()


def in_threads(work: Callable[[int], Any], n: int, threads: int) -> list[Any]:
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, range(n)))


def test_thousands_of_calls_abandoned_mixed_with_normal_clients(chaos: SocketServer) -> None:
    rng = random.Random(25)
    started = time.monotonic()
    sent: list[int] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def normals() -> None:
        n = 0
        while not stop.is_set():
            try:
                normal(chaos.path, n)
            except BaseException as exc:  # reported by the test below
                failures.append(exc)
                return
            n += 1

    polite = [threading.Thread(target=normals) for _ in range(3)]
    for thread in polite:
        thread.start()
    try:
        sent = in_threads(lambda n: abandon(chaos.path, n, random.Random(rng.random() + n)), 900, 8)
    finally:
        stop.set()
        for thread in polite:
            thread.join(30)
    took = time.monotonic() - started
    assert not failures, failures[:1]
    assert sum(sent) >= 3000, sum(sent)
    assert_served(chaos.path)
    # Of the 300 clients whose calls sleep, many were gone while one ran, not only before.
    assert len(SLEEPS) >= 50, len(SLEEPS)
    print(f"\nCHAOS: {sum(sent)} calls abandoned on 900 connections in {took:.1f} s; "
          f"{len(SLEEPS)} of them started running first")


def test_a_thousand_messages_of_random_bytes_as_fast_as_the_socket_takes_them(chaos: SocketServer) -> None:
    rng = random.Random(2525)
    blobs = [rng.randbytes(rng.randint(1, 4096)) for _ in range(1000)]

    def junk(n: int) -> None:
        sock = connect(chaos.path)
        try:
            sock.sendall(blobs[n])
            if n % 3 == 0:  # and some stay a moment, so the service reads what they sent
                time.sleep(0.01)
        except OSError:
            pass  # the service may already have closed it: that is an answer too
        finally:
            sock.close()

    in_threads(junk, len(blobs), 8)
    # and on one connection, one after the other, as one stream
    sock = connect(chaos.path)
    try:
        for blob in blobs[:200]:
            sock.sendall(json.dumps({"junk": blob.hex()}).encode()[:rng.randint(1, 60)] + blob)
    except OSError:
        pass
    finally:
        sock.close()
    assert_served(chaos.path)
