"""What the commands of a Language Server Request (`RENAME_TO`, `MOVE_TO_FILE`, …) share
with the executor that runs its File blocks: the blocks as they run, the diagnostics of the
files they touch (`diagnosed`), and the tracker that runs each command and follows every
anchored line through the edits it applied."""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from ..capabilities.diagnostics import DiagnosticsReport
from ..diagnostics import Diagnostic, DiagnosticMap
from ..edits.apply import Written, watching
from ..failures import as_error
from ..pipeline import ask
from ..position import Document
from ..session.targets import Target
from ..session.warm import Session
from ..symbols import SymbolTree
from .parser import Anchor, FileBlock, diagnostics_request
from .printer import Entry, FileSection

T = TypeVar("T")


@dataclass
class Place:
    """Where an anchored line is now; followed through edits (None: it was deleted)."""

    path: Path
    line: int | None


@dataclass
class Anchored:
    anchor: Anchor
    place: Place
    entry: Entry


@dataclass
class FileRun:
    """One `*** File:` block while it runs."""

    block: FileBlock
    section: FileSection
    path: Path | None = None
    target: Target | None = None
    doc: Document | None = None
    tree: SymbolTree = field(default_factory=lambda: SymbolTree([]))
    anchored: list[Anchored] = field(default_factory=list)


class Runs(Protocol):
    """The executor, as the commands see it."""

    session: Session
    runs: list[FileRun]

    def attach_diagnostics(self, section: FileSection, path: Path, found: DiagnosticMap,
                           lines: list[str]) -> None: ...


async def diagnosed(session: Session, paths: list[Path], settled: bool = False) -> DiagnosticMap:
    """The diagnostics of the files a request touched, each file's the `diagnostics` mode's
    answer (`settled`: after the request's edits); a file it could not answer for is
    pending, with the reason."""
    found = DiagnosticMap()

    async def of(path: Path) -> None:
        shown, start, page_id = session.workspace.display(path), 0, None
        found[path] = []
        try:
            while True:
                report = (await ask(session, diagnostics_request(shown, settled, start, page_id))).report
                assert isinstance(report, DiagnosticsReport)
                found[path] += [Diagnostic(d.line - 1, d.column - 1, d.end_line - 1, d.end_column - 1, d.severity,
                                           d.message, d.code, d.source) for g in report.groups for d in g.diagnostics]
                found.pending.update((path, p.reason) for p in report.pending)
                if report.end >= report.total:
                    return
                start, page_id = report.end, report.pagination_id
        except Exception as exc:  # the file's failure is its note, not the request's
            found.pending[path] = as_error(exc, f"the diagnostics of {shown}").message

    await asyncio.gather(*(of(path) for path in dict.fromkeys(paths)))
    return found


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
    """Runs the commands' steps for the executor and follows its anchored lines through the
    edits they applied."""

    def __init__(self, executor: Runs) -> None:
        self.executor = executor
        self.session = executor.session
        self.before: dict[Path, list[str]] = {}  # first text seen of every changed file
        self.related: list[Path] = []  # unchanged files whose diagnostics the agent needs
        self.changes: list[str | None] = []  # the change set of every edit applied, in order
        self.moving: dict[int, tuple[Path, str]] = {}  # anchors a move takes to another file

    def anchored(self) -> list[Anchored]:
        return [item for run in self.executor.runs for item in run.anchored]

    async def texts(self, paths: list[Path]) -> dict[Path, list[str]]:
        docs = await self.session.texts.documents([p for p in paths if p.exists()])
        return {p: list(docs[p].lines) if p in docs else [] for p in paths}

    async def follow(self, step: Callable[[], Awaitable[T]]) -> T:
        """Run a step on the warm path (`Session.run_warm`; a mode's request through the
        pipeline inside it runs warm on its own) and move every anchored line along with the
        edits it applied, whichever code applied them (`edits.apply.watching`). The diagnostics
        after its edits are the response's, read once after every step (`diagnosed`): the
        step's mode waits for none (`Diagnostics.deferred`)."""
        with watching() as written, self.session.diagnostics.deferred():
            try:
                return await self.session.run_warm(step)
            finally:
                self._moved_along(written)

    def _moved_along(self, written: list[Written]) -> None:
        old: dict[Path, list[str]] = {}
        new: dict[Path, list[str]] = {}
        for file in written:
            old.setdefault(file.path, file.before)
            new[file.path] = file.after
        for path in old:
            self.before.setdefault(path, old[path])
        self.changes += dict.fromkeys(file.change for file in written)
        maps = {p: line_map(old[p], new[p]) for p in old}
        moved, self.moving = self.moving, {}
        cursor: dict[Path, int] = {}
        for item in self.anchored():
            place = item.place
            if place.line is None or place.path not in maps:
                continue
            if id(item) in moved:
                target, text = moved[id(item)]
                found = _find_moved(new.get(target, []), text, cursor.get(target, 0))
                if found is not None:
                    place.path, place.line = target, found
                    cursor[target] = found + 1
                    continue
            place.line = maps[place.path].get(place.line)


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
