"""The inotify watcher behind the disk watch (issue 32), on the real kernel: what changed is
told, at the cost of what changed; ignored trees have no watch; where watches run out the
disk watch scans and says so."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lsap_bridge.diskwatch import CHANGED, CREATED, DELETED, DiskWatch
from lsap_bridge.watcher import Watcher
from lsap_bridge.workspace import Workspace, uri_of

DEEP = "a/b/c/d/e/f/g/h/leaf.py"


def tree(root: Path) -> None:
    (root / DEEP).parent.mkdir(parents=True)
    (root / DEEP).write_text("x = 1\n")
    for ignored in ("node_modules/pkg", ".venv/lib", "out/gen", "generated/deep"):
        (root / ignored).mkdir(parents=True)
        (root / ignored / "m.py").write_text("y = 1\n")
    (root / ".gitignore").write_text("out/\n")
    (root / "pyrightconfig.json").write_text(json.dumps({"exclude": ["**/generated"]}))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def watch_of(root: Path, watcher: Watcher | None = None) -> DiskWatch:
    watch = DiskWatch(Workspace.of(root), lambda: None, watcher=watcher)
    assert watch.changes() == []  # the baseline
    return watch


def test_a_deep_edit_is_told_and_ignored_trees_have_no_watch(tmp_path: Path) -> None:
    tree(tmp_path)
    watch = watch_of(tmp_path)
    assert watch.scanning is None and watch.watcher is not None
    watched = {Path(d).relative_to(tmp_path).as_posix() for d in watch.watcher._watched}
    assert watched == {".", "a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/d/e", "a/b/c/d/e/f", "a/b/c/d/e/f/g",
                       "a/b/c/d/e/f/g/h"}, "node_modules, .venv, gitignored and excluded trees: none"
    (tmp_path / DEEP).write_text("x = 2\n")
    for ignored in ("node_modules/pkg", ".venv/lib", "out/gen", "generated/deep"):
        (tmp_path / ignored / "m.py").write_text("y = 2\n")
    assert watch.changes() == [{"uri": uri_of(tmp_path / DEEP), "type": CHANGED}]
    assert watch.changes() == [] and watch.quiet, "nothing more: quiet"


def test_created_moved_and_deleted_files_and_directories(tmp_path: Path) -> None:
    tree(tmp_path)
    watch = watch_of(tmp_path)
    new = tmp_path / "a" / "new" / "sub"
    new.mkdir(parents=True)
    (new / "n.py").write_text("n = 1\n")
    assert watch.changes() == [{"uri": uri_of(new / "n.py"), "type": CREATED}]
    (new / "n.py").write_text("n = 2\n")
    assert watch.changes() == [{"uri": uri_of(new / "n.py"), "type": CHANGED}]
    away = tmp_path.parent / f"{tmp_path.name}-away"
    shutil.move(str(tmp_path / "a" / "new"), away)  # no event per file: the files known below
    try:
        assert watch.changes() == [{"uri": uri_of(new / "n.py"), "type": DELETED}]
        (away / "sub" / "n.py").write_text("n = 3\n")
        assert watch.changes() == [], "a directory moved away is no longer watched"
    finally:
        shutil.rmtree(away)
    (tmp_path / DEEP).unlink()
    assert watch.changes() == [{"uri": uri_of(tmp_path / DEEP), "type": DELETED}]


def test_two_disk_watches_share_the_watcher_and_keep_their_own_cursor(tmp_path: Path) -> None:
    tree(tmp_path)
    first, second = watch_of(tmp_path), watch_of(tmp_path)
    assert first.watcher is second.watcher
    (tmp_path / DEEP).write_text("x = 3\n")
    told = [{"uri": uri_of(tmp_path / DEEP), "type": CHANGED}]
    assert first.changes() == told and first.changes() == []
    assert second.changes() == told


@pytest.mark.parametrize("limit", [0, 3])
def test_where_the_watches_run_out_the_scan_finds_the_edit_and_says_why(tmp_path: Path, limit: int) -> None:
    tree(tmp_path)
    watch = watch_of(tmp_path, Watcher([tmp_path], limit))
    assert watch.scanning == f"the directory watches ran out (LSAP_WATCHES={limit})"
    assert watch.watcher is not None and watch.watcher.watches == 0, "no half-watched tree"
    (tmp_path / DEEP).write_text("x = 4\n")
    assert watch.changes() == [{"uri": uri_of(tmp_path / DEEP), "type": CHANGED}]
    assert not watch.quiet
