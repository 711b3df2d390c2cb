"""Reports as Markdown from Jinja2 templates kept as files (DESIGN §5), or as JSON."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader

from .errors import LsapError


@cache
def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("lsap_bridge", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


_DEEP_HEADING = re.compile(r"#{4,}\s+(.*)")


def render_markdown(template: str, data: dict[str, Any]) -> str:
    text = _environment().get_template(f"{template}.md.j2").render(**data)
    # Templates stay readable with blank lines; reports collapse runs of them.
    lines = text.strip().split("\n")
    out: list[str] = []
    in_fence = False
    for line in lines:
        if line.startswith("```"):
            if not in_fence and line.strip() == "```":
                line = "```text"  # an unnamed fence from a server's docs: every fence names one
            in_fence = not in_fence
        elif not in_fence and (deep := _DEEP_HEADING.match(line)):
            # Servers' docs (hover, signature help) may bring their own headings: reports
            # keep no heading deeper than ### (DESIGN §5).
            line = f"**{deep.group(1).strip()}**"
        if line.strip() or (out and out[-1].strip()):
            out.append(line.rstrip())
    return "\n".join(out) + "\n"


def render_json(mode: str, data: dict[str, Any]) -> str:
    return json.dumps({"mode": mode, **data}, ensure_ascii=False, indent=1, default=str)


def render_error(error: LsapError, fmt: str = "markdown") -> str:
    data = error.to_dict()
    if fmt == "json":
        return json.dumps({"error": data}, ensure_ascii=False, indent=1)
    return render_markdown("error", data)
