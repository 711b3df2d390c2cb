"""`locate`: resolve an anchor and show where it landed."""

from __future__ import annotations

from typing import Literal

from ..models import Anchored, Line, LocateRequest
from ..modes import Answer, Offer, mode
from ..report.pieces import anchor_fields, editor_location, excerpt, fence_language
from ..resolve import resolve
from ..session.warm import Session


class LocateModeRequest(LocateRequest):
    mode: Literal["locate"] = "locate"


class LocateReport(Anchored):
    language: str
    lines: list[Line]


# No method of its own: it is the mode a server lacking others is pointed to.
@mode("locate", request=LocateModeRequest, report=LocateReport,
      summary="resolve an anchor: file, line, column, enclosing symbol", offer=Offer(picker=17))
async def locate(session: Session, request: LocateModeRequest) -> Answer:
    resolved = await resolve(session, request.locate, "textDocument/documentSymbol")
    report = LocateReport(
        **anchor_fields(resolved, session),
        language=fence_language(resolved.doc),
        lines=excerpt(resolved.doc, resolved.line, resolved.line, request.context_lines),
    )
    display = session.workspace.display(resolved.path)
    return Answer(report, [editor_location(display, resolved.doc, resolved.line, resolved.column)])
