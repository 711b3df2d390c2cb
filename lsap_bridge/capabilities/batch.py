"""`batch`: several requests in one round trip, one report with a section per request.

Requests run in order, so one that edits (a rename) is seen by the ones after it. Each gets
an equal share of the batch's token budget (`report/budget.py`) unless it sets its own. A failing
request, whatever the failure, becomes an error section; the others still run. Each
section's own title becomes its `### [n] mode` header, and deeper headings are flattened,
so the whole report keeps to `###` (doc/architecture.md, Reports and errors).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Literal, TypedDict, cast

from pydantic import Field

from ..errors import invalid
from ..jsonvalue import Json, JsonObject
from ..models import MIN_TOKENS, Report, Request, Row, absent
from ..modes import Answer, mode
from ..pipeline import Response, answer
from ..position import EditorLocation
from ..render import render_error
from ..report.budget import budget_of
from ..session.warm import Session

MAX_REQUESTS = 20


class BatchRequest(Request):
    mode: Literal["batch"] = "batch"
    requests: Annotated[list[dict[str, object]], Field(min_length=1, max_length=MAX_REQUESTS)]


class Result(Row):
    """One request's answer, for `format: "json"`: its report, or its error."""

    mode: str
    ok: bool
    data: Mapping[str, object] | None = absent()
    error: Mapping[str, object] | None = absent()


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


class SectionFields(TypedDict):
    """A `Part`'s fields but `ok`."""

    index: int
    mode: str
    title: str
    body: str


def section(index: int, mode: str, text: str) -> SectionFields:
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


async def run_one(session: Session, payload: Json, share: int, fmt: str) -> tuple[str, Response]:
    """One request of the batch, through the request pipeline, within its share of the
    batch's budget unless it sets its own; its failure is its section's, not the batch's."""
    name = str(payload.get("mode")) if isinstance(payload, dict) else "?"
    if name == "batch":
        error = invalid("a batch cannot contain another batch", hint="put its requests in this one")
        return name, Response(render_error(error), error=error)
    return name, await answer(session, payload, fmt=fmt, share=share)


@mode("batch", request=BatchRequest, report=BatchReport,
      summary="several requests in one round trip, one section each", edits=True)
async def batch(session: Session, request: BatchRequest) -> Answer:
    share = max(MIN_TOKENS, budget_of(session, request.max_tokens) // len(request.requests))
    as_json = request.format == "json"
    # The requests as pydantic read them from JSON (typed `object` there: the batch's schema).
    results = [await run_one(session, cast(JsonObject, payload), share, request.format) for payload in request.requests]
    if as_json:
        items = [
            Result(mode=name, ok=done.ok,
                   data=done.answer.report.model_dump(mode="json") if done.answer else None,
                   error=done.error.to_dict() if done.error else None)
            for name, done in results
        ]
        return Answer(BatchReport(results=items))
    sections = []
    locations: list[EditorLocation] = []
    for index, (name, done) in enumerate(results, 1):
        locations += done.locations
        sections.append(Part(**section(index, name, done.text), ok=done.ok))
    failed = sum(1 for s in sections if not s.ok)
    return Answer(BatchReport(count=len(sections), failed=failed, sections=sections), locations)
