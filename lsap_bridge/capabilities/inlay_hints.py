"""`inlay_hints`: a range of code with its inlay hints woven in as `/*<inlay>label</inlay>*/`
tags, exactly where the editor would draw them, so the code stays readable and copyable
(`decode.weave_inlay_hints`, shared with the text format's `?` lines).
"""

from __future__ import annotations

from typing import Annotated, Literal

from lsprotocol import types
from pydantic import Field, model_validator

from ..decode import InlayHint, inlay_hint_params, inlay_hints_from_lsp, weave_inlay_hints
from ..errors import ErrorCode, LsapError
from ..models import Line, LineScope, Locate, Report, Request, SymbolScope
from ..modes import Answer, Offer, mode
from ..position import Document
from ..report.paging import suggest
from ..report.pieces import fence_language
from ..resolve import resolve
from ..session.targets import Target, encoding_of
from ..session.warm import Session

METHOD = "textDocument/inlayHint"
MAX_LINES = 400


async def inlay_hints_for(
    session: Session, target: Target, doc: Document, first: int, stop: int
) -> list[InlayHint]:
    """The server's hints for lines `first` (0-based) up to `stop` (exclusive)."""
    encoding = encoding_of(target.client)
    params = inlay_hint_params(target.path, doc, first, stop, encoding)
    answer = await session.servers.call(target, METHOD, params, types.InlayHintResponse)
    hints = inlay_hints_from_lsp(answer, doc.lines, encoding)
    return [h for h in hints if first <= h.line < stop]


class InlayHintsRequest(Request):
    mode: Literal["inlay_hints"] = "inlay_hints"
    locate: Locate | None = None
    file_path: str | None = None
    start_line: Annotated[int, Field(ge=1)] = 1
    end_line: Annotated[int, Field(ge=0)] = 0  # exclusive, 0 = to the end of the file

    @model_validator(mode="after")
    def _one_range(self) -> InlayHintsRequest:
        if (self.locate is None) == (self.file_path is None):
            raise ValueError(
                "give either `locate` (a line scope, a symbol, or a line found by text) "
                "or `file_path` with `start_line`/`end_line`"
            )
        if self.end_line and self.end_line <= self.start_line:
            raise ValueError(
                f"end_line ({self.end_line}) must be greater than start_line ({self.start_line})"
            )
        return self


class InlayHintsReport(Report):
    anchor: str
    path: str
    first: int
    last: int
    count: int
    hinted_lines: int
    server: str
    partial: bool
    language: str
    lines: list[Line]
    cut: int  # lines past the limit, not shown
    next_range: str | None  # the request for the lines cut


async def _range(
    session: Session, request: InlayHintsRequest
) -> tuple[Target, Document, int, int, str]:
    """The target, its text, the 0-based line range [first, stop) and how it was asked for.

    A line scope or a symbol without `find` means the whole scope; a `find` means its line.
    """
    if request.locate is None:
        assert request.file_path is not None
        target = await session.servers.target(session.workspace.resolve(request.file_path), METHOD)
        doc = await session.texts.document(target.path)
        stop = (
            len(doc.lines) if request.end_line == 0 else min(request.end_line - 1, len(doc.lines))
        )
        return (
            target,
            doc,
            request.start_line - 1,
            stop,
            f"{request.file_path}:{request.start_line},{request.end_line}",
        )
    resolved = await resolve(session, request.locate, METHOD)
    scope, doc = request.locate.scope, resolved.doc
    first, stop = resolved.line, resolved.line + 1
    if isinstance(scope, LineScope) and request.locate.find is None:
        first = scope.start_line - 1
        stop = len(doc.lines) if scope.end_line == 0 else min(scope.end_line - 1, len(doc.lines))
    elif isinstance(scope, SymbolScope) and request.locate.find is None:
        tree = await session.symbols.tree(resolved.target, doc)
        symbol = tree.find(scope.symbol_path)[0]
        first, stop = symbol.span.start_line, symbol.span.end_line + 1
    return resolved.target, doc, first, stop, resolved.anchor


@mode("inlay_hints", request=InlayHintsRequest, report=InlayHintsReport,
      summary="the code of a range with inlay hints woven in", method=METHOD, fallback="hover",
      offer=Offer(picker=14, plug=True))
async def inlay_hints(session: Session, request: InlayHintsRequest) -> Answer:
    target, doc, first, stop, anchor = await _range(session, request)
    display = session.workspace.display(target.path)
    if first >= len(doc.lines):
        raise LsapError(
            ErrorCode.NOT_FOUND,
            f"line {first + 1} is past the end of {display} ({len(doc.lines)} lines)",
        )
    cut = max(0, stop - first - MAX_LINES)
    stop -= cut
    hints = await inlay_hints_for(session, target, doc, first, stop)
    lines = [Line(number=n + 1, text=weave_inlay_hints(doc.lines[n], [h for h in hints if h.line == n]))
             for n in range(first, stop)]
    report = InlayHintsReport(
        anchor=anchor,
        path=display,
        first=first + 1,
        last=stop,
        count=len(hints),
        hinted_lines=len({h.line for h in hints}),
        server=target.client.name,
        partial=target.partial,
        language=fence_language(doc),
        lines=lines,
        cut=cut,
        next_range=suggest(InlayHintsRequest, {"mode": "inlay_hints", "file_path": display, "start_line": stop + 1})
        if cut
        else None,
    )
    return Answer(report, [{"path": display, "line": first + 1, "col": 0, "text": anchor}])
