"""`locate`: resolve an anchor and show where it landed."""

from __future__ import annotations

from typing import Literal

from ..locate.resolve import resolve
from ..session import Session
from .base import (
    LocateRequest,
    Report,
    anchor_data,
    capability,
    editor_location,
    excerpt,
    fence_language,
)


class LocateModeRequest(LocateRequest):
    mode: Literal["locate"] = "locate"


@capability("locate", LocateModeRequest, "resolve an anchor: file, line, column, enclosing symbol")
async def locate(session: Session, request: LocateModeRequest) -> Report:
    resolved = await resolve(session, request.locate, "textDocument/documentSymbol")
    data = {
        **anchor_data(resolved, session),
        "language": fence_language(resolved.doc),
        "lines": excerpt(resolved.doc, resolved.line, resolved.line, request.context_lines),
    }
    display = session.workspace.display(resolved.path)
    return Report("locate", data, [editor_location(display, resolved.doc, resolved.line, resolved.column)])
