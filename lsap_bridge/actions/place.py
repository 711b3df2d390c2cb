"""Where code actions or formatting apply (`WhereRequest`): a line, a range of lines between
two anchors, a symbol's lines or a whole file, resolved to a `Place`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import model_validator

from ..errors import ErrorCode, LsapError
from ..locate.anchor import format_anchor
from ..models import LineScope, Locate, Request, SymbolScope
from ..resolve import resolve
from ..session.warm import Session


class WhereRequest(Request):
    """Where code actions or formatting apply: the line of an anchor, the lines from
    `locate` to `end` (anchor to anchor), or a whole file (`file_path`); `server` names one
    of the attached servers (else every one is asked)."""

    locate: Locate | None = None
    end: Locate | None = None
    file_path: str | None = None
    server: str | None = None

    @model_validator(mode="after")
    def _one_place(self) -> WhereRequest:
        if (self.locate is None) == (self.file_path is None):
            raise ValueError("give `locate` (a line, or with `end` a range of lines) or "
                             "`file_path` (the whole file), not both or neither")
        if self.end is not None and self.locate is None:
            raise ValueError("`end` closes a range that `locate` opens: give `locate` too")
        return self


@dataclass(frozen=True)
class Place:
    """A request's place resolved: a file and its lines (0-based, both included; None:
    the whole file), and how to say it."""

    path: Path
    lines: tuple[int, int] | None
    where: str


async def place_of(session: Session, request: WhereRequest, method: str,
                   whole_symbol: bool = False) -> Place:
    """`whole_symbol`: a symbol anchor alone (`messy.py:f`) is the symbol's lines, not the
    line of its name (a format of `f` formats `f`)."""
    if request.locate is None:
        assert request.file_path is not None
        path = session.workspace.resolve(request.file_path)
        return Place(path, None, session.workspace.display(path))
    first = await resolve(session, request.locate, method)
    scope = request.locate.scope
    if whole_symbol and request.end is None and request.locate.find is None and isinstance(scope, SymbolScope):
        tree = await session.symbols.tree(first.target, first.doc)
        span = next(s.span for s in tree.find(scope.symbol_path)
                    if (s.selection.start_line, s.selection.start_col) == (first.line, first.column))
        return Place(first.path, (span.start_line, span.end_line),
                     f"{format_anchor(request.locate)} (lines {span.start_line + 1}-{span.end_line + 1})")
    if request.end is None and request.locate.find is None and isinstance(scope, LineScope) and (
            scope.end_line > scope.start_line + 1):  # lines of a scope (`:'<,'>LsapActions`)
        last_line = min(scope.end_line - 2, max(0, len(first.doc.lines) - 1))
        return Place(first.path, (first.line, max(first.line, last_line)),
                     f"{session.workspace.display(first.path)}:{first.line + 1}-{last_line + 1}")
    if request.end is None:
        return Place(first.path, (first.line, first.line), f"{format_anchor(request.locate)} "
                     f"(line {first.line + 1})")
    last = await resolve(session, request.end, method)
    if last.path != first.path or last.line < first.line:
        raise LsapError(
            ErrorCode.INVALID_REQUEST,
            "`end` must be in the same file as `locate`, at or after its line "
            f"({session.workspace.display(last.path)}:{last.line + 1} is not)",
            hint="give `end` an anchor further down the same file",
        )
    return Place(first.path, (first.line, last.line),
                 f"{session.workspace.display(first.path)}:{first.line + 1}-{last.line + 1}")
