"""The raw baselines: the LSP requests (and file reads) an agent without the bridge needs for
the same unit of work, sent through the same Neovim with the same transport, and the
bridge's request for that work.

The raw client is given the position (no search for the anchor): `point_of` resolves it
once, untimed. It asks documentSymbol of every file touched, the anchor's own included,
because every report names the enclosing symbols of the anchor and of what it found.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge.gateway import LspCall
from lsap_bridge.workspace import path_of

from .corpus import Corpus
from .rig import Rig


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
    _, answer = await rig.bridge({"mode": "locate", "locate": anchor, "format": "json"})
    data = json.loads(answer["text"])
    if "error" in data:
        raise RuntimeError(f"benchmark anchor {anchor!r} does not resolve: {data['error']['message']}")
    session = rig.service.session
    path = rig.corpus.root / data["path"]
    target = await session.servers.target(path, method)
    doc = await session.texts.document(path)
    return Point(
        path,
        target.client.id,
        target.bufnr,
        session.servers.position_params(target, doc, data["line"] - 1, data["column"] - 1),
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
            document = call.params["textDocument"]
            assert isinstance(document, Mapping) and isinstance(document["uri"], str)
            uri = document["uri"]
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
    sites = [call["from"]["uri"] for call in incoming or []] + ([items[0]["uri"]] if outgoing else [])
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
