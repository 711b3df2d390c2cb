"""The rig every benchmark runs on: one embedded headless Neovim for a corpus, the service on
it behind its real agent socket, and an agent's client on that socket; how much to measure
(`Settings`), and the timing helpers that keep both sides of a comparison fair.

The bridge is asked only through the socket, as an agent asks it; what it did inside (calls
into Neovim, LSP requests) is read from the service's own counters, the `stats` of `info`.
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from lsap_bridge.client import AsyncConnection
from lsap_bridge.embedded import Embedded, start_embedded
from lsap_bridge.gateway import EditorGateway, Timeouts
from lsap_bridge.jsonvalue import obj
from lsap_bridge.server import SocketServer
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

from .corpus import Corpus

TIMEOUTS = Timeouts(request=180, attach=90, index=600, settle=0.5)


@dataclass(frozen=True)
class Settings:
    reps: int  # timed repetitions per latency case
    probe_samples: int
    scale_sizes: tuple[int, ...]
    accuracy_per_kind: int  # anchor finds per category
    daemon: bool  # the CLI's cold and warm start, through a daemon of its own
    min_locates: int | None  # the anchor section's target, when the corpus is big enough


FULL = Settings(reps=25, probe_samples=400, scale_sizes=(200, 2000, 20000), accuracy_per_kind=40,
                daemon=True, min_locates=500)
QUICK = Settings(reps=3, probe_samples=60, scale_sizes=(20, 200), accuracy_per_kind=6,
                 daemon=False, min_locates=None)


@dataclass(frozen=True)
class Counters:
    """What the service has sent so far: calls into Neovim, LSP requests."""

    nvim_calls: int = 0
    lsp_requests: int = 0

    def __sub__(self, other: Counters) -> Counters:
        return Counters(self.nvim_calls - other.nvim_calls, self.lsp_requests - other.lsp_requests)

    def times(self, n: int) -> Counters:
        return Counters(self.nvim_calls * n, self.lsp_requests * n)


@dataclass
class Rig:
    corpus: Corpus
    embedded: Embedded
    service: Service
    server: SocketServer
    socket: Path
    agent: AsyncConnection
    read_cost: Counters = Counters()  # what one `info` adds to the next reading
    reads: int = 0

    @property
    def gateway(self) -> EditorGateway:
        return self.embedded.gateway

    @classmethod
    async def start(cls, corpus: Corpus, socket: Path) -> Rig:
        embedded = await start_embedded(corpus.root, corpus.servers, TIMEOUTS)
        service = Service(embedded.gateway, Workspace.of(corpus.root))
        server = SocketServer(service, socket)
        await server.start()
        rig = cls(corpus, embedded, service, server, socket, await AsyncConnection.open(str(socket)))
        first = await rig.counters()
        rig.read_cost = await rig.counters() - first  # nothing else ran between the two
        return rig

    async def counters(self) -> Counters:
        """The service's own counts, less what reading them cost: each `info` asks Neovim
        for the server list, which the next reading counts."""
        info = await self.agent.call("info")
        seen = Counters(**cast(dict[str, int], obj(obj(info)["stats"]))) - self.read_cost.times(self.reads)
        self.reads += 1
        return seen

    async def bridge(self, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """Seconds of one request through the socket, and its result."""
        start = time.perf_counter()
        result = obj(await self.agent.call("request", payload))
        return time.perf_counter() - start, result

    async def close(self) -> None:
        await self.agent.close()
        await self.server.close()
        await self.embedded.close()


# -- timing -----------------------------------------------------------------------------------


async def timed(work: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await work
    return time.perf_counter() - start


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def alternate(
    rig: Rig, payload: dict[str, Any], raws: Sequence[Callable[[], Awaitable[Any]]], reps: int
) -> list[list[float]]:
    """Seconds of the bridge request (the first list) and of each raw work, `reps` times,
    each side going first in turn: a server's state left by one side (a cache, a
    collection) must not always favour the same one."""
    sides = [partial(rig.bridge, payload), *raws]
    times: list[list[float]] = [[] for _ in sides]
    for rep in range(reps):
        first = rep % len(sides)
        for i in [*range(first, len(sides)), *range(first)]:
            times[i].append(await timed(sides[i]()))
    return times


async def medians(
    rig: Rig, payload: dict[str, Any], raw: Callable[[], Awaitable[Any]], reps: int
) -> tuple[float, float]:
    """Median seconds of the bridge request and of the raw work, run alternately."""
    bridge_times, raw_times = await alternate(rig, payload, [raw], reps)
    return statistics.median(bridge_times), statistics.median(raw_times)


async def peak_mb(work: Awaitable[Any]) -> float:
    """Peak Python memory while `work` runs (`tracemalloc`, this process: the service, the
    agent's client and the raw client all live here)."""
    tracemalloc.start()
    try:
        await work
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0
