"""Inlay hints woven into the code they annotate, as `/*<inlay>label</inlay>*/` tags.

Shared by the `inlay_hints` mode and the text format's `?` lines (DESIGN §6): the hint
sits exactly where the editor would draw it, so the code stays readable and copyable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..position import Encoding, from_lsp_character

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
