"""The inline review (issue 46) of a change recorded by the harness hooks (issue 45): a Claude
Code Edit told to `lsap hook` (its PreToolUse and PostToolUse payloads) writes two hunks in
the file the human has open; the human adds an unsaved line, then `:Lsap review <id>` shows
the hunks in the buffer, walks them and decides them with the review's keys. Neovim under tmux
with the plugin installed as documented and basedpyright; an RPC channel only looks."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsap_bridge.client import Connection

from .nvim_home import wait_for
from .test_hook_editor import hook
from .test_inline_review import MINE, hunks, signed
from .test_presence import editor
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

# One Edit, two hunks: a field added (lines only added), a docstring reworded (a line replaced).
HEAD = '    price: float\n\n    def discounted(self, percent: float) -> "Product":\n        """A copy of this product'
OLD = HEAD + ' at a lower price."""\n'
NEW = HEAD.replace("float\n", "float\n    stock: int = 0\n") + ', cheaper."""\n'


@pytest.fixture
def human(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    yield from editor(tmp_path, "{ report = { focus = false } }")


def newest_change(socket: str) -> dict[str, Any]:
    """The newest change set, as `changes` lists it."""
    with Connection(socket, name="claude") as conn:
        answer = conn.call("request", {"request": {"mode": "changes", "format": "json"}})
    assert answer["ok"], answer
    found: dict[str, Any] = json.loads(answer["text"])["changes"][0]
    return found


def test_a_hook_recorded_edit_is_reviewed_hunk_by_hunk_in_the_buffer(
        human: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = human
    term.wait("class Product:", 30)
    path = project / "shop" / "models.py"
    original = path.read_text()
    tool_input = {"file_path": str(path), "old_string": OLD, "new_string": NEW, "replace_all": "false"}
    hook(project, socket, "PreToolUse", tool_input)
    path.write_text(original.replace(OLD, NEW, 1))  # the Edit tool
    hook(project, socket, "PostToolUse", tool_input)
    edited = path.read_text()
    change = newest_change(socket)
    assert change["who"].startswith("claude-code") and change["label"] == "Edit shop/models.py", change
    wait_for(lambda: nvim.exec_lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)",
                                   str(path)) == edited.splitlines(), 10, "the buffer on the tool's text")
    term.keys("g", "g", "O")
    term.keys("-l", MINE)
    term.keys("Escape")
    wait_for(lambda: nvim.current.buffer[0] == MINE, 10, "the human's line")

    term.keys(f":Lsap review {change['id']}", "Enter")
    term.wait("hunk 1 · 2 left", 60)  # the counter, on the hunk's line
    assert hunks(nvim, path) == [[1, 13], [2, 16]]  # below the human's line
    term.keys("g", "g", "]", "h")
    wait_for(lambda: nvim.current.window.cursor[0] == 13, 10, "the cursor on hunk 1")
    term.keys("]", "h")
    wait_for(lambda: nvim.current.window.cursor[0] == 16, 10, "the cursor on hunk 2")
    term.keys("\\", "r", "u")  # undo the docstring's hunk
    wait_for(lambda: hunks(nvim, path) == [[1, 13]], 60, "hunk 2 undone, hunk 1 left")
    reworded = edited.replace("this product, cheaper.", "this product at a lower price.")
    assert path.read_text() == reworded  # exactly that hunk, on disk
    assert nvim.current.buffer[:] == [MINE, *reworded.splitlines()]  # and in the buffer, the human's line kept
    assert nvim.eval("&modified") == 1  # the human's line stays theirs to save
    term.wait("hunk 1 · 1 left", 10)

    term.keys("\\", "r", "a")  # keep the rest of the change
    wait_for(lambda: hunks(nvim, path) == [], 60, "the change decided")
    assert signed(nvim, path) == [] and path.read_text() == reworded
    assert nvim.current.buffer[:] == [MINE, *reworded.splitlines()]
    assert nvim.exec_lua("return vim.fn.maparg(']h', 'n')") == ""  # the review's keys went with its marks
    assert nvim.exec_lua("return require('lsap.inline').review") is None  # the review is over
