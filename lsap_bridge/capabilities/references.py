"""`references`: every use of a symbol, grouped by file and enclosing symbol."""

from __future__ import annotations

import asyncio
import time
from itertools import chain, groupby, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Literal

from ..decode import location_count, location_files
from ..models import Anchored, Line, LocateRequest, Paged, Row
from ..modes import Answer, Offer, mode
from ..report.paging import page
from ..report.pieces import anchor_fields, editor_location, excerpt, fence_language, word_at
from ..resolve import resolve
from ..session import Location, Session, Target
from ..symbols import SymbolTree, Units

METHOD = "textDocument/references"


class ReferencesRequest(LocateRequest):
    mode: Literal["references"] = "references"
    include_declaration: bool = True


class Use(Row):
    line: int
    column: int


class Group(Row):
    """The uses in one file inside one enclosing symbol."""

    path: str
    symbol: str | None
    language: str
    lines: list[Line]
    uses: list[Use]


class ReferencesReport(Anchored, Paged):
    name: str
    files: int
    external: int  # results outside the workspace: counted, not shown
    groups: list[Group]


# A server that has just started may answer from a partial index (typescript-language-server
# gave 21 of 420 references for seconds while loading the project; doc/architecture.md, Costs): while it is
# young, ask again until the count holds, for a bounded time, and say so if it never did.
YOUNG = 30.0
RECHECK = 0.7
SETTLE_LIMIT = 10.0


async def settled(session: Session, target: Target, params: dict[str, Any]) -> tuple[Any, bool]:
    """References (packed: see `decode.location_files`), asked again while a young server's
    count still changes; True if it never held. Once a server's count has held, it is
    trusted for the rest of the session."""
    raw = await session.call(target, METHOD, params, packed=True)
    age = target.client.age()
    if age is None or age > YOUNG or target.client.id in session.settled:
        return raw, False
    deadline = time.monotonic() + SETTLE_LIMIT
    while time.monotonic() < deadline:
        await asyncio.sleep(RECHECK)
        again = await session.call(target, METHOD, params, packed=True)
        if location_count(again) == location_count(raw):
            session.settled.add(target.client.id)
            return again, False
        raw = again
    return raw, True


@mode("references", request=ReferencesRequest, report=ReferencesReport,
      summary="all uses of a symbol, grouped by file and enclosing symbol", method=METHOD,
      fallback="search", workspace=True,
      offer=Offer(command="LsapReferences", picker=1, view="refs", mcp=True))
async def references(session: Session, request: ReferencesRequest) -> Answer:
    # The whole answer is a flat list of (path, range in the server's units), sorted and
    # unique, built at C speed; only the page shown is read, converted to code points and
    # given its enclosing symbols (doc/architecture.md, Costs).
    items: list[tuple[Path, Units]] | None = session.kept(request)
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    growing = False
    if items is None:
        params = session.position_params(target, resolved.doc, resolved.line, resolved.column)
        params["context"] = {"includeDeclaration": request.include_declaration}
        raw, growing = await settled(session, target, params)
        items = list(chain.from_iterable(zip(repeat(path), ranges) for path, ranges in location_files(raw)))
    # Confinement per file, on every page (the list is in path order): outside ones counted.
    runs = [(path, list(run)) for path, run in groupby(items, key=itemgetter(0))]
    inside_runs = [run for path, run in runs if session.workspace.contains(path)]
    inside = list(chain.from_iterable(inside_runs))
    external = len(items) - len(inside)
    page_items, paging = page(session, request, inside)

    # Per-item work only for the page shown: one read and one symbol call per file.
    paths = [path for path, _ in page_items]
    docs = await session.documents(paths)
    shown = session.located(page_items, target.client, docs)
    trees = await session.symbols(paths, target.client, docs) if target.client.supports(
        "textDocument/documentSymbol") else {}
    groups: list[Group] = []
    locations: list[dict[str, Any]] = []
    for path, in_file in groupby(shown, key=lambda loc: loc.path):
        doc = docs[path]
        tree = trees.get(path)
        display = session.workspace.display(path)
        def enclosing(loc: Location, tree: SymbolTree | None = tree) -> str | None:
            return tree.enclosing_path(loc.line, loc.col) if tree else None

        for symbol, uses in groupby(in_file, key=enclosing):
            lines: list[Line] = []
            positions: list[Use] = []
            for loc in uses:
                positions.append(Use(line=loc.line + 1, column=loc.col + 1))
                for line in excerpt(doc, loc.line, loc.line, request.context_lines):
                    if not lines or line.number > lines[-1].number:
                        lines.append(line)
                locations.append(editor_location(display, doc, loc.line, loc.col))
            groups.append(Group(path=display, symbol=symbol, language=fence_language(doc),
                                lines=lines, uses=positions))

    report = ReferencesReport(
        **{**anchor_fields(resolved, session), "partial": resolved.target.partial or growing},
        name=word_at(resolved.line_text, resolved.column),
        files=len(inside_runs),
        external=external,
        groups=groups,
        **paging,
    )
    return Answer(report, locations)
