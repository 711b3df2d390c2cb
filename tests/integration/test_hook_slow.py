"""`lsap hook` (issue 45) against the human's Neovim whose only language server hangs (it
reports indexing that never ends and answers after 30 s: `slow_server.py`): the agent's
tool is never held, PreToolUse and PostToolUse exit 0 within the hook's bound, print
nothing, and the edit is still a change set."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .human import HumanNvim, register_remote_plugin

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SLOW = ROOT / "tests" / "integration" / "slow_server.py"
BOUND = 3  # LSAP_HOOK_TIMEOUT for these calls


@pytest.fixture(scope="module")
def human(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HumanNvim]:
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    project = tmp_path_factory.mktemp("hook-slow") / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    editor = HumanNvim(project, env, [])
    editor.lua("local python, server, root = ...;"
               "vim.lsp.config('slow', {cmd = {python, server, '30', '--indexing'}, filetypes = {'python'},"
               "  root_dir = root}); vim.lsp.enable('slow')", sys.executable, str(SLOW), str(project))
    yield editor
    editor.close()


def hook(project: Path, event: str) -> tuple[float, str]:
    path = project / "shop" / "models.py"
    payload = {"session_id": "510w0000", "transcript_path": str(project / "t.jsonl"), "cwd": str(project),
               "permission_mode": "default", "hook_event_name": event, "tool_name": "Write",
               "tool_input": {"file_path": str(path), "content": "X = 1\n"}, "tool_use_id": "toolu_slow"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "lsap_bridge", "hook"], cwd=project, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LSAP_HOOK_TIMEOUT": str(BOUND)})
    assert done.returncode == 0, done.stderr
    return time.monotonic() - started, done.stdout


def test_a_hanging_server_never_holds_the_agents_tool(human: HumanNvim) -> None:
    project = human.root
    path = project / "shop" / "models.py"
    took, said = hook(project, "PreToolUse")
    # Hang detection only: the bound is BOUND s; Python's start and exit add a second at most.
    assert took < BOUND * 5 and said == ""
    path.write_text("X = 1\n")
    took, said = hook(project, "PostToolUse")
    assert took < BOUND * 5 and said == ""
    listed = subprocess.run([sys.executable, "-m", "lsap_bridge", "changes"], cwd=project, capture_output=True,
                            text=True, timeout=60)
    assert "claude-code 510w" in listed.stdout and "Write shop/models.py" in listed.stdout, listed.stdout
