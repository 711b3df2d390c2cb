"""Inlay hints woven into the code they annotate, as `/*<inlay>label</inlay>*/` tags.

Shared by the `inlay_hints` mode and the text format's `?` lines (doc/architecture.md, The text format): the hint
sits exactly where the editor would draw it, so the code stays readable and copyable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..errors import ErrorCode, LsapError
from ..gateway import Document
from ..locate.resolve import resolve
from ..models import LineScope, Locate, SymbolScope
from ..position import Encoding, from_lsp_character, to_lsp_character
from ..session import Session, Target
from ..workspace import uri_of
from .base import Report, Request, capability, fence_language, suggest

INLAY_TAG = "/*<inlay>{}</inlay>*/"


@dataclass(frozen=True)
class InlayHint:
    line: int  # 0-based
    col: int  # code points
    label: str
    kind: int | None = None  # 1 = type, 2 = parameter


def hint_label(raw: Any) -> str:
    """A hint's label: a string, or InlayHintLabelPart values joined."""
    label = raw.get("label", "") if isinstance(raw, dict) else raw
    if isinstance(label, list):
        return "".join(str(part.get("value", "")) for part in label if isinstance(part, dict))
    return str(label or "")


def inlay_hints_from_lsp(result: Any, lines: Sequence[str], encoding: Encoding) -> list[InlayHint]:
    """`textDocument/inlayHint` answers as hints with code-point columns, in text order."""
    hints = []
    for raw in result or []:
        position = raw.get("position") or {}
        line = int(position.get("line", 0))
        text = lines[line] if 0 <= line < len(lines) else ""
        col = from_lsp_character(text, int(position.get("character", 0)), encoding)
        kind = raw.get("kind")
        hints.append(InlayHint(line, col, hint_label(raw).strip(), int(kind) if kind else None))
    return sorted(hints, key=lambda h: (h.line, h.col))


def weave_inlay_hints(text: str, hints: Sequence[InlayHint], tag: str = INLAY_TAG) -> str:
    """One line of code with its hints inserted as tags at their columns (padding dropped)."""
    out: list[str] = []
    at = 0
    for hint in sorted(hints, key=lambda h: h.col):
        col = max(at, min(hint.col, len(text)))
        out.append(text[at:col])
        out.append(tag.format(hint.label))
        at = col
    out.append(text[at:])
    return "".join(out)


# -- the `inlay_hints` mode ---------------------------------------------------------------

METHOD = "textDocument/inlayHint"
MAX_LINES = 400


async def inlay_hints_for(
    session: Session, target: Target, doc: Document, first: int, stop: int
) -> list[InlayHint]:
    """The server's hints for lines `first` (0-based) up to `stop` (exclusive)."""
    encoding = session.encoding(target.client)
    params = inlay_hint_params(target.path, doc, first, stop, encoding)
    hints = inlay_hints_from_lsp(await session.call(target, METHOD, params), doc.lines, encoding)
    return [h for h in hints if first <= h.line < stop]


def inlay_hint_params(
    path: Path, doc: Document, first: int, stop: int, encoding: Encoding
) -> dict[str, Any]:
    """`textDocument/inlayHint` params for lines `first` up to `stop` (exclusive)."""
    last = doc.lines[stop - 1] if 0 < stop <= len(doc.lines) else ""
    return {
        "textDocument": {"uri": uri_of(path)},
        "range": {
            "start": {"line": first, "character": 0},
            "end": {"line": stop - 1, "character": to_lsp_character(last, len(last), encoding)},
        },
    }


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


async def _range(
    session: Session, request: InlayHintsRequest
) -> tuple[Target, Document, int, int, str]:
    """The target, its text, the 0-based line range [first, stop) and how it was asked for.

    A line scope or a symbol without `find` means the whole scope; a `find` means its line.
    """
    if request.locate is None:
        assert request.file_path is not None
        target = await session.target(session.workspace.resolve(request.file_path), METHOD)
        doc = await session.document(target.path)
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
        tree = await session.symbol_tree(resolved.target, doc)
        symbol = tree.find(scope.symbol_path)[0]
        first, stop = symbol.span.start_line, symbol.span.end_line + 1
    return resolved.target, doc, first, stop, resolved.anchor


@capability("inlay_hints", InlayHintsRequest, "the code of a range with inlay hints woven in")
async def inlay_hints(session: Session, request: InlayHintsRequest) -> Report:
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
    lines = [
        {
            "number": n + 1,
            "text": weave_inlay_hints(doc.lines[n], [h for h in hints if h.line == n]),
        }
        for n in range(first, stop)
    ]
    data = {
        "anchor": anchor,
        "path": display,
        "first": first + 1,
        "last": stop,
        "count": len(hints),
        "hinted_lines": len({h.line for h in hints}),
        "server": target.client.name,
        "partial": target.partial,
        "language": fence_language(doc),
        "lines": lines,
        "cut": cut,
        "next_range": suggest(InlayHintsRequest, {"mode": "inlay_hints", "file_path": display, "start_line": stop + 1})
        if cut
        else None,
    }
    return Report(
        "inlay_hints", data, [{"path": display, "line": first + 1, "col": 0, "text": anchor}]
    )
