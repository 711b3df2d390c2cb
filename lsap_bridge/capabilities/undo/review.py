"""`review`: an agent's change hunk by hunk, each rejected (put back through the safe edits)
or accepted, the buffers' inline view of it brought up to date."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from ... import changes
from ...changes import signs
from ...edits.switch import journal_dir
from ...errors import ErrorCode, LsapError
from ...modes import Answer, Offer, mode
from ...session.warm import Session
from ...surface import SURFACE, phrase
from .models import Hunk, ReviewFile, ReviewReport, ReviewRequest, UndoRequest
from .putback import _put_back
from .sets import _conflicted, _decide, _hunk_diff, _left, _merge, _target, _when, inline, numbered


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
