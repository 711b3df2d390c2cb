"""An agent's `format` in the human's Neovim (issue 27): a real Neovim with the plugin as a
user has it (the remote plugin, the socket), basedpyright and `ruff server`. The human has
the file open (`:edit`), it changes on disk and the human reloads it (`:edit`), then the
agent formats it: the answer says what was written, and its diagnostics after are the
servers' on that text, as a fresh `diagnostics` call gives them."""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.client import Connection

from .human import HumanNvim, register_remote_plugin

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MESSY = "import os\n\n\n\n\ndef f( x ):\n    return undefined_name + os.sep + x\n"
EDITED = MESSY + "\n\n\n\ndef g( y ):\n    return y\n"
FORMATTED = ("import os\n\n\ndef f(x):\n    return undefined_name + os.sep + x\n\n\n"
             "def g(y):\n    return y\n")


@pytest.fixture(scope="module")
def human(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HumanNvim]:
    env = register_remote_plugin(tmp_path_factory.mktemp("rplugin"))
    project = tmp_path_factory.mktemp("reports") / "shop"
    shutil.copytree(ROOT / "examples" / "shop", project)
    editor = HumanNvim(project, env, ["basedpyright", "ruff"])
    yield editor
    editor.close()


def ask(human: HumanNvim, request: dict[str, Any]) -> dict[str, Any]:
    with Connection(human.session.socket, name="claude") as conn:
        answer: dict[str, Any] = conn.call("request", {"request": {**request, "format": "json"}})
    assert answer["ok"], answer["text"][:2000]
    report: dict[str, Any] = json.loads(answer["text"])
    return report


def rows(items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((d["line"], d["column"], d["severity"], d["code"], d["message"]) for d in items)


def settled(human: HumanNvim, name: str) -> list[tuple[Any, ...]]:
    """The file's diagnostics from fresh `diagnostics` calls, once two in a row agree."""
    def look() -> list[tuple[Any, ...]]:
        report = ask(human, {"mode": "diagnostics", "file_path": name})
        assert not report["pending"], report["pending"]
        return rows([d for g in report["groups"] for d in g["diagnostics"]])

    last, deadline = look(), time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(1.0)
        again = look()
        if again == last:
            return again
        last = again
    raise AssertionError(f"the diagnostics of {name} did not settle: {last}")


@pytest.mark.parametrize("trial", range(3))
def test_a_format_after_edit_and_a_disk_change_answers_what_it_wrote(human: HumanNvim, trial: int) -> None:
    name = f"shop/reloaded{trial}.py"
    path = human.root / name
    path.write_text(MESSY)
    human.nvim.command(f"edit {name}")
    time.sleep(1.0)  # the servers have the file open
    path.write_text(EDITED)  # another program changes it; the human reloads it
    human.nvim.command("edit")
    started = time.monotonic()
    report = ask(human, {"mode": "format", "file_path": name})
    took = time.monotonic() - started
    assert path.read_text() == FORMATTED
    assert [(c["path"], c["added"], c["removed"]) for c in report["changed"]] == [(name, 2, 6)], report
    assert human.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == FORMATTED.splitlines()
    assert not human.lua("return vim.bo.modified")
    shown = rows(report["diagnostics"])
    assert not report["pending"] and report["diagnostics_total"] == len(shown), report
    # basedpyright's, on the text written (the undefined name moved up two lines), and ruff's.
    assert any(code == "reportUndefinedVariable" and line == 5 for line, _c, _s, code, _m in shown), shown
    assert shown == settled(human, name)
    print(f"format answered in {took:.2f} s")


def test_a_request_neovim_cancels_is_sent_again(human: HumanNvim) -> None:
    """The cause of the `timeout` after a format in the human's Neovim: when a shown buffer
    changes, Neovim's own pull refresh cancels every pending `textDocument/diagnostic` of
    that buffer, the bridge's too, and drops the server's answer (RequestCancelled): the
    bridge's request waited for good. It is sent again now."""
    path = human.root / "shop" / "pulled.pyx"
    path.write_text("x = 1\n")
    human.nvim.command(f"edit {path}")
    human.lua("vim.lsp.start({name = 'pull', cmd = {...}, root_dir = vim.fn.getcwd()})",
              sys.executable, str(Path(__file__).with_name("pull_server.py")), "1.0")
    # While the bridge's pull waits for the server (1 s), the human types in that buffer.
    human.lua("vim.defer_fn(function() vim.api.nvim_buf_set_lines(0, 0, 0, false, {'# typed'}) end, 400)")
    started = time.monotonic()
    with Connection(human.session.socket, name="claude") as conn:
        answer = conn.call("request", {"request": {"mode": "diagnostics", "file_path": "shop/pulled.pyx"},
                                       "timeout": 15})
    took = time.monotonic() - started
    assert answer["ok"], answer["text"][:2000]
    assert "pulled" in answer["text"], answer["text"]
    assert took < 10, took
    print(f"diagnostics answered in {took:.2f} s")
