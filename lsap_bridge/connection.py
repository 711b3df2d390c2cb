"""One agent connection (`Connection`): what it reads, within its budget, the calls it runs
as the scheduler allows, and the replies it writes (doc/lsap.txt, lsap-limits and
lsap-queue; doc/architecture.md, "Agents: socket, CLI, MCP"). The wire it speaks is
`wire.py`; the limits, the budget of all connections and the scheduler are `fair_share.py`.

What a connection may hold is bounded by `Limits`, never by what the client does: the calls
it sent that are not answered yet, and the replies it has not read, stay within
`Limits.memory`. Past that the connection is no longer read from (the client's own writes
then block in the kernel), and one that leaves its replies unread for `Limits.stall`
seconds is closed, with the reason in the log. Calls past `in_flight` wait in a bounded
queue; only past the queue's bound is a call refused, with `busy` and a retry hint. A
call's slot is given back however it ends (`Connection._ended`). Over TCP nothing beyond
a small `auth` message is read before the client has authenticated, and a new connection
at the `unauthenticated` limit drops the oldest one still waiting.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import struct
import time
import weakref
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from .fair_share import MIB, Budget, Limits, Scheduler
from .jsonvalue import Json, Jsonable, JsonObject, Params
from .surface import APPLIED, NOT_AGAIN, applied_note
from .wire import (
    DROPPED,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    JSON_START,
    MSGPACK_NOTIFICATION,
    MSGPACK_REQUEST,
    MSGPACK_RESPONSE,
    PARSE_ERROR,
    SESSION_GONE,
    TOO_BUSY,
    TOO_LARGE,
    UNAUTHORIZED,
    JsonLines,
    Malformed,
    Message,
    Msgpack,
    RpcFailure,
    encode_json,
    json_error,
    json_ids,
    pack,
)

WRITE_HIGH = MIB // 4  # unread reply bytes at which a connection is paused (no reads, no new calls)
# Unread reply bytes past which a client is behind: its waiting calls start after those of
# clients that read, and a full queue of its stops reading.
BEHIND = 64 * 1024
REFUSALS = 16  # `busy` refusals of a full queue, after which it is not read until half empty
SLICE = 64  # messages of one connection handled before the loop turns to the others
MAX_BATCH = 50  # requests in one `batch` call, and calls in one JSON-RPC batch array


LOG = logging.getLogger("lsap.server")


# The connection whose call is running (its task's context): `info` leaves that call out of
# the counts it shows.
ASKING: ContextVar[Connection | None] = ContextVar("lsap_asking", default=None)


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


@dataclass
class Call:
    """A message read and not answered yet: JSON bytes, or a parsed msgpack message."""

    message: Message
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

    def _received(self, message: Message, size: int) -> None:
        self.host.budget.note(size)
        if not self.peer.authenticated:
            self._authenticate(message)
        elif message is DROPPED or size > self.limits.message:
            self._refused([None] if message is DROPPED else self._ids(message), RpcFailure(
                TOO_LARGE, f"message larger than {self.limits.message} bytes"))
        elif self.host.budget.over(self.host.connections, self.limits.total) > 0:
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

    def _authenticate(self, message: Message) -> None:
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

    def _request(self, message: Message) -> tuple[Json, str, Json] | None:
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

    def _ids(self, message: Message) -> list[Json]:
        """The ids a message asks answers for (a JSON batch array has several)."""
        if isinstance(self.framing, JsonLines):
            return json_ids(message)
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
            return encode_json(json_error(None, RpcFailure(
                PARSE_ERROR, "not valid JSON; send one JSON-RPC object per line")))
        if isinstance(message, list) and message:  # a JSON-RPC batch: one array of replies
            if len(message) > MAX_BATCH:
                return encode_json(json_error(None, RpcFailure(
                    INVALID_REQUEST, f"a JSON-RPC batch holds at most {MAX_BATCH} calls; split it")))
            replies = await asyncio.gather(*(self._reply_json(m) for m in message))
            answered = [r for r in replies if r is not None]
            return encode_json(answered) if answered else None
        reply = await self._reply_json(message)
        return encode_json(reply) if reply is not None else None

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
        return pack(reply) if kind == MSGPACK_REQUEST else None

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
            self.host.budget.over(self.host.connections, self.limits.total)

    def _drained(self) -> int:
        """Bytes the client has read so far."""
        return self.written - self.unread()

    def _result(self, msg_id: Json, result: Jsonable) -> bytes:
        if isinstance(self.framing, Msgpack):
            return pack([MSGPACK_RESPONSE, msg_id, None, result])
        return encode_json({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _failure(self, msg_id: Json, failure: RpcFailure) -> bytes:
        if isinstance(self.framing, Msgpack):
            return pack([MSGPACK_RESPONSE, msg_id, failure.error(), None])
        return encode_json(json_error(msg_id, failure))

    def _failures(self, ids: list[Json], failure: RpcFailure) -> bytes | None:
        """The error for each id of a message (a JSON batch array gets one array)."""
        if not ids:
            return None
        if isinstance(self.framing, JsonLines) and len(ids) > 1:
            return encode_json([json_error(i, failure) for i in ids])
        return self._failure(ids[0], failure)

    def _refused(self, ids: list[Json], failure: RpcFailure) -> None:
        """Answer a message without running it."""
        self._write_reply(self._failures(ids, failure))

    def notify(self, method: str, params: JsonObject) -> None:
        """A notification to the client, in the framing it speaks (before its reply)."""
        if isinstance(self.framing, JsonLines):
            self._write(encode_json({"jsonrpc": "2.0", "method": method, "params": params}))
        elif self.framing is not None:
            self._write(pack([MSGPACK_NOTIFICATION, method, [params]]))

    def _notification_bytes(self, text: str) -> bytes:
        return pack([MSGPACK_NOTIFICATION, "lsap_error", [text]])

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
