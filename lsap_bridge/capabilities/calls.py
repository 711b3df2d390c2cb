"""`calls`: the call hierarchy of a function, incoming, outgoing or both, to a depth."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import ErrorCode, LsapError
from ..locate.resolve import resolve
from ..session import Session
from .base import LocateRequest, Report, anchor_data, capability, word_at
from .hierarchy import call_roots, flatten, lsp_expand, render_entries, walk

METHOD = "textDocument/prepareCallHierarchy"
DIRECTIONS = {
    "incoming": ("callHierarchy/incomingCalls", "from"),
    "outgoing": ("callHierarchy/outgoingCalls", "to"),
}


class CallsRequest(LocateRequest):
    mode: Literal["calls"] = "calls"
    direction: Literal["incoming", "outgoing", "both"] = "both"
    depth: Annotated[int, Field(ge=1, le=5)] = 1
    include_external: bool = False


@capability("calls", CallsRequest, "call hierarchy: callers and callees, to a depth")
async def calls(session: Session, request: CallsRequest) -> Report:
    resolved = await resolve(session, request.locate, METHOD)
    target = resolved.target
    params = session.position_params(target, resolved.doc, resolved.line, resolved.column)
    roots = await call_roots(session, target, params)
    name = word_at(resolved.line_text, resolved.column)
    if not roots:
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"{target.client.name} found no function or method at `{name}` ({resolved.anchor})",
            hint="point the anchor at a function's name or a call of it, e.g. path:Class.method",
        )
    directions = ["incoming", "outgoing"] if request.direction == "both" else [request.direction]
    sections: list[dict[str, Any]] = []
    locations: list[dict[str, Any]] = []
    for direction in directions:
        method, key = DIRECTIONS[direction]
        top, dropped = await walk(
            session,
            roots,
            lsp_expand(session, target.client, target.bufnr, method, key),
            request.depth,
            request.max_items,
        )
        entries, hidden = flatten(
            [child for root in top for child in root.children], request.include_external
        )
        rows = await render_entries(session, entries)
        sections.append(
            {"direction": direction, "rows": rows, "external": hidden, "dropped": dropped}
        )
        locations += [
            {
                "path": r["site_path"] or r["path"],
                "line": r["sites"][0] if r["sites"] else r["line"],
                "col": 0,
                "text": f"{direction}: {r['name']}",
            }
            for r in rows
            if not r["external"]
        ]
    data = {
        **anchor_data(resolved, session),
        "name": name,
        "roots": [
            {
                "name": r.name,
                "kind": r.kind,
                "path": session.workspace.display(r.path),
                "line": r.line + 1,
            }
            for r in roots
        ],
        "depth": request.depth,
        "sections": sections,
    }
    return Report("calls", data, locations)
