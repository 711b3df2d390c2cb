"""Run a parsed Language Server Request over the session (doc/architecture.md, The text format).

Anchors are found in file order with the Locate tiers, each after the previous one in the
same file; a line that is missing or ambiguous gets an error block and the rest still runs.
Queries (`^`, `?`) are answered first, then commands (`RENAME_TO`, `MOVE_TO_FILE`) in
request order, then a `*** Check`, each a mode's request through the request pipeline
(`pipeline.py`) or a step on the warm path; anchored lines are followed through every edit, so the
response shows where they are afterwards. The diagnostics of every touched file the request
chose are merged in by the printer, within the response's budget (`fit.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path

from .. import modes
from ..capabilities.hover import HoverReport
from ..capabilities.inlay_hints import InlayHintsReport
from ..cpu import off_loop
from ..diagnostics import DiagnosticMap
from ..errors import Candidate, ErrorCode, LsapError, shown_score
from ..failures import as_error
from ..locate.matcher import INLINE_FIND, find_matches, moved, settle, unpaste
from ..locate.matches import Needle, Tier
from ..pipeline import Response, answer, ask
from ..position import line_at
from ..report.budget import budget_of
from ..resolve import file_symbols
from ..session.texts import disk_note
from ..session.warm import Session
from ..symbols import SymbolTree
from .commands import run_commands
from .fit import respond
from .lines import identifiers, split_hover, symbol_column
from .parser import Check, FileBlock, Hover, Query, Request, inlay_request, spot
from .printer import Echo, Entry, FileSection, Tag, error_tag
from .runs import Anchored, FileRun, Place, diagnosed

PENDING = "diagnostics:pending"  # the tag of a file whose diagnostics no server confirmed in time
#: What a hover or an inlay line asks, with the tags its answer adds to the list given.
Ask = tuple[list[Tag], Awaitable[list[Tag]]]


class Executor:
    """Runs the File blocks of one request; commands.py takes over for RENAME_TO / MOVE."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.runs: list[FileRun] = []

    # -- anchors --------------------------------------------------------------------

    async def open(self, block: FileBlock) -> FileRun:
        run = FileRun(block, FileSection(block.path))
        self.runs.append(run)
        try:
            path = run.path = self.session.workspace.resolve(block.path)
            run.section.path = self.session.workspace.display(path)
            run.target, doc, run.tree = await self.session.run_warm(lambda: file_symbols(self.session, path))
        except Exception as exc:  # the file's failure (a text that kept changing too) is its section's
            run.section.tags.append(error_tag(as_error(exc, f"the File block of {block.path}")))
            return run
        run.doc = doc
        if doc.disk_differs:
            run.section.tags.append(Tag("note", disk_note(run.section.path, doc.disk_differs)))
        return run

    async def resolve(self, run: FileRun) -> None:
        """Find each anchor after the previous one found in the same file (off the loop: a
        large block's anchors take seconds)."""
        assert run.doc is not None and run.path is not None
        texts = [anchor.text for anchor in run.block.anchors]
        lines, tree, name = run.doc.lines, run.tree, run.section.path
        heavy = sum(map(len, texts)) > INLINE_FIND
        found = await off_loop(heavy, find_lines, lines, tree, name, texts)
        for anchor, outcome in zip(run.block.anchors, found, strict=True):
            entry = Entry(None, anchor.kind.value, anchor.text)
            run.section.entries.append(entry)
            if isinstance(outcome, LsapError):
                entry.tags.append(error_tag(outcome))
                run.anchored.append(Anchored(anchor, Place(run.path, None), entry))
                continue
            entry.line, note = outcome
            if note:
                entry.tags.append(Tag("note", note))
            run.anchored.append(Anchored(anchor, Place(run.path, entry.line), entry))

    # -- queries --------------------------------------------------------------------

    async def answer(self, run: FileRun) -> None:
        """Hovers, docs and inlay hints, each its mode's request, sent together; extension
        views after."""
        asks: list[Ask] = []
        views: list[Awaitable[None]] = []
        view_modes = modes.views()
        for item in run.anchored:
            line = item.place.line
            if line is None:
                skipped = Tag("error:not_found", "skipped: the anchored line above was not found")
                item.entry.echoes += [Echo(op.source, [skipped]) for op in item.anchor.operations]
                continue
            if item.anchor.kind.value == "?":
                asks.append((item.entry.tags, self.inlay(run, item.entry, line)))
            for op in item.anchor.operations:
                echo = Echo(op.source)
                item.entry.echoes.append(echo)
                if isinstance(op, Hover):
                    for query in op.queries:
                        if query.view in view_modes:
                            views.append(self.view(run, line, query, echo))
                        else:
                            asks += self.hover(run, line, query, echo)
        answered = await asyncio.gather(*(ask for _, ask in asks))
        for (tags, _), added in zip(asks, answered, strict=True):  # in request order
            tags += added
        for view in views:
            await view

    async def inlay(self, run: FileRun, entry: Entry, line: int) -> list[Tag]:
        """A `?` line: the `inlay_hints` of its line, woven into the entry's text."""
        try:
            report = (await ask(self.session, inlay_request(run.section.path, line))).report
        except Exception as exc:  # the line's failure is its tag's, not the request's
            return [error_tag(as_error(exc, "the inlay hints"))]
        assert isinstance(report, InlayHintsReport)
        entry.text = report.lines[0].text.strip()
        return []

    def hover(self, run: FileRun, line: int, query: Query, echo: Echo) -> list[Ask]:
        """A `^` query: the `hover` request of its symbol, or of every symbol on the line."""
        assert run.doc is not None
        text = run.doc.lines[line]
        if query.symbol is None:
            spots = identifiers(text)
        else:
            col = symbol_column(text, query.symbol)
            if col is None:
                names = ", ".join(name for _, name in identifiers(text))
                echo.tags.append(
                    Tag(
                        f"error:{query.symbol}",
                        f"{query.symbol!r} is not on this line; its symbols are: {names}",
                    )
                )
                return []
            spots = [(col, query.symbol)]
        return [(echo.tags, self.hover_one(run, line, col, name, query)) for col, name in spots]

    async def hover_one(self, run: FileRun, line: int, col: int, name: str, query: Query) -> list[Tag]:
        assert run.doc is not None
        payload = query.request(spot(run.section.path, line, run.doc.lines[line], col))
        try:
            report = (await ask(self.session, payload)).report
        except Exception as exc:  # the symbol's failure is its tag's, not the request's
            return [error_tag(as_error(exc, f"the hover of {name}"))]
        assert isinstance(report, HoverReport)
        signature, docs = split_hover(report.hover)
        if query.view == "docs":
            return [Tag(f"docs:{name}", docs or "(no documentation)")]
        if signature or docs:
            return [Tag(f"hover:{name}", signature or docs)]
        if query.symbol is not None:
            return [Tag(f"hover:{name}", "(the server has no hover for this symbol)")]
        return []

    async def view(self, run: FileRun, line: int, query: Query, echo: Echo) -> None:
        """`[refs]`, `[def]`, … : the mode's report for the symbol (the mode that declares the
        view, `modes.Offer.view`), as a tag."""
        name = query.symbol or "*"
        text = run.doc.lines[line] if run.doc else ""
        col = symbol_column(text, query.symbol) if query.symbol else None
        if col is None:
            echo.tags.append(
                Tag(
                    f"error:{name}",
                    f"{name!r} is not on this line; `[{query.view}]` needs a symbol",
                )
            )
            return
        done = await answer(self.session, query.request(spot(run.section.path, line, text, col)), fmt="markdown")
        # the view's failure is its tag's, not the request's
        echo.tags.append(error_tag(done.error) if done.error else Tag(f"{query.view}:{name}", done.text.strip()))

    # -- the response ---------------------------------------------------------------

    def attach_diagnostics(
        self, section: FileSection, path: Path, found: DiagnosticMap, lines: list[str]
    ) -> None:
        section.lines = lines
        section.diagnostics = list(found.get(path, []))  # `fit.respond` chooses what is shown
        if path in found.pending:
            section.tags.append(Tag(PENDING, found.pending[path]))


def find_lines(
    lines: list[str], tree: SymbolTree, name: str, texts: list[str]
) -> list[tuple[int, str | None] | LsapError]:
    """Every anchor of a File block in order, each searched after the previous one found.

    A line that matches several times is settled by the next anchor, as context lines are
    in apply_patch: the candidate the next anchor's line directly follows (`[@ @dataclass`
    then `@@ class Product:`), or the only candidate before it. Otherwise it stays an
    `ambiguous` error, like a line that is missing.
    """
    out: list[tuple[int, str | None] | LsapError] = []
    previous: int | None = None
    for index, text in enumerate(texts):
        try:
            out.append(find_line(lines, tree, name, text, previous))
        except LsapError as error:
            out.append(_settled(lines, tree, name, texts[index + 1 :], error) or error)
        found = out[-1]
        if not isinstance(found, LsapError):
            previous = found[0]
    return out


def _settled(
    lines: list[str], tree: SymbolTree, name: str, following: list[str], error: LsapError
) -> tuple[int, str | None] | None:
    """The candidate of an ambiguous anchor that the next anchor settles, if any."""
    if error.code is not ErrorCode.AMBIGUOUS or not following or not error.candidates:
        return None
    first = min(c.line for c in error.candidates) - 1
    try:
        after, _ = find_line(lines, tree, name, following[0], first)
    except LsapError:
        return None
    before = [c.line - 1 for c in error.candidates if c.line - 1 < after]
    adjacent = [n for n in before if not any(line.strip() for line in lines[n + 1 : after])]
    chosen = before if len(before) == 1 else adjacent
    if len(chosen) != 1:
        return None
    return chosen[0], f"one of {len(error.candidates)} matching lines, settled by the next anchor"


def find_line(
    lines: list[str], tree: SymbolTree, name: str, text: str, previous: int | None
) -> tuple[int, str | None]:
    """The line an anchor names, searched after the previous anchor's line, and a note when
    the match is not exact; `not_found` / `ambiguous` errors list the candidate lines.

    A line pasted from a report (`@@ 17|     return result`) is matched without its number,
    and the number settles a tie between candidates."""
    start = 0 if previous is None else previous + 1
    body, numbers = unpaste(text)
    needle = Needle(body, None, numbers[0] if numbers else None)
    result = find_matches(lines, needle, start)
    if not result.matches:
        earlier = find_matches(lines, needle, 0, start) if start else None
        if earlier is not None and earlier.matches:
            where = ", ".join(str(m.line + 1) for m in earlier.matches[:5])
            raise LsapError(
                ErrorCode.NOT_FOUND,
                f"{text!r} is only before the previous anchor (line {start}) in {name}: "
                f"found at line {where}",
                hint="anchors are searched in file order: move this one above the previous anchor",
            )
        # Near misses anywhere in the file: the agent may have the order or the text wrong.
        closest = result.closest or (earlier.closest if earlier is not None else [])
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{text!r} is not in {name}" + (f" after line {start}" if start else ""),
            hint="the closest lines are listed: copy the line's text exactly"
            if closest
            else "check the text and the file: nothing close was found",
            candidates=[candidate(lines, tree, m.line, m.score) for m in closest],
        )
    found = sorted({m.line for m in result.matches})
    found = [n for n in found if _same_line(lines[n], body)] or found
    if len(found) > 1 and previous is not None:
        found = [n for n in found if in_scope_of(tree, previous, n)] or found
    if len(found) > 1 and needle.line is not None:
        settled = settle(found, needle.line)
        found = [settled] if settled is not None else found
    if len(found) > 1:
        raise LsapError(
            ErrorCode.AMBIGUOUS,
            f"{text!r} matches {len(found)} lines in {name}"
            + (f" after line {start}" if start else ""),
            hint="add a `@@ <line>` line above it with a line unique to the part you mean "
            "(e.g. the enclosing `def`, `class` or function line), or copy more of the line",
            candidates=[candidate(lines, tree, n) for n in found],
        )
    line = found[0]
    notes = [moved(needle.line, line)]
    if result.tier is not Tier.EXACT and result.tier is not None:
        note = f"anchor matched by {result.tier.value} text: " + lines[line].strip()
        match = next(m for m in result.matches if m.line == line)
        if match.tier is Tier.FUZZY:
            note += f" (score {round(match.score, 1)})"
        notes.append(note)
    return line, "; ".join(n for n in notes if n) or None


def in_scope_of(tree: SymbolTree, previous: int, line: int) -> bool:
    """Whether `line` is inside a symbol declared on the previous anchor's line."""
    return any(
        s.span.start_line <= line <= s.span.end_line
        for _, s in tree.walk()
        if s.selection.start_line == previous or s.span.start_line == previous
    )


def candidate(
    lines: list[str], tree: SymbolTree, line: int, score: float | None = None
) -> Candidate:
    text = line_at(lines, line)
    indent = len(text) - len(text.lstrip())
    return Candidate(
        line + 1,
        text.strip(),
        tree.enclosing_path(line, indent),
        shown_score(score),
    )


def _same_line(line: str, text: str) -> bool:
    return " ".join(line.split()) == " ".join(text.split())


async def execute(session: Session, request: Request) -> Response:
    """Run every block and print the response: `incomplete` when the diagnostics of a file
    its commands changed were not confirmed in time (`Diagnostics.after_edit`; its
    `diagnostics:pending` tag names the `check` that compares it)."""
    await session.servers.sync_disk()  # a block asks about several files and may edit the workspace
    executor = Executor(session)
    for block in request.files:
        await executor.open(block)
    opened = [run for run in executor.runs if run.path is not None and run.doc is not None]
    # Diagnostics first: a server has analysed the files once it published them, so the
    # hovers that follow see the whole project rather than a half-loaded one.
    found = await diagnosed(session, [run.path for run in opened if run.path])
    for run in opened:
        await executor.resolve(run)
        await executor.answer(run)
    if request.has_commands:
        sections = await run_commands(executor)
    else:  # nothing changed: the diagnostics read first are still the file's
        for run in opened:
            assert run.path is not None and run.doc is not None
            executor.attach_diagnostics(run.section, run.path, found, run.doc.lines)
        sections = [run.section for run in executor.runs]
    checked = await check(session, request.check) if request.check else None
    text = respond(sections, request, budget_of(session, request.max_tokens), checked)
    pending = request.has_commands and any(t.name == PENDING for s in sections for t in s.tags)
    return Response(text, "request", incomplete=pending)


async def check(session: Session, line: Check) -> Tag:
    """`*** Check`: the `check` mode's report, after the request's own edits."""
    done = await answer(session, line.request(), fmt="markdown")
    # the check's failure is its tag's, not the request's
    return error_tag(done.error) if done.error else Tag("check", done.text.strip())
