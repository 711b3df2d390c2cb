"""Reports as Markdown from Jinja2 templates kept as files, or as JSON: the report model's
dump (doc/architecture.md, Reports and errors). Templates render with `StrictUndefined`: a
field a template names and the report lacks is an error, never an empty space."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined

from .diagnostics import labelled
from .errors import LsapError
from .models import Report
from .surface import SURFACE, phrase, phrase_option
from .workspace import size_text


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("lsap_bridge", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        auto_reload=False,  # templates ship with the package: no stat of each one per report
        undefined=StrictUndefined,
    )
    # Requests and options a report suggests, written for the surface that asked.
    environment.globals.update(suggest=phrase, suggest_option=phrase_option, labelled=labelled)
    # Agents' forms (every surface but Neovim's report window, whose lines are jump targets
    # and whose `Anchor:` line teaches the anchor form): `_title.md.j2`, outlines, hierarchies.
    environment.globals["agent"] = lambda: SURFACE.get() != "nvim"

    environment.filters["size"] = size_text
    return environment


_DEEP_HEADING = re.compile(r"#{4,}\s+(.*)")


def render_markdown(template: str, data: Mapping[str, object]) -> str:
    text = _environment().get_template(f"{template}.md.j2").render(**data)
    if data.get("notes"):  # under the title, whatever the mode (see `session.texts.disk_notes`)
        title, _, rest = text.partition("\n")
        text = title + "\n\n" + _environment().get_template("_notes.md.j2").render(**data) + rest
    lines = [line.rstrip() for line in text.strip().split("\n")]
    if "```" in text or "####" in text:
        _fit_markup(lines)
    text = "\n".join(lines)
    # Templates stay readable with blank lines; reports collapse runs of them.
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text + "\n"


def _fit_markup(lines: list[str]) -> None:
    """Fences and headings from servers' docs, made to fit a report (doc/architecture.md, Reports and errors)."""
    in_fence = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if not in_fence and line == "```":
                lines[i] = "```text"  # an unnamed fence from a server's docs: every fence names one
            in_fence = not in_fence
        elif not in_fence and line.startswith("####") and (deep := _DEEP_HEADING.match(line)):
            # Hover and signature docs may bring their own headings: none deeper than ###.
            lines[i] = f"**{deep.group(1).strip()}**"


def render_report(template: str, report: Report) -> str:
    """A mode's report as Markdown, through its template."""
    return render_markdown(template, report.fields())


def render_json(mode: str, report: Report) -> str:
    """A mode's report as `format: "json"` gives it: the model's dump, with the mode."""
    return json.dumps({"mode": mode, **report.model_dump(mode="json")}, ensure_ascii=False, indent=1)


def renderer(mode: str, template: str, as_json: bool) -> Callable[[Report], str]:
    """How a mode's reports are rendered in the format asked for (what `report.budget.fit` measures)."""
    if as_json:
        return lambda report: render_json(mode, report)
    return lambda report: render_report(template, report)


def render_error(error: LsapError, fmt: str = "markdown") -> str:
    data = error.to_dict()
    if fmt == "json":
        return json.dumps({"error": data}, ensure_ascii=False, indent=1)
    return render_markdown("error", data)
