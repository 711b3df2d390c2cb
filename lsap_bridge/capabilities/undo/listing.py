"""`changes`: the change sets the bridge recorded (`changes.py`), newest first, each with its
state and the requests that undo or review it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from ... import changes
from ...changes import ChangeSet
from ...edits.switch import journal_dir
from ...modes import Answer, Offer, mode
from ...report.paging import PagingInfo, paged
from ...session.warm import Session
from ...surface import phrase
from .models import ChangeRow, ChangesReport, ChangesRequest
from .sets import _conflicted, _left, _when

FILES_SHOWN = 3  # files named per change set in a listing


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
