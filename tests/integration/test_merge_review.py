"""A disk change merged into the human's unsaved buffer is a change set, reviewed inline like an
agent's (issue 46, item 3): in a real terminal, the human types an unsaved line while another
process edits and appends to the file; the merge brings both disk changes in, `:Lsap changes`
lists it, `:Lsap review <id>` shows its hunks in the buffer, and undoing one takes exactly that
disk change out of the file and the buffer, the human's lines kept (one typed right below the
merged line since). A disk change to the lines the human changed is listed and shown as a
conflict, decided in the buffer (not by the review's keys); the rest of the file's change is
then undone whole, and `:w` writes without a prompt, nothing of the human's lost.
Neovim under tmux with the plugin installed as documented; an RPC channel only looks."""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from .nvim_home import make_home, wait_for
from .test_disk_merge import LINES, buffer, notes_in_a_project, typed_then_changed_on_disk, written_without_a_prompt
from .test_inline_review import hunks
from .test_terminal import Terminal, watched

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

MINE = "# mine, unsaved"
BELOW = "# mine too, below the merged line"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path]]:
    """Neovim on notes.txt (twelve lines) in a terminal, lsap set up and its service running."""
    notes = notes_in_a_project(tmp_path)
    home = make_home(tmp_path / "home", setup="{ report = { focus = false } }")
    with watched(home, notes.parent, "notes.txt") as (term, nvim):
        term.wait("line 12", 30)
        socket = f"{nvim.call('getenv', 'XDG_RUNTIME_DIR')}/lsap/nvim-{nvim.call('getpid')}.sock"
        wait_for(lambda: os.path.exists(socket), 60, "the service (its agent socket)")
        yield term, nvim, notes


def listed(term: Terminal, nvim: pynvim.Nvim, what: str) -> str:
    """`:Lsap changes` typed (again while the merge's change set is not listed yet: the
    service records it as it answers the command); the id of the newest change set, once
    its row shows `what`."""
    typed = [0.0]

    def row() -> str | None:
        lines: list[str] = nvim.exec_lua("local b = vim.fn.bufnr('lsap://report'); return b > 0 and "
                                         "vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}")
        found = next((line for line in lines if line.startswith("- **")), "")
        if what in found:
            return found
        if time.monotonic() - typed[0] > 2:
            term.keys("Escape", ":Lsap changes", "Enter")
            typed[0] = time.monotonic()
        return None

    shown = wait_for(row, 60, f"a change set listed with {what!r}")
    assert "disk change merged into the unsaved buffer of notes.txt, made by another process" in shown, shown
    match = re.match(r"- \*\*(\d+)\*\*", shown)
    assert match, shown
    return match.group(1)


def test_a_merged_disk_change_is_listed_and_its_hunk_undone_inline(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, notes = editor
    theirs = [*LINES[:9], "line 10, edited on disk", *LINES[10:], "line 13, appended on disk"]
    typed_then_changed_on_disk(editor, ("g", "g", "O"), MINE, 0, theirs)
    wait_for(lambda: buffer(nvim) == [MINE, *theirs], 20, "the disk's changes in the buffer")

    change = listed(term, nvim, "applied")
    assert nvim.current.buffer.name == str(notes)  # the report did not take the cursor
    term.keys("1", "1", "G", "o")  # a second unsaved line, right below the merged one
    term.keys("-l", BELOW)
    term.keys("Escape")
    wait_for(lambda: buffer(nvim)[11] == BELOW, 10, "the human's second line")
    term.keys(f":Lsap review {change}", "Enter")
    term.wait("hunk 1 · 2 left", 60)  # the counter, on the merged line
    assert hunks(nvim, notes) == [[1, 11], [2, 15]]  # below the human's first line
    term.keys("g", "g", "]", "h")
    wait_for(lambda: nvim.current.window.cursor[0] == 11, 10, "the cursor on hunk 1")
    term.keys("\\", "r", "u")  # undo the disk's edit of line 10
    wait_for(lambda: hunks(nvim, notes) == [[2, 15]], 60, "hunk 1 undone, hunk 2 keeping its number")
    kept = [*LINES, "line 13, appended on disk"]
    # Exactly that change out of the buffer, the human's lines kept; and out of the file,
    # without them.
    assert buffer(nvim) == [MINE, *LINES[:10], BELOW, *kept[10:]]
    assert notes.read_text() == "\n".join(kept) + "\n"
    assert nvim.eval("&modified") == 1  # the human's lines stay theirs to save
    written_without_a_prompt(editor, [MINE, *LINES[:10], BELOW, *kept[10:]])


def test_an_overlapping_disk_change_is_listed_and_shown_as_a_conflict(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, notes = editor
    theirs = [*LINES[:2], "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    typed_then_changed_on_disk(editor, ("3", "G", "A"), " (mine)", 2, theirs)
    mine = ["line 1", "line 2", "line 3 (mine)", *LINES[3:], "line 13, appended on disk"]
    wait_for(lambda: buffer(nvim) == mine, 20, "the disk's append merged, the conflict left out")

    change = listed(term, nvim, "1 conflict with the unsaved text to decide in it")
    assert nvim.current.buffer.name == str(notes)
    term.keys(f":Lsap review {change}", "Enter")
    term.wait("a conflict with your unsaved text", 60)
    assert hunks(nvim, notes) == [[1, 3], [2, 13]]
    flags = nvim.exec_lua("return vim.tbl_map(function(h) return h.conflict == true end, "
                          "require('lsap.inline').hunks(vim.fn.bufnr(...)))", str(notes))
    assert flags == [True, False]
    term.keys("3", "G", "\\", "r", "u")  # the review's undo does not decide a conflict
    term.wait("hunk 1 is a conflict with your unsaved text", 10)
    assert buffer(nvim) == mine and notes.read_text() == "\n".join(theirs) + "\n"
    term.keys("c", "b")  # both: decided in the buffer, it leaves the review
    both = ["line 1", "line 2", "line 3 (mine)", "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    wait_for(lambda: hunks(nvim, notes) == [[2, 14]], 60, "the conflict decided, hunk 2 left")
    assert buffer(nvim) == both
    term.keys("\\", "r", "U")  # undo all of this file: the disk's append, out of the file and the buffer
    wait_for(lambda: buffer(nvim) == both[:-1], 60, "the append undone in the buffer")
    assert notes.read_text() == "\n".join(theirs[:-1]) + "\n"
    assert hunks(nvim, notes) == [] and nvim.eval("&modified") == 1
    written_without_a_prompt(editor, both[:-1])
