"""A two-step edit whose second step is refused reports each step as it went (issue 36):
`format` with `organize_imports` under `edit_policy = 'ask'`, the human accepting the
imports and refusing the format. A real Neovim with the service started through the remote
plugin, basedpyright and `ruff server`, an agent on the socket."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection

from .human import HumanNvim, register_remote_plugin
from .nvim_home import wait_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MESSY = "import sys\nimport os\n\n\ndef f( x ):\n    return os.sep + sys.platform + str(x)\n"


@pytest.fixture(scope="module")
def human(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HumanNvim]:
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    project = tmp_path_factory.mktemp("steps") / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    (project / "shop" / "messy.py").write_text(MESSY)
    editor = HumanNvim(project, env, ["basedpyright", "ruff"], {"edit_policy": "ask"})
    yield editor
    editor.close()


def answer_next(human: HumanNvim, key: str) -> str:
    """Wait for an edit to ask, answer it with `key`; its summary."""
    found: list[dict[str, str]] = []

    def asked() -> bool:
        found[:] = human.lua("return require('lsap.approval').waiting()")
        return len(found) == 1

    wait_for(asked, 60, "an edit waiting for the human")
    human.lua("require('lsap.approval').focus()")
    human.nvim.input(key)
    wait_for(lambda: human.lua("return #require('lsap.approval').waiting()") == 0, 10, "the answer taken")
    return found[0]["summary"]


def test_a_refused_second_step_reports_the_first_as_applied(human: HumanNvim) -> None:
    result: dict[str, Any] = {}

    def agent() -> None:
        with Connection(human.session.socket, name="claude") as conn:
            result.update(conn.call("request", {"request": {
                "mode": "format", "file_path": "shop/messy.py", "organize_imports": True}}))

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    first = answer_next(human, "a")  # the imports: yes
    second = answer_next(human, "r")  # the format: no
    thread.join(60)
    assert "organize" in first.lower() or "import" in first.lower(), first
    assert second.startswith("format"), second
    text = result["text"]
    assert result["ok"], text
    assert "> Partly done: the format was not applied (denied: " in text, text
    assert "the imports were organised" in text and "1 file changed" in text, text
    on_disk = (human.root / "shop" / "messy.py").read_text()
    assert on_disk.startswith("import os\nimport sys\n"), on_disk  # the first step, applied
    assert "def f( x ):" in on_disk  # the second, not
