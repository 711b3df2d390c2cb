"""`hover`: the type or signature of a symbol and its documentation."""

from __future__ import annotations

from typing import Literal

from lsprotocol import types

from ..decode import hover_text
from ..models import Anchored, LocateRequest
from ..modes import Answer, Offer, mode
from ..report.pieces import anchor_fields, word_at
from ..resolve import resolve
from ..session.warm import Session

METHOD = "textDocument/hover"


class HoverRequest(LocateRequest):
    mode: Literal["hover"] = "hover"


class HoverReport(Anchored):
    name: str
    hover: str  # Markdown, as the server wrote it


@mode("hover", request=HoverRequest, report=HoverReport,
      summary="type, signature and documentation of a symbol", method=METHOD,
      fallback="definition", offer=Offer(command="LsapHover", picker=3, plug=True))
async def hover(session: Session, request: HoverRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    params = session.servers.position_params(resolved.target, resolved.doc, resolved.line, resolved.column)
    result = await session.servers.call(resolved.target, METHOD, params, types.HoverResponse)
    return Answer(HoverReport(**anchor_fields(resolved, session),
                              name=word_at(resolved.line_text, resolved.column), hover=hover_text(result)))
