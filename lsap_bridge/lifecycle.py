"""A session's life, one path for the human's Neovim (host.py) and the embedded daemon
(daemon.py): settle the edits a crash left, open the agent socket, publish the session for
`lsap` to find, serve until its Neovim goes or it is told to stop, then withdraw it, answer
what is still waiting with `session_gone` and end what it started: no process, socket or
discovery file is left behind.

What differs is in the `Plan` and in what the caller hands over: the human's Neovim is
connected to (and outlives the session; it removes the session's files should the host die
first), the daemon's is started with it and ended by it (`Owned`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from . import cpu
from .connection import ASKING
from .discovery import SessionInfo, runtime_dir
from .edits.switch import journal_dir, recover_edits
from .errors import LsapError
from .fair_share import Limits, Scheduler
from .gateway import EditorGateway
from .server import EventSink, Method, SocketServer
from .service import Service

Tell = Callable[[str], Awaitable[None]]
LOG = logging.getLogger("lsap.lifecycle")
TRACK_AFTER = 5.0  # seconds after a call or the warm-up during which servers are still tracked
IDLE_MARGIN = 0.05  # seconds past the idle timeout at which an idle session looks again


class Owned(Protocol):
    """A Neovim the session started, and so must end (`embedded.Embedded`)."""

    async def track(self) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Plan:
    """What differs between the editor's session and the daemon's."""

    kind: Literal["editor", "daemon"]
    name: str  # of the socket and the discovery file: `nvim-<pid>`, `daemon-<hash of the root>`
    socket: bool = True  # False: agents are kept out (`socket = false` in setup())
    limits: Limits = field(default_factory=Limits)
    tcp: str = ""  # "host:port" of a loopback listener beside the socket, if any
    tcp_force: bool = False
    idle_timeout: float | None = None  # stop after this many seconds without a call
    signals: bool = False  # SIGTERM, SIGINT and SIGHUP stop it (only the main thread may)
    # Seconds between looks at the servers Neovim started (`Owned.track`), while something
    # may start one: the warm-up, a call, and TRACK_AFTER seconds after it. Idle, the session
    # sleeps until its idle timeout is due, or until a call, a stop or Neovim's exit.
    tick: float = 0.5
    # Open the workspace for its servers at start (`Servers.open_workspace`): the daemon's
    # Neovim has no buffer yet, so its first request would wait for the servers to index.
    warm: bool = False


class Lifecycle:
    """Runs one session: `run` returns once it has stopped and cleaned up, however it ended."""

    def __init__(self, service: Service, gateway: EditorGateway, plan: Plan, *, owned: Owned | None = None,
                 scheduler: Scheduler | None = None, on_event: EventSink | None = None,
                 tell: Tell | None = None) -> None:
        """`gateway`: the service's own, over Neovim (its pid, version and connection);
        `owned`: the Neovim this session started (a client may then `shutdown` it);
        `scheduler`: the one the human's commands already go through; `on_event`: where
        agents' calls are logged; `tell`: how the human hears of recoveries and failures."""
        self.service, self.gateway, self.plan, self.owned = service, gateway, plan, owned
        self.scheduler = scheduler or Scheduler(plan.limits.running)
        self.on_event, self.tell = on_event, tell
        self.server: SocketServer | None = None
        self.info: SessionInfo | None = None
        self.stopping = asyncio.Event()
        self.reason = "it is shutting down"  # said to the clients whose calls it cut off
        self.last_call = time.monotonic()
        self.warming: asyncio.Task[None] | None = None
        self.wake = asyncio.Event()  # something happened that `_serve` looks at
        self.tracked = 0.0  # when `_serve` last had the servers tracked
        self.active_until = 0.0  # servers are tracked until then after a call or the warm-up
        self.stopping_task: asyncio.Task[None] | None = None  # `lsap daemon stop`'s

    def stop(self, reason: str) -> None:
        if not self.stopping.is_set():
            self.reason = reason
            self.stopping.set()
        self.wake.set()

    async def run(self) -> None:
        if self.plan.signals:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.add_signal_handler(sig, self.stop, f"signal {sig.name}")
        try:
            await self._start()
            await self._serve()
        finally:
            await self._end()

    async def _start(self) -> None:
        gateway = self.gateway
        # Before any call: logged by the journal.
        for recovery in await recover_edits(gateway, self.service.workspace.roots):
            await self._tell(recovery.message)
        if not self.plan.socket:
            return
        methods: dict[str, Method] = {"shutdown": self._shutdown} if self.owned is not None else {}
        self.server = server = SocketServer(
            self.service, runtime_dir() / f"{self.plan.name}.sock", on_activity=self._touch,
            on_event=self.on_event, extra_methods=methods, limits=self.plan.limits,
            scheduler=self.scheduler)
        await server.start()
        nvim_version = await gateway.nvim_version()
        tcp = token = ""
        if self.plan.tcp:
            try:
                token = await server.start_tcp(*parse_tcp(self.plan.tcp), force=self.plan.tcp_force)
            except (LsapError, OSError, ValueError) as exc:
                await self._tell(f"no TCP listener: {exc}")
            else:
                assert server.tcp_address is not None
                tcp = "{}:{}".format(*server.tcp_address)
        self.info = SessionInfo(self.plan.name, self.plan.kind, os.getpid(), str(server.path),
                                [str(r) for r in self.service.workspace.roots],
                                nvim_pid=gateway.nvim_pid, nvim_version=nvim_version, tcp=tcp, token=token,
                                journals=str(await journal_dir(gateway)))
        server.info_extra = {"nvim_pid": gateway.nvim_pid, "nvim_version": nvim_version,
                             "session": self.plan.name}
        self.info.publish()
        if self.plan.warm:  # in the background: clients are served meanwhile
            self.warming = asyncio.create_task(self._warm())
            self.warming.add_done_callback(lambda _task: self._active())
        if self.owned is None:  # the human's Neovim may outlive this host: it cleans up then
            await gateway.remove_on_exit([str(self.info.file), str(server.path)])

    async def _serve(self) -> None:
        conn = self.gateway.conn
        conn.when_closed(self.wake.set)
        while not self.stopping.is_set() and not conn.closed:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self._next_look())
            self.wake.clear()
            now = time.monotonic()
            if self.owned is not None and self._may_start_servers(now) and now - self.tracked >= self.plan.tick:
                self.tracked = now
                await self.owned.track()  # the servers running now, should Neovim crash
            idle = self.plan.idle_timeout
            if idle is not None and time.monotonic() - self.last_call > idle and not self._busy():
                self.stop("idle timeout")
        if conn.closed:
            self.reason = "its Neovim exited"

    def _busy(self) -> bool:
        return self.server is not None and self.server.busy

    def _may_start_servers(self, now: float) -> bool:
        """Whether Neovim may be starting a server now: while it warms up, while a call
        runs, and for a few seconds after one (servers start as buffers open, for calls)."""
        warming = self.warming is not None and not self.warming.done()
        return warming or self._busy() or now < self.active_until

    def _next_look(self) -> float | None:
        """Seconds until `_serve` must look again by itself (None: only when woken)."""
        now = time.monotonic()
        if self.owned is not None and self._may_start_servers(now):
            return self.plan.tick
        idle = self.plan.idle_timeout
        if idle is None:
            return None
        if self._busy():  # the idle time is not up while a call runs: look again soon
            return self.plan.tick
        return max(self.last_call + idle - now, 0.0) + IDLE_MARGIN

    async def _end(self) -> None:
        """Withdraw first (no client finds it any more), then answer and close the
        connections, then end the Neovim it started and that Neovim's servers."""
        if self.info is not None:
            self.info.withdraw()
        if self.warming is not None:
            self.warming.cancel()
        try:
            if self.server is not None:
                await self.server.close(self.reason)
        finally:
            cpu.shutdown()  # its worker processes, if any started
            if self.owned is not None:
                await self.owned.close()

    async def _warm(self) -> None:
        try:
            ready = await self.service.session.servers.open_workspace()
        except Exception:  # a first request will meet the cause and report it
            LOG.warning("opening the workspace at start failed", exc_info=True)
        else:
            LOG.info("servers ready at start: %s", ", ".join(ready) or "none")

    def _touch(self) -> None:
        self.last_call = time.monotonic()
        self._active()

    def _active(self) -> None:
        """A call came or ended, or the warm-up ended: the idle time starts again, and the
        servers Neovim may have started are tracked for a few seconds."""
        self.active_until = time.monotonic() + TRACK_AFTER
        self.wake.set()

    async def _shutdown(self, _params: object) -> str:
        # It stops once this call has its answer out ("stopping"): stopping cancels the
        # calls still running, and this one would be answered `session_gone` instead.
        asking = ASKING.get()
        answering = set(asking.tasks) if asking is not None else set()
        self.stopping_task = asyncio.get_running_loop().create_task(self._stop_after(answering))
        return "stopping"

    async def _stop_after(self, answering: set[asyncio.Task[None]]) -> None:
        if answering:
            await asyncio.wait(answering, timeout=2)
        self.stop("`lsap daemon stop`")

    async def _tell(self, message: str) -> None:
        if self.tell is not None:
            await self.tell("lsap: " + message)


def parse_tcp(value: str) -> tuple[str, int]:
    """`"127.0.0.1:7777"`, `"[::1]:0"` or a bare port."""
    host, _, port = value.rpartition(":")
    return (host.strip("[]") or "127.0.0.1"), int(port or 0)
