"""Walking hierarchies (calls, types) level by level, each level in one round trip.

The `calls`, `types` and `inspect` modes share it: a node is expanded once however often it is
reached (cycles and diamonds are shown once, then marked), nodes outside the workspace
(standard-library stubs, dependencies) are counted but never expanded, and listed only
when asked for (doc/architecture.md, Costs).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, TypeAlias

from lsprotocol import types
from pydantic import Field

from ..editor import Client
from ..gateway import LspCall
from ..jsonvalue import Json, JsonObject, Params, items, obj
from ..lsp import Response, result_of
from ..models import MAX_ITEMS_LIMIT, Anchored, LocateRequest, Row, absent
from ..position import Document, EditorLocation
from ..session.targets import Target
from ..session.warm import Session
from ..symbols import KIND_NAMES
from ..workspace import path_of, uri_of
from .paging import as_sent, suggest


@dataclass(frozen=True)
class Node:
    """A symbol in a hierarchy: a function in a call graph, a class in a type graph."""

    name: str
    kind: str
    path: Path
    line: int  # 0-based, the name's line
    col: int
    detail: str = ""
    # The server's hierarchy item as it sent it: what goes back to it to expand the node.
    item: JsonObject | None = field(default=None, compare=False, hash=False)

    @property
    def key(self) -> tuple[Path, int, int]:
        return self.path, self.line, self.col


@dataclass(frozen=True)
class Edge:
    """A link to a node, with where it happens (call sites, base-class lists)."""

    node: Node
    site_path: Path | None = None
    sites: tuple[int, ...] = ()  # 0-based lines in site_path
    site_character: int = 0  # where the first site starts on its line (the server's units)


@dataclass
class Entry:
    """A node as reached in the walk; a repeated node is not expanded again."""

    edge: Edge
    depth: int
    external: bool = False
    repeat: bool = False
    children: list[Entry] = field(default_factory=list)


# The request that makes a hierarchy item at a position, by the hierarchy's method prefix.
PREPARE = {"callHierarchy": "textDocument/prepareCallHierarchy", "typeHierarchy": "textDocument/prepareTypeHierarchy"}

# Expand a whole level at once: for each node, the edges leading on from it.
Expand = Callable[[Sequence[Node]], Awaitable[list[list[Edge]]]]


Item: TypeAlias = types.CallHierarchyItem | types.TypeHierarchyItem
Call: TypeAlias = types.CallHierarchyIncomingCall | types.CallHierarchyOutgoingCall
# A hierarchy method's answer, as lsprotocol types it: its items, or calls of them.
HIERARCHY: dict[str, type[Response[Sequence[Item] | Sequence[Call] | None]]] = {
    "textDocument/prepareCallHierarchy": types.CallHierarchyPrepareResponse,
    "textDocument/prepareTypeHierarchy": types.TypeHierarchyPrepareResponse,
    "typeHierarchy/supertypes": types.TypeHierarchySupertypesResponse,
    "typeHierarchy/subtypes": types.TypeHierarchySubtypesResponse,
    "callHierarchy/incomingCalls": types.CallHierarchyIncomingCallsResponse,
    "callHierarchy/outgoingCalls": types.CallHierarchyOutgoingCallsResponse,
}


def node_of(item: Item, sent: JsonObject | None = None) -> Node:
    """A `CallHierarchyItem` or `TypeHierarchyItem` as a node (`sent`: the item as the
    server sent it, what goes back to it)."""
    start = item.selection_range.start
    return Node(
        name=item.name,
        kind=KIND_NAMES.get(int(item.kind), "symbol"),
        path=path_of(item.uri),
        line=start.line,
        col=start.character,
        detail=item.detail or "",
        item=sent,
    )


def nodes_of(raw: Json, server: str, method: str) -> list[Node]:
    """A hierarchy answer of items (`prepareCallHierarchy`, `prepareTypeHierarchy`,
    `supertypes`, `subtypes`) as nodes, read as lsprotocol types it."""
    found = result_of(raw, HIERARCHY[method], server, method) or []
    return [node_of(item, obj(sent)) for item, sent in zip(found, items(raw), strict=True)
            if not isinstance(item, Call)]


async def walk(
    session: Session, roots: Sequence[Node], expand: Expand, depth: int, limit: int
) -> tuple[list[Entry], int]:
    """Breadth-first to `depth`, expanding each node once; stops adding after `limit` entries.

    Returns the root entries (with children) and how many entries were left out by `limit`.
    """
    seen: set[tuple[Path, int, int]] = {node.key for node in roots}
    top = [Entry(Edge(node), 0) for node in roots]
    frontier = list(top)
    count, dropped = 0, 0
    for level in range(1, depth + 1):
        expandable = [e for e in frontier if not e.repeat and not e.external]
        if not expandable:
            break
        found = await expand([e.edge.node for e in expandable])
        frontier = []
        for parent, edges in zip(expandable, found, strict=False):
            for edge in edges:
                if count >= limit:
                    dropped += 1
                    continue
                entry = Entry(
                    edge,
                    level,
                    external=not session.workspace.contains(edge.node.path),
                    repeat=edge.node.key in seen,
                )
                seen.add(edge.node.key)
                parent.children.append(entry)
                frontier.append(entry)
                count += 1
    return top, dropped


def flatten(entries: Sequence[Entry], include_external: bool) -> tuple[list[Entry], int]:
    """Depth-first order for the report; external entries are counted unless asked for."""
    out: list[Entry] = []
    hidden = 0

    def visit(nodes: Sequence[Entry]) -> None:
        nonlocal hidden
        for entry in nodes:
            if entry.external and not include_external:
                hidden += 1
                continue
            out.append(entry)
            visit(entry.children)

    visit(entries)
    return out, hidden


def edges_of(node: Node, result: Json, server: str, method: str) -> list[Edge]:
    """A hierarchy answer for `node` (`method`'s) as edges: calls (incoming, outgoing) lead
    to their caller or callee, with the call sites; type hierarchy results are the items
    themselves."""
    found = result_of(result, HIERARCHY[method], server, method) or []
    edges = []
    for each, sent in zip(found, items(result), strict=True):
        if not isinstance(each, Call):
            edges.append(Edge(node_of(each, obj(sent))))
            continue
        incoming = isinstance(each, types.CallHierarchyIncomingCall)
        nxt = node_of(each.from_ if isinstance(each, types.CallHierarchyIncomingCall) else each.to,
                      obj(obj(sent).get("from" if incoming else "to")))
        # Call sites: in the caller for incoming calls, in this node for outgoing ones.
        site = nxt.path if incoming else node.path
        starts = sorted((r.start.line, r.start.character) for r in each.from_ranges)
        sites = tuple(sorted({line for line, _ in starts}))
        edges.append(Edge(nxt, site if sites else None, sites, starts[0][1] if starts else 0))
    return edges


def lsp_expand(session: Session, client: Client, bufnr: int, method: str) -> Expand:
    """Expansion by a server's hierarchy method (`callHierarchy/incomingCalls`, …)."""

    prepare = PREPARE[method.split("/")[0]]

    async def again(node: Node) -> Json:
        """An item the server refused as it gave it (vtsls's items in answers lack the
        `data` its expansion needs): prepared afresh at its name, then expanded."""
        at = await session.gateway.open(node.path)
        position = {"line": node.line, "character": node.col}
        [prepared] = await session.servers.lsp([LspCall(client.id, prepare, {
            "textDocument": {"uri": (node.item or {}).get("uri") or uri_of(node.path)}, "position": position}, at)])
        again = items(prepared.result) if not prepared.error else []
        if not again:
            return None
        [answer] = await session.servers.lsp([LspCall(client.id, method, {"item": again[0]}, at)])
        return None if answer.error else answer.result

    async def expand(nodes: Sequence[Node]) -> list[list[Edge]]:
        calls = [LspCall(client.id, method, {"item": node.item}, bufnr) for node in nodes]
        answers = await session.servers.lsp(calls)
        results = [a.result if not a.error else await again(node) for node, a in zip(nodes, answers, strict=True)]
        return [edges_of(node, result, client.name, method) for node, result in zip(nodes, results, strict=True)]

    return expand


async def call_roots(session: Session, target: Target, params: Params) -> list[Node]:
    """`textDocument/prepareCallHierarchy` at a position, as root nodes."""
    method = "textDocument/prepareCallHierarchy"
    return nodes_of(await session.servers.call_json(target, method, params), target.client.name, method)


def entry_paths(session: Session, entries: Sequence[Entry]) -> list[Path]:
    """The workspace files whose text the rows of these entries show."""
    return [
        p
        for e in entries
        for p in (e.edge.node.path, e.edge.site_path)
        if p is not None and session.workspace.contains(p)
    ]


class HierarchyRow(Row):
    """An entry of a hierarchy as reports show it (`_hierarchy.md.j2`)."""

    depth: int
    name: str
    kind: str
    detail: str
    path: str
    line: int
    external: bool
    repeat: bool
    site_path: str | None
    sites: list[int]
    site_text: str | None


EXTERNAL_NAMES = 10  # external entries a section names (the rest are counted)


class Section(Row):
    """One direction of a hierarchy: its rows, and how many were left out."""

    direction: str | None = absent()  # None: the one direction asked (inspect's callers)
    rows: list[HierarchyRow]
    external: int
    dropped: int
    more: str | None = absent()  # with `dropped`: the request that shows them (None: narrow it)
    # The names of the first `EXTERNAL_NAMES` external entries left out (a library base:
    # `Array`), each once: what they are, without asking again.
    external_names: list[str] | None = absent()


class Root(Row):
    name: str
    kind: str
    path: str
    line: int


async def render_entries(
    session: Session, entries: Sequence[Entry], have: dict[Path, Document] | None = None
) -> list[HierarchyRow]:
    """Report rows: name, kind, where it is, and the first site line's text. `have`: texts
    this request already read."""
    docs = await session.texts.documents(entry_paths(session, entries), have=have)
    rows = []
    for entry in entries:
        node, edge = entry.edge.node, entry.edge
        site_doc = docs.get(edge.site_path) if edge.site_path else None
        first = edge.sites[0] if edge.sites else None
        rows.append(HierarchyRow(
            depth=entry.depth,
            name=node.name,
            kind=node.kind,
            detail=node.detail,
            path=session.workspace.display(node.path),
            line=node.line + 1,
            external=entry.external,
            repeat=entry.repeat,
            site_path=session.workspace.display(edge.site_path) if edge.site_path else None,
            sites=[s + 1 for s in edge.sites],
            site_text=site_doc.lines[first].strip()
            if site_doc is not None and first is not None and first < len(site_doc.lines)
            else None,
        ))
    return rows


class HierarchyRequest(LocateRequest):
    """Fields of the modes that walk a hierarchy (calls, types): how deep, and whether
    nodes outside the workspace are listed."""

    depth: Annotated[int, Field(ge=1, le=5)] = 1
    include_external: bool = False


class HierarchyReport(Anchored):
    """A hierarchy walked from its roots: a section per direction."""

    name: str
    roots: list[Root]
    depth: int
    sections: list[Section]


async def walk_directions(
    session: Session,
    roots: Sequence[Node],
    expanders: dict[str, Expand],
    directions: Sequence[str],
    request: HierarchyRequest,
    at_site: bool,
    encoding: str,
) -> tuple[list[Section], list[EditorLocation]]:
    """A report section per direction, and the editor locations of its entries: the site
    of each call (`at_site`, for calls) or the entry itself (for types). `encoding`: the
    units of the nodes' and sites' columns."""
    sections: list[Section] = []
    locations: list[EditorLocation] = []
    for direction in directions:
        top, dropped = await walk(session, roots, expanders[direction], request.depth, request.max_items)
        reached = [child for root in top for child in root.children]
        entries, hidden = flatten(reached, request.include_external)
        rows = await render_entries(session, entries)
        outside = [e.edge.node.name for e in flatten(reached, True)[0] if e.external and not request.include_external]
        sections.append(Section(direction=direction, rows=rows, external=hidden, dropped=dropped,
                                more=showing_more(request, dropped),
                                external_names=list(dict.fromkeys(outside))[:EXTERNAL_NAMES] or None))
        locations += [
            {
                "path": (r.site_path if at_site else None) or r.path,
                "line": r.sites[0] if at_site and r.sites else r.line,
                "character": e.edge.site_character if at_site and r.sites else e.edge.node.col,
                "encoding": encoding,
                "text": f"{direction}: {r.name}",
            }
            for e, r in zip(entries, rows, strict=True)
            if not r.external
        ]
    return sections, locations


def showing_more(request: HierarchyRequest, dropped: int) -> str | None:
    """The same request with room for the `dropped` nodes (`max_items` raised), else one
    level shallower; None when neither is possible."""
    if not dropped:
        return None
    wanted = request.max_items + dropped
    if wanted <= MAX_ITEMS_LIMIT:
        return suggest(type(request), {**as_sent(request), "max_items": wanted})
    if request.depth > 1:
        return suggest(type(request), {**as_sent(request), "depth": request.depth - 1})
    return None


def roots_data(session: Session, roots: Sequence[Node]) -> list[Root]:
    return [Root(name=r.name, kind=r.kind, path=session.workspace.display(r.path), line=r.line + 1)
            for r in roots]
