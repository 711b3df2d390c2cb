"""Pair presence in a real terminal: Neovim under tmux with the plugin installed as
documented and basedpyright, agents on its socket. An agent's `references` on a symbol in
the visible file puts a `lsap.presence` mark on that line within 200 ms, moving neither
the cursor, the view nor the jumplist; typing in Insert mode meanwhile lands unchanged; the
mark fades; an agent's rename signs the lines it wrote, and its undo takes the signs away;
`:Lsap agents` and `:Lsap follow` with two agents at work; `presence = false` shows none."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsap_bridge.client import Connection
from tests import stress
from tests.conftest import EXAMPLE

from .nvim_home import attach, make_home, wait_for
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

FADE_MS = 1500
MARKS = ("local ns = vim.api.nvim_get_namespaces()['lsap.presence']; "
         "local b = vim.fn.bufnr(...); if not ns or b < 0 then return {} end; "
         "return vim.tbl_map(function(m) return {m[2], m[4].virt_text and m[4].virt_text[1][1] or '', "
         "m[4].sign_text or ''} end, vim.api.nvim_buf_get_extmarks(b, ns, 0, -1, {details = true}))")
STATE = ("return {vim.api.nvim_win_get_cursor(0), vim.fn.winsaveview(), #vim.fn.getjumplist()[1], "
         "vim.api.nvim_get_current_win(), vim.api.nvim_get_mode().mode}")


def editor(tmp_path: Path, setup: str) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    home = make_home(tmp_path / "home", setup=setup)
    home.register()
    address = str(tmp_path / "nvim.sock")
    term = Terminal(home, project, home.nvim, "--listen", address, "shop/models.py")
    nvim = attach(address)
    socket = f"{nvim.call('getenv', 'XDG_RUNTIME_DIR')}/lsap/nvim-{nvim.call('getpid')}.sock"
    wait_for(lambda: os.path.exists(socket), 60, "the agent socket")
    with Connection(socket) as conn:  # basedpyright up and indexed (in a file not shown)
        assert conn.call("request", {"request": {"mode": "hover", "locate": "shop/catalog.py:find"}})["ok"]
    yield term, nvim, project, socket
    nvim.close()
    term.close()


@pytest.fixture
def present(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    yield from editor(tmp_path, f"{{ presence = {{ fade_ms = {FADE_MS} }} }}")


@pytest.fixture
def absent(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path, str]]:
    yield from editor(tmp_path, "{ presence = false }")


def references(socket: str, name: str = "claude") -> float:
    """An agent's references on Product; when its answer came (monotonic)."""
    with Connection(socket, name=name) as conn:
        answer = conn.call("request", {"request": {"mode": "references", "locate": "shop/models.py:Product"}})
    assert answer["ok"], answer
    return time.monotonic()


@pytest.mark.stress
def test_an_agents_look_is_marked_without_moving_anything(present: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = present
    models = str(project / "shop" / "models.py")
    term.wait("class Product:", 30)
    line = next(n for n, text in enumerate((project / "shop" / "models.py").read_text().splitlines())
                if text.startswith("class Product"))
    before = nvim.exec_lua(STATE)  # at the top, Product's line on the screen
    assert before[0] == [1, 0] and before[4] == "n"

    answered = references(socket)
    while not (marks := nvim.exec_lua(MARKS, models)) and time.monotonic() - answered < 2:
        time.sleep(0.01)
    seen = time.monotonic() - answered
    print(f"presence mark {seen * 1000:.0f} ms after the answer")
    stress.figure("presence mark after the answer", seen, at_most=0.2)
    assert marks == [[line, "◆ claude: references", ""]]
    assert nvim.exec_lua(STATE) == before  # cursor, view, jumplist, window, mode
    assert "◆ claude: references" in term.wait("◆ claude: references", 5)
    wait_for(lambda: nvim.exec_lua(MARKS, models) == [], FADE_MS / 1000 + 3, "the mark faded")

    # Typing in Insert mode while agents look lands unchanged.
    term.keys("g", "g", "O")
    typed = "the human keeps typing "
    stop = threading.Event()

    def agent() -> None:
        while not stop.is_set():
            references(socket)

    looking = threading.Thread(target=agent, daemon=True)
    looking.start()
    for _ in range(6):
        term.type(typed, 0.5)
        assert nvim.api.get_mode()["mode"] == "i"
    stop.set()
    looking.join(30)
    term.keys("Escape")
    assert nvim.current.buffer[0] == typed * 6
    assert nvim.current.buffer.name == models


def test_an_agents_rename_is_signed_until_undone(present: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = present
    models = str(project / "shop" / "models.py")
    term.wait("class Product:", 30)
    with Connection(socket, name="claude") as conn:
        renamed = conn.call("request", {"request": {"mode": "rename", "locate": "shop/models.py:Product",
                                                    "new_name": "Item", "format": "json"}})
        assert renamed["ok"], renamed
        signs = wait_for(lambda: [m for m in nvim.exec_lua(MARKS, models) if m[2]], 5, "signs")
        assert {m[2].strip() for m in signs} == {"▎"}
        lines = (project / "shop" / "models.py").read_text().splitlines()
        assert sorted(m[0] for m in signs) == [n for n, t in enumerate(lines) if "Item" in t]
        # `:Lsap log` links the change set: <CR> on its line opens the review.
        change = nvim.exec_lua("return require('lsap.presence').changes and vim.tbl_keys("
                               "require('lsap.presence').changes)[1]")
        log = wait_for(lambda: [line for line in nvim.exec_lua("return require('lsap.log').lines()")
                                if f"change {change}: rename Product → Item" in line], 5, "the log's line")
        assert f"review `:Lsap review {change}`" in log[0] and f"undo `:Lsap undo {change}`" in log[0]
        nvim.exec_lua("require('lsap.log').open(); vim.fn.search(...); "
                      "vim.api.nvim_feedkeys(vim.keycode('<CR>'), 'x', false)", f"change {change}:")
        review = wait_for(lambda: nvim.exec_lua(
            "local b = vim.fn.bufnr('lsap://report'); return b > 0 and "
            "vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] or ''").startswith(f"# Review {change}"),
            30, "the review")
        assert review
        undone = conn.call("request", {"request": {"mode": "undo"}})
        assert undone["ok"], undone
    wait_for(lambda: [m for m in nvim.exec_lua(MARKS, models) if m[2]] == [], 5, "the signs gone")


def test_agents_and_follow_with_two_agents_at_work(present: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = present
    term.wait("class Product:", 30)
    done: dict[str, Any] = {}

    def renamer() -> None:
        with Connection(socket, name="codex") as conn:
            done.update(conn.call("request", {"request": {
                "mode": "rename", "locate": "shop/checkout.py:receipt", "new_name": "print_receipt"}}))

    references(socket, "claude")
    nvim.command("Lsap follow claude")
    current = nvim.exec_lua("return vim.api.nvim_get_current_win()")
    follow = wait_for(lambda: nvim.exec_lua(
        "local f = require('lsap.presence').following; return f and f.win"), 10, "the follow window")
    assert follow != current
    working = threading.Thread(target=renamer, daemon=True)
    working.start()
    reading = Connection(socket, name="claude")  # still connected when the human looks
    assert reading.call("request", {"request": {"mode": "hover", "locate": "shop/catalog.py:find"}})["ok"]
    working.join(60)
    assert done.get("ok"), done
    catalog = str(project / "shop" / "catalog.py")
    wait_for(lambda: nvim.exec_lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", follow)
             == catalog, 10, "the follow window on catalog.py")
    find_line = next(n for n, t in enumerate(Path(catalog).read_text().splitlines(), 1) if t.startswith("def find"))
    assert nvim.exec_lua("return vim.api.nvim_win_get_cursor(...)[1]", follow) == find_line
    assert nvim.exec_lua("return vim.api.nvim_get_current_win()") == current  # never the human's window

    wait_for(lambda: nvim.exec_lua("return require('lsap.presence').agents.codex.connections") == 0, 5,
             "codex gone")  # its connection closed after the answer; the editor hears it next
    nvim.command("Lsap agents")
    shown = wait_for(lambda: nvim.exec_lua(
        "local b = vim.fn.bufnr('lsap://report'); return b > 0 and "
        "vim.api.nvim_buf_get_lines(b, 0, -1, false) or {}"), 10, "the agents report")
    text = "\n".join(shown)
    assert shown[0] == "# Agents", text
    claude = next(row for row in shown if row.startswith("- claude"))
    codex = next(row for row in shown if row.startswith("- codex"))
    assert "claude · connected" in claude and "codex · disconnected at" in codex
    assert shown[2] == "1 connected, 3 seen in this session"  # and the warm-up's agent-1, gone
    assert "2 calls" in claude and "last: hover shop/catalog.py:find" in claude
    assert f"at shop/catalog.py:{find_line}" in claude
    assert "1 call " in codex and "edits 1 applied, 0 pending" in codex
    assert "Following claude" in text

    reading.close()
    nvim.command("Lsap follow")
    assert nvim.exec_lua("return require('lsap.presence').following") is None


def test_presence_false_shows_nothing(absent: tuple[Terminal, pynvim.Nvim, Path, str]) -> None:
    term, nvim, project, socket = absent
    models = str(project / "shop" / "models.py")
    term.wait("class Product:", 30)
    references(socket)
    time.sleep(0.5)
    assert nvim.exec_lua(MARKS, models) == []
    assert "◆" not in term.screen()
