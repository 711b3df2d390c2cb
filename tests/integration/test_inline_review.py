"""The inline review in a real terminal (issue 46): an agent's change of three hunks in two
files shown in the human's buffers, walked and decided with the review's keys while the
human has an unsaved line in one of them. Neovim under tmux with the plugin installed as
documented and basedpyright; an RPC channel only looks (it sends no keys)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsap_bridge.client import Connection
from tests.conftest import EXAMPLE

from .nvim_home import make_home, wait_for
from .test_terminal import Terminal, watched

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

TALLY = '''"""Tallies."""


class Tally:
    pass


first = Tally()
'''
COUNTING = '''"""Counting."""

from .tally import Tally as T

LIMIT = 3
'''
MINE = "# the human's unsaved line"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path]]:
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    (project / "shop" / "tally.py").write_text(TALLY)
    (project / "shop" / "counting.py").write_text(COUNTING)
    home = make_home(tmp_path / "home", setup="{ report = { focus = false } }")
    with watched(home, project, "shop/tally.py") as (term, nvim):
        yield term, nvim, project


def hunks(nvim: pynvim.Nvim, path: Path) -> list[list[int]]:
    """The hunks the buffer of `path` shows: [number, first row (1-based)]."""
    found: list[dict[str, int]] = nvim.exec_lua(
        "return require('lsap.inline').hunks(vim.fn.bufnr(...))", str(path))
    return [[h["number"], h["row"] + 1] for h in found]


def signed(nvim: pynvim.Nvim, path: Path) -> list[int]:
    lines: list[int] = nvim.exec_lua("return require('lsap.presence').signed(vim.fn.bufnr(...))", str(path))
    return lines


def test_a_change_is_reviewed_hunk_by_hunk_in_the_buffers(editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, project = editor
    tally, counting = project / "shop" / "tally.py", project / "shop" / "counting.py"
    term.wait("class Tally", 30)
    socket = f"{nvim.call('getenv', 'XDG_RUNTIME_DIR')}/lsap/nvim-{nvim.call('getpid')}.sock"
    wait_for(lambda: os.path.exists(socket), 60, "the agent socket")
    nvim.command(f"badd {counting}")
    nvim.exec_lua("vim.fn.bufload(vim.fn.bufnr(...))", str(counting))
    rename: dict[str, Any] = {"mode": "rename", "locate": "shop/tally.py@class <|>Tally", "new_name": "Count"}
    with Connection(socket, name="claude") as conn:
        assert conn.call("request", {"request": rename, "timeout": 120})["ok"]
    renamed = TALLY.replace("Tally:", "Count:").replace("Tally()", "Count()")
    assert tally.read_text() == renamed and "import Count as T" in counting.read_text()
    term.keys("g", "g", "O")
    term.keys("-l", MINE)
    term.keys("Escape")
    wait_for(lambda: nvim.current.buffer[0] == MINE, 10, "the human's line")

    term.keys(":Lsap review", "Enter")
    term.wait("hunk 1 · 3 left", 60)  # the counter, on the hunk's line
    assert hunks(nvim, tally) == [[1, 5], [2, 9]] and hunks(nvim, counting) == [[1, 3]]
    term.keys("g", "g", "]", "h")  # the next hunk: the class line
    wait_for(lambda: nvim.current.window.cursor[0] == 5, 10, "the cursor on hunk 1")
    term.keys("\\", "r", "u")  # undo that hunk
    wait_for(lambda: hunks(nvim, tally) == [[2, 9]], 60, "hunk 1 undone, hunk 2 keeping its number")
    expected = [MINE, *renamed.replace("class Count:", "class Tally:").splitlines()]
    assert nvim.current.buffer[:] == expected  # exactly that hunk, the human's line kept
    assert nvim.eval("&modified") == 1  # the human's line stays theirs to save
    assert "first = Count()" in tally.read_text()  # the other hunk stays on disk
    term.wait("hunk 2 · 2 left", 10)

    term.keys("]", "h")
    wait_for(lambda: nvim.current.window.cursor[0] == 9, 10, "the cursor on hunk 2")
    term.keys("\\", "r", "K")  # keep all of this file
    wait_for(lambda: hunks(nvim, tally) == [], 60, "the file's hunks decided")
    assert signed(nvim, tally) == [] and nvim.current.buffer[:] == expected
    assert nvim.exec_lua("return vim.fn.maparg(']h', 'n')") == ""  # the review's keys went with them

    term.keys(":edit shop/counting.py", "Enter")
    wait_for(lambda: hunks(nvim, counting) == [[1, 3]], 30, "the other file's hunk")
    term.keys("\\", "r", "U")  # undo all of this file
    wait_for(lambda: counting.read_text() == COUNTING, 60, "counting.py put back on disk")
    wait_for(lambda: nvim.current.buffer[:] == COUNTING.splitlines(), 10, "and in its buffer")
    assert hunks(nvim, counting) == [] and signed(nvim, counting) == []
    assert nvim.exec_lua("return require('lsap.inline').review") is None  # the review is over
