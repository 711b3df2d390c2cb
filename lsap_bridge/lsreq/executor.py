"""Run a parsed Language Server Request over the session (doc/architecture.md, The text format).

Anchors are found in file order with the Locate tiers, each after the previous one in the
same file; a line that is missing or ambiguous gets an error block and the rest still runs.
Queries (`^`, `?`) are answered first, then commands (`RENAME_TO`, `MOVE_TO_FILE`) in
request order, then a `*** Check`; anchored lines are followed through every edit, so the
response shows where they are afterwards. The diagnostics of every touched file the request
chose are merged in by the printer, within the response's budget (`fit.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from .. import modes
from ..capabilities import REGISTRY
from ..cpu import off_loop
from ..decode import hover_of, hover_text, inlay_hint_params, inlay_hints_from_lsp, weave_inlay_hints
from ..diagnostics import DiagnosticMap
from ..errors import Candidate, ErrorCode, LsapError, shown_score
from ..failures import as_error
from ..gateway import Client, LspCall
from ..locate.matcher import INLINE_FIND, Needle, Tier, find_matches, moved, settle, unpaste
from ..position import line_at
from ..render import render_report
from ..report.budget import budget_of
from ..session import Session, Target, disk_note
from ..symbols import SymbolTree
from .commands import run_commands
from .fit import respond
from .lines import identifiers, split_hover, symbol_column
from .parser import Check, FileBlock, Hover, Query, Request
from .printer import Echo, Entry, FileSection, Tag, error_tag
from .runs import Anchored, FileRun, Place

#: Items per extension view: answers stay short; the tag says how to ask for more.
VIEW_ITEMS = 20

#: LSP calls sent together in one round trip, each with what to do with its answer.
Batch = list[tuple[LspCall, Callable[[object, str | None], None]]]


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
            run.path = self.session.workspace.resolve(block.path)
            run.section.path = self.session.workspace.display(run.path)
            run.target = await self.session.servers.target(run.path, "textDocument/documentSymbol")
            run.doc = await self.session.texts.document(run.path)
            run.tree = await self.session.symbols.tree(run.target, run.doc)
        except LsapError as error:
            run.section.tags.append(error_tag(error))
            return run
        if run.doc.disk_differs:
            run.section.tags.append(Tag("note", disk_note(run.section.path, run.doc.disk_differs)))
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
        """Hover, docs and inlay hints in one round trip per file; extension views after."""
        batch: Batch = []
        views: list[Awaitable[None]] = []
        view_modes = modes.views()
        for item in run.anchored:
            line = item.place.line
            if line is None:
                skipped = Tag("error:not_found", "skipped: the anchored line above was not found")
                item.entry.echoes += [Echo(op.source, [skipped]) for op in item.anchor.operations]
                continue
            if item.anchor.kind.value == "?":
                self.inlay(run, item, batch)
            for op in item.anchor.operations:
                echo = Echo(op.source)
                item.entry.echoes.append(echo)
                if isinstance(op, Hover):
                    for query in op.queries:
                        if query.view in view_modes:
                            views.append(self.view(run, line, query, echo))
                        else:
                            self.hover(run, line, query, echo, batch)
        if batch:
            answers = await self.session.servers.lsp([call for call, _ in batch])
            for (_, handle), answer in zip(batch, answers, strict=False):
                handle(answer.result, (answer.error or {}).get("message") if answer.error else None)
        for view in views:
            await view

    def client(self, run: FileRun, method: str) -> Client:
        return self.target_for(run, method).client

    def target_for(self, run: FileRun, method: str) -> Target:
        """The run's file with a server that has `method` (not always the first one)."""
        assert run.target is not None and run.path is not None
        client = run.target.client_for(method)
        if client is None:
            raise self.session.servers.unsupported(method, run.target.clients, run.path)
        t = run.target
        return Target(t.path, t.bufnr, client, t.clients, t.partial)

    def call(self, run: FileRun, method: str, line: int, col: int) -> LspCall:
        assert run.doc is not None
        target = self.target_for(run, method)
        params = self.session.servers.position_params(target, run.doc, line, col)
        return LspCall(target.client.id, method, params, target.bufnr)

    def inlay(
        self,
        run: FileRun,
        item: Anchored,
        batch: Batch,
    ) -> None:
        assert run.doc is not None and run.target is not None and item.place.line is not None
        line = item.place.line
        try:
            client = self.client(run, "textDocument/inlayHint")
        except LsapError as error:
            item.entry.tags.append(error_tag(error))
            return
        encoding = self.session.servers.encoding(client)
        text = run.doc.lines[line]
        params = inlay_hint_params(run.target.path, run.doc, line, line + 1, encoding)
        entry = item.entry

        def handle(result: object, error: str | None) -> None:
            if error:
                entry.tags.append(
                    Tag("error:server_error", f"{client.name} failed inlay hints: {error}")
                )
                return
            hints = [
                h
                for h in inlay_hints_from_lsp(result, run.doc.lines if run.doc else [], encoding)
                if h.line == line
            ]
            entry.text = weave_inlay_hints(text, hints).strip()

        batch.append(
            (LspCall(client.id, "textDocument/inlayHint", params, run.target.bufnr), handle)
        )

    def hover(
        self,
        run: FileRun,
        line: int,
        query: Query,
        echo: Echo,
        batch: Batch,
    ) -> None:
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
                return
            spots = [(col, query.symbol)]
        try:
            calls = [(self.call(run, "textDocument/hover", line, col), name) for col, name in spots]
            server = self.target_for(run, "textDocument/hover").client.name
        except LsapError as error:
            echo.tags.append(error_tag(error))
            return
        for call, name in calls:

            def handle(result: object, error: str | None, name: str = name) -> None:
                if error:
                    echo.tags.append(Tag(f"error:{name}", f"hover failed: {error}"))
                    return
                try:
                    hover = hover_of(result, server)
                except LsapError as malformed:
                    echo.tags.append(error_tag(malformed))
                    return
                signature, docs = split_hover(hover_text(hover))
                if query.view == "docs":
                    echo.tags.append(Tag(f"docs:{name}", docs or "(no documentation)"))
                elif signature or docs:
                    echo.tags.append(Tag(f"hover:{name}", signature or docs))
                elif query.symbol is not None:
                    echo.tags.append(
                        Tag(f"hover:{name}", "(the server has no hover for this symbol)")
                    )

            batch.append((call, handle))

    async def view(self, run: FileRun, line: int, query: Query, echo: Echo) -> None:
        """`[refs]`, `[def]`, … : the mode's report for the symbol (the mode that declares the
        view, `modes.Offer.view`), as a tag."""
        mode = modes.views()[query.view]
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
        marker = "<<|>>" if "<|>" in text else "<|>"  # the code itself may hold a `<|>`
        payload = {
            "mode": mode,
            "max_items": VIEW_ITEMS,
            "locate": {
                "file_path": run.section.path,
                "scope": {"start_line": line + 1, "end_line": line + 2},
                "find": (text[:col] + marker + text[col:]).strip(),
            },
        }
        capability = REGISTRY[mode]
        try:
            answer = await self.session.run(capability, capability.model.model_validate(payload))
        except Exception as exc:  # the view's failure is its tag's, not the request's
            echo.tags.append(error_tag(as_error(exc, f"the [{query.view}] view")))
            return
        echo.tags.append(Tag(f"{query.view}:{name}", render_report(capability.template, answer.report).strip()))

    # -- the response ---------------------------------------------------------------

    def attach_diagnostics(
        self, section: FileSection, path: Path, found: DiagnosticMap, lines: list[str]
    ) -> None:
        section.lines = lines
        section.diagnostics = list(found.get(path, []))  # `fit.respond` chooses what is shown
        if path in found.pending:
            section.tags.append(Tag("diagnostics:pending", found.pending[path]))


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


async def execute(session: Session, request: Request) -> str:
    """Run every block and print the response."""
    # A block asks about several files and may edit the workspace: the disk first, and what
    # it recorded is what the block's edits are proven against (`diskwatch.Basis`).
    with session.texts.proving(await session.servers.sync_disk()):
        return await _execute(session, request)


async def _execute(session: Session, request: Request) -> str:
    executor = Executor(session)
    for block in request.files:
        await executor.open(block)
    opened = [run for run in executor.runs if run.path is not None and run.doc is not None]
    # Diagnostics first: a server has analysed the files once it published them, so the
    # hovers that follow see the whole project rather than a half-loaded one.
    found = await session.diagnostics.of([run.path for run in opened if run.path])
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
    return respond(sections, request, budget_of(session, request.max_tokens), checked)


async def check(session: Session, line: Check) -> Tag:
    """`*** Check`: the `check` mode's report, after the request's own edits."""
    capability = REGISTRY["check"]
    request = capability.model.model_validate(
        {"mode": "check", **({"file_path": line.file_path} if line.file_path else {})})
    try:
        answer = await session.run(capability, request)
    except Exception as exc:  # the check's failure is its tag's, not the request's
        return error_tag(as_error(exc, "the Check line"))
    return Tag("check", render_report(capability.template, answer.report).strip())
