"""One agent connection and its fair share of the service (doc/lsap.txt, lsap-limits and
lsap-queue; doc/architecture.md, "Agents: socket, CLI, MCP").

What a connection may hold is bounded by `Limits`, never by what the client does: the calls
it sent that are not answered yet, and the replies it has not read, stay within
`Limits.memory`. Past that the connection is no longer read from (the client's own writes
then block in the kernel), and one that leaves its replies unread for `Limits.stall`
seconds is closed, with the reason in the log. Calls past `in_flight` wait in a bounded
queue; only past the queue's bound is a call refused, with `busy` and a retry hint. The
`Scheduler` starts waiting calls in turn across connections, at most `running` at once,
and none while one of the human's own commands runs; a call's slot is given back however
it ends (`Connection._ended`). All connections together stay within `Limits.total`
(`Budget`): past it the ones with the most unread replies are closed first. Over TCP
nothing beyond a small `auth` message is read before the client has authenticated, and a
new connection at the `unauthenticated` limit drops the oldest one still waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import struct
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import msgpack

from .errors import ErrorCode, LsapBaseError
from .jsonvalue import Json, Jsonable, JsonObject, Params, to_int
from .surface import APPLIED, NOT_AGAIN, applied_note

MIB = 1024 * 1024
WRITE_HIGH = MIB // 4  # unread reply bytes at which a connection is paused (no reads, no new calls)
# Unread reply bytes past which a client is behind: its waiting calls start after those of
# clients that read, and a full queue of its stops reading.
BEHIND = 64 * 1024
REFUSALS = 16  # `busy` refusals of a full queue, after which it is not read until half empty
SLICE = 64  # messages of one connection handled before the loop turns to the others
MAX_BATCH = 50  # requests in one `batch` call, and calls in one JSON-RPC batch array

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603,
)
TIMEOUT, UNAUTHORIZED, TOO_LARGE, TOO_BUSY, SESSION_GONE = -32001, -32002, -32003, -32004, -32005
# Every JSON-RPC error also carries one of the stable codes of the reports, in `data.code`.
STABLE = {
    PARSE_ERROR: ErrorCode.INVALID_REQUEST, INVALID_REQUEST: ErrorCode.INVALID_REQUEST,
    METHOD_NOT_FOUND: ErrorCode.INVALID_REQUEST, INVALID_PARAMS: ErrorCode.INVALID_REQUEST,
    TOO_LARGE: ErrorCode.INVALID_REQUEST, INTERNAL_ERROR: ErrorCode.SERVER_ERROR,
    TIMEOUT: ErrorCode.TIMEOUT, UNAUTHORIZED: ErrorCode.DENIED, TOO_BUSY: ErrorCode.BUSY,
    SESSION_GONE: ErrorCode.SESSION_GONE,
}

MSGPACK_REQUEST, MSGPACK_RESPONSE, MSGPACK_NOTIFICATION = 0, 1, 2
JSON_START = b"{[ \t\r\n"  # a connection whose first byte is one of these speaks JSON lines

LOG = logging.getLogger("lsap.server")
T = TypeVar("T")
DROPPED = object()  # stands for a message over the size limit, which was not kept
# The connection whose call is running (its task's context): `info` leaves that call out of
# the counts it shows.
ASKING: ContextVar[Connection | None] = ContextVar("lsap_asking", default=None)


@dataclass(frozen=True)
class Limits:
    """What one connection, and agents together, may hold and run (`agent_limits` in setup())."""

    in_flight: int = 8  # calls of one connection running at once
    queue: int = 256  # calls of one connection waiting past `in_flight`; more are `busy`
    memory: int = 16 * MIB  # bytes of unanswered calls and unread replies per connection
    total: int = 150 * MIB  # the same, over all connections together
    running: int = 16  # agents' calls running at once, over all connections
    stall: float = 30.0  # seconds a connection may leave its replies unread before it is closed
    message: int = 10 * MIB  # one message
    auth_bytes: int = 4096  # the first message over TCP (`auth`)
    auth_timeout: float = 2.0  # seconds it has to arrive
    unauthenticated: int = 16  # TCP connections waiting to authenticate; a new one drops the oldest

    @classmethod
    def of(cls, config: Mapping[str, Json] | None) -> Limits:
        """From setup()'s `agent_limits` table (`in_flight`, `queue`, `memory_mib`,
        `total_mib`, `running`: whole numbers >= 1); what it leaves out keeps its default."""
        given = {k: max(1, to_int(v)) for k, v in (config or {}).items()
                 if k in ("in_flight", "queue", "memory_mib", "total_mib", "running")}
        for mib, name in (("memory_mib", "memory"), ("total_mib", "total")):
            if mib in given:
                given[name] = given.pop(mib) * MIB
        return cls(**given)

    def public(self) -> JsonObject:
        """The limits a client can plan with (the socket's `info`)."""
        return {"in_flight": self.in_flight, "queue": self.queue, "running": self.running,
                "memory_mib": self.memory // MIB, "total_mib": self.total // MIB,
                "message_mib": self.message // MIB, "stall_s": self.stall}


class RpcFailure(LsapBaseError):
    """A call that fails at the protocol level: a JSON-RPC error code and a message."""

    def __init__(self, code: int, message: str, data: JsonObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data or {}

    def error(self) -> JsonObject:
        return {"code": self.code, "message": str(self),
                "data": {"code": STABLE[self.code].value, **self.data}}


@dataclass
class Peer:
    """One connected client as the methods see it: its name (from `client` in any params),
    and how to send it a notification while its call runs (`progress`)."""

    name: str
    authenticated: bool
    notify: Callable[[str, JsonObject], None] | None = field(default=None, compare=False, repr=False)


class Host(Protocol):
    """What a connection needs from the server it belongs to."""

    limits: Limits
    scheduler: Scheduler
    budget: Budget
    connections: set[Connection]

    def next_name(self) -> str: ...

    def left(self, peer: Peer) -> None: ...

    def authentic(self, params: Json) -> bool: ...

    async def call(self, peer: Peer, method: str, params: Json) -> Jsonable: ...


def peer_uid(transport: asyncio.BaseTransport) -> int | None:
    """The uid of the process at the other end of a Unix socket (Linux SO_PEERCRED)."""
    sock = transport.get_extra_info("socket")
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


# -- framing ------------------------------------------------------------------------------------


class Malformed(LsapBaseError):
    """Bytes after which no next message can be found: the connection is closed."""


class JsonLines:
    """Newline-delimited JSON: complete lines out of a buffer that never holds more than
    one line over the limit (the rest of such a line is skipped as it arrives)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._start = 0  # where the next line begins
        self._scanned = 0  # no newline before this offset
        self._skipping = False

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def take(self, limit: int) -> tuple[Any, int] | None:
        """The next line and its size, (DROPPED, size) for one over `limit`, or None until a
        whole line has arrived."""
        while True:
            end = self._buffer.find(b"\n", max(self._start, self._scanned))
            if end < 0:
                self._scanned = len(self._buffer)
                size = len(self._buffer) - self._start
                if self._skipping or size > limit:
                    self._start = self._scanned = len(self._buffer)  # drop what came so far
                    if not self._skipping:
                        self._skipping = True
                        return DROPPED, size
                return None
            line, self._start = bytes(self._buffer[self._start:end]), end + 1
            if self._skipping:  # the end of a line already refused
                self._skipping = False
                continue
            if len(line) > limit:
                return DROPPED, len(line)
            if line.strip():
                return line, len(line)

    def compact(self) -> None:
        del self._buffer[:self._start]
        self._scanned -= self._start
        self._start = 0

    def buffered(self) -> int:
        return len(self._buffer) - self._start


class Msgpack:
    """msgpack-RPC: messages have no delimiters, so one over the limit is still parsed (the
    buffer allows a few times the limit) and then refused by size, keeping the stream in step."""

    def __init__(self, limit: int) -> None:
        self._most = 4 * limit
        self._unpacker = msgpack.Unpacker(raw=False, max_buffer_size=self._most)
        self._fed = self._taken = 0

    def feed(self, data: bytes) -> None:
        try:
            self._unpacker.feed(data)
        except msgpack.BufferFull:
            raise Malformed(f"message larger than {self._most} bytes") from None
        self._fed += len(data)

    def take(self, limit: int) -> tuple[Any, int] | None:
        try:
            message = next(self._unpacker)
        except StopIteration:
            return None
        except (ValueError, msgpack.UnpackException):
            raise Malformed("malformed msgpack") from None
        size, self._taken = self._unpacker.tell() - self._taken, self._unpacker.tell()
        return message, size

    def compact(self) -> None:
        pass  # the unpacker drops what it has consumed

    def buffered(self) -> int:
        return self._fed - self._taken


def _pack(message: Jsonable) -> bytes:
    packed: bytes = msgpack.packb(message, use_bin_type=True)
    return packed


def _encode_json(message: Jsonable) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def json_error(msg_id: Json, failure: RpcFailure) -> Params:
    return {"jsonrpc": "2.0", "id": msg_id, "error": failure.error()}


def _json_ids(line: bytes) -> list[Json]:
    """The ids a JSON line asks answers for (a batch array has several), for refusals."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return [None]
    items = message if isinstance(message, list) else [message]
    return [m.get("id") for m in items if isinstance(m, dict) and "id" in m] or (
        [] if isinstance(message, dict) and "method" in message else [None])


# -- one connection -----------------------------------------------------------------------------


@dataclass
class Call:
    """A message read and not answered yet: JSON bytes, or a parsed msgpack message."""

    message: Any  # a JSON line (bytes), or a msgpack value, or DROPPED
    size: int
    started: float | None = None  # when its task began to run (monotonic)
    answered: bool = False  # its reply (or none, for a notification) was handed over
    applied: list[str] = field(default_factory=list)  # the change sets its edits made (`surface.APPLIED`)


def _notifier(conn: Connection) -> Callable[[str, JsonObject], None]:
    """`conn.notify` for its `Peer`, without a reference back to the connection: a closed
    connection (a flood makes thousands) is freed at once, not at the next garbage
    collection of cycles, with the buffers it holds."""
    ref = weakref.ref(conn)

    def notify(method: str, params: JsonObject) -> None:
        if (alive := ref()) is not None:
            alive.notify(method, params)

    return notify


class Connection(asyncio.Protocol):
    """One client: reads calls while it stays within its budget, runs them as the scheduler
    allows, writes their replies."""

    def __init__(self, host: Host, unix: bool) -> None:
        self.host, self.limits, self.unix = host, host.limits, unix
        self.peer = Peer(host.next_name(), authenticated=unix, notify=_notifier(self))
        self.transport: asyncio.Transport | None = None
        self.framing: JsonLines | Msgpack | None = None
        self.queue: deque[Call] = deque()
        self.tasks: set[asyncio.Task[None]] = set()
        self.running = 0
        self.held = 0  # bytes of the calls read and not answered yet
        self.refused = 0  # calls refused `busy` since its queue was last half empty
        self.answered = 0  # calls it got answers to
        self.written = 0  # bytes handed to the transport
        self.reading = True
        self.slicing = False  # the next slice of what was read is on its way
        self.backlog = False  # what was read may hold messages not handled yet
        self.writing = True  # False while the transport's buffer is over its high-water mark
        self.closing: str | None = None  # why, once it is being closed
        self.stopping: str | None = None  # the session is stopping: why, for the replies
        self.mean = 0.2  # seconds a call takes, on average (for the retry hint)
        self._timer: asyncio.TimerHandle | None = None
        self._progress = (0, 0.0)  # bytes the client had read, and when that last grew
        self.opened = time.monotonic()

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        high = min(self.limits.memory // 2, WRITE_HIGH)  # unread replies past it pause the client
        transport.set_write_buffer_limits(high=high, low=high // 4)
        self.host.connections.add(self)
        if self.unix:  # checked before anything is read
            uid = peer_uid(transport)
            if uid is not None and uid != os.getuid():
                self._refuse(RpcFailure(UNAUTHORIZED, f"refused: uid {uid} does not own this session"))
            return
        # A full set of connections waiting to authenticate makes room: the oldest goes, so
        # idle or junk connections (another local user's, say) cannot keep the owner out.
        waiting = [c for c in self.host.connections
                   if not c.unix and not c.peer.authenticated and not c.closing and c is not self]
        if len(waiting) >= self.limits.unauthenticated:
            oldest = min(waiting, key=lambda c: c.opened)
            oldest._refuse(RpcFailure(UNAUTHORIZED, f"{len(waiting)} connections were waiting to "
                                      "authenticate and this one waited longest; send `auth` at once"))
        self._timer = asyncio.get_running_loop().call_later(self.limits.auth_timeout, self._auth_late)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        if self.framing is None:
            self.framing = JsonLines() if data[:1] in JSON_START else Msgpack(self.limits.message)
        try:
            self.framing.feed(data)
        except Malformed as exc:
            self._malformed(exc)
            return
        self.backlog = True
        self._take()

    def _take(self) -> None:
        """Handle the messages that have arrived, a slice at a time: between slices of a
        connection that sent thousands at once, the loop serves the others (and this one
        is not read from meanwhile). Over its budget it stops; `_pace` goes on later."""
        self.slicing = False
        if self.closing or self.framing is None:
            return
        try:
            for _ in range(SLICE):
                if self._pressed():
                    break
                limit = self.limits.message if self.peer.authenticated else self.limits.auth_bytes
                taken = self.framing.take(limit)
                if taken is None:
                    self.backlog = False
                    break
                self._received(*taken)
                if self.closing:
                    return
            else:
                self.slicing = True
                asyncio.get_running_loop().call_soon(self._take)
        except Malformed as exc:
            self._malformed(exc)
            return
        if not self.peer.authenticated and self.framing.buffered() > self.limits.auth_bytes:
            self._refuse(self._unauthenticated())
            return
        self.framing.compact()
        self._pace()

    def _malformed(self, exc: Malformed) -> None:
        self._notify_error(f"{exc}; closing")
        self._close(str(exc))

    def eof_received(self) -> bool | None:
        return None  # the client went away: close, and cancel what it still had pending

    def pause_writing(self) -> None:
        self.writing = False
        self._pace()
        self._progress = (self._drained(), time.monotonic())
        self._watch()

    def resume_writing(self) -> None:
        self.writing = True
        self._pace()
        if self.queue:
            self.host.scheduler.wants(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = self.closing or "the client went away"
        if self._timer is not None:
            self._timer.cancel()
        self.host.connections.discard(self)
        self.host.left(self.peer)
        self.host.scheduler.forget(self)
        self.queue.clear()
        for task in list(self.tasks):
            task.cancel()

    # -- reading ----------------------------------------------------------------------------

    def _received(self, message: Any, size: int) -> None:
        self.host.budget.note(size)
        if not self.peer.authenticated:
            self._authenticate(message)
        elif message is DROPPED or size > self.limits.message:
            self._refused([None] if message is DROPPED else self._ids(message), RpcFailure(
                TOO_LARGE, f"message larger than {self.limits.message} bytes"))
        elif self.host.budget.over(self.host) > 0:
            retry = round(min(60.0, max(0.5, self.mean * 4)), 1)
            self._refused(self._ids(message), RpcFailure(
                TOO_BUSY, "the agents' connections together hold more than the service's "
                f"{self.limits.total / MIB:g} MiB (`agent_limits.total_mib`): "
                f"this call was not run; send it again in about {retry:g} s, and read the replies of "
                "calls sent before", {"retry_after": retry}))
        elif len(self.queue) >= self.limits.queue:
            self.refused += 1
            retry = round(min(60.0, max(0.1, self.mean * len(self.queue) / self.limits.in_flight)), 1)
            self._refused(self._ids(message), RpcFailure(
                TOO_BUSY, f"{self.peer.name} already has {len(self.queue)} calls waiting (the "
                f"queue's bound) and {self.running} running: this one was not run; send it again in "
                f"about {retry:g} s, or wait for answers first", {"retry_after": retry}))
        else:
            self.queue.append(Call(message, size))
            self.held += size
            self.host.scheduler.wants(self)

    def _authenticate(self, message: Any) -> None:
        """The first message over TCP: `auth` with the token, else the connection closes."""
        request = self._request(message)
        if request is None or request[1] != "auth" or not self.host.authentic(request[2]):
            self._refuse(self._unauthenticated(), [request[0]] if request else [None])
            return
        self.peer.authenticated = True
        client = request[2].get("client") if isinstance(request[2], dict) else None
        if isinstance(client, str) and client:
            self.peer.name = client[:64]
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._write(self._result(request[0], {"ok": True}))

    def _unauthenticated(self) -> RpcFailure:
        return RpcFailure(UNAUTHORIZED, 'the first message must be {"method":"auth","params":'
                          f'{{"token":…}}}} within {self.limits.auth_bytes} bytes and '
                          f"{self.limits.auth_timeout:g} s; the token is in the session's discovery file "
                          "(`lsap sessions --json`); closing")

    def _auth_late(self) -> None:
        self._timer = None
        if not self.peer.authenticated:
            self._refuse(self._unauthenticated())

    def _request(self, message: Any) -> tuple[Json, str, Json] | None:
        """(id, method, params) of a single request, or None."""
        if message is DROPPED:
            return None
        if isinstance(self.framing, JsonLines):
            try:
                decoded = json.loads(message)
            except (ValueError, RecursionError):
                return None
            if isinstance(decoded, dict) and isinstance(decoded.get("method"), str):
                return decoded.get("id"), decoded["method"], decoded.get("params")
            return None
        if isinstance(message, list) and len(message) == 4 and message[0] == MSGPACK_REQUEST:
            params = message[3]
            params = params[0] if isinstance(params, list) and len(params) == 1 else params
            return message[1], str(message[2]), params
        return None

    def _ids(self, message: Any) -> list[Json]:
        """The ids a message asks answers for (a JSON batch array has several)."""
        if isinstance(self.framing, JsonLines):
            return _json_ids(message)
        request = self._request(message)
        return [request[0]] if request else []

    def footprint(self) -> int:
        """Bytes this connection holds: calls read and not answered, replies not read."""
        return self.held + self.unread()

    def unread(self) -> int:
        """Bytes of replies written and not read by the client yet."""
        return self.transport.get_write_buffer_size() if self.transport else 0

    def behind(self) -> bool:
        """Whether the client leaves more than `BEHIND` bytes of its replies unread."""
        return self.unread() > BEHIND

    def _pressed(self) -> bool:
        """Whether the connection is over its budget: its replies unread, or its memory; or
        its queue is full and it does not read the refusals, or was refused `REFUSALS` times
        since the queue was last half empty (`busy` is for clients that read: one that
        sends on regardless gets no more reads, its writes wait in the kernel, instead of
        thousands of refusals that the loop writes while every other client waits)."""
        return (not self.writing or self.footprint() > self.limits.memory
                or (len(self.queue) >= self.limits.queue
                    and (self.behind() or self.refused >= REFUSALS)))

    def _pace(self) -> None:
        """Read, and handle what was read, only while the connection stays within its
        budget; read more once what was read is handled."""
        if self.closing or self.transport is None:
            return
        pressed = self._pressed()
        if self.backlog and not pressed and not self.slicing:
            self.slicing = True
            asyncio.get_running_loop().call_soon(self._take)
        over = pressed or self.slicing or self.backlog
        if over and self.reading:
            self.transport.pause_reading()
            self.reading = False
        elif not over and not self.reading:
            self.transport.resume_reading()
            self.reading = True

    # -- running ----------------------------------------------------------------------------

    def ready(self) -> bool:
        """Whether a waiting call may start now: room in flight, and its replies being read."""
        return bool(self.queue) and self.running < self.limits.in_flight and self.writing and not self.closing

    def start(self) -> None:
        """Run the next waiting call. Its slot (here and in the scheduler) and its bytes are
        given back by the task's done callback, the one place that runs however the task
        ends: a task cancelled before its first step never runs a `finally` of its own."""
        call = self.queue.popleft()
        if len(self.queue) <= self.limits.queue // 2:
            self.refused = 0
        self.running += 1
        self.host.scheduler.running += 1
        task = asyncio.get_running_loop().create_task(self._run(call))
        self.tasks.add(task)
        task.add_done_callback(lambda done: self._ended(done, call))

    def _ended(self, task: asyncio.Task[None], call: Call) -> None:
        self.tasks.discard(task)
        self.running -= 1
        self.held -= call.size
        if task.cancelled():
            if self.stopping and not call.answered:
                self._write_reply(self._gone(call, started=call.started is not None))
        elif (error := task.exception()) is not None:  # a bug: say so, to the log and the client
            LOG.error("a call of %s failed", self.peer.name, exc_info=error)
            self._write_reply(self._failures(self._ids(call.message), RpcFailure(
                INTERNAL_ERROR, f"internal error: {error!r}")))
        if call.started is not None:
            self.mean = 0.8 * self.mean + 0.2 * (time.monotonic() - call.started)
        self.host.scheduler.finished(self)
        self._pace()

    async def _run(self, call: Call) -> None:
        call.started = time.monotonic()
        ASKING.set(self)
        APPLIED.set(call.applied)  # its tasks share the list: a cut-off answer says what it applied
        self._write_reply(await self._answer(call))
        call.answered = True
        self.answered += 1

    async def _answer(self, call: Call) -> bytes | None:
        if isinstance(self.framing, JsonLines):
            return await self._answer_json(call.message)
        return await self._answer_msgpack(call.message)

    async def _answer_json(self, line: bytes) -> bytes | None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return _encode_json(json_error(None, RpcFailure(
                PARSE_ERROR, "not valid JSON; send one JSON-RPC object per line")))
        if isinstance(message, list) and message:  # a JSON-RPC batch: one array of replies
            if len(message) > MAX_BATCH:
                return _encode_json(json_error(None, RpcFailure(
                    INVALID_REQUEST, f"a JSON-RPC batch holds at most {MAX_BATCH} calls; split it")))
            replies = await asyncio.gather(*(self._reply_json(m) for m in message))
            answered = [r for r in replies if r is not None]
            return _encode_json(answered) if answered else None
        reply = await self._reply_json(message)
        return _encode_json(reply) if reply is not None else None

    async def _reply_json(self, message: Json) -> Params | None:
        """The reply to one JSON-RPC message; None for a notification."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return json_error(msg_id, RpcFailure(INVALID_REQUEST, 'a JSON-RPC request is '
                              '{"jsonrpc":"2.0","id":1,"method":"…","params":{…}}'))
        try:
            result = await self.host.call(self.peer, str(message["method"]), message.get("params"))
        except RpcFailure as failure:
            reply = json_error(msg_id, failure)
        else:
            reply = {"jsonrpc": "2.0", "id": msg_id, "result": result}
        return reply if "id" in message else None

    async def _answer_msgpack(self, message: Json) -> bytes | None:
        if isinstance(message, list) and len(message) == 4 and message[0] == MSGPACK_REQUEST:
            kind, msg_id, method, params = message
        elif isinstance(message, list) and len(message) == 3 and message[0] == MSGPACK_NOTIFICATION:
            kind, msg_id, method, params = MSGPACK_NOTIFICATION, None, message[1], message[2]
        else:
            return self._notification_bytes("a msgpack-RPC request is [0, msgid, method, [params]]")
        if isinstance(params, list) and len(params) == 1:
            params = params[0]  # msgpack-RPC passes an array of arguments; ours take one
        try:
            if not isinstance(method, str):
                raise RpcFailure(INVALID_REQUEST, "the method must be a string")
            result = await self.host.call(self.peer, method, params)
        except RpcFailure as failure:
            reply: list[Jsonable] = [MSGPACK_RESPONSE, msg_id, failure.error(), None]
        else:
            reply = [MSGPACK_RESPONSE, msg_id, None, result]
        return _pack(reply) if kind == MSGPACK_REQUEST else None

    # -- writing ----------------------------------------------------------------------------

    def _write_reply(self, reply: bytes | None) -> None:
        if reply is not None:
            self._write(reply)

    def _write(self, data: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        self.transport.write(data)
        self.written += len(data)
        self.host.budget.note(len(data))
        if self.unread():  # the client is behind: mind the total
            self.host.budget.over(self.host)

    def _drained(self) -> int:
        """Bytes the client has read so far."""
        return self.written - self.unread()

    def _result(self, msg_id: Json, result: Jsonable) -> bytes:
        if isinstance(self.framing, Msgpack):
            return _pack([MSGPACK_RESPONSE, msg_id, None, result])
        return _encode_json({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _failure(self, msg_id: Json, failure: RpcFailure) -> bytes:
        if isinstance(self.framing, Msgpack):
            return _pack([MSGPACK_RESPONSE, msg_id, failure.error(), None])
        return _encode_json(json_error(msg_id, failure))

    def _failures(self, ids: list[Json], failure: RpcFailure) -> bytes | None:
        """The error for each id of a message (a JSON batch array gets one array)."""
        if not ids:
            return None
        if isinstance(self.framing, JsonLines) and len(ids) > 1:
            return _encode_json([json_error(i, failure) for i in ids])
        return self._failure(ids[0], failure)

    def _refused(self, ids: list[Json], failure: RpcFailure) -> None:
        """Answer a message without running it."""
        self._write_reply(self._failures(ids, failure))

    def notify(self, method: str, params: JsonObject) -> None:
        """A notification to the client, in the framing it speaks (before its reply)."""
        if isinstance(self.framing, JsonLines):
            self._write(_encode_json({"jsonrpc": "2.0", "method": method, "params": params}))
        elif self.framing is not None:
            self._write(_pack([MSGPACK_NOTIFICATION, method, [params]]))

    def _notification_bytes(self, text: str) -> bytes:
        return _pack([MSGPACK_NOTIFICATION, "lsap_error", [text]])

    def _notify_error(self, text: str) -> None:
        self._write(self._notification_bytes(text))

    def _refuse(self, failure: RpcFailure, ids: list[Json] | None = None) -> None:
        """Answer with an error, then close."""
        for msg_id in ids or [None]:
            self._write(self._failure(msg_id, failure))
        self._close(str(failure))

    def _close(self, reason: str, *, abort: bool = False, log: bool = False) -> None:
        if self.closing or self.transport is None:
            return
        self.closing = reason
        if log:
            LOG.warning("closed the connection of %s: %s", self.peer.name, reason)
        if abort:
            self.transport.abort()  # drop what it left unread at once
        else:
            self.transport.close()  # after what is buffered has been written

    def close_stalled(self, reason: str) -> None:
        """Close a client that does not read its replies: what it left unread is dropped."""
        self._close(reason, abort=True, log=True)

    def _watch(self) -> None:
        """While its replies stay unread, check each second that the client still reads."""
        if self._timer is None and not self.closing:
            interval = min(1.0, self.limits.stall / 4)
            self._timer = asyncio.get_running_loop().call_later(interval, self._check_stall)

    def _check_stall(self) -> None:
        self._timer = None
        if self.closing or self.writing:
            return
        drained, since = self._progress
        if self._drained() > drained:
            self._progress = (self._drained(), time.monotonic())
        elif time.monotonic() - since >= self.limits.stall:
            self.close_stalled(f"it left {self.unread() / MIB:.1f} MiB of replies unread for "
                               f"{self.limits.stall:g} s")
            return
        self._watch()

    # -- the session stopping -----------------------------------------------------------------

    def _gone(self, call: Call, started: bool) -> bytes | None:
        if call.applied:  # the edit landed (journalled, switched): it must not be sent again
            told = f"while it ran this call; {applied_note(call.applied)}; {NOT_AGAIN}"
        elif started:
            told = ("while it ran this call, which was cancelled before it applied any edit; send "
                    "it again: lsap finds, or starts, a session for it")
        else:
            told = "before it ran this call; send it again: lsap finds, or starts, a session for it"
        failure = RpcFailure(SESSION_GONE, f"the lsap session stopped ({self.stopping}) {told}",
                             {"started": started, "applied": list(call.applied)})
        return self._failures(self._ids(call.message), failure)

    def stop(self, reason: str) -> None:
        """The session is stopping: waiting calls are answered `session_gone` (not run), the
        running ones are cancelled and answered the same; `finish` closes once they have."""
        self.stopping = reason
        while self.queue:
            call = self.queue.popleft()
            self.held -= call.size
            self._write_reply(self._gone(call, started=False))
        for task in list(self.tasks):
            task.cancel()

    def finish(self) -> None:
        self._close(self.stopping or "the session stopped")


class Budget:
    """The bytes all connections hold together, against `Limits.total`. Counting sums over
    the connections, so it is done again only once enough bytes came or went since the
    last count, or some time passed: a flood of small messages does not pay it for each."""

    EVERY = 0.02  # seconds
    MOVED = 256 * 1024  # bytes read or written

    def __init__(self) -> None:
        self._at = -1.0
        self._moved = 0
        self._over = 0

    def note(self, size: int) -> None:
        self._moved += size

    def over(self, host: Host) -> int:
        """Bytes over the total (0 or less: within it). Over it, the connections whose
        replies stay unread are closed first, the largest first, until the rest fit; what
        is still over makes new calls `busy`."""
        now = time.monotonic()
        if self._moved < self.MOVED and now - self._at < self.EVERY:
            return self._over
        self._at, self._moved = now, 0
        held = {c: c.footprint() for c in host.connections if not c.closing}
        total = host.limits.total
        over = sum(held.values()) - total
        if over > 0:
            unread = {c: c.unread() for c in held}
            for conn in sorted((c for c in held if unread[c]), key=lambda c: -unread[c]):
                conn.close_stalled(f"the agents' connections together held more than {total / MIB:g} "
                                   f"MiB and it left {unread[conn] / MIB:.1f} MiB of replies unread")
                over -= held[conn]
                if over <= 0:
                    break
        self._over = over
        return over


class Scheduler:
    """Starts agents' calls in turn across the connections that have some waiting (one call
    per connection per turn; those whose clients read their replies first), at most
    `capacity` at once, and none while one of the human's own commands runs: a greedy
    connection cannot starve the others, and agents never hold the human back."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.running = 0
        self.human = 0  # the human's commands running
        self._turns: OrderedDict[Connection, None] = OrderedDict()  # waiting connections, in turn

    def wants(self, conn: Connection) -> None:
        """A connection has a call waiting."""
        self._turns.setdefault(conn)
        self._pump()

    def finished(self, conn: Connection) -> None:
        """One of its calls ended: the slot goes to the next in turn, then to it again."""
        self.running -= 1
        if conn.queue and not conn.closing:
            self._turns.setdefault(conn)
        self._pump()

    def forget(self, conn: Connection) -> None:
        self._turns.pop(conn, None)

    def counts(self, connections: set[Connection], most: int = 20) -> JsonObject:
        """What runs and waits now, in total and for the busiest connections (`info`): the
        call asking (an `info` over the socket) is left out, so an idle service shows 0."""
        asking = ASKING.get()
        mine = 1 if asking is not None and asking.running > 0 else 0
        busy = sorted(((c.running - (mine if c is asking else 0), len(c.queue), c)
                       for c in connections), key=lambda t: (-t[0] - t[1], t[2].peer.name))
        busy = [t for t in busy if t[0] or t[1]]
        return {
            "running": self.running - mine, "queued": sum(q for _, q, _ in busy),
            "capacity": self.capacity, "human": self.human,
            "connections": len(connections),
            "unauthenticated": sum(1 for c in connections if not c.peer.authenticated),
            "memory_mib": round(sum(c.footprint() for c in connections) / MIB, 1),
            "busiest": [{"client": c.peer.name, "running": r, "queued": q,
                         "memory_mib": round(c.footprint() / MIB, 1)} for r, q, c in busy[:most]],
            "busiest_left_out": max(0, len(busy) - most),
        }

    def _pump(self) -> None:
        while self.running < self.capacity and not self.human and self._turns:
            conn = self._next()
            del self._turns[conn]
            if not conn.ready():
                continue  # it asks again when it can (a call of its own ended, or it read)
            conn.start()  # counts itself in `running`, and gives it back however it ends
            if conn.queue:
                self._turns[conn] = None  # back of the line

    def _next(self) -> Connection:
        """The first connection in turn whose client reads its replies, among those one with
        no call running, and among those one answered before: a call whose reply would wait
        unread, a greedy client's next call, or a burst of new connections (50 clients that
        never read, connecting at once) does not hold back a client asking one thing."""
        return min(self._turns, key=lambda c: (c.behind(), c.running > 0, c.answered == 0))

    @contextlib.asynccontextmanager
    async def _human_first(self) -> AsyncIterator[None]:
        self.human += 1
        try:
            yield
        finally:
            self.human -= 1
            self._pump()

    def ahead(self, handler: Callable[[T], Awaitable[None]]) -> Callable[[T], Coroutine[Any, Any, None]]:
        """The human's command handler: while it runs, no agent call starts (those running
        finish)."""

        async def run(params: T) -> None:
            async with self._human_first():
                await handler(params)

        return run
