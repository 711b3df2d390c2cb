"""`types`: the type hierarchy of a class or interface — supertypes and subtypes.

From the server's `typeHierarchy/*` where one offers it. Otherwise (basedpyright and
typescript-language-server do not) it is derived, and the report says so:
- supertypes: the names in the class header after the class's own name (`class A(B, C):`,
  `class A extends B implements C {`) whose definitions are classes or interfaces;
- subtypes: references to the class that sit in another class's header line.
Each level's definitions or references go out in one round trip.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from lsprotocol import types as lsp_types

from ..editor import Client
from ..errors import ErrorCode, LsapError
from ..gateway import LspCall
from ..jsonvalue import Params
from ..lsp import result_of
from ..modes import Answer, Offer, mode
from ..position import line_at, to_lsp_character
from ..report.hierarchy import (
    Edge,
    Expand,
    HierarchyReport,
    HierarchyRequest,
    Node,
    lsp_expand,
    nodes_of,
    roots_data,
    walk_directions,
)
from ..report.pieces import anchor_fields, defining_symbol, word_at
from ..resolve import resolve
from ..session.targets import Location, encoding_of
from ..session.warm import Session
from ..symbols import Symbol, SymbolTree
from ..workspace import uri_of

METHOD = "textDocument/definition"
NATIVE = "textDocument/prepareTypeHierarchy"
TYPE_KINDS = {5, 10, 11, 23}  # class, enum, interface, struct
_KEYWORD_ARG = re.compile(r"\b\w+\s*=\s*[\w.]+")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


class TypesRequest(HierarchyRequest):
    mode: Literal["types"] = "types"
    direction: Literal["supertypes", "subtypes", "both"] = "both"


class TypesReport(HierarchyReport):
    derived: str | None  # why the hierarchy was derived, when the server has none


def header_names(line: str, after: int) -> list[tuple[int, str]]:
    """Names in a class header after its own name, up to the body: the candidate bases.

    Keyword arguments (`metaclass=ABCMeta`) are not bases and are skipped, and so is all
    inside `<…>` or `[…]`: the type parameters with their bounds and defaults
    (`Tuple<Items extends ReadonlyArray<unknown>>`) and a base's type arguments
    (`Array<Items[number]>`, `Generic[T]`).
    """
    head = line[after:].split("{", 1)[0].replace("=>", "  ")
    head = _KEYWORD_ARG.sub(lambda m: " " * len(m.group(0)), head)
    depth, outside = 0, []
    for char in head:
        depth = max(0, depth + (char in "<[") - (char in ">]"))
        outside.append(" " if depth or char in ">]" else char)
    return [(after + m.start(), m.group(0)) for m in _NAME.finditer("".join(outside))
            if m.group(0) not in _HEADER_WORDS]


_HEADER_WORDS = frozenset({"extends", "implements"})


def type_symbol_at(tree: SymbolTree, line: int, col: int) -> Symbol | None:
    """The class, interface, enum or struct whose name is at this position."""
    for _path, symbol in tree.walk():
        if symbol.kind in TYPE_KINDS and symbol.selection.contains(line, col):
            return symbol
    return None


def type_node(symbol: Symbol, path: Path) -> Node:
    return Node(
        symbol.bare_name,
        symbol.kind_name,
        path,
        symbol.selection.start_line,
        symbol.selection.start_col,
    )


class Derived:
    """Supertypes and subtypes found with definitions and references."""

    def __init__(self, session: Session, client: Client) -> None:
        self.session = session
        self.client = client

    async def trees(self, paths: Sequence[Path]) -> dict[Path, SymbolTree]:
        inside = [p for p in dict.fromkeys(paths) if self.session.workspace.contains(p)]
        docs = await self.session.texts.documents(inside)
        return await self.session.symbols.of(inside, self.client, docs)

    def _params(self, path: Path, lines: list[str], line: int, col: int) -> Params:
        text = line_at(lines, line)
        character = to_lsp_character(text, col, encoding_of(self.client))
        return {
            "textDocument": {"uri": uri_of(path)},
            "position": {"line": line, "character": character},
        }

    async def _ask(self, method: str, asks: list[Params]) -> list[list[Location]]:
        """Locations of `method` (definition, or references: one of the same shapes) per params."""
        answers = await self.session.servers.lsp([LspCall(self.client.id, method, params) for params in asks])
        return [
            await self.session.texts.locations(
                result_of(None if a.error else a.result, lsp_types.DefinitionResponse, self.client.name, method),
                self.client)
            for a in answers
        ]

    async def supertypes(self, nodes: Sequence[Node]) -> list[list[Edge]]:
        docs = await self.session.texts.documents([n.path for n in nodes])
        asks: list[tuple[int, str, Params]] = []
        for index, node in enumerate(nodes):
            lines = docs[node.path].lines
            after = node.col + len(node.name)
            for col, name in header_names(line_at(lines, node.line), after):
                asks.append((index, name, self._params(node.path, lines, node.line, col)))
        found = await self._ask(METHOD, [params for _, _, params in asks])
        trees = await self.trees([loc.path for locs in found for loc in locs])
        out: list[list[Edge]] = [[] for _ in nodes]
        seen: set[tuple[int, Path | str, int]] = set()
        for (index, name, _), locations in zip(asks, found, strict=True):
            node = nodes[index]
            for loc in locations:
                # A library type is one row however many of its files declare it (six lib
                # .d.ts files each declare `interface Array<T>`).
                key = (index, loc.path, loc.line) if loc.path in trees else (index, name, -1)
                if key in seen:
                    continue
                seen.add(key)
                if loc.path not in trees:  # outside the workspace: a library or stdlib type
                    out[index].append(
                        Edge(
                            Node(name, "class", loc.path, loc.line, loc.col),
                            node.path,
                            (node.line,),
                        )
                    )
                    continue
                named = defining_symbol(trees[loc.path], loc)
                # A type parameter (`class B<T> extends A<T>`) is defined in the node's own
                # header: the node is no supertype of itself.
                own = named is not None and loc.path == node.path and (
                    named[1].selection.start_line, named[1].selection.start_col) == (node.line, node.col)
                if named and named[1].kind in TYPE_KINDS and not own:
                    out[index].append(Edge(type_node(named[1], loc.path), node.path, (node.line,)))
        return out

    async def subtypes(self, nodes: Sequence[Node]) -> list[list[Edge]]:
        docs = await self.session.texts.documents([n.path for n in nodes])
        asks = [
            {
                **self._params(n.path, docs[n.path].lines, n.line, n.col),
                "context": {"includeDeclaration": False},
            }
            for n in nodes
        ]
        found = await self._ask("textDocument/references", asks)
        trees = await self.trees([loc.path for locs in found for loc in locs])
        out: list[list[Edge]] = []
        for locations in found:
            edges: dict[tuple[Path, int], Edge] = {}
            for loc in locations:
                tree = trees.get(loc.path)
                holder = tree.enclosing(loc.line, loc.col)[-1:] if tree else []
                # In a header: the line of a type's name, after the name (its bases, not its body).
                if (
                    holder
                    and holder[0].kind in TYPE_KINDS
                    and holder[0].selection.start_line == loc.line
                    and loc.col > holder[0].selection.start_col
                ):
                    sub = type_node(holder[0], loc.path)
                    edges[(loc.path, sub.line)] = Edge(sub, loc.path, (loc.line,))
            out.append(list(edges.values()))
        return out


@mode("types", request=TypesRequest, report=TypesReport,
      summary="type hierarchy: supertypes and subtypes of a class or interface", method=METHOD,
      fallback="search", workspace=True, offer=Offer(picker=8))
async def types(session: Session, request: TypesRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    name = word_at(resolved.line_text, resolved.column)
    params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
    native = target.client_for(NATIVE)
    expanders: dict[str, Expand]
    if native is not None:
        answer = (await session.servers.lsp([LspCall(native.id, NATIVE, params, target.bufnr)], target))[0]
        roots = nodes_of(None if answer.error else answer.result, native.name, NATIVE)
        expanders = {
            "supertypes": lsp_expand(session, native, target.bufnr, "typeHierarchy/supertypes"),
            "subtypes": lsp_expand(session, native, target.bufnr, "typeHierarchy/subtypes"),
        }
    else:
        derived = Derived(session, target.client)
        definitions = await session.texts.locations(
            await session.servers.call(target, METHOD, params, lsp_types.DefinitionResponse), target.client
        )
        trees = await derived.trees([loc.path for loc in definitions])
        roots = []
        for loc in definitions:
            symbol = (
                type_symbol_at(trees[loc.path], loc.line, loc.col) if loc.path in trees else None
            )
            if symbol is not None:
                roots.append(type_node(symbol, loc.path))
        expanders = {"supertypes": derived.supertypes, "subtypes": derived.subtypes}
    if not roots:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"`{name}` at {resolved.anchor} is not a class, interface, enum or struct",
            hint="point the anchor at a type's name (path:ClassName); for functions use `calls`",
        )
    directions = ["supertypes", "subtypes"] if request.direction == "both" else [request.direction]
    # Native hierarchy items count in the server's units; derived nodes in code points.
    encoding = encoding_of(native) if native is not None else "utf-32"
    sections, locations = await walk_directions(
        session, roots, expanders, directions, request, at_site=False, encoding=encoding)
    report = TypesReport(**anchor_fields(resolved, session), name=name, roots=roots_data(session, roots),
                         depth=request.depth, derived=None if native else f"{target.client.name} lacks {NATIVE}",
                         sections=sections)
    return Answer(report, locations)
