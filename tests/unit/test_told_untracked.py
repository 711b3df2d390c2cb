"""`DiskWatch.told` records only the files the watch keeps a record of: one it never looks
at again (not a code file, outside the roots) kept the stamp of the bridge's write, and a
later write by someone else, before a request began, looked to its `Basis` as a change
since (a consented overwrite of b.fault refused, test_command_edits)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lsap_bridge.diskwatch import DiskWatch, fs_now_ns
from lsap_bridge.filestate import DiskStamp, snapshot
from lsap_bridge.watcher import Watcher
from lsap_bridge.workspace import Workspace


@pytest.mark.parametrize("scan", [False, True], ids=["watcher", "scan"])
def test_a_file_the_watch_does_not_track_is_judged_by_its_time(tmp_path: Path, scan: bool) -> None:
    code, other = tmp_path / "a.py", tmp_path / "b.fault"
    code.write_text("x = 1\n")
    other.write_text("y = 2\n")
    watch = DiskWatch(Workspace.of(tmp_path), lambda: None,
                      watcher=Watcher([tmp_path], 0) if scan else None)  # 0 watches: a scan
    assert watch.changes() == []
    for path in (code, other):  # the bridge's edit
        path.write_text("written = 1\n")
    watch.told({str(code): DiskStamp.of(code), str(other): DiskStamp.of(other)})
    for path in (code, other):  # then someone else's, before the request
        path.write_text("theirs = 1\n")
    time.sleep(0.02)  # past the clock tick the request begins in (see `Basis`)
    watch.changes()
    basis = watch.basis(fs_now_ns())
    disk = snapshot(other)
    assert disk is not None and basis.doubt(other, disk) is None
    code_disk = snapshot(code)
    assert code_disk is not None and basis.doubt(code, code_disk) is None, "the sync saw it"
    other.write_text("later = 1\n")  # after the request began: still refused
    disk = snapshot(other)
    assert disk is not None and basis.doubt(other, disk) == "it was written after the request began"
