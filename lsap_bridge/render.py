"""Reports as Markdown from Jinja2 templates kept as files (DESIGN §5), or as JSON."""

from __future__ import annotations

import json
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


def render_markdown(template: str, data: dict[str, Any]) -> str:
    text = _environment().get_template(f"{template}.md.j2").render(**data)
    # Templates stay readable with blank lines; reports collapse runs of them.
    lines = text.strip().split("\n")
    out: list[str] = []
    for line in lines:
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
