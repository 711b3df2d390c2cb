"""The agent socket (doc/architecture.md, Agents: socket, CLI, MCP): one per-user Unix socket speaking two framings.

A connection's first byte decides its framing: `{` (or whitespace) means newline-delimited
JSON-RPC 2.0, a msgpack array header means msgpack-RPC (as Neovim and pynvim speak it).
Both reach the same methods. The socket is 0600 in a 0700 directory and the peer's uid is
checked again with SO_PEERCRED; an optional loopback TCP listener asks for a token first.
Each connection reads, queues and answers within its limits (`connection.py`); each call
runs as its own task with a timeout; a client that goes away cancels what it still had
pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import json
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from . import __version__
from .capabilities import REGISTRY
from .capabilities.schema import request_schemas
from .connection import ASKING, MAX_BATCH, Connection, Peer
from .errors import ErrorCode, LsapError
from .fair_share import Budget, Limits, Scheduler
from .jsonvalue import Json, Jsonable, JsonObject, Params
from .pipeline import Response
from .service import Service
from .surface import CLIENT, LOOKED, SURFACE, SURFACES
from .wire import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, TIMEOUT, UNAUTHORIZED, RpcFailure


def _default_timeout() -> float:
    """A call's time limit when it names none: $LSAP_REQUEST_TIMEOUT seconds, else 120
    (doc/lsap.txt, lsap-approval: an approval's wait does not count)."""
    try:
        return max(0.01, float(os.environ.get("LSAP_REQUEST_TIMEOUT") or 120.0))
    except ValueError:
        return 120.0


REQUEST_TIMEOUT = _default_timeout()
# Connections waiting to be accepted (the kernel caps it at net.core.somaxconn), and taken
# per turn of the loop: a flood of clients that connect, send and close at once never
# fills the queue, so another client's connect is never refused (EAGAIN) behind it.
BACKLOG = 4096

T = TypeVar("T")
Method = Callable[[Json], Awaitable[Jsonable]]
EventSink = Callable[[Params], None]

# The name of the agent client whose request is running (see `surface.CLIENT`).
current_client = CLIENT


@dataclass
class CallTime:
    """How long the running call may take: its own `timeout` (`explicit`), else
    REQUEST_TIMEOUT. While the human is asked about its edit (`approval`), a default limit
    stands still, so that the agent waits as long as the approval can (its own timeout
    bounds it); an explicit one keeps running, and the approval is asked within it."""

    end: float
    explicit: bool
    held: int = 0

    def left(self) -> float:
        return self.end - time.monotonic()

    def _held(self) -> bool:
        return self.held > 0 and not self.explicit

    @contextlib.contextmanager
    def approval(self) -> Iterator[None]:
        started = time.monotonic()
        self.held += 1
        try:
            yield
        finally:
            self.held -= 1
            if not self.explicit:
                self.end += time.monotonic() - started

    async def bound(self, work: Awaitable[T]) -> T:
        """`work`'s result, or asyncio.TimeoutError once the time is up (work cancelled).

        `work` runs in the calling task (the call's `Shared.task`), which one timer cancels
        at the deadline, looking again every second while the limit stands still: no task
        of its own and no `asyncio.wait`, which every call paid for (doc/architecture.md,
        Costs)."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("CallTime.bound runs in a task")
        loop = asyncio.get_running_loop()
        expired = False
        timer: asyncio.TimerHandle

        def look() -> None:
            nonlocal timer, expired
            if self._held() or self.left() > 0:
                timer = loop.call_later(1.0 if self._held() else self.left(), look)
            else:
                expired = True
                task.cancel()

        timer = loop.call_later(max(0.0, self.left()), look)
        try:
            return await work
        except (Exception, asyncio.CancelledError):
            if not expired:
                raise
        finally:
            timer.cancel()
            if expired:  # however the cancelled work ended
                _uncancel(task)
        raise asyncio.TimeoutError


def _uncancel(task: asyncio.Task[object]) -> None:
    """The timeout's cancel of `task` taken back once it is a TimeoutError (as
    `asyncio.timeout` does), so that the task's later waits are not taken for cancelled."""
    if sys.version_info >= (3, 11):
        task.uncancel()


call_time: ContextVar[CallTime | None] = ContextVar("lsap_call_time", default=None)
# Tells the client of the running call how it is getting on (a `progress` notification on
# its connection: "waiting for the human's approval …"); None when it cannot be told.
progress: ContextVar[Callable[[str], None] | None] = ContextVar("lsap_progress", default=None)


def call_key(client: str, method: str, params: Json) -> str | None:
    """What makes two calls the same call: the client, the method and the params (but the
    time limit and the surface); None for params that are no JSON object."""
    if not isinstance(params, dict):
        return None
    try:
        body = json.dumps({k: v for k, v in params.items() if k not in ("timeout", "surface")}, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None
    return f"{client}\0{method}\0{body}"


@dataclass
class Shared:
    """A call's work, which an identical call resent while the first waits for the human's
    approval joins instead of asking again; cancelled once no caller waits for it. Its key
    is made only when a resend is compared with it (most calls are never asked about)."""

    task: asyncio.Task[Jsonable]
    limit: CallTime
    client: str
    method: str
    params: Json
    waiters: int = 1

    @functools.cached_property
    def key(self) -> str | None:
        return call_key(self.client, self.method, self.params)

    @property
    def asking(self) -> bool:
        """Whether it waits for the human's approval now."""
        return bool(self.limit.held) and not self.task.done()


def schema() -> JsonObject:
    """JSON Schema of every request model, by mode (the same as the `schema` mode's)."""
    return request_schemas()


def response_result(response: Response) -> Params:
    """A service response as the socket returns it."""
    result: Params = {"ok": response.ok, "text": response.text}
    if response.mode:
        result["mode"] = response.mode
    if response.status:
        result["status"] = response.status
    if response.error is not None:
        result["error"] = response.error.to_dict()
    return result


def describe(method: str, params: Json) -> str:
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


@dataclass
class _Outcome:
    """How a call went, for the activity log."""

    ok: bool = False
    text: str = ""


def _timeout(params: Json) -> tuple[float, bool]:
    """A call's timeout in seconds, and whether the client gave it (`timeout` in params)."""
    asked = params.get("timeout") if isinstance(params, dict) else None
    if isinstance(asked, (int, float)):
        return max(0.01, float(asked)), True
    return REQUEST_TIMEOUT, False


def _call_context(peer: Peer, params: Json, limit: CallTime) -> list[tuple[str, int]]:
    """What the call's work reads from its context: its deadline, its client, how to send
    it progress, the surface its follow-up requests are written for; and the places it
    looked at, which it collects for the log."""
    call_time.set(limit)
    current_client.set(peer.name)
    notify = peer.notify
    progress.set((lambda message: notify("progress", {"message": message})) if notify else None)
    looked: list[tuple[str, int]] = []
    LOOKED.set(looked)
    surface = params.get("surface") if isinstance(params, dict) else None
    if (named := next((s for s in SURFACES if s == surface), None)) is not None:
        SURFACE.set(named)  # follow-up requests are written in its form
    return looked


class SocketServer:
    """Serves one `Service` to many agent clients, many requests in flight each."""

    def __init__(self, service: Service, path: Path, *,
                 on_activity: Callable[[], None] | None = None, on_event: EventSink | None = None,
                 extra_methods: dict[str, Method] | None = None, limits: Limits | None = None,
                 scheduler: Scheduler | None = None) -> None:
        self.service = service
        self.path = path
        self.on_activity = on_activity or (lambda: None)
        self.on_event = on_event
        self.limits = limits or Limits()
        self.scheduler = scheduler or Scheduler(self.limits.running)
        self.connections: set[Connection] = set()
        self.budget = Budget()
        self.token: str | None = None
        self.tcp_address: tuple[str, int] | None = None
        self.info_extra: Params = {}
        self._servers: list[asyncio.AbstractServer] = []
        self._schemas: asyncio.Future[JsonObject] | None = None  # made on a thread at start
        self._numbers = iter(range(1, 1 << 62))
        self._callers: set[int] = set()  # the peers (by id) that made calls and are connected
        self.running = 0  # methods in progress over all clients
        self.inflight: list[Shared] = []  # the running calls of the methods that may edit
        self.methods: dict[str, Method] = {
            "request": self._request,
            "text": self._text,
            "batch": self._batch,
            "schema": self._schema,
            "info": self._info,
            "ping": self._ping,
            **(extra_methods or {}),
        }

    @property
    def busy(self) -> bool:
        """Whether any call is running or waiting (the daemon's idle check)."""
        return self.running > 0 or any(c.queue or c.running for c in self.connections)

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        loop = asyncio.get_running_loop()
        old_umask = os.umask(0o177)
        try:
            server = await loop.create_unix_server(lambda: Connection(self, unix=True), str(self.path),
                                                   backlog=BACKLOG)
        finally:
            os.umask(old_umask)
        self.path.chmod(0o600)
        self._servers.append(server)
        # The modes' JSON Schemas, made once (~50 ms, seconds on a loaded machine) on a thread
        # as the socket opens: the first `schema` call does not hold every other client.
        self._schemas = asyncio.ensure_future(asyncio.to_thread(schema))

    async def start_tcp(self, host: str = "127.0.0.1", port: int = 0, *,
                        force: bool = False) -> str:
        """Listen on TCP too; returns the token a client must send in `auth` first."""
        check_loopback(host, force)
        self.token = secrets.token_urlsafe(32)
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: Connection(self, unix=False), host, port)
        bound = server.sockets[0].getsockname()
        self.tcp_address = (str(bound[0]), int(bound[1]))
        self._servers.append(server)
        return self.token

    async def close(self, reason: str = "it is shutting down") -> None:
        """Stop listening; calls still waiting or running are answered `session_gone`."""
        for server in self._servers:
            server.close()
        connections = list(self.connections)
        for conn in connections:
            conn.stop(reason)
        tasks = [task for conn in connections for task in conn.tasks]
        if tasks:
            await asyncio.wait(tasks, timeout=2)
        for conn in connections:
            conn.finish()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    # -- what a connection asks of its server ------------------------------------------------

    def next_name(self) -> str:
        return f"agent-{next(self._numbers)}"

    def left(self, peer: Peer) -> None:
        """A connection closed: if it made calls, `:Lsap agents` hears its agent left."""
        if id(peer) in self._callers:
            self._callers.discard(id(peer))
            self._event({"client": peer.name, "phase": "left", "what": "disconnected"})

    def authentic(self, params: Json) -> bool:
        """Whether `auth` params carry the TCP token."""
        return bool(self.token) and isinstance(params, dict) and secrets.compare_digest(
            str(params.get("token", "")), str(self.token))

    # -- methods -------------------------------------------------------------------------

    async def call(self, peer: Peer, method: str, params: Json) -> Jsonable:
        """Name the client, run a method with its timeout, log it."""
        self.on_activity()
        client = params.get("client") if isinstance(params, dict) else None
        if isinstance(client, str) and client:
            peer.name = client[:64]
        if method == "auth":
            if self.authentic(params):
                return {"ok": True}
            raise RpcFailure(UNAUTHORIZED, "wrong token: read it from the session's discovery file")
        function = self._method(peer, method)
        timeout, explicit = _timeout(params)
        pending = self._pending(peer, method, params)
        if pending is not None:
            return await self._join(pending)  # the same edit, resent while the human is asked
        limit = CallTime(time.monotonic() + timeout, explicit)
        looked = _call_context(peer, params, limit)
        started = time.monotonic()
        logged = self.on_event is not None and method not in ("ping", "auth")
        if logged:
            self._event({"client": peer.name, "phase": "start", "what": describe(method, params)})
        outcome = _Outcome()
        self.running += 1
        shared = Shared(asyncio.ensure_future(limit.bound(function(params))), limit, peer.name, method, params)
        editing = method in ("request", "text", "batch")  # the methods that may ask the human
        if editing:
            self.inflight.append(shared)
        try:
            return await self._answer(shared, timeout, outcome)
        finally:
            if editing:
                self.inflight.remove(shared)
            self.running -= 1
            self.on_activity()  # idle time counts from the end of the last answer
            if logged:
                ms = round((time.monotonic() - started) * 1000)
                self._event({"client": peer.name, "phase": "done", "what": describe(method, params),
                             "ok": outcome.ok, "ms": ms, "text": outcome.text,
                             "places": [{"path": p, "line": line} for p, line in looked]})

    def _method(self, peer: Peer, method: str) -> Method:
        """The method called (its client's first call but a ping: the agent joined)."""
        function = self.methods.get(method)
        if function is None:
            raise RpcFailure(METHOD_NOT_FOUND, f"unknown method {method!r}; "
                             f"methods: {', '.join(sorted(self.methods))}")
        if id(peer) not in self._callers and method not in ("ping", "auth"):
            self._callers.add(id(peer))  # its first call: the agent joined
            self._event({"client": peer.name, "phase": "joined", "what": "connected"})
        return function

    def _pending(self, peer: Peer, method: str, params: Json) -> Shared | None:
        """The same call of the same client, still waiting for the human's approval."""
        asking = [s for s in self.inflight if s.asking]
        if asking and (key := call_key(peer.name, method, params)) is not None:
            return next((s for s in asking if s.key == key), None)
        return None

    async def _answer(self, shared: Shared, timeout: float, outcome: _Outcome) -> Jsonable:
        """The shared work's result, its failures as the protocol's; `outcome` says how it
        went, for the log."""
        try:
            result = await self._join(shared, first=True)
            outcome.ok = not (isinstance(result, dict) and result.get("ok") is False)
            outcome.text = str(result.get("text", "")) if isinstance(result, dict) else ""
            return result
        except RpcFailure as failure:
            outcome.text = str(failure)
            raise
        except asyncio.TimeoutError:
            outcome.text = f"timeout: no answer within {timeout:g} s"
            raise RpcFailure(TIMEOUT, outcome.text + '; raise it with "timeout" in params') from None
        except asyncio.CancelledError:
            outcome.text = "cancelled: the client went away"
            raise
        except LsapError as error:
            outcome.text = error.message
            raise RpcFailure(INVALID_PARAMS, error.message) from None
        except Exception as exc:
            outcome.text = f"internal error: {exc!r}"
            raise RpcFailure(INTERNAL_ERROR, outcome.text) from None

    @staticmethod
    async def _join(shared: Shared, first: bool = False) -> Jsonable:
        """The shared work's result; a caller that goes away leaves it to the others, the
        last one cancels it."""
        if not first:
            shared.waiters += 1
        try:
            return await asyncio.shield(shared.task)
        finally:
            shared.waiters -= 1
            if shared.waiters == 0 and not shared.task.done():
                shared.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await shared.task

    def _event(self, event: Params) -> None:
        if self.on_event is not None:
            self.on_event(event)

    async def _request(self, params: Json) -> Params:
        payload = params.get("request", params) if isinstance(params, dict) else params
        if isinstance(payload, dict) and payload is params:
            payload = {k: v for k, v in payload.items() if k not in ("client", "timeout", "surface")}
        return response_result(await self.service.handle(payload))

    async def _text(self, params: Json) -> Params:
        text = params.get("text") if isinstance(params, dict) else params
        if not isinstance(text, str):
            raise RpcFailure(INVALID_PARAMS,
                             'text takes {"text": "*** Begin Language Server Request …"}')
        return response_result(await self.service.handle_text(text))

    async def _batch(self, params: Json) -> Params:
        requests = params.get("requests") if isinstance(params, dict) else params
        if not isinstance(requests, list) or not requests:
            raise RpcFailure(INVALID_PARAMS, 'batch takes {"requests": [{"mode": …}, …]}')
        if len(requests) > MAX_BATCH:
            raise RpcFailure(INVALID_PARAMS,
                             f"a batch holds at most {MAX_BATCH} requests; split it")
        responses = await asyncio.gather(*(self.service.handle(r) for r in requests))
        return {"ok": all(r.ok for r in responses),
                "results": [response_result(r) for r in responses]}

    async def _schema(self, params: Json) -> JsonObject:
        return await asyncio.shield(self._schemas) if self._schemas is not None else schema()

    async def _info(self, params: Json) -> Params:
        # What the service asked of Neovim so far (calls into it, LSP requests sent), as it
        # was before this call's own.
        stats = dict(self.service.gateway.stats)
        clients = await self.service.gateway.all_clients()
        return {
            "version": __version__,
            "roots": [str(r) for r in self.service.workspace.roots],
            "modes": sorted(REGISTRY),
            "methods": sorted([*self.methods, "auth"]),
            "limits": self.limits.public(),
            "scheduler": self.scheduler.counts(self.connections, ASKING.get()),
            "stats": stats,
            "pid": os.getpid(),
            "client": current_client.get(),
            "servers": [{"id": c.id, "name": c.name, "root_dir": c.root_dir,
                         "offset_encoding": c.offset_encoding, "methods": sorted(c.methods)}
                        for c in clients],
            **self.info_extra,
        }

    async def _ping(self, params: Json) -> str:
        return "pong"
