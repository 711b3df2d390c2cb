"""`RENAME_TO`, `MOVE_TO_FILE`, `FIX`, `FORMAT` and `ORGANIZE_IMPORTS` for the text format,
and the response after them.

Each is a mode's request through the request pipeline: `RENAME_TO` the `rename` mode's,
`MOVE_TO_FILE` `move`'s, `FIX` `code_action`'s (given a listed id, `code_action_execute`'s),
`FORMAT` `format`'s and `ORGANIZE_IMPORTS` `format`'s with `organize_imports: "only"`.
Every step runs inside `Tracker.follow` and every change goes through
`edits.apply.apply_workspace_edit` (checked, approved, checked again, all or nothing through a
journal, on disk unless the human has unsaved changes). Anchored lines are followed through
each edit, so the response shows where they ended up, with the diagnostics of every file.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

from ..actions.applied import Applied
from ..actions.choose import kept
from ..actions.gather import Actions
from ..capabilities.rename.models import RenameReport
from ..capabilities.rename.modes import warnings
from ..changes import undo_hint
from ..errors import ErrorCode, LsapError
from ..failures import as_error
from ..jsonvalue import JsonObject
from ..pipeline import ask
from ..surface import phrase
from .lines import identifiers, name_column
from .parser import COMMANDS, FileOperation, Fix, Format, Move, Operation, OrganizeImports, Rename, line_locate, spot
from .printer import Echo, Entry, FileSection, Tag, error_tag
from .runs import Anchored, FileRun, Runs, Tracker, diagnosed

#: Changed lines shown for a file the request did not anchor (a rename's other files).
CHANGED_LINES = 10


async def rename(tracker: Tracker, item: Anchored, op: Rename) -> list[str]:
    """`RENAME_TO` is the `rename` mode at the symbol on the anchored line (prepareRename,
    the uses its edits miss, the diagnostics after): its warnings are the step's notes."""
    place = item.place
    assert place.line is not None
    doc = await tracker.session.texts.document(place.path)
    text = doc.lines[place.line]
    col = name_column(text, op.symbol)
    if col is None:
        names = ", ".join(name for _, name in identifiers(text)) or "none"
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{op.symbol!r} is not a name on the anchored line (its names: {names}): {text.strip()}",
            hint="name a symbol written whole on the line above the `!` line",
        )
    display = tracker.session.workspace.display(place.path)
    payload = op.request(spot(display, place.line, text, col))
    report = (await ask(tracker.session, payload)).report
    assert isinstance(report, RenameReport)
    return warnings(report)


def _lines(run: FileRun, selection: int) -> tuple[Path, int, int]:
    """A selection's file and first and last line (0-based, both included), where they are now."""
    chosen = run.block.selections[selection]
    first, last = run.anchored[chosen.start].place, run.anchored[chosen.end].place
    if first.line is None or last.line is None or first.path != last.path:
        raise LsapError(ErrorCode.NOT_FOUND, "the selection's first or last line was not found",
                        hint="fix the selection's anchors (see their errors) and send the request again")
    start = first.line + (0 if chosen.start_inclusive else 1)
    end = last.line - (0 if chosen.end_inclusive else 1)
    if end < start:
        raise LsapError(ErrorCode.INVALID_REQUEST, "the selection is empty",
                        hint="an exclusive end (`@)`) leaves out its own line; use `@]` to include it")
    return first.path, start, end


async def move_lines(tracker: Tracker, run: FileRun, op: Move) -> list[str]:
    """`! MOVE_TO_FILE`: the `move` mode of the selection's lines; the anchored lines it
    takes along are followed into the other file (`Tracker.moving`)."""
    session = tracker.session
    path, start, end = _lines(run, op.selection)
    doc = await session.texts.document(path)
    target = session.workspace.resolve(op.path)
    tracker.moving.update({id(item): (target, doc.lines[item.place.line]) for item in tracker.anchored()
                           if item.place.path == path and item.place.line is not None
                           and start <= item.place.line <= end})
    locate = line_locate(session.workspace.display(path), start, end)
    payload: JsonObject = {"mode": "move", "locate": locate, "to_file": op.path}
    report = (await ask(session, payload)).report
    assert isinstance(report, Applied)
    tracker.related += [session.workspace.resolve(p) for p in report.related or []]
    return report.remarks


async def fix(tracker: Tracker, item: Anchored, op: Fix) -> list[str]:
    """`! FIX`: the `code_action` mode at the line, for the action fixing the line's
    diagnostic of that code (`! FIX 2304`, narrowed by a title after it: `! FIX 2304 Add
    import`), else the one the text names by its title (the anchor tiers); or
    `code_action_execute` for the listed action of that id. The chosen action's title is the
    note."""
    place = item.place
    assert place.line is not None
    session = tracker.session
    display = session.workspace.display(place.path)
    if op.what in session.kept.owned(Actions):  # an id, as `code_actions` and the ambiguity list give
        chosen = kept(session, op.what)
        if chosen.path != place.path:
            raise LsapError(
                ErrorCode.INVALID_REQUEST,
                f"the action {op.what} ({chosen.title!r}) is of "
                f"{session.workspace.display(chosen.path)}, not of the anchored file",
                hint="put the `! FIX` under an anchor of that file",
            )
        payload: JsonObject = {"mode": "code_action_execute", "action_id": op.what}
    else:
        found = (await diagnosed(session, [place.path])).get(place.path, [])
        codes = {d.code for d in found if d.line <= place.line <= d.end_line}
        code, _, title = op.what.partition(" ")
        named: JsonObject = {"diagnostic": code, **({"title": title.strip()} if title.strip() else {})} if (
            code in codes) else {"title": op.what}
        payload = {"mode": "code_action", "locate": line_locate(display, place.line, place.line), **named}
    report = (await ask(session, payload)).report
    assert isinstance(report, Applied)
    if not (report.changed or report.created or report.renamed):
        raise LsapError(ErrorCode.NOT_FOUND, f"{report.title} ({report.server}) changed nothing")
    return [f"applied: {report.title} ({report.server})", *report.remarks]


async def organize_imports(tracker: Tracker, run: FileRun, op: OrganizeImports) -> list[str]:
    """`! ORGANIZE_IMPORTS`: the `format` mode's imports alone, of the file (of one server's, named)."""
    assert run.path is not None
    display = tracker.session.workspace.display(run.path)
    server: JsonObject = {"server": op.server} if op.server else {}
    payload: JsonObject = {"mode": "format", "file_path": display, "organize_imports": "only", **server}
    report = (await ask(tracker.session, payload)).report
    assert isinstance(report, Applied)
    return report.remarks


async def format_lines(tracker: Tracker, run: FileRun, op: Format) -> list[str]:
    """`! FORMAT`: the `format` mode, of the file or of the selection's lines."""
    assert run.path is not None
    display = tracker.session.workspace.display
    if op.selection is None:
        where: JsonObject = {"file_path": display(run.path)}
    else:
        path, start, end = _lines(run, op.selection)
        where = {"locate": line_locate(display(path), start, end)}
    try:
        report = (await ask(tracker.session, {"mode": "format", **where})).report
    except LsapError as error:
        if error.code is ErrorCode.NOT_FOUND and "changed nothing" in error.message:
            return ["already formatted"]
        raise
    assert isinstance(report, Applied)
    return report.remarks if report.changed or report.created else ["already formatted"]


async def run_commands(executor: Runs) -> list[FileSection]:
    """Run commands in request order, then describe every file they touched."""
    tracker = Tracker(executor)
    steps: list[tuple[int, Callable[[], Awaitable[list[str]]], Echo]] = []
    for run in executor.runs:
        for file_op in run.block.operations:
            echo = Echo(file_op.source)
            run.section.echoes.append(echo)
            if run.path is None:
                echo.tags.append(Tag("error:not_found", "skipped: the file could not be opened"))
                continue
            steps.append((file_op.line, partial(tracker.follow, partial(_file_step, tracker, run, file_op)), echo))
        for item in run.anchored:
            for op, echo in zip(item.anchor.operations, item.entry.echoes, strict=False):
                if not isinstance(op, COMMANDS) or item.place.line is None:
                    continue  # not a command, or the echo already says the anchor was not found
                steps.append((op.line, partial(tracker.follow, partial(_step, tracker, run, item, op)), echo))
    done: list[tuple[Echo, list[str]]] = []  # the steps that changed files, with their change sets
    for _line, step, echo in sorted(steps, key=lambda s: s[0]):
        applied = len(tracker.changes)
        try:
            echo.tags += [Tag("note", note) for note in await step()]
        except Exception as exc:  # a step's failure (a text that kept changing too) is its tag's
            echo.tags.append(error_tag(as_error(exc, f"the `{echo.text}` line")))
            if done:
                echo.tags.append(Tag("note", _earlier_steps(done)))
        changes = [c for c in tracker.changes[applied:] if c]
        if len(tracker.changes) > applied:
            done.append((echo, changes))
    return await sections_after(tracker)


def _earlier_steps(done: list[tuple[Echo, list[str]]]) -> str:
    """What a failed step leaves applied: the request's earlier steps, and how to undo them
    (latest first, as change sets are taken back)."""
    steps = ", ".join(f"`{echo.text.strip()}`" for echo, _ in done)
    changes = [c for _, ids in reversed(done) for c in reversed(ids)]
    undo = (" · undo: " + ", then ".join(f"`{undo_hint(c)}`" for c in changes)) if changes else ""
    several = len(done) != 1
    return f"this step only: the earlier step{'s' * several} {steps} stay{'s' * (not several)} applied{undo}"


async def _file_step(tracker: Tracker, run: FileRun, op: FileOperation) -> list[str]:
    if isinstance(op, OrganizeImports):
        return await organize_imports(tracker, run, op)
    return await format_lines(tracker, run, op)


async def _step(tracker: Tracker, run: FileRun, item: Anchored, op: Operation) -> list[str]:
    if isinstance(op, Rename):
        return await rename(tracker, item, op)
    if isinstance(op, Move):
        return await move_lines(tracker, run, op)
    if isinstance(op, Fix):
        return await fix(tracker, item, op)
    assert isinstance(op, Format)
    return await format_lines(tracker, run, op)


async def sections_after(tracker: Tracker) -> list[FileSection]:
    """Per file: anchored lines where they are now (`@@`), answers kept, diagnostics fresh."""
    executor = tracker.executor
    order: list[Path] = []
    for run in executor.runs:
        if run.path is not None:
            order.append(run.path)
    for item in tracker.anchored():
        order.append(item.place.path)
    order += list(tracker.before) + tracker.related
    order = list(dict.fromkeys(p for p in order if p.exists()))
    texts = await tracker.texts(order)
    # After edits: the servers' diagnostics of the text written (`Diagnostics.after_edit`, as
    # `actions.applied.applied`); a file they did not confirm in time is pending: the next check compares it.
    found = await diagnosed(tracker.session, order, settled=bool(tracker.before))
    if tracker.before:
        again = phrase({"mode": "check"}, "file_path")
        for path, reason in found.pending.items():
            found.pending[path] = f"not compared yet: {reason}; the edits are applied, `{again}` compares it"
    display = tracker.session.workspace.display
    sections: dict[Path, FileSection] = {p: FileSection(display(p)) for p in order}
    for run in executor.runs:
        if run.path is None:
            sections.setdefault(Path(run.block.path), run.section)
            continue
        sections[run.path].echoes += run.section.echoes
        for item in run.anchored:
            kept = [
                e
                for op, e in zip(item.anchor.operations, item.entry.echoes, strict=False)
                if not isinstance(op, COMMANDS) or e.tags
            ]
            line = item.place.line
            if item.entry.line is None:  # never found: keep the error where it was asked
                sections[run.path].entries.append(item.entry)
            elif line is not None and item.place.path in sections:
                text = texts[item.place.path][line].strip()
                # Its tags as answered, the note of a match that was not exact with them:
                # an edit at a line the agent did not quite name must say which it took.
                sections[item.place.path].entries.append(Entry(line, "@@", text, item.entry.tags, kept))
            elif kept:
                sections[run.path].entries.append(
                    Entry(
                        None,
                        "@@",
                        item.anchor.text,
                        [Tag("note", "this line is gone after the edit")],
                        kept,
                    )
                )
    for path, section in sections.items():
        if path in tracker.before and not section.entries:
            section.entries += _changed_entries(tracker.before[path], texts.get(path, []))
        executor.attach_diagnostics(section, path, found, texts.get(path, []))
    return [
        s
        for p, s in sections.items()
        # A file's own commands are shown with what they said, even when they changed nothing.
        if s.entries or s.diagnostics or s.tags or s.echoes or p in tracker.before
    ]


def _changed_entries(before: list[str], after: list[str]) -> list[Entry]:
    """The new or changed lines of a file nobody anchored (bounded)."""
    entries: list[Entry] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(
        None, before, after, autojunk=False
    ).get_opcodes():
        if tag in ("replace", "insert"):
            entries += [Entry(j, "@@", after[j].strip()) for j in range(j1, j2) if after[j].strip()]
    if len(entries) > CHANGED_LINES:
        more = len(entries) - CHANGED_LINES
        entries = entries[:CHANGED_LINES]
        entries[-1].echoes.append(Echo(f"/* … {more} more changed lines */"))
    return entries
