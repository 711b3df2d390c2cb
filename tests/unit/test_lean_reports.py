"""Lean reports (issue 44, item 5): `check` lists the new errors, one code line each; new
warnings are counted, and listed by the same check's `pagination_id` with
`min_severity=warning`; the users it compared are a count, listed on request. The shape of
the break that cost 553 tokens on rich 13.9.4 (`loop_first` given a required argument: 4
broken calls in 3 files, 9 new warnings, 11 users) fits in 300. `diagnostics` puts errors
first across all pages."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.cl100k import tokens
from lsap_bridge import diagnostics, pipeline
from lsap_bridge.capabilities import REGISTRY
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pipeline import Response
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import uri_of
from tests.fakes import client, fake_session

WHOLE = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 30}}
NAME = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 14}}
METHODS = frozenset({"textDocument/diagnostic", "textDocument/documentSymbol", "textDocument/references"})
# The broken calls: file, line (0-based), its text.
CALLS = [("rich/markdown.py", 3, "        for first, (name, value) in loop_first(items):"),
         ("rich/syntax.py", 5, "            for first, token in loop_first(tokens):"),
         ("rich/tree.py", 2, "    for first, child in loop_first(children):"),
         ("rich/tree.py", 7, "        for first, (last, line) in loop_first(renderable_lines):")]
USERS = [f"rich/user{n}.py" for n in range(8)]


def diagnostic(line: int, severity: int, message: str, code: str) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 18}},
            "severity": severity, "message": message, "source": "basedpyright", "code": code}


def broken_rich(root: Path) -> tuple[Session, dict[str, list[dict[str, Any]]]]:
    """rich/_loop.py defines `loop_first`; three files call it (4 calls), eight more import it."""
    (root / "rich").mkdir()
    (root / "rich" / "_loop.py").write_text("def loop_first(values): ...\n")
    texts: dict[str, list[str]] = {}
    for path, line, text in CALLS:
        lines = texts.setdefault(path, ["from ._loop import loop_first", *["pass"] * 9])
        lines[line] = text
    for path in USERS:
        texts[path] = ["from ._loop import loop_first", "loop_first([])"]
    for path, lines in texts.items():
        (root / path).write_text("\n".join(lines) + "\n")
    published: dict[str, list[dict[str, Any]]] = {}

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            return LspAnswer([{"name": "loop_first", "kind": 12, "range": WHOLE, "selectionRange": NAME}])
        if call.method == "textDocument/references":
            return LspAnswer([{"uri": uri_of(root / p), "range": NAME} for p in texts])
        return LspAnswer({"kind": "full", "items": published.get(call.params["textDocument"]["uri"], [])})

    return fake_session(root, answer, clients=[client("basedpyright", METHODS)]), published


def ask(session: Session, **fields: Any) -> Response:
    assert "check" in REGISTRY
    response = asyncio.run(pipeline.answer(session, {"mode": fields.pop("mode", "check"), **fields}, "cli"))
    assert response.ok, response.text
    return response


def test_a_four_caller_break_is_reported_in_300_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diagnostics, "SETTLE_STEP", 0.01)
    session, published = broken_rich(tmp_path)
    ask(session)  # the baseline
    (tmp_path / "rich" / "_loop.py").write_text("def loop_first(values, *, strict): ...\n")
    for path, line, _ in CALLS:  # an error and two warnings at each call, a warning in a user: 9
        published.setdefault(uri_of(tmp_path / path), []).extend([
            diagnostic(line, 1, 'Argument missing for parameter "strict"', "reportCallIssue"),
            diagnostic(line, 2, 'Type of "first" is unknown', "reportUnknownVariableType"),
            diagnostic(line, 2, "Type of the loop variable is unknown", "reportUnknownVariableType")])
    published[uri_of(tmp_path / USERS[0])] = [diagnostic(1, 2, "Type is unknown", "reportUnknownVariableType")]
    # A hint is neither listed nor counted unless asked for (`min_severity=hint`).
    published[uri_of(tmp_path / USERS[1])] = [diagnostic(1, 4, '"first" is not accessed', "reportUnusedVariable")]
    report = ask(session).text
    assert report.startswith("# Check 2: new 4 errors, 9 warnings since ")
    assert tokens(report) <= 300, (tokens(report), report)
    for _, line, text in CALLS:  # each error with its one line of code
        assert f"{line + 1}| {text.strip()}" in report or f"{line + 1}| {text}" in report
    assert "is unknown" not in report and "user0.py" not in report  # counted, not listed
    assert "11 users compared too" in report
    # The same check's warnings and users, on request: no new check (it would find nothing new).
    listing = next(line for line in report.splitlines() if line.startswith("Not listed, 9 warnings: "))
    found = re.search(r"pagination_id=(\w+)", listing)
    assert found is not None
    page_id = found.group(1)
    more = json.loads(ask(session, format="json", min_severity="warning", pagination_id=page_id).text)
    assert more["number"] == 2 and more["total"] == 13
    assert sum(len(g["diagnostics"]) for g in more["groups"]) == 13
    users = ask(session, list_users=True, pagination_id=page_id).text
    assert "rich/user0.py" in users and "rich/user7.py" in users


def test_diagnostics_puts_errors_first_across_pages(tmp_path: Path) -> None:
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n" * 5)
    found = {"a.py": [diagnostic(n, 2, f"warning {n}", "w") for n in range(4)],
             "b.py": [diagnostic(3, 1, "the error", "e")]}

    def answer(call: LspCall) -> LspAnswer:
        name = Path(call.params["textDocument"]["uri"]).name
        return LspAnswer({"kind": "full", "items": found[name]})

    session = fake_session(tmp_path, answer, clients=[client("basedpyright", frozenset({"textDocument/diagnostic"}))])
    first = json.loads(ask(session, mode="diagnostics", format="json", max_items=2).text)
    shown = [(g["path"], d["severity"]) for g in first["groups"] for d in g["diagnostics"]]
    assert shown[0] == ("b.py", "error"), shown
