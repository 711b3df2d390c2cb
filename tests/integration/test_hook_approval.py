"""`lsap hook` under `edit_policy = 'ask'` (issue 45): a Claude Code PreToolUse Edit shows the
human the approval window the bridge's own edits get, with the diff from `tool_input`; `a`
answers the harness's permission `allow`, `r` `deny` with the reason; the file is untouched by
the hook either way. A real Neovim with the service through the remote plugin, basedpyright."""

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

import pytest

from .human import HumanNvim, register_remote_plugin
from .nvim_home import wait_for
from .test_approval import float_lines, waiting
from .test_hook_editor import PRICE, STOCK  # the one Edit the hook tests make

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def human(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HumanNvim]:
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    project = tmp_path_factory.mktemp("hook-ask") / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    editor = HumanNvim(project, env, ["basedpyright"], {"edit_policy": "ask"})
    yield editor
    editor.close()


class Hook(threading.Thread):
    """Claude Code running `lsap hook` for a PreToolUse Edit; `out` once it exited."""

    def __init__(self, project: Path, call: str) -> None:
        super().__init__(daemon=True)
        path = project / "shop" / "models.py"
        self.payload = json.dumps({
            "session_id": "a5c0ffee-0004", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Edit",
            "tool_input": {"file_path": str(path), "old_string": PRICE, "new_string": STOCK, "replace_all": False},
            "tool_use_id": call})
        self.project = project
        self.out: dict[str, Any] | None = None
        self.start()

    def run(self) -> None:
        done = subprocess.run([sys.executable, "-m", "lsap_bridge", "hook"], cwd=self.project, input=self.payload,
                              capture_output=True, text=True, timeout=120, env=os.environ)
        assert done.returncode == 0, done.stderr
        self.out = json.loads(done.stdout) if done.stdout else {}

    def decision(self) -> dict[str, Any]:
        self.join(60)
        assert self.out is not None, "the hook did not exit"
        out: dict[str, Any] = self.out["hookSpecificOutput"]
        assert out["hookEventName"] == "PreToolUse"
        return out


def test_the_human_allows_or_refuses_an_agents_own_edit_before_it_is_written(human: HumanNvim) -> None:
    models = human.root / "shop" / "models.py"
    original = models.read_bytes()
    human.nvim.command("only | enew!")
    allowed = Hook(human.root, "toolu_allow")
    [asked] = waiting(human, 1)
    assert asked["client"] == "claude-code a5c0" and asked["summary"] == "Edit shop/models.py"
    wait_for(lambda: human.lua("return #vim.tbl_filter(function(w) return vim.api.nvim_win_get_config(w).relative"
                               " ~= '' end, vim.api.nvim_list_wins())") == 1, 10, "the approval window")
    lines = float_lines(human)
    assert lines[0].startswith("claude-code a5c0 wants to Edit shop/models.py")
    assert "+    stock: int" in lines and "     price: float" in lines, lines  # the diff from tool_input
    human.lua("require('lsap.approval').focus()")
    human.nvim.input("a")
    assert allowed.decision() == {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                  "permissionDecisionReason": "the human approved it in Neovim"}
    assert models.read_bytes() == original  # the hook writes nothing: the tool does

    refused = Hook(human.root, "toolu_refuse")
    waiting(human, 1)
    human.lua("require('lsap.approval').focus()")
    human.nvim.input("r")
    decision = refused.decision()
    assert decision["permissionDecision"] == "deny"
    assert "the human refused the edit (Edit shop/models.py)" in decision["permissionDecisionReason"]
    assert models.read_bytes() == original

    human.lua("require('lsap').config.edit_policy = 'deny'")
    try:
        denied = Hook(human.root, "toolu_deny").decision()
        assert denied["permissionDecision"] == "deny" and "edit_policy denies" in denied["permissionDecisionReason"]
    finally:
        human.lua("require('lsap').config.edit_policy = 'ask'")
