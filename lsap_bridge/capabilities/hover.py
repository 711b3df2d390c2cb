"""`hover`: the type or signature of a symbol and its documentation."""

from __future__ import annotations

from typing import Any, Literal

from ..locate.resolve import resolve
from ..session import Session
from .base import LocateRequest, Report, anchor_data, capability, word_at

METHOD = "textDocument/hover"


class HoverRequest(LocateRequest):
    mode: Literal["hover"] = "hover"


def hover_text(result: Any) -> str:
    """Hover contents (MarkupContent, MarkedString or a list of them) as Markdown."""
    if not result:
        return ""
    contents = result.get("contents") if isinstance(result, dict) else result
    parts = contents if isinstance(contents, list) else [contents]
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and "language" in part:
            out.append(f"```{part['language']}\n{part.get('value', '')}\n```")
        elif isinstance(part, dict):
            out.append(str(part.get("value", "")))
    return "\n\n".join(p.strip() for p in out if p and p.strip())


@capability("hover", HoverRequest, "type, signature and documentation of a symbol")
async def hover(session: Session, request: HoverRequest) -> Report:
    resolved = await resolve(session, request.locate, METHOD, optimistic=True)
    params = session.position_params(resolved.target, resolved.doc, resolved.line, resolved.column)
    result = await session.call(resolved.target, METHOD, params)
    data = {
        **anchor_data(resolved, session),
        "name": word_at(resolved.line_text, resolved.column),
        "hover": hover_text(result),
    }
    return Report("hover", data)
