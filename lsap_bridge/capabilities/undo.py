"""`changes` and `undo`: the change sets the bridge recorded (`changes.py`), listed newest
first, and one taken back whole, across every file, buffers and disk alike, through the
same safe, journalled edit engine as every edit (`edits.apply.apply_workspace_edit`).

An undo is an edit from each file's "after" text back to its "before": every file must
still hold "after" exactly (checked here, and again by the engine right before it plans),
else it is a conflict, named, and nothing is undone unless the request says `partial`.
The edit is line by line (only the lines the change touched), so a buffer where the
change stayed beside the human's unsaved text keeps that text, and each buffer gets one
undo step. The undo is a change set too: undoing it redoes the change.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from .. import changes
from ..changes import ChangeSet, FileText, signs
from ..edits.apply import apply_workspace_edit
from ..edits.switch import journal_dir
from ..errors import ErrorCode, LsapError
from ..gateway import Client
from ..jsonvalue import Params
from ..lsp import DocumentChangeData, TextDocumentEditData, TextEditData
from ..models import Paged, Report, Request, Row, absent
from ..modes import Answer, Offer, mode
from ..position import Document
from ..report.paging import PagingInfo, paged
from ..session.warm import Session
from ..surface import SURFACE, phrase
from ..workspace import uri_of

# Undo edits replace whole lines (column 0 on each side): no encoding is involved.
ENGINE = Client(0, "lsap undo", "utf-32", frozenset())
FILES_SHOWN = 3  # files named per change set in a listing
TOUCHED = "edited since, in the hunk's own lines"
# A merged disk change's conflict with the unsaved text is decided in the buffer alone.
MERGE_KEYS = "decide it in the buffer (keep mine, take theirs, both: :help lsap-merge)"
NOTHING = "nothing was changed"


class ChangesRequest(Request):
    mode: Literal["changes"] = "changes"
    # Only the change sets of this agent (`human`: the human's own).
    who: str | None = None

    positional: ClassVar[str] = "who"
    file_from_cursor: ClassVar[bool] = False


class UndoRequest(Request):
    mode: Literal["undo"] = "undo"
    # The change set to take back; none: the newest change of any agent not undone yet.
    id: str | None = None
    # Undo the files that still hold the change's text and list the others (else: none).
    partial: bool = False

    positional: ClassVar[str] = "id"
    file_from_cursor: ClassVar[bool] = False


class ChangeRow(Row):
    id: str
    who: str
    when: str
    label: str
    files: list[str]  # the first FILES_SHOWN
    count: int
    state: str  # applied | undone by N | partly undone | undo of N | reviewed
    undo: str | None  # the request that takes it back (None: nothing left to undo)
    review: str | None  # the request that shows its hunks, to reject or accept


class ChangesReport(Paged):
    who: str | None
    changes: list[ChangeRow]


class Conflict(Row):
    path: str
    reason: str


class UndoReport(Report):
    id: str
    label: str
    who: str
    when: str
    undone: list[str]
    unsaved: list[str]  # undone in a buffer holding the human's unsaved text, not on disk
    conflicts: list[Conflict]  # left as they are (partial)
    change: str | None  # the change set of this undo
    redo: str | None  # the request that takes the undo back


def _when(stamp: float) -> str:
    today = time.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.localtime(stamp))
    return time.strftime("%H:%M:%S" if today else "%Y-%m-%d %H:%M", time.localtime(stamp))


def _left(change: ChangeSet) -> list[FileText]:
    """Its files not put back yet, nor whose every hunk was decided (none when its texts
    were too large to keep)."""
    return [f for f in change.files if change.texts and f.path not in change.reverted
            and (f.before != f.after or f.origin is not None)]


def _conflicted(file: FileText) -> set[int]:
    """The numbers of a merged file's hunks in conflict with the human's unsaved text, not
    decided yet (`FileText.conflicts`)."""
    return {n for numbers in file.conflicts for n in numbers}


def _state(change: ChangeSet) -> str:
    conflicts = sum(len(_conflicted(f)) for f in _left(change))
    if conflicts:
        return (f"merged into the buffer, {conflicts} conflict{'s' if conflicts != 1 else ''} with the "
                "unsaved text to decide in it")
    if not change.texts:
        return f"too large to keep its texts (over {changes.KEEP_BYTES >> 20} MB): not undoable"
    if change.undone and not _left(change):
        return f"undone by {change.undone[-1]}"
    if not _left(change):
        return "reviewed"
    if change.reverted:
        return f"partly undone ({len(change.reverted)} of {len(change.files)} files)"
    return f"undo of {change.undoes}" if change.undoes else "applied"


def _row(session: Session, change: ChangeSet) -> ChangeRow:
    display = session.workspace.display
    return ChangeRow(id=change.id, who=change.who, when=_when(change.when), label=change.label,
                     files=[display(Path(f.path)) for f in change.files[:FILES_SHOWN]],
                     count=len(change.files), state=_state(change),
                     undo=changes.undo_hint(change.id) if _left(change) else None,
                     review=phrase({"mode": "review", "id": change.id}, "id") if _left(change) else None)


@mode("changes", request=ChangesRequest, report=ChangesReport,
      summary="the change sets the bridge applied (who, when, what, which files), newest first",
      offer=Offer(picker=21))
async def list_changes(session: Session, request: ChangesRequest) -> Answer:
    found = await asyncio.to_thread(changes.load, await journal_dir(session.gateway), session.workspace)
    if request.who is not None:
        found = [c for c in found if c.who == request.who]

    async def build(request: ChangesRequest, shown: list[ChangeRow], paging: PagingInfo) -> Answer:
        return Answer(ChangesReport(who=request.who, changes=shown, **paging))

    return await paged(session, request, [_row(session, c) for c in found], build)


def _target(found: list[ChangeSet], request: UndoRequest) -> ChangeSet:
    """The change set asked for, or the newest agent change with files left to undo."""
    if request.id is not None:
        match = next((c for c in found if c.id == request.id), None)
        if match is None:
            raise LsapError(ErrorCode.NOT_FOUND, f"no change set {request.id} in this workspace",
                            hint=f"`{phrase({'mode': 'changes'}, None)}` lists them")
        return match
    match = next((c for c in found if c.by_agent and not c.undoes and _left(c)), None)
    if match is None:
        raise LsapError(ErrorCode.NOT_FOUND, "no agent change is left to undo",
                        hint=f"`{phrase({'mode': 'changes'}, None)}` lists every change set")
    return match


def _conflict(file: FileText, doc: Document | None, whole: bool = False) -> str | None:
    """Why a file cannot be put back (None: it holds the change's text). `whole`: the
    whole file goes back (an undo, not a hunk's rejection), so a rename goes back too,
    while its old name is free."""
    if file.before is None and not whole:
        return "the change created it; undo all of it (the file goes), or the whole change"
    if file.origin is not None and not whole:
        return f"the change renamed it from {file.origin}; undo the whole change, or rename it back by hand"
    if file.origin is not None and os.path.lexists(file.origin):
        return f"the change renamed it from {file.origin}, which exists again; move that aside and ask again"
    if doc is None:
        return "it is gone from the disk"
    if doc.lines != file.after:
        if doc.modified and not file.in_buffer:
            return "edited since in the buffer (unsaved changes)"
        return "edited since"
    return None


def _moved(files: list[FileText]) -> list[tuple[str, str]]:
    """The files of a change between which it moved code (a line it took out of one is a
    line it put into the other): a move goes back whole or not at all."""
    def changed(old: list[str], new: list[str]) -> set[str]:
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        return {line.strip() for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
                for line in new[j1:j2] if line.strip()}

    added = {f.path: changed(f.before or [], f.after) for f in files}
    taken = {f.path: changed(f.after, f.before or []) for f in files}
    return [(source, target) for source, lines in taken.items() for target, put in added.items()
            if target != source and lines & put]


def back_edits(now: list[str], then: list[str]) -> list[TextEditData]:
    """LSP text edits turning the lines `now` into `then`, replacing only the lines that
    differ (whole lines, column 0)."""
    edits: list[TextEditData] = []
    matcher = difflib.SequenceMatcher(None, now, then, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append({"range": {"start": {"line": i1, "character": 0}, "end": {"line": i2, "character": 0}},
                      "newText": "".join(line + "\n" for line in then[j1:j2])})
    return edits


def _back(file: FileText) -> list[DocumentChangeData]:
    """The steps that put one file of a change back: its lines; a renamed file also its
    name, and the file a rename overwrote its text (the renamed one is made again at its
    old name then, so that no file is deleted)."""
    def edit(path: str, now: list[str], then: list[str]) -> TextDocumentEditData:
        return {"textDocument": {"uri": uri_of(Path(path)), "version": None}, "edits": back_edits(now, then)}

    if file.before is None and file.origin is None:  # created by the change: it goes
        return [{"kind": "delete", "uri": uri_of(Path(file.path))}]
    if file.origin is None:
        return [edit(file.path, file.after, file.before or [])]
    if file.overwritten is None:
        return [{"kind": "rename", "oldUri": uri_of(Path(file.path)), "newUri": uri_of(Path(file.origin))},
                edit(file.origin, file.after, file.before or [])]
    return [{"kind": "create", "uri": uri_of(Path(file.origin))}, edit(file.origin, [], file.before or []),
            edit(file.path, file.after, file.overwritten)]


async def revert(session: Session, change: ChangeSet, files: list[FileText], label: str) -> list[str]:
    """Put `files` of a change set back to their "before" through the engine (recorded as
    a change set of its own), and note it on the set; returns the files left unsaved."""
    journals = await journal_dir(session.gateway)
    edit = {"documentChanges": [step for f in files for step in _back(f)]}
    # What the change wrote to disk goes back on disk too, beside unsaved changes made since.
    result = await apply_workspace_edit(session, edit, ENGINE, label=label,
                                        expect={Path(f.path): f.after for f in files},
                                        disk_too=not any(f.in_buffer for f in files))
    fresh = await asyncio.to_thread(changes.find, journals, session.workspace, change.id) or change
    fresh.reverted = list(dict.fromkeys([*fresh.reverted, *(f.path for f in files)]))
    if result.change is not None:
        fresh.undone.append(result.change)
        undo = await asyncio.to_thread(changes.find, journals, session.workspace, result.change)
        if undo is not None:
            undo.undoes = change.id
            await asyncio.to_thread(changes.update, journals, undo)
    await asyncio.to_thread(changes.update, journals, fresh)
    change.undone, change.reverted = fresh.undone, fresh.reverted
    for made in (d for f in files if f.before is None for d in f.made):  # deepest first
        with contextlib.suppress(OSError):  # not empty (someone's files): it stays
            os.rmdir(made)
    # Undone: the agent's signs on those lines go, and the undo's own lines get none.
    with contextlib.suppress(LsapError):
        for file in files:
            await session.gateway.call("presence_reviewed", change.id, file.path)
        if result.change is not None:
            await session.gateway.call("presence_reviewed", result.change)
    return result.unsaved


@mode("undo", request=UndoRequest, report=UndoReport,
      summary="take a whole change set back (every file, buffers and disk), through the safe edits",
      workspace=True, edits=True, offer=Offer(mcp=True, picker=22))
async def undo(session: Session, request: UndoRequest) -> Answer:
    found = await asyncio.to_thread(changes.load, await journal_dir(session.gateway), session.workspace)
    change = _target(found, request)
    if not change.texts:
        raise LsapError(ErrorCode.UNSUPPORTED, f"change {change.id} ({change.label}) was too large to keep its "
                        f"texts (over {changes.KEEP_BYTES >> 20} MB), so it cannot be undone here",
                        hint="undo it in each buffer (`u`), or with your version control")
    left = _left(change)
    if not left and not change.undone:
        raise LsapError(ErrorCode.INVALID_REQUEST, f"every hunk of change {change.id} ({change.label}) was "
                        "decided in its review (kept or undone): nothing is left to undo",
                        hint="nothing to do; a hunk kept is yours to edit now")
    if not left:
        raise LsapError(ErrorCode.INVALID_REQUEST,
                        f"change {change.id} ({change.label}) was undone already by {change.undone[-1]}",
                        hint=f"redo it with `{changes.undo_hint(change.undone[-1])}`")
    if _merge(change):
        return await _undo_merge(session, change)
    paths = [Path(f.path) for f in left]
    docs = await session.texts.documents([p for p in paths if p.is_file()])
    display = session.workspace.display
    conflicts = [Conflict(path=display(Path(f.path)), reason=reason) for f in left
                 if (reason := _conflict(f, docs.get(Path(f.path)), whole=True)) is not None]
    named = {c.path for c in conflicts}
    clean = [f for f in left if display(Path(f.path)) not in named]
    going = {f.path for f in clean}
    split = next(((a, b) for a, b in _moved(left) if (a in going) != (b in going)), None)
    if split is not None:  # half a move back: the code in two files, or in none
        clean = []
        conflicts.append(Conflict(path=display(Path(split[0])), reason=f"the change moved code from it to "
                                  f"{display(Path(split[1]))}: the two go back together or not at all"))
    if conflicts and (not request.partial or not clean):
        listed = "; ".join(f"{c.path}: {c.reason}" for c in conflicts)
        hint = "nothing was changed"
        if clean:
            partial = phrase({"mode": "undo", "id": change.id, "partial": True}, "id")
            hint += f"; `{partial}` undoes the {len(clean)} file{'s' if len(clean) != 1 else ''} that still match"
        raise LsapError(ErrorCode.CONFLICT,
                        f"change {change.id} ({change.label}) cannot be undone: {listed}", hint=hint)
    unsaved = await revert(session, change, clean, f"undo {change.id} ({change.label})")
    with contextlib.suppress(LsapError):  # a view of its hunks in the buffers shows what is left
        await session.gateway.call("review_inline", inline(change, display), False)
    redo = changes.undo_hint(change.undone[-1]) if change.undone else None
    return Answer(UndoReport(id=change.id, label=change.label, who=change.who, when=_when(change.when),
                             undone=[display(Path(f.path)) for f in clean], unsaved=unsaved,
                             conflicts=conflicts, change=change.undone[-1] if change.undone else None,
                             redo=redo))


async def _undo_merge(session: Session, change: ChangeSet) -> Answer:
    """`undo` of a disk change merged into a buffer with unsaved text: every hunk of it
    rejected as the review rejects one (its lines out of the file on disk and out of the
    buffer, the unsaved text kept there); refused while a conflict of it is left to decide."""
    display = session.workspace.display
    left = sum(len(_conflicted(f)) for f in _left(change))
    if left:
        raise LsapError(ErrorCode.CONFLICT, f"change {change.id} ({change.label}) has {left} conflict"
                        f"{'s' if left != 1 else ''} with the unsaved text left: {MERGE_KEYS}",
                        hint=NOTHING + "; undo it once they are decided")
    files, written = _decide(change, ReviewRequest(id=change.id, decision="reject"), display)
    put = await _put_back(session, change, written, True)
    change.files = files
    await asyncio.to_thread(changes.update, await journal_dir(session.gateway), change)
    with contextlib.suppress(LsapError):  # a view of its hunks in the buffers shows what is left
        await session.gateway.call("review_inline", inline(change, display), False)
    return Answer(UndoReport(id=change.id, label=change.label, who=change.who, when=_when(change.when),
                             undone=[display(Path(f.path)) for f in written], unsaved=[], conflicts=[],
                             change=put, redo=changes.undo_hint(put) if put else None))


# -- review ----------------------------------------------------------------------------


class ReviewRequest(Request):
    mode: Literal["review"] = "review"
    # The change set; none: the newest change of any agent with hunks left to decide.
    id: str | None = None
    # With `decision`: the file whose hunk is decided (none: every file of the change).
    file_path: str | None = None
    # With `decision`: the hunk of `file_path`, by its number in the review (none: every hunk of it).
    hunk: Annotated[int, Field(ge=1)] | None = None
    # reject: put the hunk back as it was (through the safe edits); accept: keep it.
    decision: Literal["reject", "accept"] | None = None

    positional: ClassVar[str] = "id"
    file_from_cursor: ClassVar[bool] = False


class Hunk(Row):
    number: int
    line: int  # where it starts in the file now, 1-based
    diff: str
    reject: str
    accept: str
    # A merged disk change's hunk in conflict with the human's unsaved text: decided in the
    # buffer (`MERGE_KEYS`), not by `decision`.
    conflict: bool | None = absent()


class ReviewFile(Row):
    path: str
    hunks: list[Hunk]


class ReviewReport(Report):
    id: str
    label: str
    who: str
    when: str
    decided: str | None  # what this request decided
    files: list[ReviewFile]
    pending: int  # hunks left to decide
    undo: str | None


def _hunks(file: FileText) -> list[tuple[int, int, int, int]]:
    """The hunks of a file's change: (before start, before end, after start, after end)."""
    matcher = difflib.SequenceMatcher(None, file.before or [], file.after, autojunk=False)
    return [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def numbered(file: FileText) -> list[tuple[int, tuple[int, int, int, int]]]:
    """The hunks left with their numbers in the review, which stay theirs while others are
    decided (`FileText.numbers`)."""
    hunks = _hunks(file)
    numbers = file.numbers if file.numbers is not None and len(file.numbers) == len(hunks) else None
    return list(zip(numbers or range(1, len(hunks) + 1), hunks, strict=True))


def _hunk_diff(file: FileText, hunk: tuple[int, int, int, int]) -> str:
    """One hunk as a unified diff (one line of context), as the report's lists read it."""
    i1, i2, j1, j2 = hunk
    before, after = file.before or [], file.after
    start, end = max(0, i1 - 1), min(len(before), i2 + 1)
    context_after = after[j2:j2 + (end - i2)]
    lines = [f"@@ -{start + 1},{end - start} +{max(0, j1 - (i1 - start)) + 1},"
             f"{(i1 - start) + (j2 - j1) + len(context_after)} @@"]
    lines += [" " + line for line in before[start:i1]]
    lines += ["-" + line for line in before[i1:i2]]
    lines += ["+" + line for line in after[j1:j2]]
    lines += [" " + line for line in context_after]
    return "\n".join(lines)


def _decide(change: ChangeSet, request: ReviewRequest,
            display: Callable[[Path], str]) -> tuple[list[FileText], list[FileText]]:
    """The change's files with the decision made (texts only), and those whose "after"
    text changes (rejected hunks, to be written)."""
    chosen = [f for f in _left(change)
              if request.file_path is None or display(Path(f.path)) == request.file_path.rstrip("/")]
    if not chosen:
        raise LsapError(ErrorCode.NOT_FOUND, f"change {change.id} has nothing left to decide in "
                        f"{request.file_path or 'any file'}",
                        hint=f"`{phrase({'mode': 'review', 'id': change.id}, 'id')}` shows what is left")
    files, written, taken = [], [], 0
    for file in change.files:
        if file not in chosen:
            files.append(file)
            continue
        picked = _picked(change, file, request.hunk, display)
        decided = _decided_file(file, picked, request.decision == "reject")
        files.append(decided)
        taken += len(picked)
        if request.decision == "reject" and picked:
            written.append(decided)
    if not taken and any(_conflicted(f) for f in chosen):
        raise LsapError(ErrorCode.CONFLICT, f"every hunk left in change {change.id} is a conflict with "
                        f"the unsaved text: {MERGE_KEYS}", hint=NOTHING)
    if not taken:
        raise LsapError(ErrorCode.NOT_FOUND, f"change {change.id} has no hunk left to decide in "
                        f"{request.file_path or 'any file'}", hint=NOTHING)
    return files, written


def _picked(change: ChangeSet, file: FileText, hunk: int | None,
            display: Callable[[Path], str]) -> list[int]:
    """The numbers of `file`'s hunks a decision takes: `hunk`, else every one left but the
    conflicts of a merge (decided in the buffer, `MERGE_KEYS`)."""
    hunks = [n for n, _ in numbered(file)]
    conflicts = _conflicted(file)
    if hunk is None:
        return [n for n in hunks if n not in conflicts]
    if hunk not in hunks:
        left = ", ".join(str(n) for n in hunks)
        raise LsapError(ErrorCode.NOT_FOUND, f"{display(Path(file.path))} has no hunk {hunk} left "
                        f"to decide in change {change.id} (left: {left})",
                        hint=f"`{phrase({'mode': 'review', 'id': change.id}, 'id')}` numbers them")
    if hunk in conflicts:
        raise LsapError(ErrorCode.CONFLICT, f"hunk {hunk} of {display(Path(file.path))} in change {change.id} "
                        f"is a conflict with the unsaved text in its buffer: {MERGE_KEYS}", hint=NOTHING)
    return [hunk]


def _decided_file(file: FileText, numbers: list[int], reject: bool) -> FileText:
    """`file` with the hunks `numbers` decided: rejected (its "after" takes their "before"
    lines back) or accepted (its "before" takes their "after" lines); they leave the
    review, and the merge's conflicts."""
    hunks = numbered(file)
    before, after = list(file.before or []), list(file.after)
    for _, (i1, i2, j1, j2) in reversed([(n, h) for n, h in hunks if n in numbers]):  # from the end
        if reject:
            after[j1:j2] = (file.before or [])[i1:i2]
        else:
            before[i1:i2] = file.after[j1:j2]
    return dataclasses.replace(file, before=before, after=after,
                               numbers=[n for n, _ in hunks if n not in numbers],
                               conflicts=[[n for n in c if n not in numbers] for c in file.conflicts])


def _rebase(after: list[str], now: list[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """Where the lines `spans` of `after` are in `now` (`after` with the human's edits since),
    or None when the human edited one of them: a hunk goes back only where it is untouched."""
    at: dict[int, int] = {}
    for tag, i1, i2, j1, _j2 in difflib.SequenceMatcher(None, after, now, autojunk=False).get_opcodes():
        if tag == "equal":
            at.update({i: j1 + i - i1 for i in range(i1, i2)})
    out = []
    for start, end in spans:
        if end > start:
            if any(i not in at for i in range(start, end)) or at[end - 1] - at[start] != end - 1 - start:
                return None
            out.append((at[start], at[end - 1] + 1))
        elif start in at or start == 0:
            out.append((at.get(start, 0),) * 2)
        elif start - 1 in at:
            out.append((at[start - 1] + 1,) * 2)
        else:
            return None
    return out


async def _put_back(session: Session, change: ChangeSet, written: list[FileText], whole: bool) -> str | None:
    """Write the rejected hunks back (the files `_decide` changed), through the safe edits,
    into the text the files hold now: the human's edits elsewhere in them stay. A file the
    change created, rejected whole, goes (as `undo` takes it back). The put back's change set."""
    display = session.workspace.display
    old = {f.path: f for f in change.files}
    created = [old[f.path] for f in written if old[f.path].before is None and whole]
    written = [f for f in written if not (old[f.path].before is None and whole)]
    docs = await session.texts.documents([Path(f.path) for f in written if Path(f.path).is_file()])
    edits, expect, problems = {}, {}, []
    for file in written:
        was, doc = old[file.path], docs.get(Path(file.path))
        # Gone, created or renamed by the change: `_conflict` says why; else the hunk's own lines.
        reason = _conflict(was, doc) if doc is None or was.before is None or was.origin else None
        ops = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, was.after, file.after, autojunk=False).get_opcodes() if tag != "equal"]
        where = _rebase(was.after, doc.lines, [op[:2] for op in ops]) if doc and not reason else None
        if doc is None or where is None:
            problems.append(f"{display(Path(file.path))}: {reason or TOUCHED}")
            continue
        new = list(doc.lines)
        for (start, end), (_i1, _i2, j1, j2) in reversed(list(zip(where, ops, strict=True))):
            new[start:end] = file.after[j1:j2]
        edits[uri_of(Path(file.path))], expect[Path(file.path)] = back_edits(doc.lines, new), doc.lines
    if problems:
        raise LsapError(ErrorCode.CONFLICT, f"the hunk cannot be put back: {'; '.join(problems)}",
                        hint="nothing was changed")
    put = None
    if edits:
        # As `revert`: what the change wrote to disk goes back on disk too (a merged disk
        # change: out of the file, and out of the buffer beside the unsaved text).
        result = await apply_workspace_edit(session, {"changes": edits}, ENGINE,
                                            label=f"reject in change {change.id}", expect=expect,
                                            disk_too=not any(old[f.path].in_buffer for f in written))
        put = result.change
        if result.change is not None:  # putting back is no agent's change to sign
            with contextlib.suppress(LsapError):
                await session.gateway.call("presence_reviewed", result.change)
    if created:
        await revert(session, change, created, f"reject in change {change.id}")
    return put


@mode("review", request=ReviewRequest, report=ReviewReport,
      summary="an agent's change hunk by hunk: reject one (put back, through the safe edits) or accept it",
      workspace=True, edits=True, offer=Offer(picker=23))
async def review(session: Session, request: ReviewRequest) -> Answer:
    journals = await journal_dir(session.gateway)
    found = await asyncio.to_thread(changes.load, journals, session.workspace)
    if request.id is None and request.decision is None:
        match = next((c for c in found if c.by_agent and not c.undoes and _left(c)), None)
        if match is None:
            raise LsapError(ErrorCode.NOT_FOUND, "no agent change is left to review",
                            hint=f"`{phrase({'mode': 'changes'}, None)}` lists every change set")
        change = match
    else:
        change = _target(found, UndoRequest(id=request.id))
    display = session.workspace.display
    decided = None
    if request.decision is not None:
        files, written = _decide(change, request, display)
        if written:
            await _put_back(session, change, written, request.hunk is None)
        change.files = files
        await asyncio.to_thread(changes.update, journals, change)
        with contextlib.suppress(LsapError):  # the decided lines' signs go (a merge has none)
            if not _merge(change):
                await session.gateway.call("presence_changed", signs(change), True)
        where = f"hunk {request.hunk} of " if request.hunk else "every hunk of "
        decided = f"{request.decision}ed {where}{request.file_path or 'every file'}"
    rows = []
    for file in _left(change):
        path = display(Path(file.path))
        base = {"mode": "review", "id": change.id, "file_path": path}
        conflicts = _conflicted(file)
        rows.append(ReviewFile(path=path, hunks=[
            Hunk(number=n, line=j1 + 1, diff=_hunk_diff(file, (i1, i2, j1, j2)),
                 reject=phrase({**base, "hunk": n, "decision": "reject"}, "id"),
                 accept=phrase({**base, "hunk": n, "decision": "accept"}, "id"),
                 conflict=True if n in conflicts else None)
            for n, (i1, i2, j1, j2) in numbered(file)]))
    # The human's review is shown in the buffers too (lua/lsap/inline.lua); an agent's
    # decisions only bring the human's view of the same change up to date.
    with contextlib.suppress(LsapError):
        await session.gateway.call("review_inline", inline(change, display), SURFACE.get() == "nvim")
    return Answer(ReviewReport(id=change.id, label=change.label, who=change.who, when=_when(change.when),
                               decided=decided, files=rows, pending=sum(len(f.hunks) for f in rows),
                               undo=changes.undo_hint(change.id) if rows else None))


def inline(change: ChangeSet, display: Callable[[Path], str]) -> Params:
    """The hunks left as the editor shows them in the buffers: per file (its absolute path, its
    name in requests, the key of the editor's merge that made it, if so) each hunk's number,
    where its lines start in the change's text (0-based), the lines it wrote, the lines it
    removed, the line above it (to find it again where the text moved), and, a merge's hunk
    in conflict with the unsaved text, the merge's number of that conflict (1-based)."""
    files: list[Params] = []
    for file in _left(change):
        before, after = file.before or [], file.after
        conflict = {n: index for index, numbers in enumerate(file.conflicts, 1) for n in numbers}
        files.append({"path": file.path, "name": display(Path(file.path)), "merged": file.merged, "hunks": [
            {"number": n, "line": j1, "added": after[j1:j2], "removed": before[i1:i2],
             "above": after[j1 - 1] if j1 else None, "conflict": conflict.get(n)}
            for n, (i1, i2, j1, j2) in numbered(file)]})
    return {"id": change.id, "label": change.label, "who": change.who, "files": files}


def _merge(change: ChangeSet) -> bool:
    """A disk change the editor merged into a buffer with unsaved text (`FileText.merged`)."""
    return any(f.merged is not None for f in change.files)


# -- merge -----------------------------------------------------------------------------


class MergeRequest(Request):
    """What the editor's three-way merge (lua/lsap/transport/merge.lua) tells the service:
    `merged`, a disk change merged into a buffer with unsaved text (recorded as a change
    set); `decided`, conflicts of it decided in the buffer (keep mine, take theirs, both, or
    the buffer written over them: their hunks leave the review); `released`, conflicts
    nobody decided (the buffer reloaded or closed: their hunks are ordinary ones then)."""

    mode: Literal["merge"] = "merge"
    event: Literal["merged", "decided", "released"]
    key: changes.MergeKey  # the editor's key of the merge
    file_path: str | None = None  # merged: the file
    base: list[str] = Field(default_factory=list)  # merged: the text the buffer was read from
    theirs: list[str] = Field(default_factory=list)  # merged: the disk's text merged
    # merged: each conflict's rows of `base` (0-based, end excluded)
    regions: list[tuple[Annotated[int, Field(ge=0)], Annotated[int, Field(ge=0)]]] = Field(default_factory=list)
    conflicts: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)  # decided, released: by number

    positional: ClassVar[str] = "event"
    file_from_cursor: ClassVar[bool] = False

    @property
    def syncs_disk(self) -> bool:
        return False


class MergeReport(Report):
    event: str
    change: str | None  # the change set of the merge (None: none recorded or found)
    hunks: int  # left to decide
    conflicts: int  # of them, conflicts


def _holding(file: FileText, start: int, end: int) -> list[int]:
    """The numbers of `file`'s hunks that change rows [start, end) of its "before" text."""
    return [n for n, (i1, i2, _j1, _j2) in numbered(file)
            if (i1 < end and start < i2) or (i1 == i2 and start <= i1 <= end) or (start == end and i1 <= start <= i2)]


async def _merged(session: Session, request: MergeRequest) -> ChangeSet | None:
    """Record the merge as a change set (`changes.begin`), by the writer of the disk's text
    when a change set of its own says who (an agent's edit, a hook's), else by `disk`."""
    try:
        path = session.workspace.resolve(request.file_path or "")
    except LsapError:  # a file outside the workspace: no change set lists it
        return None
    file = FileText(str(path), request.base, request.theirs, merged=request.key)
    if file.before == file.after:
        return None
    file = dataclasses.replace(file, conflicts=[_holding(file, s, e) for s, e in request.regions])
    journals = await journal_dir(session.gateway)
    writer = await asyncio.to_thread(changes.writer, journals, str(path), request.theirs)
    by = f"{writer.who} (change {writer.id}: {writer.label})" if writer else "another process"
    label = f"disk change merged into the unsaved buffer of {session.workspace.display(path)}, made by {by}"
    return await asyncio.to_thread(changes.begin, journals, label, [file], writer.who if writer else "disk")


async def _settled(session: Session, request: MergeRequest) -> ChangeSet | None:
    """Conflicts of a recorded merge decided in the buffer (their hunks leave the review)
    or released (ordinary hunks from now on)."""
    journals = await journal_dir(session.gateway)
    change = await asyncio.to_thread(changes.merges, journals, request.key)
    if change is None:
        return None
    files = []
    for file in change.files:
        if file.merged == request.key:
            numbers = [n for i in request.conflicts if i <= len(file.conflicts) for n in file.conflicts[i - 1]]
            if request.event == "decided":
                file = _decided_file(file, numbers, reject=False)
            else:
                file = dataclasses.replace(file, conflicts=[[] if i in request.conflicts else c
                                                            for i, c in enumerate(file.conflicts, 1)])
        files.append(file)
    change.files = files
    await asyncio.to_thread(changes.update, journals, change)
    with contextlib.suppress(LsapError):  # the review in progress of it shows what is left
        await session.gateway.call("review_inline", inline(change, session.workspace.display), False)
    return change


@mode("merge", request=MergeRequest, report=MergeReport,
      summary="the editor's merge of a disk change into a buffer with unsaved text, kept as a change set",
      offer=Offer(listed=False))
async def merge(session: Session, request: MergeRequest) -> Answer:
    if SURFACE.get() != "nvim":
        raise LsapError(ErrorCode.INVALID_REQUEST, "only the editor's merge sends `merge`",
                        hint="`review` and `undo` decide a merged change")
    change = await (_merged(session, request) if request.event == "merged" else _settled(session, request))
    files = _left(change) if change is not None else []
    return Answer(MergeReport(event=request.event, change=change.id if change else None,
                              hunks=sum(len(numbered(f)) for f in files),
                              conflicts=sum(len(_conflicted(f)) for f in files)))
