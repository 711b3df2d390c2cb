"""The edit engine's entry: `apply_workspace_edit` plans an edit, asks the edit policy, has
it carried out (`switch.py`), and tells its request and caller what it changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from ..diskwatch import Basis
from ..editor import Client
from ..errors import ErrorCode, LsapError
from ..filestate import content_hash
from ..session.approval import Doubt
from ..session.warm import Session
from .files import File
from .plan import Plan, plan_edit, preview_text
from .switch import journal_dir, recheck, recorded
from .text import decoded


@dataclass(frozen=True)
class FileChange:
    path: str
    edits: int
    saved: bool  # written to disk; False when the human's unsaved changes kept it in the buffer
    # Not saved: the file on disk was left alone, and holds other text than the buffer now.
    disk_differs: bool = False
    added: int = 0  # lines, from the text planned on to the text written
    removed: int = 0
    # Saved to disk, and its buffer, which holds the human's unsaved changes, has it too.
    beside_unsaved: bool = False


@dataclass
class EditResult:
    label: str
    files: list[FileChange] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    # Existing files a consented overwrite replaced whole, with the lines each held.
    overwritten: list[tuple[str, int]] = field(default_factory=list)
    change: str | None = None  # the change set that records it (`changes.py`)

    @property
    def changed(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def unsaved(self) -> list[str]:
        return [f.path for f in self.files if not f.saved]


@dataclass(frozen=True)
class Written:
    """A file as an applied edit left it: its lines before and after ([]: no such file)."""

    path: Path
    before: list[str]
    after: list[str]
    change: str | None = None  # the change set that records the edit (`changes.py`)


# While a text-format step runs: every file the edits applied meanwhile changed, whichever
# capability applied them (`watching`).
_WRITTEN: ContextVar[list[Written] | None] = ContextVar("lsap_written", default=None)


@contextlib.contextmanager
def watching() -> Iterator[list[Written]]:
    """Collect the files every edit applied while it lasts changed, in order: the text format
    follows its anchored lines through a rename or a fix applied by the mode's own code."""
    written: list[Written] = []
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)


async def apply_workspace_edit(
    session: Session, edit: object, client: Client, *, label: str,
    replaces: str | None = None, basis: Basis | None = None,
    expect: Mapping[Path, list[str]] | None = None, overwrite: bool = False,
    doubt: Doubt | None = None, disk_too: bool = False, new_name: str | None = None,
) -> EditResult:
    """Check, ask the edit policy, check again, then apply every file's edits or none,
    recorded as a change set.

    `replaces`: what each edit replaces (a rename's old name), `new_name` what a whole-file
    replacement may put in its place alone, see `check_replaced`;
    `basis`: what the files were when the server began computing the edit (default: when
    this request began; a previewed rename keeps its own), see `diskwatch.Basis`;
    `expect`: the whole text files must hold, `overwrite`: consent to replacing existing
    files (see `plan_edit`); `doubt`: why this edit needs a human's yes (`session.approval.Doubt`):
    refused, nothing written, unless a human is asked and applies it. `disk_too`: a file
    whose buffer holds the human's unsaved changes gets the edit on disk as well (rebased
    onto the disk's text, `_rebased`), its buffer left unsaved with both, so that the
    project on disk is never half edited (a rename, a move); refused whole where that
    cannot be done; without it the edit stays in that buffer."""
    basis = basis or session.texts.basis()
    plan = await plan_edit(session, edit, client, replaces, basis, expect, overwrite, disk_too, new_name)
    if not plan.files and not plan.removed:
        return EditResult(label)
    edits, count = sum(f.edits for f in plan.files), len(plan.diffs)
    summary = f"{label}: {edits} edit{'s' if edits != 1 else ''} in {count} file" + (
        "s" if count != 1 else ""
    )
    preview = preview_text(plan.diffs)
    if not await (session.approve_edit(summary, preview) if doubt is None
                  else session.approve_edit(summary, preview, doubt)):
        raise LsapError(
            ErrorCode.DENIED,
            f"the edit was not approved ({summary})",
            hint="the editor's edit policy refused it; nothing was changed",
        )
    await asyncio.to_thread(recheck, plan, session.workspace)
    directory = await journal_dir(session.gateway)
    # Shielded: an asker who goes away (or a session that stops) must not leave the journal
    # half settled; its cancellation waits for the edit to settle, so that the answer then
    # given says whether it was applied (`surface.APPLIED`).
    recording = asyncio.ensure_future(recorded(session, plan, directory, label))
    try:
        change = await asyncio.shield(recording)
    except asyncio.CancelledError:
        await asyncio.wait([recording])
        if not recording.cancelled():
            recording.exception()  # retrieved: the answer cut short says what it did
        raise
    finally:  # applied or rolled back, the bridge touched these texts itself
        session.texts.changed_by_bridge([f.path for f in plan.files])
    # For the asker's next check, even its first (a baseline): what its edit broke is reported.
    session.edited.note(f.path for f in plan.files if f.lines != f.original or f.created or f.origin)
    return _outcome(session, label, plan, basis, change)


def _outcome(session: Session, label: str, plan: Plan, basis: Basis | None, change: str | None) -> EditResult:
    """What an applied edit tells its request (`_WRITTEN`, the basis its later steps prove
    against) and its caller: the files written, created, renamed and overwritten."""
    if (written := _WRITTEN.get()) is not None:
        for f in plan.files:
            if f.origin is not None:  # renamed: the old path holds nothing now
                written.append(Written(f.origin, f.original, [], change))
            written.append(Written(f.path, [] if f.created or f.origin else f.original, f.lines, change))
    for file in plan.files:
        if not file.buffer_only and basis is not None:  # proves this request's later steps
            basis.written[str(file.path)] = content_hash(file.new_bytes())
    display = session.workspace.display
    return EditResult(
        label,
        files=[
            FileChange(display(f.path), f.edits, not f.buffer_only,
                       f.buffer_only and _disk_differs(f), *_line_counts(f.original, f.lines),
                       beside_unsaved=f.under is not None)
            for f in plan.files if f.lines != f.original or f.created
        ],
        created=[display(f.path) for f in plan.files if f.created],
        renamed=[(display(f.origin), display(f.path)) for f in plan.files if f.origin],
        overwritten=[(display(f.path), len(f.overwrote)) for f in plan.files if f.overwrote is not None],
        change=change,
    )


def _line_counts(old: list[str], new: list[str]) -> tuple[int, int]:
    """Lines added and removed from `old` to `new` (a changed line is one of each)."""
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def _disk_differs(file: File) -> bool:
    """Whether the file on disk holds other text than its buffer now does."""
    if file.disk is None:
        return True
    try:
        lines, _breaks, _bom = decoded(file.disk, str(file.path))
    except LsapError:
        return True
    return lines != file.lines
