"""`calls`: the call hierarchy of a function, incoming, outgoing or both, to a depth."""

from __future__ import annotations

from typing import Literal

from ..errors import ErrorCode, LsapError
from ..modes import Answer, Offer, mode
from ..report.hierarchy import (
    HierarchyReport,
    HierarchyRequest,
    call_roots,
    lsp_expand,
    roots_data,
    walk_directions,
)
from ..report.pieces import anchor_fields, word_at
from ..resolve import resolve
from ..session.targets import encoding_of
from ..session.warm import Session

METHOD = "textDocument/prepareCallHierarchy"
DIRECTIONS = {"incoming": "callHierarchy/incomingCalls", "outgoing": "callHierarchy/outgoingCalls"}


class CallsRequest(HierarchyRequest):
    mode: Literal["calls"] = "calls"
    direction: Literal["incoming", "outgoing", "both"] = "both"


class CallsReport(HierarchyReport):
    pass


@mode("calls", request=CallsRequest, report=CallsReport,
      summary="call hierarchy: callers and callees, to a depth", method=METHOD,
      fallback="references", workspace=True,
      offer=Offer(command="LsapCalls", picker=7, view="calls", plug=True))
async def calls(session: Session, request: CallsRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    params = session.servers.position_params(target, resolved.doc, resolved.line, resolved.column)
    roots = await call_roots(session, target, params)
    name = word_at(resolved.line_text, resolved.column)
    if not roots:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{target.client.name} found no function or method at `{name}` ({resolved.anchor})",
            hint="point the anchor at a function's name or a call of it, e.g. path:Class.method",
        )
    directions = ["incoming", "outgoing"] if request.direction == "both" else [request.direction]
    expanders = {
        direction: lsp_expand(session, target.client, target.bufnr, method)
        for direction, method in DIRECTIONS.items()
    }
    sections, locations = await walk_directions(
        session, roots, expanders, directions, request, at_site=True, encoding=encoding_of(target.client))
    report = CallsReport(**anchor_fields(resolved, session), name=name, roots=roots_data(session, roots),
                         depth=request.depth, sections=sections)
    return Answer(report, locations)
