"""A buffer's edit rebased onto its file's disk text (`edits.plan._rebased`), which lacks the
human's unsaved changes: shared lines move, the human's lines refuse the whole edit; and a
whole-file rename that changes the name alone (`edits.names._renamed`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from lsap_bridge.edits.files import Disk, File
from lsap_bridge.edits.names import _renamed
from lsap_bridge.edits.plan import Plan, _rebased
from lsap_bridge.edits.switch import _changes
from lsap_bridge.edits.text import decoded
from lsap_bridge.errors import LsapError
from lsap_bridge.filestate import snapshot
from lsap_bridge.position import Document


def edit(line: int, start: int, end: int, text: str, end_line: int | None = None) -> types.TextEdit:
    return types.TextEdit(types.Range(types.Position(line, start),
                                      types.Position(line if end_line is None else end_line, end)), text)


DISK = ["from .models import Product", "", "A = Product(1)", "B = Product(2)"]
HUMAN = ["# typed, not saved", *DISK]  # the human's line on top


def test_shared_lines_move_past_the_humans_line() -> None:
    edits = [edit(1, 20, 27, "Item"), edit(3, 4, 11, "Item"), edit(4, 4, 11, "Item")]
    moved = _rebased(HUMAN, DISK, edits, "m.py", "Product")
    assert [e.range.start.line for e in moved] == [0, 2, 3]
    assert [(e.range.start.character, e.range.end.character) for e in moved] == \
        [(20, 27), (4, 11), (4, 11)]


def test_an_edit_after_the_last_line_stays_after_it() -> None:
    [moved] = _rebased(HUMAN, DISK, [edit(5, 0, 0, "C = 3\n")], "m.py", None)
    assert moved.range.start.line == len(DISK) == moved.range.end.line


def test_an_edit_of_a_line_the_human_changed_is_refused() -> None:
    buffer = [*DISK[:2], "A = Product(10)", DISK[3]]
    with pytest.raises(LsapError, match="touches lines with unsaved changes"):
        _rebased(buffer, DISK, [edit(2, 4, 11, "Item")], "m.py", "Product")


def test_an_edit_across_a_line_the_human_added_is_refused() -> None:
    buffer = [*DISK[:3], "# typed", DISK[3]]
    with pytest.raises(LsapError, match="touches lines with unsaved changes"):
        _rebased(buffer, DISK, [edit(2, 0, 5, "", end_line=4)], "m.py", None)


def test_a_use_only_the_disk_holds_refuses_the_rename() -> None:
    buffer = DISK[:3]  # the human deleted B's line, unsaved
    with pytest.raises(LsapError, match="holds `Product` at line 4"):
        _rebased(buffer, DISK, [edit(0, 20, 27, "Item")], "m.py", "Product")


def test_the_disk_side_is_journalled_as_new_content_renamed_in(tmp_path: Path) -> None:
    """Crash recovery completes it like any file no buffer holds (tests/unit/test_journal.py):
    the disk's text with the edit, never the buffer's (the human's line)."""
    path = tmp_path / "m.py"
    path.write_text("\n".join(DISK) + "\n")
    disk = snapshot(path)
    assert disk is not None
    renamed = [line.replace("Product", "Item") for line in DISK]
    buffer = Document(path, HUMAN, "tick:7", bufnr=3, modified=True)
    file = File(path, disk, buffer, ["# typed, not saved", *renamed], None,
                 under=Disk(renamed, *decoded(disk, "m.py")[1:]))
    [change] = _changes(Plan([file], [], []))
    assert change.new == ("\n".join(renamed) + "\n").encode()
    assert change.old == disk.digest and not change.in_place


@pytest.mark.parametrize(("old", "new", "renamed"), [
    ("x = Gizmo0()  # a Gizmo0\n", "x = Gizmo1()  # a Gizmo0\n", True),  # the comment left alone
    ("def f() -> Gizmo0:\n    return Gizmo0()\n", "def f() -> Gizmo1:\n    return Gizmo1()\n", True),
    ("def f() -> Gizmo0:\n    # a writer's line\n    return Gizmo0()\n",
     "def f() -> Gizmo1:\n    return Gizmo1()\n", False),  # a line reverted beside the name
    ("Gizmo00 = Gizmo0\n", "Gizmo10 = Gizmo1\n", False),  # not a token of the name
])
def test_a_whole_file_rename_changes_the_name_alone(old: str, new: str, renamed: bool) -> None:
    assert _renamed(old, new, "Gizmo0", "Gizmo1") is renamed


def test_whole_lines_right_above_the_humans_line_are_edited_on_disk_too() -> None:
    """An undo of a merged disk change's hunk (issue 46): the line below it is the human's."""
    buffer = [*DISK[:3], "# typed, not saved", DISK[3]]
    [moved] = _rebased(buffer, DISK, [edit(2, 0, 0, "A = Product(10)\n", end_line=3)], "m.py", None)
    assert (moved.range.start.line, moved.range.end.line) == (2, 3)
    [put] = _rebased(buffer, DISK, [edit(3, 0, 0, "Z = 0\n")], "m.py", None)  # in after line 3
    assert (put.range.start.line, put.range.end.line) == (3, 3)
    with pytest.raises(LsapError, match="touches lines with unsaved changes"):  # into the human's line
        _rebased(buffer, DISK, [edit(2, 0, 3, "", end_line=3)], "m.py", None)
