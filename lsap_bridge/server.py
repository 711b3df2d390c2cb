"""The agent socket (doc/architecture.md, Agents: socket, CLI, MCP): one per-user Unix socket speaking two framings.

A connection's first byte decides its framing: `{` (or whitespace) means newline-delimited
JSON-RPC 2.0, a msgpack array header means msgpack-RPC (as Neovim and pynvim speak it).
Both reach the same methods. The socket is 0600 in a 0700 directory and the peer's uid is
checked again with SO_PEERCRED; an optional loopback TCP listener asks for a token first.
Every request runs as its own task: many clients and many requests in flight, each with a
timeout; a client that goes away cancels what it still had pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import secrets
import socket
import struct
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from . import __version__
from .capabilities import REGISTRY
from .capabilities.schema import request_schemas
from .errors import ErrorCode, LsapError
from .service import Response, Service

MAX_MESSAGE = 10 * 1024 * 1024
REQUEST_TIMEOUT = 120.0
MAX_BATCH = 50
MAX_IN_FLIGHT = 32  # per connection: one client cannot starve the others

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603,
)
TIMEOUT, UNAUTHORIZED, TOO_LARGE, TOO_BUSY = -32001, -32002, -32003, -32004

MSGPACK_REQUEST, MSGPACK_RESPONSE, MSGPACK_NOTIFICATION = 0, 1, 2

Method = Callable[[Any], Awaitable[Any]]
EventSink = Callable[[dict[str, Any]], None]

# The name of the agent client whose request is running, None for the human's own commands:
# the edit policy (host.py) asks only about agent-initiated edits.
current_client: ContextVar[str | None] = ContextVar("lsap_current_client", default=None)


class RpcFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def schema() -> dict[str, Any]:
    """JSON Schema of every request model, by mode (the same as the `schema` mode's)."""
    return request_schemas()


def response_result(response: Response) -> dict[str, Any]:
    """A service response as the socket returns it."""
    result: dict[str, Any] = {"ok": response.ok, "text": response.text}
    if response.mode:
        result["mode"] = response.mode
    if response.error is not None:
        result["error"] = response.error.to_dict()
    return result


def describe(method: str, params: Any) -> str:
    """One line saying what a client asked, for `:Lsap log`."""
    if method == "request":
        payload = params.get("request", params) if isinstance(params, dict) else params
        if isinstance(payload, dict):
            locate = payload.get("locate")
            try:
                where = locate if isinstance(locate, str) else json.dumps(locate) if locate else ""
            except (TypeError, ValueError, RecursionError):  # whatever a client sent, log a line
                where = "(locate not printable)"
            return f"{payload.get('mode')} {where}".strip()[:200]
    if method == "text" and isinstance(params, dict):
        text = str(params.get("text", ""))
        files = [line[9:].strip() for line in text.splitlines() if line.startswith("*** File:")]
        return "text " + ", ".join(files)
    if method == "batch" and isinstance(params, dict):
        requests = params.get("requests")
        return f"batch of {len(requests) if isinstance(requests, list) else 0}"
    return method


@dataclass
class Peer:
    """One connected client: its name (from `client` in any params) and its pending work."""

    name: str
    authenticated: bool
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    running: int = 0  # methods in progress, capped by MAX_IN_FLIGHT


def peer_uid(writer: asyncio.StreamWriter) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux SO_PEERCRED)."""
    sock = writer.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


def check_loopback(host: str, force: bool) -> None:
    """TCP is for this machine only unless the user insists (`tcp_force`)."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not force:
        raise LsapError(
            ErrorCode.DENIED,
            f"refusing to listen on {host}: the agent socket may only bind a loopback address",
            hint="use 127.0.0.1 or ::1, or set tcp_force = true if you really mean it",
        )


class SocketServer:
    """Serves one `Service` to many agent clients, many requests in flight each."""

    def __init__(self, service: Service, path: Path, *,
                 on_activity: Callable[[], None] | None = None, on_event: EventSink | None = None,
                 extra_methods: dict[str, Method] | None = None) -> None:
        self.service = service
        self.path = path
        self.on_activity = on_activity or (lambda: None)
        self.on_event = on_event
        self.token: str | None = None
        self.tcp_address: tuple[str, int] | None = None
        self.info_extra: dict[str, Any] = {}
        self._servers: list[asyncio.AbstractServer] = []
        self._numbers = iter(range(1, 1 << 62))
        self.running = 0  # methods in progress over all clients (the daemon's idle check)
        self.methods: dict[str, Method] = {
            "request": self._request,
            "text": self._text,
            "batch": self._batch,
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
            server = await asyncio.start_unix_server(self._unix_client, str(self.path),
                                                     limit=MAX_MESSAGE)
        finally:
            os.umask(old_umask)
        self.path.chmod(0o600)
        self._servers.append(server)

    async def start_tcp(self, host: str = "127.0.0.1", port: int = 0, *,
                        force: bool = False) -> str:
        """Listen on TCP too; returns the token a client must send in `auth` first."""
        check_loopback(host, force)
        self.token = secrets.token_urlsafe(32)
        server = await asyncio.start_server(self._tcp_client, host, port, limit=MAX_MESSAGE)
        bound = server.sockets[0].getsockname()
        self.tcp_address = (str(bound[0]), int(bound[1]))
        self._servers.append(server)
        return self.token

    async def close(self) -> None:
        for server in self._servers:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # -- connections -------------------------------------------------------------------

    async def _unix_client(self, reader: asyncio.StreamReader,
                           writer: asyncio.StreamWriter) -> None:
        uid = peer_uid(writer)
        if uid is not None and uid != os.getuid():
            with contextlib.suppress(Exception):
                writer.write(_encode_json(_error(None, UNAUTHORIZED,
                                                 f"refused: uid {uid} does not own this session")))
                await writer.drain()
                writer.close()
            return
        await self._client(reader, writer, authenticated=True)

    async def _tcp_client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._client(reader, writer, authenticated=False)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                      authenticated: bool) -> None:
        peer = Peer(f"client {next(self._numbers)}", authenticated)
        try:
            first = await reader.read(1)
            if first and first[0] in b"{[ \t\r\n":
                await self._serve_json(peer, first, reader, writer)
            elif first:
                await self._serve_msgpack(peer, first, reader, writer)
        except ConnectionError:
            pass
        finally:
            for task in list(peer.tasks):
                task.cancel()
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve_json(self, peer: Peer, first: bytes, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        lock = asyncio.Lock()

        async def send(message: Any) -> None:
            async with lock:
                writer.write(_encode_json(message))
                await writer.drain()

        pending, done = first, False
        while not done:
            try:
                line = pending + await reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as eof:  # the last line may lack its newline
                line, done = pending + eof.partial, True
            except asyncio.LimitOverrunError as overrun:  # drop it, keep the connection
                await _skip_line(reader, overrun.consumed)
                await send(_error(None, TOO_LARGE, f"message larger than {MAX_MESSAGE} bytes"))
                pending = b""
                continue
            pending = b""
            if line.strip():
                self._spawn(peer, self._answer_json(peer, line, send))

    async def _serve_msgpack(self, peer: Peer, first: bytes, reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
        lock = asyncio.Lock()

        async def send(message: list[Any]) -> None:
            async with lock:
                writer.write(msgpack.packb(message, use_bin_type=True))
                await writer.drain()

        # msgpack has no delimiters: a message over the limit is still parsed (the buffer
        # allows a few times the limit) and then refused by size, so the stream stays in step.
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=4 * MAX_MESSAGE)
        data, offset = first, 0
        while data:
            try:
                unpacker.feed(data)
                for message in unpacker:
                    size, offset = unpacker.tell() - offset, unpacker.tell()
                    self._spawn(peer, self._answer_msgpack(peer, message, size, send))
            except msgpack.BufferFull:
                await send([MSGPACK_NOTIFICATION, "lsap_error",
                            [f"message larger than {4 * MAX_MESSAGE} bytes; closing"]])
                return
            except (ValueError, msgpack.UnpackException):
                # Bytes that are not msgpack: there is no way to find the next message.
                await send([MSGPACK_NOTIFICATION, "lsap_error", ["malformed msgpack; closing"]])
                return
            data = await reader.read(1 << 16)

    def _spawn(self, peer: Peer, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        peer.tasks.add(task)
        task.add_done_callback(peer.tasks.discard)

    async def _answer_json(self, peer: Peer, line: bytes,
                           send: Callable[[Any], Awaitable[None]]) -> None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            await _quiet(send(_error(None, PARSE_ERROR,
                                     "not valid JSON; send one JSON-RPC object per line")))
            return
        if isinstance(message, list) and message:  # a JSON-RPC batch: one array of replies
            replies = await asyncio.gather(*(self._reply_json(peer, m) for m in message))
            answered = [r for r in replies if r is not None]
            if answered:
                await _quiet(send(answered))
            return
        reply = await self._reply_json(peer, message)
        if reply is not None:
            await _quiet(send(reply))

    async def _reply_json(self, peer: Peer, message: Any) -> dict[str, Any] | None:
        """The reply to one JSON-RPC message; None for a notification."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return _error(msg_id, INVALID_REQUEST, 'a JSON-RPC request is '
                          '{"jsonrpc":"2.0","id":1,"method":"…","params":{…}}')
        try:
            result = await self._call(peer, message["method"], message.get("params"))
        except RpcFailure as failure:
            reply = _error(msg_id, failure.code, str(failure))
        else:
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
        return reply if "id" in message else None

    async def _answer_msgpack(self, peer: Peer, message: Any, size: int,
                              send: Callable[[list[Any]], Awaitable[None]]) -> None:
        if isinstance(message, list) and len(message) == 4 and message[0] == MSGPACK_REQUEST:
            kind, msg_id, method, params = message
        elif isinstance(message, list) and len(message) == 3 and message[0] == MSGPACK_NOTIFICATION:
            kind, msg_id, method, params = MSGPACK_NOTIFICATION, None, message[1], message[2]
        else:
            await _quiet(send([MSGPACK_NOTIFICATION, "lsap_error",
                               ["a msgpack-RPC request is [0, msgid, method, [params]]"]]))
            return
        if isinstance(params, list) and len(params) == 1:
            params = params[0]  # msgpack-RPC passes an array of arguments; ours take one
        try:
            if size > MAX_MESSAGE:
                raise RpcFailure(TOO_LARGE, f"message larger than {MAX_MESSAGE} bytes")
            if not isinstance(method, str):
                raise RpcFailure(INVALID_REQUEST, "the method must be a string")
            result = await self._call(peer, method, params)
        except RpcFailure as failure:
            error = {"code": failure.code, "message": str(failure)}
            reply = [MSGPACK_RESPONSE, msg_id, error, None]
        else:
            reply = [MSGPACK_RESPONSE, msg_id, None, result]
        if kind == MSGPACK_REQUEST:
            await _quiet(send(reply))

    # -- methods -------------------------------------------------------------------------

    async def _call(self, peer: Peer, method: str, params: Any) -> Any:
        """Authenticate, name the client, run a method with its timeout, log it."""
        self.on_activity()
        if isinstance(params, dict) and isinstance(params.get("client"), str) and params["client"]:
            peer.name = params["client"][:64]
        if method == "auth":
            if self.token and isinstance(params, dict) and secrets.compare_digest(
                    str(params.get("token", "")), self.token):
                peer.authenticated = True
                return {"ok": True}
            raise RpcFailure(UNAUTHORIZED, "wrong token: read it from the session's discovery file")
        if not peer.authenticated:
            raise RpcFailure(UNAUTHORIZED, 'send {"method":"auth","params":{"token":…}} first; the '
                             "token is in the session's discovery file (`lsap sessions --json`)")
        if peer.running >= MAX_IN_FLIGHT:
            raise RpcFailure(TOO_BUSY, f"{peer.name} already has {MAX_IN_FLIGHT} requests in flight; "
                             "wait for some answers before sending more")
        function = self.methods.get(method)
        if function is None:
            raise RpcFailure(METHOD_NOT_FOUND, f"unknown method {method!r}; "
                             f"methods: {', '.join(sorted(self.methods))}")
        timeout = REQUEST_TIMEOUT
        if isinstance(params, dict) and isinstance(params.get("timeout"), (int, float)):
            timeout = max(0.01, float(params["timeout"]))
        current_client.set(peer.name)
        started = time.monotonic()
        logged = self.on_event is not None and method not in ("ping", "auth")
        if logged:
            self._event({"client": peer.name, "phase": "start", "what": describe(method, params)})
        ok, text = False, ""
        peer.running += 1
        self.running += 1
        try:
            result = await asyncio.wait_for(function(params), timeout)
            ok = not (isinstance(result, dict) and result.get("ok") is False)
            text = str(result.get("text", "")) if isinstance(result, dict) else ""
            return result
        except RpcFailure as failure:
            text = str(failure)
            raise
        except asyncio.TimeoutError:
            text = f"timeout: no answer within {timeout:g} s"
            raise RpcFailure(TIMEOUT, text + '; raise it with "timeout" in params') from None
        except asyncio.CancelledError:
            text = "cancelled: the client went away"
            raise
        except LsapError as error:
            text = error.message
            raise RpcFailure(INVALID_PARAMS, error.message) from None
        except Exception as exc:
            text = f"internal error: {exc!r}"
            raise RpcFailure(INTERNAL_ERROR, text) from None
        finally:
            peer.running -= 1
            self.running -= 1
            self.on_activity()  # idle time counts from the end of the last answer
            if logged:
                ms = round((time.monotonic() - started) * 1000)
                self._event({"client": peer.name, "phase": "done", "what": describe(method, params),
                             "ok": ok, "ms": ms, "text": text})

    def _event(self, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def _request(self, params: Any) -> dict[str, Any]:
        payload = params.get("request", params) if isinstance(params, dict) else params
        if isinstance(payload, dict) and payload is params:
            payload = {k: v for k, v in payload.items() if k not in ("client", "timeout")}
        return response_result(await self.service.handle(payload))

    async def _text(self, params: Any) -> dict[str, Any]:
        text = params.get("text") if isinstance(params, dict) else params
        if not isinstance(text, str):
            raise RpcFailure(INVALID_PARAMS,
                             'text takes {"text": "*** Begin Language Server Request …"}')
        return response_result(await self.service.handle_text(text))

    async def _batch(self, params: Any) -> dict[str, Any]:
        requests = params.get("requests") if isinstance(params, dict) else params
        if not isinstance(requests, list) or not requests:
            raise RpcFailure(INVALID_PARAMS, 'batch takes {"requests": [{"mode": …}, …]}')
        if len(requests) > MAX_BATCH:
            raise RpcFailure(INVALID_PARAMS,
                             f"a batch holds at most {MAX_BATCH} requests; split it")
        responses = await asyncio.gather(*(self.service.handle(r) for r in requests))
        return {"ok": all(r.ok for r in responses),
                "results": [response_result(r) for r in responses]}

    async def _schema(self, params: Any) -> dict[str, Any]:
        return schema()

    async def _info(self, params: Any) -> dict[str, Any]:
        clients = await self.service.gateway.all_clients()
        return {
            "version": __version__,
            "roots": [str(r) for r in self.service.workspace.roots],
            "modes": sorted(REGISTRY),
            "methods": sorted([*self.methods, "auth"]),
            "pid": os.getpid(),
            "client": current_client.get(),
            "servers": [{"id": c.id, "name": c.name, "root_dir": c.root_dir,
                         "offset_encoding": c.offset_encoding, "methods": sorted(c.methods)}
                        for c in clients],
            **self.info_extra,
        }

    async def _ping(self, params: Any) -> str:
        return "pong"


async def _quiet(sending: Awaitable[None]) -> None:
    """Send a reply; a client that already left is not an error."""
    with contextlib.suppress(ConnectionError, RuntimeError):
        await sending


async def _skip_line(reader: asyncio.StreamReader, consumed: int) -> None:
    """Discard an oversized line: what was scanned, then up to and including its newline."""
    try:
        await reader.readexactly(consumed)
        while True:
            try:
                await reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await reader.readexactly(exc.consumed)
    except asyncio.IncompleteReadError:
        return


def _encode_json(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
