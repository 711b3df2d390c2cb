"""The record `check` keeps between checks (capabilities/check.py): the disk's changes
merged until a check answers for them, and a check's findings applied only once its answer
is delivered (`Record.apply` as the answer's commit), so that a check `Session.run` runs
again compares with the same record."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge import diagnostics, pipeline
from lsap_bridge.capabilities.check import CheckReport, CheckRequest, Record, Update
from lsap_bridge.diagnostics import Diagnostic, DiagnosticDelta
from lsap_bridge.diskwatch import DiskWatch
from lsap_bridge.gateway import LspAnswer, LspCall
from lsap_bridge.pipeline import delivering
from lsap_bridge.render import render_report
from lsap_bridge.session.warm import Session
from lsap_bridge.workspace import Workspace, uri_of
from tests.fakes import client, fake_session


def diagnostic(message: str, line: int = 0, severity: str = "error") -> Diagnostic:
    return Diagnostic(line, 0, line, 1, severity, message)


def record_of(root: Path) -> Record:
    record = Record(DiskWatch(Workspace.of(root), lambda: None))
    record.start()  # the first check: the disk's baseline
    return record


def test_changes_between_checks_are_merged_until_a_check_answers(tmp_path: Path) -> None:
    kept, gone, passing = tmp_path / "kept.py", tmp_path / "gone.py", tmp_path / "passing.py"
    kept.write_text("a = 1\n")
    gone.write_text("b = 1\n")
    record = record_of(tmp_path)
    assert record.unreported == {}
    gone.unlink()
    passing.write_text("c = 1\n")
    record.start()
    assert record.unreported == {gone: "deleted", passing: "created"}
    # That check is run again (a text changed under it), or not answered: nothing is lost.
    passing.unlink()
    kept.write_text("a = 22\n")
    record.start()
    assert record.unreported == {gone: "deleted", kept: "changed"}  # `passing` came and went
    assert record.number == 0  # nothing was applied: no check was answered


def test_an_answered_check_s_findings_are_applied(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    record = record_of(tmp_path)
    record.unreported = {path: "changed", tmp_path / "later.py": "created"}
    record.apply(Update({path: [diagnostic("old")]}, set(), {path: {tmp_path / "b.py"}}, {path}, {path}, 5.0))
    assert (record.number, record.at) == (1, 5.0)
    assert record.seen == {path: [diagnostic("old")]} and record.flagged == {path}
    assert record.users == {path: {tmp_path / "b.py"}}
    assert record.unreported == {tmp_path / "later.py": "created"}


def test_the_delta_says_what_is_new_and_what_is_gone() -> None:
    a, b = Path("a.py"), Path("b.py")
    before = {a: [diagnostic("kept", 3), diagnostic("fixed"), diagnostic("twice"), diagnostic("twice")]}
    after = {a: [diagnostic("kept", 9), diagnostic("twice"), diagnostic("broken")], b: [diagnostic("new file")]}
    delta = DiagnosticDelta.between(before, after)
    assert delta.new == {a: [diagnostic("broken")], b: [diagnostic("new file")]}
    # Compared by message, code and severity: a diagnostic that moved is the same one.
    assert delta.gone == {a: [diagnostic("fixed"), diagnostic("twice")]}


def pull(message: str, line: int = 0) -> dict[str, Any]:
    return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 1}},
            "severity": 1, "message": message, "source": "fake"}


def check(session: Session) -> CheckReport:
    """A check of the whole workspace, run and delivered as a request is."""

    async def run() -> CheckReport:
        async with delivering() as deliver:
            report = (await pipeline.run(session, CheckRequest())).report
            await deliver()
        assert isinstance(report, CheckReport)
        return report

    return asyncio.run(run())


def test_users_of_a_file_no_server_finds_references_for_are_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server with diagnostics but neither symbols nor references (as ruff's): the edited
    file is compared, and the report says its users could not be looked for."""
    monkeypatch.setattr(diagnostics, "SETTLE_STEP", 0.01)
    edited, other = tmp_path / "a.py", tmp_path / "b.py"
    edited.write_text("x = 1\n")
    other.write_text("from a import x\n")
    published: dict[str, list[dict[str, Any]]] = {}

    def answer(call: LspCall) -> LspAnswer:
        assert call.method == "textDocument/diagnostic", call.method
        return LspAnswer({"kind": "full", "items": published.get(call.params["textDocument"]["uri"], [])})

    session = fake_session(tmp_path, answer, clients=[client("lint", frozenset({"textDocument/diagnostic"}))])
    assert check(session).checked == 2
    edited.write_text("x = undefined\n")
    published[uri_of(edited)] = [pull("undefined is not defined")]
    report = check(session)
    # b.py imports a: compared as its user all the same (`importers`), nothing new in it.
    assert [c.path for c in report.changed] == ["a.py"] and report.dependents == ["b.py"]
    assert report.checked == 2 and report.unsearched == ["a.py"]
    assert [(g.status, g.path, [d.message for d in g.diagnostics]) for g in report.groups] == [
        ("new", "a.py", ["undefined is not defined"])]
    assert "No attached server finds references for a.py" in render_report("check", report)


def test_an_importer_the_references_missed_is_checked_and_its_new_error_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first check after a change has only the server's references to find the changed
    file's users by (`record.users` is empty): an importer they miss is compared all the
    same, and its new error is `new`, not left out of a report that says nothing pending."""
    monkeypatch.setattr(diagnostics, "SETTLE_STEP", 0.01)
    edited, caller = tmp_path / "loop.py", tmp_path / "tree.py"
    edited.write_text("def first(values): ...\n")
    caller.write_text("from loop import first\nfirst([1])\n")
    published: dict[str, list[dict[str, Any]]] = {}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 23}}
    name = {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}

    def answer(call: LspCall) -> LspAnswer:
        if call.method == "textDocument/documentSymbol":
            return LspAnswer([{"name": "first", "kind": 12, "range": whole, "selectionRange": name}])
        if call.method == "textDocument/references":
            return LspAnswer([])  # missed: the server had not read tree.py again yet
        return LspAnswer({"kind": "full", "items": published.get(call.params["textDocument"]["uri"], [])})

    methods = frozenset({"textDocument/diagnostic", "textDocument/documentSymbol", "textDocument/references"})
    session = fake_session(tmp_path, answer, clients=[client("typer", methods)])
    assert check(session).checked == 2
    edited.write_text("def first(values, *, strict): ...\n")
    published[uri_of(caller)] = [pull("missing argument strict")]
    report = check(session)
    assert report.dependents == ["tree.py"] and not report.pending
    assert [(g.status, g.path, [d.message for d in g.diagnostics]) for g in report.groups] == [
        ("new", "tree.py", ["missing argument strict"])]


def test_a_rename_s_changed_messages_are_not_new() -> None:
    """Diagnostics that stayed where they were, with the same code and severity, whose
    message names the renamed symbol: neither new nor gone. A new one on another line is."""
    path = Path("m.py")
    before = [Diagnostic(3, 4, 3, 11, "warning", '"Product" is not accessed', "reportUnusedVariable"),
              Diagnostic(7, 0, 7, 5, "error", 'Argument missing for parameter "strict"', "reportCallIssue")]
    after = [Diagnostic(3, 4, 3, 8, "warning", '"Item" is not accessed', "reportUnusedVariable"),
             Diagnostic(7, 0, 7, 5, "error", 'Argument missing for parameter "strict"', "reportCallIssue"),
             Diagnostic(9, 0, 9, 5, "warning", '"Goods" is not accessed', "reportUnusedVariable")]
    delta = DiagnosticDelta.between({path: before}, {path: after})
    assert delta.new == {path: [after[2]]} and delta.gone == {}
    # Without a code, a changed message is a different diagnostic.
    plain = DiagnosticDelta.between({path: [diagnostic("old", 3)]}, {path: [diagnostic("new", 3)]})
    assert plain.new == {path: [diagnostic("new", 3)]} and plain.gone == {path: [diagnostic("old", 3)]}
