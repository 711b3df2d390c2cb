"""The record `check` keeps between checks (capabilities/check.py): the disk's changes
merged until a check answers for them, and a check's findings applied only when the next
check starts, so that a check `Session.run` runs again compares with the same record."""

from __future__ import annotations

from pathlib import Path

from lsap_bridge.capabilities.check import CheckRequest, Record, Update
from lsap_bridge.diagnostics import Diagnostic, DiagnosticDelta
from lsap_bridge.diskwatch import DiskWatch
from lsap_bridge.workspace import Workspace


def diagnostic(message: str, line: int = 0, severity: str = "error") -> Diagnostic:
    return Diagnostic(line, 0, line, 1, severity, message)


def record_of(root: Path) -> Record:
    record = Record(DiskWatch(Workspace.of(root)))
    record.start(CheckRequest())  # the first check: the disk's baseline
    return record


def test_changes_between_checks_are_merged_until_a_check_answers(tmp_path: Path) -> None:
    kept, gone, passing = tmp_path / "kept.py", tmp_path / "gone.py", tmp_path / "passing.py"
    kept.write_text("a = 1\n")
    gone.write_text("b = 1\n")
    record = record_of(tmp_path)
    assert record.unreported == {}
    gone.unlink()
    passing.write_text("c = 1\n")
    record.start(first := CheckRequest())
    assert record.unreported == {gone: "deleted", passing: "created"}
    # That check is run again (a text changed under it): nothing is lost meanwhile.
    passing.unlink()
    kept.write_text("a = 22\n")
    record.draft = (first, Update({}, set(), {}, set(), set(record.unreported), 1.0))
    record.start(first)
    assert record.unreported == {gone: "deleted", kept: "changed"}  # `passing` came and went
    assert record.number == 0  # its draft was not applied: it is the same check


def test_a_draft_is_applied_when_the_next_check_starts(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    record = record_of(tmp_path)
    done = CheckRequest()
    record.draft = (done, Update({path: [diagnostic("old")]}, set(), {path: {tmp_path / "b.py"}},
                                 {path}, set(), 5.0))
    record.start(CheckRequest())
    assert (record.number, record.at) == (1, 5.0)
    assert record.seen == {path: [diagnostic("old")]} and record.flagged == {path}
    assert record.users == {path: {tmp_path / "b.py"}} and record.draft is None


def test_the_delta_says_what_is_new_and_what_is_gone() -> None:
    a, b = Path("a.py"), Path("b.py")
    before = {a: [diagnostic("kept", 3), diagnostic("fixed"), diagnostic("twice"), diagnostic("twice")]}
    after = {a: [diagnostic("kept", 9), diagnostic("twice"), diagnostic("broken")], b: [diagnostic("new file")]}
    delta = DiagnosticDelta.between(before, after)
    assert delta.new == {a: [diagnostic("broken")], b: [diagnostic("new file")]}
    # Compared by message, code and severity: a diagnostic that moved is the same one.
    assert delta.gone == {a: [diagnostic("fixed"), diagnostic("twice")]}
