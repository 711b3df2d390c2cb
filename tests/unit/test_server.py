"""The socket server's framing, timeouts and cancellation, with a stand-in service (no
Neovim): what a client sees on the wire, and that a vanished client's work is cancelled."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgpack
import pytest

from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.server import TIMEOUT, SocketServer, check_loopback, current_client
from lsap_bridge.service import Response


class SlowService:
    """Answers `{"mode": "sleep", "seconds": n}` after n seconds, noting cancellations."""

    def __init__(self) -> None:
        self.cancelled: list[str | None] = []
        self.seen_clients: list[str | None] = []

    async def handle(self, payload: Any) -> Response:
        self.seen_clients.append(current_client.get())
        try:
            await asyncio.sleep(float(payload.get("seconds", 0)))
        except asyncio.CancelledError:
            self.cancelled.append(current_client.get())
            raise
        return Response(f"slept {payload.get('seconds', 0)}", mode="sleep")


async def json_call(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, msg_id: int,
                    method: str, params: Any = None) -> dict[str, Any]:
    writer.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                             "params": params}).encode() + b"\n")
    await writer.drain()
    reply: dict[str, Any] = json.loads(await reader.readline())
    return reply


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_requests_in_flight_answer_out_of_order(tmp_path: Path) -> None:
    async def main() -> list[int]:
        service = SlowService()
        server = SocketServer(service, tmp_path / "s.sock")  # type: ignore[arg-type]
        await server.start()
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        for msg_id, seconds in ((1, 0.3), (2, 0.0)):
            writer.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "request",
                                     "params": {"request": {"seconds": seconds}}}).encode() + b"\n")
        await writer.drain()
        order = [json.loads(await reader.readline())["id"] for _ in range(2)]
        writer.close()
        await server.close()
        return order

    assert run(main()) == [2, 1]


def test_timeout_and_disconnect_cancel_the_work(tmp_path: Path) -> None:
    async def main() -> tuple[dict[str, Any], SlowService, list[dict[str, Any]]]:
        service = SlowService()
        events: list[dict[str, Any]] = []
        server = SocketServer(service, tmp_path / "s.sock",  # type: ignore[arg-type]
                              on_event=events.append)
        await server.start()
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        params = {"request": {"seconds": 5}, "timeout": 0.1, "client": "impatient"}
        timed_out = await json_call(reader, writer, 1, "request", params)
        writer.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "request",
                                 "params": {"request": {"seconds": 5}}}).encode() + b"\n")
        await writer.drain()
        await asyncio.sleep(0.1)
        writer.close()  # leave with request 2 pending
        await asyncio.sleep(0.2)
        await server.close()
        return timed_out, service, events

    timed_out, service, events = run(main())
    assert timed_out["error"]["code"] == TIMEOUT
    assert service.cancelled == ["impatient", "impatient"]  # the timeout, then the disconnect
    done = [e for e in events if e["phase"] == "done"]
    assert [e["text"].split(":")[0] for e in done] == ["timeout", "cancelled"]


def test_msgpack_and_json_share_methods_and_names(tmp_path: Path) -> None:
    async def main() -> tuple[Any, Any, SlowService]:
        service = SlowService()
        server = SocketServer(service, tmp_path / "s.sock")  # type: ignore[arg-type]
        await server.start()
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        params = {"request": {"seconds": 0}, "client": "mp"}
        writer.write(msgpack.packb([0, 3, "request", [params]]))
        writer.write(msgpack.packb([2, "ping", []]))  # a notification: no answer
        writer.write(msgpack.packb([0, 4, "ping", []]))
        await writer.drain()
        unpacker = msgpack.Unpacker(raw=False)
        replies: list[Any] = []
        while len(replies) < 2:
            unpacker.feed(await reader.read(1 << 16))
            replies.extend(unpacker)
        writer.write(b"\xc1")  # never valid msgpack: that connection closes, nothing else
        await writer.drain()
        unpacker.feed(await reader.read(1 << 16))
        closing = list(unpacker)
        assert await reader.read() == b""
        r2, w2 = await asyncio.open_unix_connection(str(server.path))
        pong = await json_call(r2, w2, 1, "ping")
        w2.close()
        await server.close()
        return sorted(replies, key=lambda r: r[1]), (closing, pong), service

    replies, (closing, pong), service = run(main())
    assert replies[0] == [1, 3, None, {"ok": True, "text": "slept 0", "mode": "sleep"}]
    assert replies[1] == [1, 4, None, "pong"]
    assert closing[0][:2] == [2, "lsap_error"] and pong["result"] == "pong"
    assert service.seen_clients == ["mp"]


def test_tcp_binds_loopback_only_unless_forced() -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        check_loopback(host, force=False)
    for host in ("0.0.0.0", "192.168.1.4", "example.com"):
        with pytest.raises(LsapError) as refused:
            check_loopback(host, force=False)
        assert refused.value.code == ErrorCode.DENIED and "tcp_force" in (refused.value.hint or "")
    check_loopback("0.0.0.0", force=True)


def test_json_rpc_batch_arrays(tmp_path: Path) -> None:
    async def main() -> Any:
        server = SocketServer(SlowService(), tmp_path / "s.sock")  # type: ignore[arg-type]
        await server.start()
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        writer.write(json.dumps([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "ping"},  # a notification: no reply in the array
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
            7,
        ]).encode() + b"\n")
        await writer.drain()
        replies = json.loads(await reader.readline())
        writer.close()
        await server.close()
        return replies

    replies = run(main())
    assert [r.get("id") for r in replies] == [1, 2, None]
    assert replies[0]["result"] == "pong" and replies[1]["error"]["code"] == -32601
    assert replies[2]["error"]["code"] == -32600
