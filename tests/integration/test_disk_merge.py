"""A file changed on disk under the human's unsaved text is merged, not fought over (issue 46,
item 3): in a real terminal, the human types unsaved lines while another process edits and
appends to the file; Neovim's own check (`:checktime`, as on focus) brings the disk's
changes into the buffer, and `:w` writes both sides without "changed since reading it". A
change to the lines the human changed is a conflict, the human's text kept until decided.
Neovim under tmux with the plugin installed as documented; an RPC channel only looks."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from .nvim_home import attach, make_home, wait_for
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

LINES = [f"line {n}" for n in range(1, 13)]


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path]]:
    """Neovim on notes.txt (twelve lines) in a terminal, lsap set up (no agent socket)."""
    project = tmp_path / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("\n".join(LINES) + "\n")
    home = make_home(tmp_path / "home", setup="{ socket = false }")
    address = str(home.base.parent / "nvim.sock")
    term = Terminal(home, project, home.nvim, "--listen", address, "notes.txt")
    nvim = attach(address)
    try:
        term.wait("line 12", 30)
        yield term, nvim, notes
    finally:
        nvim.close()
        term.close()


def buffer(nvim: pynvim.Nvim) -> list[str]:
    return list(nvim.current.buffer[:])


def test_the_disk_changes_join_the_unsaved_text_and_w_writes_both(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, notes = editor
    term.keys("g", "g", "O")
    term.keys("-l", "# mine, unsaved")
    term.keys("Escape")
    wait_for(lambda: buffer(nvim)[0] == "# mine, unsaved", 10, "the human's line")
    # Another process (an agent's own tool): one line edited, one appended, far from it.
    theirs = [*LINES[:9], "line 10, edited on disk", *LINES[10:], "line 13, appended on disk"]
    notes.write_text("\n".join(theirs) + "\n")
    term.keys(":checktime", "Enter")  # Neovim's own look at the disk (as on focus)
    both = ["# mine, unsaved", *theirs]
    wait_for(lambda: buffer(nvim) == both, 20, "the disk's changes in the buffer")
    assert nvim.eval("&modified") == 1  # still the human's to save
    term.keys(":w", "Enter")
    wait_for(lambda: nvim.eval("&modified") == 0, 20, "the buffer written")
    assert "changed since reading" not in term.screen()
    assert notes.read_text() == "\n".join(both) + "\n"  # nothing of either side lost
    term.keys("u")  # the merge is one undo step of its own
    wait_for(lambda: buffer(nvim) == ["# mine, unsaved", *LINES], 10, "the merge undone")


def test_an_overlapping_disk_change_is_a_conflict_kept_mine_until_decided(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, notes = editor
    term.keys("3", "G", "A")
    term.keys("-l", " (mine)")
    term.keys("Escape")
    wait_for(lambda: buffer(nvim)[2] == "line 3 (mine)", 10, "the human's edit")
    theirs = [*LINES[:2], "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    notes.write_text("\n".join(theirs) + "\n")
    term.keys(":checktime", "Enter")
    term.wait("conflict with the disk", 20)
    term.wait("disk │ line 3 (theirs)", 5)
    assert buffer(nvim) == ["line 1", "line 2", "line 3 (mine)", *LINES[3:], "line 13, appended on disk"]
    term.keys("3", "G", "c", "b")  # both: mine, then theirs
    both = ["line 1", "line 2", "line 3 (mine)", "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    wait_for(lambda: buffer(nvim) == both, 10, "the conflict decided: both")
    term.keys(":w", "Enter")
    wait_for(lambda: nvim.eval("&modified") == 0, 20, "the buffer written")
    assert "changed since reading" not in term.screen()
    assert notes.read_text() == "\n".join(both) + "\n"
