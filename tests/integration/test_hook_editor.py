"""`lsap hook` (issue 45) with the human's Neovim running (under tmux, the plugin installed
as documented, basedpyright): a Claude Code Edit that breaks two callers is told to the agent
with the callers' file and line, its lines get the agent's signs in the editor, `:Lsap
changes` lists it with the harness and the tool, and `undo` takes it back byte for byte,
buffer and disk, its signs gone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pynvim
import pytest

from .nvim_home import wait_for
from .test_presence import MARKS, editor
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

PRICE = "    price: float\n"
STOCK = "    price: float\n    stock: int\n"


@pytest.fixture
def human(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    yield from editor(tmp_path, "{}")


def hook(project: Path, socket: str, event: str, tool_input: dict[str, str]) -> str:
    """`lsap hook` as Claude Code runs it (its documented payload on stdin)."""
    payload = {"session_id": "3f2a9c1e-9d41-4b0e-8a55-0c7c1c2f6e10", "transcript_path": str(project / "t.jsonl"),
               "cwd": str(project), "permission_mode": "default", "hook_event_name": event, "tool_name": "Edit",
               "tool_input": tool_input, "tool_use_id": "toolu_01ABC"}
    if event == "PostToolUse":
        payload["tool_response"] = {"filePath": tool_input["file_path"], "success": True}
    runtime = str(Path(socket).parent.parent)
    done = subprocess.run([sys.executable, "-m", "lsap_bridge", "hook"], cwd=project, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "XDG_RUNTIME_DIR": runtime})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_claude_code_edit_is_told_signed_listed_and_undone(
        human: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = human
    term.wait("class Product:", 30)
    path = project / "shop" / "models.py"
    original = path.read_bytes()
    tool_input = {"file_path": str(path), "old_string": PRICE, "new_string": STOCK, "replace_all": "false"}
    assert hook(project, socket, "PreToolUse", tool_input) == ""
    path.write_text(path.read_text().replace(PRICE, STOCK, 1))  # the Edit tool
    told = json.loads(hook(project, socket, "PostToolUse", tool_input))["hookSpecificOutput"]["additionalContext"]
    assert "shop/catalog.py:5:" in told and "shop/catalog.py:6:" in told, told

    stock = path.read_text().splitlines().index("    stock: int")
    signs = wait_for(lambda: [m for m in nvim.exec_lua(MARKS, str(path)) if m[2]], 5, "signs")
    assert [m[0] for m in signs] == [stock]
    nvim.command("Lsap changes")
    listing = wait_for(lambda: "\n".join(nvim.exec_lua(
        "local b = vim.fn.bufnr('lsap://report'); return b > 0 and "
        "vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}")), 30, "the changes report")
    assert "claude-code 3f2a" in listing and "Edit shop/models.py" in listing, listing

    runtime = str(Path(socket).parent.parent)
    undone = subprocess.run([sys.executable, "-m", "lsap_bridge", "undo"], cwd=project, capture_output=True,
                            text=True, timeout=60, env={**os.environ, "XDG_RUNTIME_DIR": runtime})
    assert undone.returncode == 0, undone.stdout
    assert path.read_bytes() == original
    assert nvim.exec_lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(path)) == \
        original.decode().splitlines()
    wait_for(lambda: [m for m in nvim.exec_lua(MARKS, str(path)) if m[2]] == [], 5, "the signs gone")


def test_an_edit_under_the_humans_unsaved_text_is_kept_apart_and_undo_leaves_that_text(
        human: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    """The human types in models.py without saving; the agent's tool edits the file on disk.
    The change set holds the disk's texts, the buffer keeps the human's, and `undo` is a
    conflict naming the file: nothing of the human's is lost."""
    term, nvim, project, socket = human
    term.wait("class Product:", 30)
    path = project / "shop" / "models.py"
    nvim.exec_lua("vim.api.nvim_buf_set_lines(vim.fn.bufnr(...), 0, 0, false, {'# the human, unsaved'})", str(path))
    typed = nvim.exec_lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(path))
    tool_input = {"file_path": str(path), "old_string": PRICE, "new_string": STOCK, "replace_all": "false"}
    hook(project, socket, "PreToolUse", tool_input)
    path.write_text(path.read_text().replace(PRICE, STOCK, 1))
    hook(project, socket, "PostToolUse", tool_input)
    agents = path.read_bytes()

    runtime = str(Path(socket).parent.parent)
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    review = subprocess.run([sys.executable, "-m", "lsap_bridge", "review", "1"], cwd=project, capture_output=True,
                            text=True, timeout=60, env=env)
    assert "+    stock: int" in review.stdout and "the human, unsaved" not in review.stdout, review.stdout
    undone = subprocess.run([sys.executable, "-m", "lsap_bridge", "undo"], cwd=project, capture_output=True,
                            text=True, timeout=60, env=env)
    assert undone.returncode != 0 and "conflict" in undone.stdout and "shop/models.py" in undone.stdout, undone.stdout
    assert path.read_bytes() == agents
    assert nvim.exec_lua("return vim.api.nvim_buf_get_lines(vim.fn.bufnr(...), 0, -1, false)", str(path)) == typed
