"""`inspect`: one symbol in full — signature, docs, code, callers, callees, reference count.

Hover, definition, references and call-hierarchy preparation all ask about the same
position, so they travel together in one round trip; callers and callees, with the
definition's file, in a second; the callers' and callees' files in a third.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Literal

from lsprotocol import types
from pydantic import Field

from ..decode import hover_of, hover_text, location_files, packed_locations
from ..gateway import LspCall
from ..jsonvalue import Json
from ..lsp import decoded, result_of
from ..models import Anchored, LocateRequest, Row
from ..modes import Answer, Offer, mode
from ..position import Document, EditorLocation
from ..report.hierarchy import Entry, Section, edges_of, entry_paths, flatten, nodes_of, render_entries
from ..report.pieces import MAX_CODE_LINES, Code, anchor_fields, code_of, defining_symbol, word_at
from ..resolve import Resolved, resolve
from ..session.warm import Session
from ..surface import phrase

METHOD = "textDocument/hover"
ASKED = (
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/references",
    "textDocument/prepareCallHierarchy",
)


class InspectRequest(LocateRequest):
    mode: Literal["inspect"] = "inspect"
    max_code_lines: Annotated[int, Field(ge=1, le=MAX_CODE_LINES)] = 40
    include_external: bool = False


class Count(Row):
    total: int
    files: int
    external: int


class More(Row):
    """The requests that show more: the references, the calls deeper."""

    references: str
    calls: str


class InspectReport(Anchored):
    name: str
    hover: str
    definition: Code | None
    references: Count | None  # None: no server could say
    callers: Section | None  # None: no call hierarchy here
    callees: Section | None
    lacking: list[str]  # what the servers could not answer
    more: More


@mode("inspect", request=InspectRequest, report=InspectReport,
      summary="one symbol in full: signature, docs, code, callers, callees, reference count",
      method=METHOD, fallback="definition", workspace=True, offer=Offer(command="LsapInspect", picker=4, plug=True))
async def inspect(session: Session, request: InspectRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
    clients = {method: target.client_for(method) for method in ASKED}
    asked = [m for m in ASKED if clients[m] is not None]
    extra = {"textDocument/references": {"context": {"includeDeclaration": False}}}
    answers = await session.servers.lsp(
        [
            LspCall(client.id, m, {**params, **extra.get(m, {})}, target.bufnr, packed=m == "textDocument/references")
            for m in asked
            if (client := clients[m]) is not None
        ],
        target,
    )
    results = {m: (None if a.error else a.result) for m, a in zip(asked, answers, strict=False)}
    name = word_at(resolved.line_text, resolved.column)

    texts: dict[Path, Document] = {}  # files read once for the whole report
    # The definition's file and the calls are independent: both go to Neovim at once.
    definition, (callers, callees) = await asyncio.gather(
        _definition(session, request, resolved, results.get("textDocument/definition"), texts),
        _calls(session, resolved, results.get("textDocument/prepareCallHierarchy"), request.include_external, texts),
    )
    references = None
    if "textDocument/references" in results:
        # Counted from the paths alone, as `references` counts them: no file is read.
        server = (clients["textDocument/references"] or target.client).name
        files = location_files(decoded(packed_locations, results["textDocument/references"], server,
                                       "textDocument/references"))
        inside = [len(ranges) for path, ranges in files if session.workspace.contains(path)]
        references = Count(total=sum(inside), files=len(inside),
                           external=sum(len(ranges) for _, ranges in files) - sum(inside))
    anchor = resolved.anchor
    report = InspectReport(
        **anchor_fields(resolved, session),
        name=name,
        hover=hover_text(hover_of(results.get("textDocument/hover"), target.client.name)),
        definition=definition,
        references=references,
        callers=callers,
        callees=callees,
        lacking=[f"{target.client.name} lacks {m}" for m in ASKED if clients[m] is None],
        more=More(references=phrase({"mode": "references", "locate": anchor}),
                  calls=phrase({"mode": "calls", "locate": anchor, "depth": 2})),
    )
    locations: list[EditorLocation] = (
        [{"path": definition.path, "line": definition.line, "col": 0, "text": "definition"}]
        if definition
        else []
    )
    return Answer(report, locations)


async def _definition(
    session: Session, request: InspectRequest, resolved: Resolved, raw: object, texts: dict[Path, Document]
) -> Code | None:
    """The defining symbol's code, bounded like `definition` does it."""
    found = [
        loc
        for loc in await session.texts.locations(
            result_of(raw, types.DefinitionResponse, resolved.target.client.name, "textDocument/definition"),
            resolved.target.client, texts)
        if session.workspace.contains(loc.path)
    ]
    if not found:
        return None
    loc = found[0]
    doc = texts.get(loc.path) or await session.texts.document(loc.path)
    client = resolved.target.client
    named = None
    if client.supports("textDocument/documentSymbol"):
        tree = (await session.symbols.of([loc.path], client, {loc.path: doc}))[loc.path]
        named = defining_symbol(tree, loc)
    return code_of(session, doc, named, loc, request.max_code_lines)


async def _calls(
    session: Session, resolved: Resolved, prepared: Json, include_external: bool,
    texts: dict[Path, Document],
) -> tuple[Section | None, Section | None]:
    """Direct callers and callees, both directions in one round trip, their files in one read."""
    if not prepared or not isinstance(prepared, list):
        return None, None
    target = resolved.target
    roots = nodes_of(prepared, target.client.name, "textDocument/prepareCallHierarchy")
    directions = ("callHierarchy/incomingCalls", "callHierarchy/outgoingCalls")
    calls = [
        LspCall(target.client.id, method, {"item": root.item}, target.bufnr)
        for method in directions
        for root in roots
    ]
    answers = iter(await session.servers.lsp(calls))
    flattened = []
    for method in directions:
        entries = []
        for root in roots:
            answer = next(answers)
            entries += [
                Entry(edge, 1, external=not session.workspace.contains(edge.node.path))
                for edge in edges_of(root, None if answer.error else answer.result, target.client.name, method)
            ]
        flattened.append(flatten(entries, include_external))
    paths = [p for shown, _ in flattened for p in entry_paths(session, shown)]
    texts.update(await session.texts.documents(paths, have=texts))
    out = [
        Section(rows=await render_entries(session, shown, texts), external=hidden, dropped=0)
        for shown, hidden in flattened
    ]
    return out[0], out[1]
