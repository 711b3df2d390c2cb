"""`lsap hook` under `edit_policy = 'ask'` on a real terminal (issue 45): Neovim under tmux
with the plugin installed as documented and basedpyright; Claude Code's PreToolUse for an
Edit puts the approval window on the human's screen with the diff from `tool_input`; the
human's `a` lets the tool run (`allow`), `r` stops it (`deny`, with the reason); the file
is never written by the hook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from .test_hook_editor import PRICE, STOCK  # the one Edit the hook tests make
from .test_presence import editor
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


@pytest.fixture
def asking(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    yield from editor(tmp_path, "{ edit_policy = 'ask' }")


def pre_tool_use(project: Path, socket: str, call: str, out: list[dict[str, Any]]) -> threading.Thread:
    """Claude Code running `lsap hook` before its Edit, in the background."""
    path = project / "shop" / "models.py"
    payload = json.dumps({
        "session_id": "7e2d0000-0005", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Edit",
        "tool_input": {"file_path": str(path), "old_string": PRICE, "new_string": STOCK, "replace_all": False},
        "tool_use_id": call})
    env = {**os.environ, "XDG_RUNTIME_DIR": str(Path(socket).parent.parent)}

    def run() -> None:
        done = subprocess.run([sys.executable, "-m", "lsap_bridge", "hook"], cwd=project, input=payload,
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout)["hookSpecificOutput"])

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_the_approval_window_shows_the_tools_diff_and_its_keys_answer_the_harness(
        asking: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, _nvim, project, socket = asking
    term.wait("class Product:", 30)
    models = project / "shop" / "models.py"
    original = models.read_bytes()
    out: list[dict[str, Any]] = []
    hook = pre_tool_use(project, socket, "toolu_a", out)
    screen = term.wait("claude-code 7e2d wants to Edit shop/models.py", 30)
    assert "+    stock: int" in term.wait("+    stock: int", 10), screen  # the diff, on the screen
    term.keys(":Lsap approval", "Enter")
    term.keys("a")
    hook.join(60)
    assert out == [{"hookEventName": "PreToolUse", "permissionDecision": "allow",
                    "permissionDecisionReason": "the human approved it in Neovim"}]
    assert models.read_bytes() == original

    hook = pre_tool_use(project, socket, "toolu_r", out)
    term.wait("claude-code 7e2d wants to Edit shop/models.py", 30)
    term.keys(":Lsap approval", "Enter")
    term.keys("r")
    hook.join(60)
    assert out[1]["permissionDecision"] == "deny"
    assert "the human refused the edit" in out[1]["permissionDecisionReason"]
    assert models.read_bytes() == original
