"""What the bridge knows of files on disk, without Neovim: the disk watch's events for the
servers, disk texts whose stamps are racy, and the note a report carries when a buffer with
unsaved changes no longer matches its file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from lsap_bridge import diskwatch, filestate
from lsap_bridge.capabilities.hover import HoverReport
from lsap_bridge.diskwatch import CHANGED, CREATED, DELETED, DiskWatch
from lsap_bridge.filestate import read_disk
from lsap_bridge.render import render_json
from lsap_bridge.session.texts import disk_note
from lsap_bridge.workspace import Workspace, uri_of
from tests.golden import render_data


def rewrite_keeping_the_stamp(path: Path, text: str) -> None:
    """A same-size rewrite in place, its mtime put back: size, mtime, inode alike (only the
    change time moved, which no call can set back)."""
    before = os.stat(path)
    with open(path, "r+") as file:
        file.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns,
                                                                before.st_ino)


def test_the_watch_reports_created_changed_and_deleted_code_files(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a = 1\n")
    (tmp_path / "b.py").write_text("b = 1\n")
    (tmp_path / "notes.md").write_text("not code\n")
    watch = DiskWatch(Workspace.of(tmp_path), lambda: None)
    assert watch.changes() == [], "the first look is the baseline"
    assert watch.changes() == []
    (tmp_path / "a.py").write_text("a = 22\n")
    (tmp_path / "b.py").unlink()
    (tmp_path / "c.py").write_text("c = 1\n")
    (tmp_path / "notes.md").write_text("still not code\n")
    events = watch.changes()
    assert sorted(events, key=lambda e: e["type"]) == [
        {"uri": uri_of(tmp_path / "c.py"), "type": CREATED},
        {"uri": uri_of(tmp_path / "a.py"), "type": CHANGED},
        {"uri": uri_of(tmp_path / "b.py"), "type": DELETED},
    ]
    assert watch.changes() == []


def test_the_watch_sees_a_rewrite_that_keeps_the_stamp_while_it_is_racy(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("a = 1\n")  # just written: its stamp proves nothing yet
    watch = DiskWatch(Workspace.of(tmp_path), lambda: None)
    watch.changes()
    rewrite_keeping_the_stamp(path, "a = 2\n")
    assert watch.changes() == [{"uri": uri_of(path), "type": CHANGED}]
    assert watch.changes() == []


def test_an_old_file_rewritten_with_its_mtime_put_back_is_seen(tmp_path: Path) -> None:
    """Long settled (no content hash kept), then rewritten in place and `os.utime`d back:
    the change time tells."""
    path = tmp_path / "a.py"
    path.write_text("a = 1\n")
    os.utime(path, (1_000_000, 1_000_000))  # written long ago
    time.sleep(0.01)
    watch = DiskWatch(Workspace.of(tmp_path), lambda: None)
    watch.changes()
    rewrite_keeping_the_stamp(path, "a = 2\n")
    assert watch.changes() == [{"uri": uri_of(path), "type": CHANGED}]
    assert watch.changes() == [], "unchanged since: nothing"


def test_a_file_over_max_file_size_is_never_read_even_with_a_future_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 600 MB sparse `.py` stamped a day ahead: not watched, not read, on every call."""
    huge, small = tmp_path / "huge.py", tmp_path / "small.py"
    huge.touch()
    os.truncate(huge, 600 * 1024 * 1024)
    small.write_text("a = 1\n")
    ahead = time.time() + 86_400
    for path in (huge, small):
        os.utime(path, (ahead, ahead))
    read: list[str] = []
    real = diskwatch._digest

    def spy(path: str) -> str:
        read.append(path)
        return real(path)

    monkeypatch.setattr(diskwatch, "_digest", spy)
    watch = DiskWatch(Workspace.of(tmp_path), lambda: 4 * 1024 * 1024)
    assert watch.changes() == [] and watch.changes() == []
    assert read == [], "neither the huge file nor a future stamp is read"
    small.write_text("a = 22\n")  # a write gives it a new stamp: seen without any hash
    assert watch.changes() == [{"uri": uri_of(small), "type": CHANGED}]
    os.truncate(huge, 601 * 1024 * 1024)  # the huge one changes too: neither read nor told
    assert watch.changes() == []
    assert str(huge) not in read


def test_a_disk_text_read_while_racy_is_checked_by_content(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.py"
    path.write_text("first = 1\n")
    doc = read_disk(path)
    assert doc.digest is not None
    rewrite_keeping_the_stamp(path, "again = 2\n")
    assert read_disk(path, doc).lines == ["again = 2"]
    monkeypatch.setattr(filestate, "RACY_NS", 0)  # long since written (its ctime is now)
    settled = read_disk(path)
    assert settled.digest is None and read_disk(path, settled) is settled


def test_the_note_goes_under_the_title_and_into_json() -> None:
    note = disk_note("shop/models.py", "changed")
    assert note == "the buffer of shop/models.py has unsaved changes and the file on disk differs"
    assert disk_note("shop/models.py", "deleted").endswith("the file on disk was deleted")
    data = {"hover": "`x`", "anchor": "shop/models.py:X", "path": "shop/models.py", "line": 1,
            "column": 1, "symbol": None, "text": "class X:", "name": "X", "server": "s",
            "partial": False, "notes": [note]}
    lines = render_data("hover", data).splitlines()
    assert lines[0] == "# Hover: `X` (shop/models.py:1)" and lines[2] == f"> Note: {note}."
    assert json.loads(render_json("hover", HoverReport.model_validate(data)))["notes"] == [note]


def test_a_change_of_metadata_alone_is_no_new_text(tmp_path: Path) -> None:
    """`chattr` moves a file's change time and tells the watcher nothing: with the same
    bytes it is no reason to doubt an edit; a rewrite whose mtime was put back still is."""
    from lsap_bridge.diskwatch import Basis, Seen
    from lsap_bridge.filestate import DiskStamp, Snapshot, content_hash

    old = DiskStamp(size=6, mtime_ns=1, ino=7, dev=1, mode=33188, uid=0, ctime_ns=10)
    touched = old._replace(ctime_ns=20)
    path = tmp_path / "a.py"
    basis = Basis(at_ns=15, seen={str(path): Seen(old, content_hash(b"x = 1\n"))}, watched=True)
    assert basis.doubt(path, Snapshot(touched, b"x = 1\n")) is None
    assert basis.doubt(path, Snapshot(touched, b"x = 2\n")) == "it changed on disk after the request began"
    unhashed = Basis(at_ns=15, seen={str(path): Seen(old, None)}, watched=True)
    assert unhashed.doubt(path, Snapshot(old._replace(ctime_ns=12), b"x = 2\n")) is None  # before: metadata
    assert unhashed.doubt(path, Snapshot(touched, b"x = 2\n")) is not None  # during the request: doubted
    assert Basis(at_ns=15, seen={str(path): Seen(old, None)}).doubt(path, Snapshot(touched, b"x")) is not None
