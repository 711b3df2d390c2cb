"""`completion`: what the server would complete at a position, bounded by `max_items`."""

from __future__ import annotations

from typing import Annotated, Literal

from lsprotocol import types
from pydantic import Field

from ..lsp import structure
from ..models import Anchored, LocateRequest, Paged, Row
from ..modes import Answer, mode
from ..report.paging import page
from ..report.pieces import anchor_fields
from ..resolve import resolve
from ..session import Session

METHOD = "textDocument/completion"
# LSP CompletionItemKind (not SymbolKind: the numbering differs).
COMPLETION_KINDS = {
    1: "text",
    2: "method",
    3: "function",
    4: "constructor",
    5: "field",
    6: "variable",
    7: "class",
    8: "interface",
    9: "module",
    10: "property",
    11: "unit",
    12: "value",
    13: "enum",
    14: "keyword",
    15: "snippet",
    16: "color",
    17: "file",
    18: "reference",
    19: "folder",
    20: "enum_member",
    21: "constant",
    22: "struct",
    23: "event",
    24: "operator",
    25: "type_parameter",
}


class CompletionRequest(LocateRequest):
    mode: Literal["completion"] = "completion"
    max_items: Annotated[int, Field(ge=1, le=1000)] = 30


class Item(Row):
    label: str
    kind: str
    detail: str


class CompletionReport(Anchored, Paged):
    items: list[Item]
    incomplete: bool  # the server's list is incomplete: typing more narrows it


def completion_items(result: types.CompletionList | None) -> tuple[list[Item], bool]:
    """A `CompletionList` as rows in the server's order; is the list incomplete."""
    if result is None:
        return [], False
    ordered = sorted(result.items, key=lambda item: str(item.sort_text or item.label))
    rows = []
    for item in ordered:
        details = item.label_details
        parts = (details.detail, details.description, item.detail) if details else (item.detail,)
        detail = " ".join(str(part) for part in parts if part)
        rows.append(Item(label=str(item.label), kind=COMPLETION_KINDS.get(int(item.kind or 0), ""),
                         detail=" ".join(detail.split())))
    return rows, bool(result.is_incomplete)


def completion_list(raw: object, server: str) -> types.CompletionList | None:
    """A `CompletionList | CompletionItem[]` answer as a CompletionList (lsp.py)."""
    if not raw:
        return None
    return structure({"isIncomplete": False, "items": raw} if isinstance(raw, list) else raw,
                     types.CompletionList, server, METHOD)


@mode("completion", request=CompletionRequest, report=CompletionReport,
      summary="completions at a position: labels, kinds and details", method=METHOD, fallback="hover")
async def completion(session: Session, request: CompletionRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    rows: list[Item] | None = session.kept(request)
    incomplete = False
    if rows is None:
        params = session.position_params(
            resolved.target, resolved.doc, resolved.line, resolved.column
        )
        params["context"] = {"triggerKind": 1}
        raw = await session.call(resolved.target, METHOD, params)
        rows, incomplete = completion_items(completion_list(raw, resolved.target.client.name))
    shown, paging = page(session, request, rows)
    return Answer(CompletionReport(**anchor_fields(resolved, session), items=shown, incomplete=incomplete,
                                   **paging))
