"""The agent socket under malformed input and at its limits, serving a real Service over a
real headless Neovim: every bad message gets an error, nothing hangs, and a valid request
right after is answered."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest

from lsap_bridge import server as server_module
from lsap_bridge.fair_share import Limits
from lsap_bridge.server import SocketServer
from lsap_bridge.wire import TOO_LARGE
from tests.integration.harness import Bridge

from .clients import Raw, sleepy_server

pytestmark = pytest.mark.integration


@pytest.fixture
def raw(socket_server: SocketServer) -> Iterator[Raw]:
    client = Raw(socket_server.path)
    yield client
    client.close()


VALID = {"mode": "locate", "locate": "shop/models.py:Product@class <|>Product"}


def malformed(rng: random.Random, n: int) -> bytes:
    """The n-th bad message of a mix: garbage, truncated JSON, wrong JSON-RPC shapes, huge
    numbers, deep nesting, bad requests of every mode. One line each, each owed one reply."""
    kind = n % 10
    if kind == 0:  # garbage bytes (never a valid JSON start, never a newline)
        body = bytes(
            rng.choice([b for b in range(256) if b != 10]) for _ in range(rng.randint(1, 200))
        )
        return b"{" + body  # `{`: stay on the JSON framing of this connection
    if kind == 1:  # truncated JSON-RPC
        text = json.dumps({"jsonrpc": "2.0", "id": n, "method": "request", "params": VALID})
        return text[: rng.randint(1, len(text) - 1)].encode()
    if kind == 2:  # wrong shapes: not an object, no method, method not a string
        return json.dumps(
            rng.choice(
                [
                    [1, 2, 3],
                    "request",
                    42,
                    None,
                    {"id": n},
                    {"id": n, "method": 7},
                    {"id": n, "method": None, "params": {}},
                    {"id": n, "method": ["request"]},
                ]
            )
        ).encode()
    if kind == 3:  # every method with params of every wrong type, in turn
        methods = ["nope", "request", "text", "batch"]
        params = [
            None,
            1,
            "x",
            [1],
            {"requests": 5},
            {"text": 3},
            {"requests": [1, None]},
            {"request": 7},
            {"timeout": "soon"},
            {"timeout": -1, "mode": "x"},
        ]
        turn = n // 10
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": methods[turn % len(methods)],
                "params": params[turn // len(methods) % len(params)],
            }
        ).encode()
    if kind == 4:  # huge numbers where numbers go, and as ids
        big = "9" * rng.choice([20, 400, 5000])
        return (
            f'{{"jsonrpc":"2.0","id":{n},"method":"request","params":{{"mode":"references",'
            f'"locate":"shop/models.py:{big}","max_items":{big},"start_index":-{big}}}}}'
        ).encode()
    if kind == 5:  # deep nesting, as a whole and inside params
        depth = rng.choice([50, 900, 5000, 100000])
        if rng.random() < 0.5:
            return b"[" * depth + b"]" * depth
        return (
            f'{{"jsonrpc":"2.0","id":{n},"method":"request","params":{{"mode":"locate","locate":'
            + "[" * min(depth, 900)
            + "]" * min(depth, 900)
            + "}}"
        ).encode()
    if kind == 6:  # requests with wrong fields
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "request",
                "params": rng.choice(
                    [
                        {"mode": "references"},
                        {"mode": "references", "locate": {"file_path": 3}},
                        {
                            "mode": "hover",
                            "locate": {"file_path": "shop/models.py", "scope": {"start_line": 0}},
                        },
                        {"mode": "outline", "file_path": ["x"]},
                        {"mode": "rename", "locate": VALID["locate"]},
                        {"mode": "search", "query": {"$ne": 1}},
                        {"mode": "batch", "requests": "all"},
                    ]
                ),
            }
        ).encode()
    if kind == 7:  # anchors that point nowhere, or outside the workspace
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "request",
                "params": {
                    "mode": "hover",
                    "locate": rng.choice(
                        [
                            "../../etc/passwd:1",
                            "/etc/passwd:1",
                            "shop/nope.py@x",
                            "shop/models.py:0",
                            "shop/models.py@<|><|>",
                            "\x00:1",
                            "~root/.bashrc:1",
                        ]
                    ),
                },
            }
        ).encode()
    if kind == 8:  # bad text-format blocks
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": n,
                "method": "text",
                "params": {
                    "text": rng.choice(
                        [
                            "",
                            "*** Begin Language Server Request",
                            "junk",
                            "*** Begin Language Server Request\n*** File: ../../etc/passwd\n"
                            "@@ root\n^ root\n"
                            "*** End Language Server Request",
                        ]
                    )
                },
            }
        ).encode()
    # invalid UTF-8 inside an otherwise fine message
    return b'{"jsonrpc":"2.0","id":' + str(n).encode() + b',"method":"ping","params":"\xff\xfe"}'


def test_a_thousand_malformed_messages_then_a_valid_request(
    raw: Raw, socket_server: SocketServer
) -> None:
    rng = random.Random(7)
    messages = [malformed(rng, n) for n in range(1000)]
    assert all(b"\n" not in m for m in messages)
    started = time.monotonic()
    raw.send(b"\n".join(messages) + b"\n")
    replies = [raw.reply() for _ in messages]
    assert time.monotonic() - started < 90
    # a JSON array is a JSON-RPC batch: one array of replies, each an error here
    for index, reply in enumerate(replies):
        if isinstance(reply, list):
            assert reply and all("error" in r for r in reply), reply
            replies[index] = reply[0]

    def failed_(reply: dict[str, Any]) -> bool:
        result = reply.get("result", {})
        # a text block reports per-file errors inline, as error tags in its response block
        inline = result.get("mode") == "request" and "</error:" in result.get("text", "")
        return "error" in reply or result.get("ok") is False or inline

    failed = [r for r in replies if failed_(r)]
    assert len(failed) == len(messages), [r for r in replies if r not in failed][:3]
    for reply in replies:
        error = (
            reply.get("error")
            or reply["result"].get("error")
            or {"message": json.dumps(reply["result"])}
        )
        assert len(error["message"]) > 10 and "Traceback" not in error["message"], error
    codes = {r["result"]["error"]["code"] for r in replies if "error" in r.get("result", {})}
    assert {"outside_workspace", "invalid_request", "not_found"} <= codes, codes
    # the same connection, and a new one, still answer a valid request
    answer = raw.call("request", VALID)
    assert answer["result"]["ok"], answer
    assert "shop/models.py" in answer["result"]["text"]
    other = Raw(socket_server.path)
    try:
        assert other.call("request", VALID)["result"]["ok"]
    finally:
        other.close()


def test_msgpack_garbage_closes_only_that_connection(socket_server: SocketServer, raw: Raw) -> None:
    rng = random.Random(3)
    for _ in range(50):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(10)
        conn.connect(str(socket_server.path))
        # a msgpack array header, then random bytes (or a wrong-shaped message)
        body = rng.choice(
            [
                b"\x94" + rng.randbytes(rng.randint(1, 64)),
                msgpack.packb([0, 1]),
                msgpack.packb([5, 1, "ping", []]),
                msgpack.packb([0, 1, 42, []]),
                msgpack.packb({"a": 1}),
            ]
        )
        conn.sendall(body)
        conn.shutdown(socket.SHUT_WR)
        while conn.recv(65536):
            pass  # error notifications and replies, then EOF: never a hang
        conn.close()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(30)
    conn.connect(str(socket_server.path))
    conn.sendall(msgpack.packb([0, 9, "request", [VALID]]))
    unpacker = msgpack.Unpacker(raw=False)
    while True:
        unpacker.feed(conn.recv(65536))
        replies = list(unpacker)
        if replies:
            break
    conn.close()
    assert replies[0][:3] == [1, 9, None] and replies[0][3]["ok"]
    assert raw.call("ping", None)["result"] == "pong"


def test_an_oversized_message_is_refused_and_the_connection_stays(
    raw: Raw, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = Limits.message + 1000
    raw.send(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":"' + b"x" * size + b'"}\n')
    reply = raw.reply()
    assert reply["error"]["code"] == TOO_LARGE
    assert str(Limits.message) in reply["error"]["message"]
    assert raw.call("ping", None)["result"] == "pong"


def test_max_items_and_batch_limits_are_named(raw: Raw) -> None:
    reply = raw.call(
        "request", {"mode": "references", "locate": VALID["locate"], "max_items": 10**6}
    )
    error = reply["result"]["error"]
    assert error["code"] == "invalid_request" and "max_items" in error["message"]
    reply = raw.call("batch", {"requests": [VALID] * (server_module.MAX_BATCH + 1)})
    assert reply["error"]["code"] == server_module.INVALID_PARAMS
    assert f"at most {server_module.MAX_BATCH}" in reply["error"]["message"]


@pytest.fixture
def sleepy(bridge: Bridge) -> Iterator[SocketServer]:
    yield from sleepy_server(bridge, "sleepy")


def test_per_request_timeout_answers_instead_of_hanging(sleepy: SocketServer) -> None:
    client = Raw(sleepy.path)
    try:
        started = time.monotonic()
        reply = client.call("sleep", {"seconds": 30, "timeout": 0.5})
        assert time.monotonic() - started < 5
        assert reply["error"]["code"] == server_module.TIMEOUT
        assert "0.5 s" in reply["error"]["message"] and "timeout" in reply["error"]["message"]
    finally:
        client.close()


def test_idle_time_counts_from_the_last_answer_not_the_last_question(bridge: Bridge) -> None:
    """The daemon exits when idle and no request runs: a request longer than the idle
    timeout must not be cut off, and idle time starts when the answer goes out."""
    touched: list[float] = []

    async def sleep(params: Any) -> str:
        await asyncio.sleep(1.0)
        return "slept"

    path = Path(os.environ["XDG_RUNTIME_DIR"]) / "idle.sock"
    server = SocketServer(
        bridge.service,
        path,
        on_activity=lambda: touched.append(time.monotonic()),
        extra_methods={"sleep": sleep},
    )
    bridge.loop.run(server.start())
    client = Raw(path)
    try:
        client.send(b'{"jsonrpc":"2.0","id":1,"method":"sleep","params":{}}\n')
        time.sleep(0.5)
        assert server.running == 1, "a request in flight is visible to the idle check"
        asked = time.monotonic()
        assert client.reply()["result"] == "slept"
        assert server.running == 0
        assert touched[-1] > asked, "the answer counted as activity"
    finally:
        client.close()
        bridge.loop.run(server.close())
