"""The agent socket: newline-delimited JSON-RPC 2.0 over a per-user Unix socket (DESIGN §8)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from . import __version__
from .capabilities import REGISTRY
from .service import Service

MAX_MESSAGE = 4 * 1024 * 1024
REQUEST_TIMEOUT = 120.0

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603,
)

Method = Callable[[Any], Awaitable[Any]]


class RpcFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def schema() -> dict[str, Any]:
    """JSON Schema of every request model, by mode."""
    return {mode: cap.model.model_json_schema() for mode, cap in sorted(REGISTRY.items())}


class SocketServer:
    """Serves one `Service` to many agent clients, many requests in flight each."""

    def __init__(self, service: Service, path: Path, *, on_activity: Callable[[], None] | None = None,
                 extra_methods: dict[str, Method] | None = None) -> None:
        self.service = service
        self.path = path
        self.on_activity = on_activity or (lambda: None)
        self._server: asyncio.AbstractServer | None = None
        self.methods: dict[str, Method] = {
            "request": self._request,
            "schema": self._schema,
            "info": self._info,
            "ping": self._ping,
            **(extra_methods or {}),
        }

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._client, str(self.path), limit=MAX_MESSAGE)
        finally:
            os.umask(old_umask)
        self.path.chmod(0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lock = asyncio.Lock()
        tasks: set[asyncio.Task[None]] = set()

        async def send(message: dict[str, Any]) -> None:
            async with lock:
                writer.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
                await writer.drain()

        try:
            while True:
                try:
                    line = await reader.readline()
                except ValueError:  # longer than MAX_MESSAGE: drop it, keep the connection
                    await _skip_line(reader)
                    await send(_error(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE} bytes"))
                    continue
                if not line:
                    break
                if not line.strip():
                    continue
                task = asyncio.get_running_loop().create_task(self._answer(line, send))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except ConnectionError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(Exception):
                writer.close()

    async def _answer(self, line: bytes, send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self.on_activity()
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            await send(_error(None, PARSE_ERROR, "not valid JSON"))
            return
        msg_id = message.get("id") if isinstance(message, dict) else None
        try:
            if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                raise RpcFailure(INVALID_REQUEST, "a JSON-RPC request needs a string `method`")
            method = self.methods.get(message["method"])
            if method is None:
                raise RpcFailure(METHOD_NOT_FOUND, f"unknown method {message['method']!r}; "
                                 f"methods: {', '.join(sorted(self.methods))}")
            result = await asyncio.wait_for(method(message.get("params")), REQUEST_TIMEOUT)
        except RpcFailure as failure:
            reply = _error(msg_id, failure.code, str(failure))
        except asyncio.TimeoutError:
            reply = _error(msg_id, INTERNAL_ERROR, f"timeout: no answer within {REQUEST_TIMEOUT:g} s")
        except Exception as exc:
            reply = _error(msg_id, INTERNAL_ERROR, f"internal error: {exc!r}")
        else:
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
        if msg_id is not None:
            await send(reply)

    async def _request(self, params: Any) -> dict[str, Any]:
        payload = params.get("request", params) if isinstance(params, dict) else params
        response = await self.service.handle(payload)
        result: dict[str, Any] = {"ok": response.ok, "text": response.text}
        if response.error is not None:
            result["error"] = response.error.to_dict()
        return result

    async def _schema(self, params: Any) -> dict[str, Any]:
        return schema()

    async def _info(self, params: Any) -> dict[str, Any]:
        return {
            "version": __version__,
            "roots": [str(r) for r in self.service.workspace.roots],
            "modes": sorted(REGISTRY),
            "pid": os.getpid(),
        }

    async def _ping(self, params: Any) -> str:
        return "pong"


async def _skip_line(reader: asyncio.StreamReader) -> None:
    """Discard the rest of an oversized line."""
    while True:
        try:
            await reader.readuntil(b"\n")
            return
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)
        except asyncio.IncompleteReadError:
            return


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
