"""Socket clients and servers for the reliability tests: a raw JSON-lines client, and the
real service behind a socket with an extra method that holds a call for a while."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsap_bridge.fair_share import Limits
from lsap_bridge.server import SocketServer
from tests.integration.harness import Bridge


def connect(path: Path, timeout: float = 10) -> socket.socket:
    """A connection, waiting while the listen backlog is full (EAGAIN on a Unix socket: a
    loaded service has not accepted the hundreds of connections before it yet)."""
    until = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            return sock
        except BlockingIOError:
            sock.close()
            if time.monotonic() > until:
                raise
            time.sleep(0.005)


class Raw:
    """A JSON-lines client that sends bytes as they are and reads replies one by one."""

    def __init__(self, path: Path, timeout: float = 30) -> None:
        self.sock = connect(path, timeout)
        self.file = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def reply(self) -> Any:
        line = self.file.readline()
        assert line, "the server closed the connection"
        return json.loads(line)

    def call(self, method: str, params: Any, msg_id: Any = "final") -> dict[str, Any]:
        self.send(
            json.dumps(
                {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
            ).encode()
            + b"\n"
        )
        while True:
            reply: dict[str, Any] = self.reply()
            if reply.get("id") == msg_id:
                return reply

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def request_line(msg_id: Any, method: str, params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode() + b"\n"


def sleepy_server(bridge: Bridge, name: str, limits: Limits | None = None,
                  started: list[float] | None = None) -> Iterator[SocketServer]:
    """The bridge's service on its own socket, with `sleep` ({"seconds": n}) as an extra
    method; `started` collects when each sleep began (loop time)."""

    async def sleep(params: Any) -> str:
        if started is not None:
            started.append(asyncio.get_running_loop().time())
        await asyncio.sleep(float(params.get("seconds", 1)) if isinstance(params, dict) else 1)
        return "slept"

    path = Path(os.environ["XDG_RUNTIME_DIR"]) / f"{name}.sock"
    server = SocketServer(bridge.service, path, extra_methods={"sleep": sleep}, limits=limits)
    bridge.loop.run(server.start())
    yield server
    bridge.loop.run(server.close())
