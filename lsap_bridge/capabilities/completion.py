"""`completion`: what the server would complete at a position, bounded by `max_items`."""

from __future__ import annotations

from typing import Annotated, Literal

from lsprotocol import types
from pydantic import Field

from ..decode import completions
from ..models import Anchored, LocateRequest, Paged, Row
from ..modes import Answer, mode
from ..report.paging import PagingInfo, paged
from ..report.pieces import anchor_fields
from ..resolve import resolve
from ..session.warm import Session

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


def completion_items(answer: types.CompletionList) -> tuple[list[Item], bool]:
    """A completion answer (`decode.completions`) as rows in the server's order; is the list
    incomplete."""
    rows = []
    for item in sorted(answer.items, key=lambda item: item.sort_text or item.label):
        details = item.label_details or types.CompletionItemLabelDetails()
        detail = " ".join(part for part in (details.detail, details.description, item.detail) if part)
        rows.append(Item(label=item.label, kind=COMPLETION_KINDS.get(int(item.kind or 0), ""),
                         detail=" ".join(detail.split())))
    return rows, answer.is_incomplete


@mode("completion", request=CompletionRequest, report=CompletionReport,
      summary="completions at a position: labels, kinds and details", method=METHOD, fallback="hover")
async def completion(session: Session, request: CompletionRequest) -> Answer:
    resolved = await resolve(session, request.locate, METHOD)
    rows: list[Item] | None = session.kept.page(request)
    incomplete = False
    if rows is None:
        params = session.servers.position_params(
            resolved.target, resolved.doc, resolved.line, resolved.column
        )
        params["context"] = {"triggerKind": 1}
        rows, incomplete = completion_items(
            await session.servers.read(resolved.target, METHOD, params, completions))

    async def build(request: CompletionRequest, shown: list[Item], paging: PagingInfo) -> Answer:
        return Answer(CompletionReport(**anchor_fields(resolved, session), items=shown, incomplete=incomplete,
                                       **paging))

    return await paged(session, request, rows, build)
