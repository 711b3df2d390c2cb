"""`undo`: a whole change set taken back, every file or (`partial`) those that still hold its
text; a moved piece of code goes back whole or not at all, and a merged disk change goes
back as its review's rejection of every hunk."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
from pathlib import Path

from ... import changes
from ...changes import ChangeSet, FileText
from ...edits.switch import journal_dir
from ...errors import ErrorCode, LsapError
from ...modes import Answer, Offer, mode
from ...session.warm import Session
from ...surface import phrase
from .models import Conflict, ReviewRequest, UndoReport, UndoRequest
from .putback import _conflict, _put_back, revert
from .sets import MERGE_KEYS, NOTHING, _conflicted, _decide, _left, _merge, _target, _when, inline


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
