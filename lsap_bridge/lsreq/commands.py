"""`RENAME_TO` and `MOVE_TO_FILE` for the text format, and the response after them.

Every change goes through `edits.apply_workspace_edit` (checked, approved, checked
again, all or nothing through a journal, on disk unless the human has unsaved changes).
Anchored lines are followed through each edit, so the response shows where they ended up,
with the diagnostics of every file.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ..errors import ErrorCode, LsapError
from .lines import symbol_column
from .move import move_selection
from .parser import Move, Rename
from .printer import Echo, Entry, FileSection, Tag, error_tag
from .runs import Anchored, FileRun, Runs, Tracker

#: Changed lines shown for a file the request did not anchor (a rename's other files).
CHANGED_LINES = 10


async def rename(tracker: Tracker, run: FileRun, item: Anchored, op: Rename) -> None:
    place = item.place
    assert place.line is not None
    doc = await tracker.session.document(place.path)
    text = doc.lines[place.line]
    col = symbol_column(text, op.symbol)
    if col is None:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{op.symbol!r} is not on the anchored line: {text.strip()}",
            hint="name a symbol written on the line above the `!` line",
        )
    target = tracker.executor.target_for(run, "textDocument/rename")
    params = {
        **tracker.session.position_params(target, doc, place.line, col),
        "newName": op.new_name,
    }
    edit = await tracker.session.call(target, "textDocument/rename", params)
    if not edit:
        raise LsapError(
            ErrorCode.UNSUPPORTED,
            f"{target.client.name} cannot rename {op.symbol!r} here",
            hint="point at the symbol's declaration or a use of it",
        )
    await tracker.apply(edit, target.client, f"rename {op.symbol} to {op.new_name}",
                        replaces=op.symbol)


async def run_commands(executor: Runs) -> list[FileSection]:
    """Run commands in request order, then describe every file they touched."""
    tracker = Tracker(executor)
    for run in executor.runs:
        for item in run.anchored:
            for op, echo in zip(item.anchor.operations, item.entry.echoes, strict=False):
                if not isinstance(op, (Rename, Move)):
                    continue
                if item.place.line is None:
                    continue  # the echo already says the anchor was not found
                try:
                    if isinstance(op, Rename):
                        await rename(tracker, run, item, op)
                    else:
                        notes = await move_selection(tracker, run, op)
                        echo.tags += [Tag("note", note) for note in notes]
                except LsapError as error:
                    echo.tags.append(error_tag(error))
    return await sections_after(tracker)


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
    found = await tracker.session.diagnostics(order)
    display = tracker.session.workspace.display
    sections: dict[Path, FileSection] = {p: FileSection(display(p)) for p in order}
    for run in executor.runs:
        if run.path is None:
            sections.setdefault(Path(run.block.path), run.section)
            continue
        for item in run.anchored:
            kept = [
                e
                for op, e in zip(item.anchor.operations, item.entry.echoes, strict=False)
                if not isinstance(op, (Rename, Move)) or e.tags
            ]
            line = item.place.line
            if item.entry.line is None:  # never found: keep the error where it was asked
                sections[run.path].entries.append(item.entry)
            elif line is not None and item.place.path in sections:
                text = texts[item.place.path][line].strip()
                tags = [t for t in item.entry.tags if t.name != "note"]
                sections[item.place.path].entries.append(Entry(line, "@@", text, tags, kept))
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
        if s.entries or s.diagnostics or s.tags or p in tracker.before
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
