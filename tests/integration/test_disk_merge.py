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


def notes_in_a_project(tmp_path: Path) -> Path:
    """project/notes.txt, of twelve lines."""
    project = tmp_path / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text("\n".join(LINES) + "\n")
    return notes


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path]]:
    """Neovim on notes.txt (twelve lines) in a terminal, lsap set up (no agent socket)."""
    notes = notes_in_a_project(tmp_path)
    home = make_home(tmp_path / "home", setup="{ socket = false }")
    address = str(home.base.parent / "nvim.sock")
    term = Terminal(home, notes.parent, home.nvim, "--listen", address, "notes.txt")
    nvim = attach(address)
    try:
        term.wait("line 12", 30)
        yield term, nvim, notes
    finally:
        nvim.close()
        term.close()


def buffer(nvim: pynvim.Nvim) -> list[str]:
    return list(nvim.current.buffer[:])


def typed_then_changed_on_disk(editor: tuple[Terminal, pynvim.Nvim, Path], keys: tuple[str, ...], text: str,
                               row: int, theirs: list[str], look: bool = True) -> None:
    """The human types `text` after `keys` (line `row` then ends with it, unsaved); another
    process (an agent's own tool) then writes `theirs`; with `look`, Neovim looks
    (`:checktime`, as on focus)."""
    term, nvim, notes = editor
    term.keys(*keys)
    term.keys("-l", text)
    term.keys("Escape")
    wait_for(lambda: buffer(nvim)[row].endswith(text.strip()), 10, "the human's text")
    notes.write_text("\n".join(theirs) + "\n")
    if look:
        term.keys(":checktime", "Enter")


def written_without_a_prompt(editor: tuple[Terminal, pynvim.Nvim, Path], lines: list[str]) -> None:
    term, nvim, notes = editor
    term.keys(":w", "Enter")
    wait_for(lambda: nvim.eval("&modified") == 0, 20, "the buffer written")
    assert "changed since reading" not in term.screen()
    assert notes.read_text() == "\n".join(lines) + "\n"  # nothing of either side lost


def test_the_disk_changes_join_the_unsaved_text_and_w_writes_both(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, _ = editor
    # One line edited on disk and one appended, far from the human's.
    theirs = [*LINES[:9], "line 10, edited on disk", *LINES[10:], "line 13, appended on disk"]
    typed_then_changed_on_disk(editor, ("g", "g", "O"), "# mine, unsaved", 0, theirs)
    both = ["# mine, unsaved", *theirs]
    wait_for(lambda: buffer(nvim) == both, 20, "the disk's changes in the buffer")
    assert nvim.eval("&modified") == 1  # still the human's to save
    written_without_a_prompt(editor, both)
    term.keys("u")  # the merge is one undo step of its own
    wait_for(lambda: buffer(nvim) == ["# mine, unsaved", *LINES], 10, "the merge undone")


def test_an_overlapping_disk_change_is_a_conflict_kept_mine_until_decided(
        editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, _ = editor
    theirs = [*LINES[:2], "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    typed_then_changed_on_disk(editor, ("3", "G", "A"), " (mine)", 2, theirs)
    term.wait("conflict with the disk", 20)
    term.wait("disk │ line 3 (theirs)", 5)
    assert buffer(nvim) == ["line 1", "line 2", "line 3 (mine)", *LINES[3:], "line 13, appended on disk"]
    term.keys("3", "G", "c", "b")  # both: mine, then theirs
    both = ["line 1", "line 2", "line 3 (mine)", "line 3 (theirs)", *LINES[3:], "line 13, appended on disk"]
    wait_for(lambda: buffer(nvim) == both, 10, "the conflict decided: both")
    written_without_a_prompt(editor, both)


def test_w_right_after_the_disk_change_merges_first(editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    # Nothing looks at the disk between its change and the :w.
    typed_then_changed_on_disk(editor, ("6", "G", "o"), "# mine, unsaved", 6, ["# added on disk", *LINES], look=False)
    written_without_a_prompt(editor, ["# added on disk", *LINES[:6], "# mine, unsaved", *LINES[6:]])
