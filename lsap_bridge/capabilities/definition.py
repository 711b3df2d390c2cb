"""`definition`: where a symbol is defined, with the defining symbol's code, bounded.

A 2,000-line class must not come back as 22k tokens (doc/architecture.md, Costs): long definitions show
their head (signature and docstring) and an outline of their members instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from ..gateway import Document
from ..locate.resolve import resolve
from ..session import Location, Session
from ..symbols import Symbol, SymbolTree
from .base import (
    PAGES,
    LocateRequest,
    Report,
    anchor_data,
    capability,
    editor_location,
    excerpt,
    fence_language,
    page,
    word_at,
)

HEAD_LINES = 12


class DefinitionLikeRequest(LocateRequest):
    """Fields of definition, declaration, type_definition and implementations."""

    max_code_lines: Annotated[int, Field(ge=1, le=2000)] = 40


class DefinitionRequest(DefinitionLikeRequest):
    mode: Literal["definition"] = "definition"


def defining_symbol(tree: SymbolTree, loc: Location) -> tuple[str, Symbol] | None:
    """The symbol whose name is at the location, else the innermost one containing it."""
    best: tuple[str, Symbol] | None = None
    for path, symbol in tree.walk():
        if symbol.selection.contains(loc.line, loc.col):
            return ".".join(path), symbol
        if symbol.span.contains(loc.line, loc.col) and (
            best is None or symbol.span.start_line >= best[1].span.start_line
        ):
            best = ".".join(path), symbol
    return best


def code_of(doc: Document, symbol: Symbol | None, loc: Location, limit: int) -> dict[str, Any]:
    """The symbol's code if it fits in `limit` lines, else its head and member outline."""
    if symbol is None:
        return {"lines": excerpt(doc, loc.line, loc.line, 2), "truncated": 0, "members": []}
    first, last = symbol.span.start_line, symbol.span.end_line
    size = last - first + 1
    if size <= limit:
        return {"lines": excerpt(doc, first, last), "truncated": 0, "members": []}
    head = min(HEAD_LINES, limit)
    members = [
        {"name": child.bare_name, "kind": child.kind_name, "line": child.selection.start_line + 1}
        for child in symbol.children
    ]
    return {"lines": excerpt(doc, first, first + head - 1), "truncated": size - head, "members": members}


async def run_definition_like(
    session: Session, request: DefinitionLikeRequest, method: str, label: str | None = None,
) -> Report:
    """Shared by definition, declaration, type_definition and implementations.

    Results are paged (`max_items`), so an interface with hundreds of implementations
    costs code excerpts only for the page shown.
    """
    found: list[Location] | None = PAGES.get(request.pagination_id)
    # Optimistic only when the next step is the (guarded) definition call.
    resolved = await resolve(session, request.locate, method, optimistic=found is None)
    target = resolved.target
    texts: dict[Path, Document] = {}  # read while converting columns, reused below
    if found is None:
        params = session.position_params(target, resolved.doc, resolved.line, resolved.column)
        found = await session.locations(await session.call(target, method, params), target.client,
                                        texts)
    external = [loc for loc in found if not session.workspace.contains(loc.path)]
    inside, paging = page(request, [loc for loc in found if session.workspace.contains(loc.path)])
    docs = await session.documents([loc.path for loc in inside], have=texts)
    trees = await session.symbols([loc.path for loc in inside], target.client, docs) if (
        target.client.supports("textDocument/documentSymbol")) else {}
    definitions = []
    locations = []
    for loc in inside:
        doc = docs[loc.path]
        named = defining_symbol(trees[loc.path], loc) if loc.path in trees else None
        display = session.workspace.display(loc.path)
        definitions.append({
            "path": display,
            "line": loc.line + 1,
            "symbol": named[0] if named else None,
            "kind": named[1].kind_name if named else None,
            "language": fence_language(doc),
            **code_of(doc, named[1] if named else None, loc, request.max_code_lines),
        })
        locations.append(editor_location(display, doc, loc.line, loc.col))
    data = {
        **anchor_data(resolved, session),
        "name": word_at(resolved.line_text, resolved.column),
        "kind_label": label or request.mode.replace("_", " "),
        "definitions": definitions,
        "external": [str(loc.path) for loc in external],
        **paging,
    }
    return Report("definition", data, locations)


@capability("definition", DefinitionRequest, "where a symbol is defined, with its code")
async def definition(session: Session, request: DefinitionRequest) -> Report:
    return await run_definition_like(session, request, "textDocument/definition")
