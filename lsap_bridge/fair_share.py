"""The agents' fair share of the service (doc/lsap.txt, lsap-limits and lsap-queue): what one
connection and all together may hold and run (`Limits`, `agent_limits` in setup()), the
bytes all connections hold against the total (`Budget`), and the `Scheduler` that starts
waiting calls in turn across connections.

The `Scheduler` starts at most `running` calls at once, and none while one of the human's
own commands runs. All connections together stay within `Limits.total` (`Budget`): past it
the ones with the most unread replies are closed first.
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Coroutine, Mapping, Sized
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .jsonvalue import Json, JsonObject, to_int

MIB = 1024 * 1024


T = TypeVar("T")


class Client(Protocol):
    """A connection's client as the scheduler counts it (`connection.Peer`)."""

    @property
    def name(self) -> str: ...

    @property
    def authenticated(self) -> bool: ...


class Turn(Protocol):
    """A connection as the budget and the scheduler see it (`connection.Connection`)."""

    @property
    def peer(self) -> Client: ...

    @property
    def queue(self) -> Sized: ...

    @property
    def closing(self) -> str | None: ...

    @property
    def running(self) -> int: ...

    @property
    def answered(self) -> int: ...

    def footprint(self) -> int: ...

    def unread(self) -> int: ...

    def behind(self) -> bool: ...

    def ready(self) -> bool: ...

    def start(self) -> None: ...

    def close_stalled(self, reason: str) -> None: ...


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

    def over(self, connections: Collection[Turn], total: int) -> int:
        """Bytes over the total (0 or less: within it). Over it, the connections whose
        replies stay unread are closed first, the largest first, until the rest fit; what
        is still over makes new calls `busy`."""
        now = time.monotonic()
        if self._moved < self.MOVED and now - self._at < self.EVERY:
            return self._over
        self._at, self._moved = now, 0
        held = {c: c.footprint() for c in connections if not c.closing}
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
        self._turns: OrderedDict[Turn, None] = OrderedDict()  # waiting connections, in turn

    def wants(self, conn: Turn) -> None:
        """A connection has a call waiting."""
        self._turns.setdefault(conn)
        self._pump()

    def finished(self, conn: Turn) -> None:
        """One of its calls ended: the slot goes to the next in turn, then to it again."""
        self.running -= 1
        if conn.queue and not conn.closing:
            self._turns.setdefault(conn)
        self._pump()

    def forget(self, conn: Turn) -> None:
        self._turns.pop(conn, None)

    def counts(self, connections: Collection[Turn], asking: Turn | None, most: int = 20) -> JsonObject:
        """What runs and waits now, in total and for the busiest connections (`info`): the
        call asking (an `info` over the socket) is left out, so an idle service shows 0."""
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

    def _next(self) -> Turn:
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
