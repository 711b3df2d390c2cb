"""1 + 2: the latency a warm request adds to the raw LSP work it replaces, and the round
trips: agent requests, LSP requests and calls into Neovim per unit of work."""

from __future__ import annotations

from functools import partial
from typing import Any

from lsap_bridge.diskwatch import Basis, fs_now_ns

from ..baselines import ALONE, METHODS, Point, RawRunner, RawWork, bridge_payload, point_of
from ..report import Results
from ..rig import Rig, Settings, alternate, median_ms, timed


async def collect(runner: RawRunner, rig: Rig, point: Point, into: list[RawWork]) -> None:
    into.append(await runner(rig, point))


async def measure(rig: Rig, results: Results, settings: Settings) -> None:
    for mode, (method, raw_runner) in METHODS.items():
        payload = bridge_payload(mode, rig.corpus)
        anchor = rig.corpus.outline + ":1" if mode == "outline" else payload["locate"]
        point = await point_of(rig, anchor, method)
        for _ in range(2):  # warm both sides: caches, server state
            _, answer = await rig.bridge(payload)
            if not answer["ok"]:
                results.note(f"`{mode}` failed: {answer['text'][:200]}")
                break
            await raw_runner(rig, point)
        else:
            await _mode(rig, results, settings, mode, payload, point, raw_runner)
    await disk_check(rig, results, settings)


async def _mode(rig: Rig, results: Results, settings: Settings, mode: str, payload: dict[str, Any],
                point: Point, raw_runner: RawRunner) -> None:
    works: list[RawWork] = []
    alone_works: list[RawWork] = []
    raws = [partial(collect, raw_runner, rig, point, works)]
    if (alone := ALONE.get(mode)) is not None:
        raws.append(partial(collect, alone, rig, point, alone_works))
    before = await rig.counters()
    bridge_times, raw_times, *alone_times = await alternate(rig, payload, raws, settings.reps)
    spent = await rig.counters() - before
    b, r = median_ms(bridge_times), median_ms(raw_times)
    results.add("1 latency", f"{mode} warm, median of {settings.reps}", b, r, "ms", "ratio <= 1.3", b / r <= 1.3)
    if alone_times:
        a = median_ms(alone_times[0])
        results.add("1 latency", f"  against the {mode} request alone", b, a, "ms")
        results.add("1 latency", "  the bridge's fixed cost (added to that request)", b - a, None, "ms")
    # The service's counters saw both sides: take the raw side's own calls out.
    reps, work, raw_works = settings.reps, works[-1], works + alone_works
    nvim_calls = (spent.nvim_calls - sum(w.nvim_calls for w in raw_works)) / reps
    lsp_calls = (spent.lsp_requests - sum(w.lsp_requests for w in raw_works)) / reps
    results.add("2 round trips", f"{mode}: agent requests per unit of work", 1, work.agent_round_trips)
    results.add("2 round trips", f"{mode}: LSP requests (bridge warm, cached)", round(lsp_calls, 1),
                work.lsp_requests)
    results.add("2 round trips", f"{mode}: bridge's Neovim calls per request", round(nvim_calls, 1))


async def disk_check(rig: Rig, results: Results, settings: Settings) -> None:
    """What comparing with the disk adds to a warm request (`:help lsap-disk`): the same
    request with the check switched off (Lua's `fresh` answering 'same' at once, no
    workspace sync: what the code did before it), the two taking turns going first."""
    session = rig.service.session
    sync = session.servers.sync_disk

    async def no_sync(at_ns: int | None = None) -> Basis:
        return Basis(at_ns or fs_now_ns())  # no record of the disk: nothing scanned

    async def side(on: bool, payload: dict[str, Any]) -> float:
        session.servers.sync_disk = sync if on else no_sync  # type: ignore[method-assign]
        await rig.gateway.exec_lua(
            "local t = require('lsap.transport.disk'); t.checked = t.checked or t.fresh; "
            "t.fresh = ... and t.checked or function() return 'same' end", on)
        return await timed(rig.bridge(payload))

    for mode in ("hover", "references"):
        payload = bridge_payload(mode, rig.corpus)
        times: dict[bool, list[float]] = {True: [], False: []}
        for rep in range(settings.reps):
            for on in (True, False) if rep % 2 == 0 else (False, True):
                times[on].append(await side(on, payload))
        b, r = median_ms(times[True]), median_ms(times[False])
        results.add("1 latency", f"{mode} warm: with the disk check, against without", b, r, "ms",
                    "ratio <= 1.3", b / r <= 1.3)
    await side(True, {"mode": "schema", "modes": ["hover"]})  # the check stays on
