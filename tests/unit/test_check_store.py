"""`check`'s record on disk (lsap_bridge/check_store.py): what changed while no daemon
ran, its bounds, and records it does not trust."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lsap_bridge import check_store
from lsap_bridge.diagnostics import Diagnostic

ERROR = Diagnostic(3, 0, 3, 5, "error", "boom", code="E1", source="srv", lsp={"message": "boom"})


def test_a_saved_record_comes_back_with_what_changed_since(tmp_path: Path) -> None:
    root, state = tmp_path / "root", tmp_path / "state"
    root.mkdir()
    same, edited, gone = root / "same.py", root / "edited.py", root / "gone.py"
    for path in (same, edited, gone):
        path.write_text("x = 1\n")
    at = time.time()
    assert check_store.save(state, root, {same: [ERROR], edited: [], gone: []}, 3, at) == 0
    edited.write_text("x = 2\n")
    gone.unlink()
    saved = check_store.load(state, root)
    assert saved is not None and (saved.number, saved.at) == (3, at)
    assert saved.seen == {same: [ERROR], edited: [], gone: []}
    assert saved.seen[same][0].lsp == {"message": "boom"}
    assert saved.changed == {edited: "changed", gone: "deleted"}
    assert check_store.load(state, tmp_path / "other") is None  # another root: a baseline
    assert check_store.load(state, root, "claude") is None  # another checker: its own record


def test_the_caps_leave_files_out_and_say_how_many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_store, "MAX_FILES", 2)
    monkeypatch.setattr(check_store, "MAX_DIAGNOSTICS", 1)
    paths = [tmp_path / f"f{i}.py" for i in range(4)]
    for path in paths:
        path.write_text("")
    seen = {paths[0]: [ERROR, ERROR], paths[1]: [], paths[2]: [ERROR], paths[3]: []}
    assert check_store.save(tmp_path / "state", tmp_path, seen, 1, time.time()) == 2
    saved = check_store.load(tmp_path / "state", tmp_path)
    assert saved is not None and set(saved.seen) == {paths[1], paths[2]} and saved.left_out == 2


def test_old_broken_or_foreign_records_are_not_continued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = tmp_path / "state"
    check_store.save(state, tmp_path, {}, 1, time.time() - check_store.MAX_AGE - 1)
    assert check_store.load(state, tmp_path) is None
    record = check_store.record_path(state, tmp_path)
    record.write_text("{not json")
    assert check_store.load(state, tmp_path) is None
    record.write_text(json.dumps({"version": 1, "root": str(tmp_path), "at": time.time(),
                                  "files": {str(tmp_path / "a.py"): {"hash": "x", "diagnostics": [{"line": 1}]}}}))
    assert check_store.load(state, tmp_path) is None


def test_only_the_roots_saved_last_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_store, "KEEP", 2)
    roots = [tmp_path / f"r{i}" for i in range(3)]
    for i, root in enumerate(roots):
        check_store.save(tmp_path / "state", root, {}, 1, time.time())
        record = check_store.record_path(tmp_path / "state", root)
        stamp = time.time() - 100 + i
        os.utime(record, (stamp, stamp))
    check_store.save(tmp_path / "state", roots[2], {}, 2, time.time())
    kept = {p.name for p in (tmp_path / "state" / "checks").glob("*.json")}
    assert kept == {check_store.record_path(tmp_path / "state", r).name for r in roots[1:]}


def test_resume() -> None:
    class Record:
        def __init__(self) -> None:
            self.seen: dict[Path, list[Diagnostic]] = {}
            self.number, self.at = 0, 0.0
            self.unreported: dict[Path, str] = {Path("/r/new.py"): "created"}

    record = Record()
    check_store.resume(record, None)
    assert record.number == 0
    saved = check_store.Saved(seen={Path("/r/a.py"): [ERROR]}, number=2, at=5.0, changed={Path("/r/a.py"): "changed"})
    check_store.resume(record, saved)
    assert (record.seen, record.number, record.at) == (saved.seen, 2, 5.0)
    assert record.unreported == {Path("/r/new.py"): "created", Path("/r/a.py"): "changed"}
