"""Golden files: a rendered report is compared with `tests/golden/<name>`.

Set LSAP_UPDATE_GOLDEN=1 to (re)write them; review the diff before committing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.render import render_markdown, render_report

GOLDEN = Path(__file__).resolve().parent / "golden"


def assert_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("LSAP_UPDATE_GOLDEN") or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if not os.environ.get("LSAP_UPDATE_GOLDEN"):
            raise AssertionError(f"golden file {path} was missing and has been written: review it")
    assert text == path.read_text(), f"report differs from {path} (LSAP_UPDATE_GOLDEN=1 rewrites it)"


def render_data(template: str, data: dict[str, Any]) -> str:
    """A template rendered from data that is first validated as its mode's report model
    (a field the model lacks, or lacks a value for, fails here)."""
    if template == "error":
        return render_markdown(template, data)
    report = next(c.report for c in REGISTRY.values() if c.template == template)
    return render_report(template, report.model_validate(data))


def assert_report_golden(name: str, template: str, data: dict[str, Any]) -> None:
    """Render a template from data, check the report rules, compare with its golden file."""
    text = render_data(template, data)
    assert check_report_shape(text) == []
    assert_golden(name, text)


def check_report_shape(text: str) -> list[str]:
    """The rules every report keeps: no heading deeper than ###, fences name a language
    (doc/architecture.md, Reports and errors)."""
    problems = []
    in_fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if not in_fence and line.strip() == "```":
                problems.append(f"line {number}: code fence without a language")
            in_fence = not in_fence
        elif not in_fence and re.match(r"#{4,}\s", line):
            problems.append(f"line {number}: heading deeper than ###")
    return problems
