"""`editor`: what the human is looking at, so an agent can talk about "this" and "here".

The cursor comes back as an anchor string (the agent's own form, doc/architecture.md, The human's side), the selection
as text with its range. Nothing in the editor is moved or changed to find out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ..cursor import anchor_at_cursor
from ..editor import SelectionState
from ..errors import LsapError
from ..locate.anchor import format_anchor
from ..models import Line, Report, Request, Row, absent
from ..modes import Answer, mode
from ..position import EditorLocation, byte_column, line_at
from ..session.warm import Session
from ..workspace import language_of


class EditorRequest(Request):
    mode: Literal["editor"] = "editor"


class Selection(Row):
    """The visual selection: 1-based lines and columns, end inclusive, and its text."""

    active: bool
    type: str
    start_line: int
    start_column: int
    end_line: int
    end_column: int
    lines: list[Line]
    truncated: int


class EditorReport(Report):
    path: str | None
    modified: bool
    anchor: str | None  # the cursor as an anchor string
    note: str | None = absent()  # the current buffer is not a file
    inside: bool | None = absent()
    language: str | None = absent()
    line: int | None = absent()
    column: int | None = absent()
    text: str | None = absent()
    top: int | None = absent()
    bottom: int | None = absent()
    anchor_problem: str | None = absent()
    selection: Selection | None = absent()


def selection_data(raw: SelectionState, lines: list[str], limit: int) -> Selection:
    """The selection's range (1-based lines and columns, end inclusive) and its numbered text."""
    first, last = raw["start_line"], min(raw["end_line"], max(len(lines) - 1, 0))
    linewise = raw["type"] == "linewise"
    start_text, end_text = line_at(lines, first), line_at(lines, last)
    start_col = 0 if linewise else byte_column(start_text, raw["start_col"])
    end_col = len(end_text) if linewise else byte_column(end_text, raw["end_col"]) + 1
    text = list(raw.get("text") or [])
    return Selection(
        active=bool(raw.get("active")),
        type=raw["type"],
        start_line=first + 1,
        start_column=start_col + 1,
        end_line=last + 1,
        end_column=min(end_col, max(len(end_text), 1)),
        lines=[Line(number=first + i + 1, text=t) for i, t in enumerate(text[:limit])],
        truncated=max(0, len(text) - limit),
    )


@mode("editor", request=EditorRequest, report=EditorReport,
      summary="what the human is looking at: file, cursor anchor, selection")
async def editor(session: Session, request: EditorRequest) -> Answer:
    state = await session.gateway.editor()
    name = state.get("path") or ""
    if not name or state.get("buftype"):
        return Answer(EditorReport(path=None, modified=bool(state.get("modified")), anchor=None,
                                   note=f"the current buffer is not a file ({name or 'no name'})"))
    path = Path(name)
    inside = session.workspace.contains(path.resolve())
    doc = await session.texts.document(path) if path.is_file() else None
    lines = doc.lines if doc else [str(state.get("text") or "")]
    line = int(state.get("line") or 0)
    text = line_at(lines, line)
    report = EditorReport(
        path=session.workspace.display(path.resolve()),
        modified=bool(state.get("modified")),
        anchor=None,
        inside=inside,
        language=language_of(path),
        line=line + 1,
        column=byte_column(text, int(state.get("col") or 0)) + 1,
        text=text,
        top=int(state.get("top") or 0) + 1,
        bottom=int(state.get("bottom") or 0) + 1,
    )
    try:
        report.anchor = format_anchor(await anchor_at_cursor(session, state))
    except LsapError as error:
        report.anchor_problem = error.message
    if selection := state.get("selection"):
        report.selection = selection_data(selection, lines, request.max_items)
    location: EditorLocation = {
        "path": report.path or "",
        "line": line + 1,
        "col": int(state.get("col") or 0),
        "text": text.strip(),
    }
    return Answer(report, [location])
