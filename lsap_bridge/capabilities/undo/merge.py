"""`merge`: the editor's three-way merge of a disk change into a buffer with unsaved text
(lua/lsap/transport/merge.lua), kept as a change set; its conflicts decided in the buffer or
released."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

from ... import changes
from ...changes import ChangeSet, FileText
from ...edits.switch import journal_dir
from ...errors import ErrorCode, LsapError
from ...modes import Answer, Offer, mode
from ...session.warm import Session
from ...surface import SURFACE
from .models import MergeReport, MergeRequest
from .sets import _conflicted, _decided_file, _left, inline, numbered


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
