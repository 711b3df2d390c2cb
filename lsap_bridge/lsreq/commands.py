"""`RENAME_TO` and `MOVE_TO_FILE` for the text format, and the response after them.

Every change goes through `edits.apply_workspace_edit` (checked, approved, checked
again, all or nothing through a journal, on disk unless the human has unsaved changes).
Anchored lines are followed through each edit, so the response shows where they ended up,
with the diagnostics of every file.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..edits import apply_workspace_edit
from ..errors import ErrorCode, LsapError
from ..gateway import Client
from ..workspace import path_of
from .lines import symbol_column
from .move import move_selection
from .parser import Move, Rename
from .printer import Echo, Entry, FileSection, Tag, error_tag

if TYPE_CHECKING:
    from .executor import Anchored, Executor, FileRun

#: Changed lines shown for a file the request did not anchor (a rename's other files).
CHANGED_LINES = 10


def edit_paths(edit: dict[str, Any]) -> list[Path]:
    """Every file a WorkspaceEdit touches."""
    paths = [path_of(uri) for uri in (edit.get("changes") or {})]
    for change in edit.get("documentChanges") or []:
        for key in ("uri", "oldUri", "newUri"):
            if key in change:
                paths.append(path_of(change[key]))
        if "textDocument" in change:
            paths.append(path_of(change["textDocument"]["uri"]))
    return list(dict.fromkeys(p.resolve() if p.exists() else p for p in paths))


def line_map(before: list[str], after: list[str]) -> dict[int, int]:
    """Old line -> new line for lines that survived an edit (changed in place counts)."""
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, before, after, autojunk=False
    ).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            out.update({i: j1 + i - i1 for i in range(i1, i2)})
    return out


class Tracker:
    """Applies edits for the executor and follows its anchored lines through them."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.session = executor.session
        self.before: dict[Path, list[str]] = {}  # first text seen of every changed file
        self.related: list[Path] = []  # unchanged files whose diagnostics the agent needs

    def anchored(self) -> list[Anchored]:
        return [item for run in self.executor.runs for item in run.anchored]

    async def texts(self, paths: list[Path]) -> dict[Path, list[str]]:
        docs = await self.session.documents([p for p in paths if p.exists()])
        return {p: list(docs[p].lines) if p in docs else [] for p in paths}

    async def apply(
        self,
        edit: dict[str, Any],
        client: Client,
        label: str,
        moved: dict[int, tuple[Path, str]] | None = None,
        replaces: str | None = None,
    ) -> None:
        """Apply an edit and move every anchored line along with it.

        `moved`: anchors (by id) whose line went to another file, with the line's text.
        `replaces`: what each edit replaces (a rename's old name).
        """
        paths = edit_paths(edit)
        old = await self.texts(paths)
        # Servers hear of the files it writes or creates (didChangeWatchedFiles) as it goes.
        result = await apply_workspace_edit(self.session, edit, client, label=label,
                                            replaces=replaces)
        new = await self.texts(paths)
        for path in paths:
            self.before.setdefault(path, old[path])
        maps = {p: line_map(old[p], new[p]) for p in paths}
        cursor: dict[Path, int] = {}
        for item in self.anchored():
            place = item.place
            if place.line is None or place.path not in maps:
                continue
            if moved and id(item) in moved:
                target, text = moved[id(item)]
                found = _find_moved(new.get(target, []), text, cursor.get(target, 0))
                if found is not None:
                    place.path, place.line = target, found
                    cursor[target] = found + 1
                    continue
            place.line = maps[place.path].get(place.line)
        if not result.files and not result.created:
            raise LsapError(ErrorCode.NOT_FOUND, f"{label} changed nothing")


def _normal(text: str) -> str:
    """A line as a move may rewrite it: spacing, semicolons, an added `export`."""
    text = " ".join(text.replace(";", " ").split()).replace("( ", "(").replace(" )", ")")
    return text.removeprefix("export ")


def _find_moved(lines: list[str], text: str, start: int) -> int | None:
    """A moved line in its new file: the same line, give or take what `_normal` ignores."""
    wanted = _normal(text)
    for offset, line in enumerate(lines[start:]):
        if _normal(line) == wanted:
            return start + offset
    return None


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


async def run_commands(executor: Executor) -> list[FileSection]:
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
