"""`batch`: several requests in one round trip, one report with a section per request.

Requests run in order, so one that edits (a rename) is seen by the ones after it. A failing
request becomes an error section; the others still run. Each section's own title becomes
its `### [n] mode` header, and deeper headings are flattened, so the whole report keeps
to `###` (doc/architecture.md, Reports and errors).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field

from ..errors import LsapError, invalid
from ..render import render_error, render_markdown
from ..session import Session
from .base import REGISTRY, Report, Request, capability

MAX_REQUESTS = 20


class BatchRequest(Request):
    mode: Literal["batch"] = "batch"
    requests: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=MAX_REQUESTS)]


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


async def run_one(session: Session, payload: Any) -> tuple[str, Report | None, LsapError | None]:
    # Imported here: the service imports the capabilities, and a batch dispatches like it.
    from ..service import parse_request

    mode = str(payload.get("mode")) if isinstance(payload, dict) else "?"
    try:
        if mode == "batch":
            raise invalid(
                "a batch cannot contain another batch", hint="put its requests in this one"
            )
        request = parse_request(payload, session.workspace)
        return mode, await REGISTRY[request.mode].run(session, request), None
    except LsapError as error:
        return mode, None, error


@capability("batch", BatchRequest, "several requests in one round trip, one section each")
async def batch(session: Session, request: BatchRequest) -> Report:
    results = [await run_one(session, payload) for payload in request.requests]
    if request.format == "json":
        items = [
            {
                "mode": mode,
                "ok": error is None,
                **({"data": report.data} if report else {}),
                **({"error": error.to_dict()} if error else {}),
            }
            for mode, report, error in results
        ]
        return Report("batch", {"results": items})
    sections = []
    locations: list[dict[str, Any]] = []
    for index, (mode, report, error) in enumerate(results, 1):
        if report is not None:
            text = render_markdown(report.template, report.data)
            locations += report.locations
        else:
            text = render_error(error) if error else ""
        sections.append({**section(index, mode, text), "ok": error is None})
    failed = sum(1 for s in sections if not s["ok"])
    data = {"count": len(sections), "failed": failed, "sections": sections}
    return Report("batch", data, locations)
