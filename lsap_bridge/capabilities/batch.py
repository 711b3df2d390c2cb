"""`batch`: several requests in one round trip, one report with a section per request.

Requests run in order, so one that edits (a rename) is seen by the ones after it. Each gets
an equal share of the batch's token budget (`report/budget.py`) unless it sets its own. A failing
request, whatever the failure, becomes an error section; the others still run. Each
section's own title becomes its `### [n] mode` header, and deeper headings are flattened,
so the whole report keeps to `###` (doc/architecture.md, Reports and errors).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import LsapError, invalid
from ..failures import as_error
from ..models import MIN_TOKENS, Report, Request, Row, absent
from ..modes import REGISTRY, Answer, mode
from ..position import EditorLocation
from ..render import render_error, renderer
from ..report.budget import Fitted, budget_of, fit
from ..requests import parse_request
from ..session import Session

MAX_REQUESTS = 20


class BatchRequest(Request):
    mode: Literal["batch"] = "batch"
    requests: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=MAX_REQUESTS)]


class Result(Row):
    """One request's answer, for `format: "json"`: its report, or its error."""

    mode: str
    ok: bool
    data: dict[str, Any] | None = absent()
    error: dict[str, Any] | None = absent()


class Part(Row):
    index: int
    mode: str
    title: str
    body: str
    ok: bool


class BatchReport(Report):
    count: int | None = absent()
    failed: int | None = absent()
    sections: list[Part] | None = absent()
    results: list[Result] | None = absent()  # `format: "json"`: the answers themselves


def section(index: int, mode: str, text: str) -> dict[str, Any]:
    """A sub-report as a section: its `#` title folded into the `###` header, headings flattened."""
    lines = text.strip().split("\n")
    title = ""
    if lines and lines[0].startswith("# "):
        title, lines = lines[0][2:].strip(), lines[1:]
    body = [
        re.sub(r"^#{1,6}\s", "### ", line) if not line.startswith("```") else line for line in lines
    ]
    return {"index": index, "mode": mode, "title": title, "body": _outside_fences(lines, body)}


def _outside_fences(original: list[str], flattened: list[str]) -> str:
    """Keep lines inside code fences as they were: a `# comment` in Python is not a heading."""
    out, fenced = [], False
    for before, after in zip(original, flattened, strict=True):
        if before.startswith("```"):
            fenced = not fenced
        out.append(before if fenced or before.startswith("```") else after)
    return "\n".join(out).strip()


async def run_one(session: Session, payload: Any, share: int,
                  as_json: bool) -> tuple[str, Fitted | None, LsapError | None]:
    """One request of the batch, within its share of the batch's budget unless it sets its own."""
    name = str(payload.get("mode")) if isinstance(payload, dict) else "?"
    try:
        if name == "batch":
            raise invalid(
                "a batch cannot contain another batch", hint="put its requests in this one"
            )
        request = parse_request(payload, session.workspace, session.kept.anchors)
        if request.max_tokens is None:
            request = request.model_copy(update={"max_tokens": share})
        capability = REGISTRY[request.mode]
        render = renderer(capability.mode, capability.template, as_json)
        return name, await fit(session, capability, request, render, cut_text=not as_json), None
    except Exception as exc:  # one request's failure is its section's, not the batch's
        return name, None, as_error(exc, f"the {name} request")


@mode("batch", request=BatchRequest, report=BatchReport,
      summary="several requests in one round trip, one section each", edits=True)
async def batch(session: Session, request: BatchRequest) -> Answer:
    share = max(MIN_TOKENS, budget_of(session, request.max_tokens) // len(request.requests))
    as_json = request.format == "json"
    results = [await run_one(session, payload, share, as_json) for payload in request.requests]
    if as_json:
        items = [
            Result(mode=name, ok=error is None,
                   data=done.answer.report.model_dump(mode="json") if done else None,
                   error=error.to_dict() if error else None)
            for name, done, error in results
        ]
        return Answer(BatchReport(results=items))
    sections = []
    locations: list[EditorLocation] = []
    for index, (name, done, error) in enumerate(results, 1):
        if done is not None:
            text = done.text
            locations += done.answer.locations
        else:
            text = render_error(error) if error else ""
        sections.append(Part(**section(index, name, text), ok=error is None))
    failed = sum(1 for s in sections if not s.ok)
    return Answer(BatchReport(count=len(sections), failed=failed, sections=sections), locations)
