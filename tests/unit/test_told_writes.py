"""`DiskWatch.told` (issue 44): the files the bridge's own edit wrote or removed are not told to
the servers again at the next sync (they heard of each as it was written), while another
watch (a `check`'s) still sees them change, and a write after the bridge's is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsap_bridge.diskwatch import CHANGED, CREATED, DiskWatch
from lsap_bridge.filestate import DiskStamp
from lsap_bridge.watcher import Watcher
from lsap_bridge.workspace import Workspace, uri_of


@pytest.mark.parametrize("scan", [False, True], ids=["watcher", "scan"])
def test_the_bridges_writes_are_not_told_again(tmp_path: Path, scan: bool) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text("x = 1\n")
    watcher = Watcher([tmp_path], 0) if scan else None  # 0 watches: found by a scan
    servers = DiskWatch(Workspace.of(tmp_path), lambda: None, watcher=watcher)
    checker = DiskWatch(Workspace.of(tmp_path), lambda: None, watcher=servers.watcher)
    assert servers.changes() == [] and checker.changes() == []
    (tmp_path / "a.py").write_text("x = 2\n")  # the bridge's edit: one changed,
    (tmp_path / "new.py").write_text("n = 1\n")  # one created,
    (tmp_path / "b.py").unlink()  # one removed (a move's old name)
    servers.told({str(tmp_path / "a.py"): DiskStamp.of(tmp_path / "a.py"),
                  str(tmp_path / "new.py"): DiskStamp.of(tmp_path / "new.py"),
                  str(tmp_path / "b.py"): None})
    (tmp_path / "c.py").write_text("x = 3\n")  # someone else's
    assert servers.changes() == [{"uri": uri_of(tmp_path / "c.py"), "type": CHANGED}]
    assert len(checker.changes()) == 4, "a check's own watch sees every change"
    (tmp_path / "a.py").write_text("x = 22\n")  # a write after the bridge's
    (tmp_path / "b.py").write_text("back\n")  # and the removed file back
    assert sorted(servers.changes(), key=str) == sorted(
        [{"uri": uri_of(tmp_path / "a.py"), "type": CHANGED}, {"uri": uri_of(tmp_path / "b.py"), "type": CREATED}],
        key=str)
