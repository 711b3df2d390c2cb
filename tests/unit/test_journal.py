"""The edit journal (lsap_bridge/journal.py) across crashes, and the disk side of the edit
engine: a process applying an edit is killed (it exits without a word) after each step in
turn, and the next start finds every file wholly old, or wholly new once committed; the
new bytes keep everything of a file the edit did not touch."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.decode import text_edits
from lsap_bridge.edits.files import unwritable
from lsap_bridge.edits.text import decoded, splice
from lsap_bridge.filestate import snapshot
from lsap_bridge.journal import RECORD, Change, Journal, recover

OLD = {"a.py": "class Product:\n    pass\n", "b.py": "from a import Product\n", "gone.py": "x = 1\n"}
NEW = {"a.py": "class Item:\n    pass\n", "b.py": "from a import Item\n", "c.py": "from a import Item\n"}

# Applies the edit of `NEW` to `root` in a child process as the bridge does: the journal
# is prepared; with `commit`, it is marked committed and `switched` files are switched
# (renamed in; `partial`: a.py, rewritten in place, is left half written), then the child
# stops dead: `os._exit` runs no clean-up, like a SIGKILL.
CHILD = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from lsap_bridge.journal import Change, Journal
    from lsap_bridge.filestate import content_hash
    root, journals, switched = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    commit, partial = sys.argv[4] == "1", sys.argv[5] == "1"
    def digest(name):
        path = root / name
        return content_hash(path.read_bytes()) if path.exists() else None
    changes = [Change(root / "a.py", b"class Item:\\n    pass\\n", digest("a.py"), in_place=partial),
               Change(root / "b.py", b"from a import Item\\n", digest("b.py")),
               Change(root / "c.py", b"from a import Item\\n", None),
               Change(root / "gone.py", None, digest("gone.py"))]
    journal = Journal.prepare(journals, "rename Product → Item", changes, [root])
    if commit:
        journal.marker.touch()
    if partial:
        (root / "a.py").write_bytes(b"class It")
    for entry in journal.entries[:switched]:
        if entry.temp:
            os.rename(entry.temp, entry.path)
        else:
            os.unlink(entry.path)
    os._exit(0)
""")


def project(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in OLD.items():
        (root / name).write_text(text)
    return root, tmp_path / "state" / "journal"


def digest(path: Path) -> str:
    found = snapshot(path)
    assert found is not None
    return found.digest


def files(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(root.iterdir())}


def crash(root: Path, journals: Path, switched: int = 0, commit: bool = False,
          partial: bool = False) -> None:
    subprocess.run([sys.executable, "-c", CHILD, str(root), str(journals), str(switched),
                    "1" if commit else "0", "1" if partial else "0"], check=True, timeout=60,
                   cwd=Path(__file__).resolve().parents[2])


def settled_once(journals: Path) -> Any:
    [recovery] = recover(journals, [journals.parent.parent / 'ws'])
    assert not list(journals.glob("*.json")) and not list(journals.glob("*.committed"))
    assert recover(journals, [journals.parent.parent / 'ws']) == []
    return recovery


def test_a_crash_before_the_commit_changes_nothing(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    crash(root, journals)
    assert list(journals.glob("*.json")), "the journal outlives the crash"
    recovery = settled_once(journals)
    assert recovery.outcome == "rolled back" and recovery.problems == []
    assert files(root) == OLD  # no new content, no backup left beside the files
    assert "was rolled back: no file had been changed" in (journals / RECORD).read_text()


@pytest.mark.parametrize("switched", range(5))
def test_a_crash_after_the_commit_is_completed_whole(tmp_path: Path, switched: int) -> None:
    root, journals = project(tmp_path)
    crash(root, journals, switched, commit=True)
    recovery = settled_once(journals)
    assert recovery.outcome == "completed" and recovery.problems == []
    assert files(root) == NEW
    assert "rename Product → Item, 4 files" in recovery.message
    assert "was completed: every file has its new content" in (journals / RECORD).read_text()


def test_a_file_neovim_was_writing_is_completed(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    crash(root, journals, 0, commit=True, partial=True)
    assert (root / "a.py").read_text() == "class It"
    assert settled_once(journals).problems == []
    assert files(root) == NEW


def test_a_file_changed_after_the_crash_is_left_alone(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    crash(root, journals, 1, commit=True)
    (root / "b.py").write_text("# someone else's\n")
    recovery = settled_once(journals)
    assert recovery.problems == [f"{root / 'b.py'} was changed by someone else since: left as it is"]
    assert files(root) == {**NEW, "b.py": "# someone else's\n"}


def test_a_switch_failing_part_way_is_rolled_back(tmp_path: Path) -> None:
    """While the service runs: a.py (rewritten in place) was half written and b.py renamed in
    when the switch failed; every file gets its old content back."""
    root, journals = project(tmp_path)
    a, b = root / "a.py", root / "b.py"
    journal = Journal.prepare(journals, "t", [
        Change(a, b"class Item:\n", digest(a), in_place=True),
        Change(b, b"from a import Item\n", digest(b)),
        Change(root / "c.py", b"new\n", None),
    ], [root])
    journal.marker.touch()
    a.write_bytes(b"class It")
    os.rename(journal.entries[1].temp or "", b)
    os.rename(journal.entries[2].temp or "", root / "c.py")
    assert journal.roll_back() == ([str(a), str(b), str(root / "c.py")], [])
    assert files(root) == OLD
    assert list(journals.iterdir()) == []


def test_a_journal_being_applied_is_not_settled_by_another_start(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    journal = Journal.prepare(journals, "t", [Change(root / "a.py", b"new\n", None)], [root])
    assert recover(journals, [journals.parent.parent / 'ws']) == []  # its lock is held: the edit is still going
    assert len(list(journals.glob("*.json"))) == 1
    journal.finish()
    assert list(journals.iterdir()) == []
    assert files(root) == OLD


def test_a_torn_journal_is_moved_aside(tmp_path: Path) -> None:
    """`prepare` renames a journal in once written and fsynced: a torn one is not ours."""
    root, journals = project(tmp_path)
    journals.mkdir(parents=True)
    (journals / "0123456789ab.json").write_text('{"id": "0123456789ab", "fil')
    assert recover(journals, [root]) == []
    assert [p.name.split(".json")[0] for p in (journals / "rejected").iterdir()] == ["0123456789ab"]
    assert files(root) == OLD


def crafted(journals: Path, edit_id: str, roots: list[str], files: list[dict[str, Any]]) -> Path:
    journals.mkdir(parents=True, exist_ok=True)
    path = journals / f"{edit_id}.json"
    path.write_text(json.dumps({"id": edit_id, "label": "crafted", "pid": 1, "started": 0.0,
                                "roots": roots, "files": files}))
    (journals / f"{edit_id}.committed").touch()
    return path


def test_a_crafted_journal_naming_a_file_outside_the_root_is_never_replayed(tmp_path: Path) -> None:
    """Committed, it would replace the file from its "new" content; uncommitted it would
    delete the files named as its temp and backup. Neither happens: it goes to rejected/,
    with a log line, and the session starts all the same."""
    root, journals = project(tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    decoy = tmp_path / ".precious.txt.lsap-aaaaaaaaaaaa.new"
    decoy.write_text("evil\n")
    entry = {"path": str(outside), "old": digest(outside), "new": "0" * 32, "temp": str(decoy),
             "backup": str(tmp_path / "other.txt"), "in_place": False}
    crafted(journals, "aaaaaaaaaaaa", [str(root)], [entry])
    # Its own root recorded as "/" (not a root at all), and a directory named like a journal.
    crafted(journals, "bbbbbbbbbbbb", ["/"], [{**entry, "temp": None, "new": None}])
    (journals / "x.json").mkdir()
    # Names that are not its own siblings: a temp elsewhere in the root.
    inner = root / "a.py"
    crafted(journals, "cccccccccccc", [str(root)], [{**entry, "path": str(inner), "old": digest(inner),
                                                    "temp": str(root / "b.py"), "backup": None}])
    assert recover(journals, [root]) == []
    assert outside.read_text() == "keep me\n" and decoy.read_text() == "evil\n"
    assert files(root) == OLD
    rejected = sorted(p.name.split(".json")[0] for p in (journals / "rejected").iterdir())
    assert rejected == ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc", "x"]
    assert not list(journals.glob("*.json"))


def test_a_journal_of_another_workspace_waits_for_its_session(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.py").write_text("old\n")
    journal = Journal.prepare(journals, "theirs", [Change(other / "a.py", b"new\n",
                                                          digest(other / "a.py"))], [other])
    journal.marker.touch()
    os.close(journal._fd)  # their session crashed
    assert recover(journals, [root]) == []
    assert (other / "a.py").read_text() == "old\n" and journal.path.exists()
    [recovery] = recover(journals, [other])
    assert recovery.outcome == "completed" and (other / "a.py").read_text() == "new\n"


def test_the_journal_is_this_users_alone(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    journals.mkdir(parents=True, mode=0o755)
    os.chmod(journals, 0o755)
    journal = Journal.prepare(journals, "t", [Change(root / "c.py", b"new\n", None)], [root])
    assert stat.S_IMODE(os.stat(journals).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(journal.path).st_mode) == 0o600
    journal.finish()


def test_new_contents_keep_the_mode_and_the_old_one_is_kept(tmp_path: Path) -> None:
    root, journals = project(tmp_path)
    a, b = root / "a.py", root / "b.py"
    a.chmod(0o640)
    before = os.stat(a)
    journal = Journal.prepare(journals, "t", [Change(a, b"new\n", digest(a)),
                                              Change(b, b"new\n", digest(b), in_place=True)],
                              [root])
    linked, copied = journal.entries
    assert linked.temp and linked.backup and copied.backup
    assert os.stat(linked.temp).st_mode & 0o777 == 0o640
    assert os.stat(linked.backup).st_ino == before.st_ino  # a hard link: the old file itself
    # Rewritten in place, b.py needs a copy: the inode itself is overwritten.
    assert os.stat(copied.backup).st_ino != os.stat(b).st_ino
    journal.finish()
    assert files(root) == OLD


# -- the disk's text -----------------------------------------------------------------------


def rng(sl: int, sc: int, el: int, ec: int) -> dict[str, Any]:
    return {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}}


def rewrite(data: bytes, edits: list[dict[str, Any]], tmp_path: Path) -> bytes:
    """A file's bytes after the edits, as the edit engine writes them."""
    path = tmp_path / "f.py"
    path.write_bytes(data)
    disk = snapshot(path)
    assert disk is not None
    lines, breaks, bom = decoded(disk, "f.py")
    spliced = splice(lines, text_edits(edits), "utf-16", "f.py", breaks)
    assert spliced.breaks is not None
    return bom + "".join(a + b for a, b in zip(spliced.lines, spliced.breaks, strict=True)).encode()


@pytest.mark.parametrize(
    ("data", "edits", "expected"),
    [
        # CRLF stays CRLF, in the new line too.
        (b"a = 1\r\nb = 2\r\n", [{"range": rng(1, 0, 1, 0), "newText": "x = 0\n"}],
         b"a = 1\r\nx = 0\r\nb = 2\r\n"),
        # No final newline: none is added.
        (b"a = 1\nb = Product", [{"range": rng(1, 4, 1, 11), "newText": "Item"}], b"a = 1\nb = Item"),
        # Mixed line ends: the untouched ones are kept as they are.
        (b"a\r\nb\nc\r\n", [{"range": rng(1, 0, 1, 1), "newText": "B"}], b"a\r\nB\nc\r\n"),
        # A byte-order mark stays.
        (b"\xef\xbb\xbfa = 1\n", [{"range": rng(0, 0, 0, 1), "newText": "z"}], b"\xef\xbb\xbfz = 1\n"),
        # Appending after the final newline.
        (b"a\n", [{"range": rng(1, 0, 1, 0), "newText": "b\n"}], b"a\nb\n"),
        # A file of one empty line keeps it below the new first line.
        (b"\n", [{"range": rng(0, 0, 0, 0), "newText": "x\n"}], b"x\n\n"),
        # An empty file gets its first line, with a final newline, given or not.
        (b"", [{"range": rng(0, 0, 0, 0), "newText": "FEE = 2\n"}], b"FEE = 2\n"),
        (b"", [{"range": rng(0, 0, 0, 0), "newText": "a\nb"}], b"a\nb\n"),
    ],
)
def test_the_disk_text_is_rewritten_only_where_edited(
    tmp_path: Path, data: bytes, edits: list[dict[str, Any]], expected: bytes
) -> None:
    assert rewrite(data, edits, tmp_path) == expected


def test_what_may_not_be_replaced(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("x\n")
    assert unwritable(path) is None
    path.chmod(0o444)  # read-only, for root too
    assert unwritable(path) == "it is read-only (mode 0444)"
    path.chmod(0o644)
    os.link(path, tmp_path / "other.py")
    assert unwritable(path) == "it has 2 hard links, which would keep the old content"
    assert unwritable(tmp_path / "new" / "g.py") is None  # a new file in a writable tree
