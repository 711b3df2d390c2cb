"""The human's path end to end, in a real terminal: Neovim under tmux with the plugin
installed as documented, :LsapReferences through the remote plugin, the report read off
the screen, <CR> on an entry, and the cursor on the reference. Then the human typing while
a slow report is computed, and while an agent's edit waits for an answer: every key lands
where it was typed, and the report and the prompt open beside the human."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from lsap_bridge.client import Connection
from tests.conftest import EXAMPLE

from .nvim_home import Home, attach, make_home, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def home_env(home: Home) -> list[str]:
    """What a command in the terminal runs under: the home's XDG dirs and PATH."""
    env = [f"{k}={v}" for k, v in home.env.items() if k.startswith("XDG_") or k == "PATH"]
    return ["env", *env, "TERM=xterm-256color"]


class Terminal:
    """A tmux server of its own with one window, 120x40 unless `columns` says otherwise;
    `open` runs more programs in it, each in a window of its own that the keys and the
    screen then go to."""

    def __init__(self, home: Home, cwd: Path, *argv: str, columns: int = 120) -> None:
        self.socket = f"lsap-test-{os.getpid()}"
        self.target: list[str] = []
        self.tmux("new-session", "-d", "-x", str(columns), "-y", "40", "-c", str(cwd), *home_env(home), *argv)
        self.path = Path(self.tmux("display-message", "-p", "#{socket_path}").strip())

    def open(self, home: Home, cwd: Path, *argv: str) -> int:
        """Run a program in a new window (closed when it exits); returns its pid."""
        pane, pid = self.tmux("new-window", "-P", "-F", "#{pane_id} #{pane_pid}", "-c", str(cwd),
                              *home_env(home), *argv).split()
        self.target = ["-t", pane]
        return int(pid)

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *self.target, *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", *self.target)

    def wait(self, text: str, timeout: float = 90) -> str:
        def showing() -> str:
            screen = self.screen()
            return screen if text in screen else ""

        try:
            return wait_for(showing, timeout, f"{text!r} on the screen")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen()}") from None

    def type(self, text: str, seconds: float) -> None:
        """Type `text` as a person would, a few keys at a time over `seconds`."""
        chunks = [text[i:i + 3] for i in range(0, len(text), 3)]
        for chunk in chunks:
            self.keys("-l", chunk)
            time.sleep(seconds / len(chunks))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        self.path.unlink(missing_ok=True)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    home = make_home(tmp_path / "home")
    # A global 'number' must not double the report's own `42|` numbers.
    with (Path(home.env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua").open("a") as init:
        init.write("vim.o.number = true\n")
    home.register()
    term = Terminal(home, project, home.nvim, "shop/models.py")
    yield term, project
    term.close()


SLOW = """
vim.filetype.add({{ extension = {{ slow = 'slow' }} }})
vim.lsp.config('slow', {{
  cmd = {{ {python!r}, {server!r}, '3' }}, filetypes = {{ 'slow' }}, root_markers = {{ 'pyproject.toml' }},
}})
vim.lsp.enable('slow')
"""


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[Terminal, pynvim.Nvim, Path]]:
    """Neovim in a terminal, plus an RPC channel to look at its state (it sends no keys): a
    `.slow` file is served by a server that takes 3 s per hover, Python by basedpyright, and
    agents' edits ask (`edit_policy = 'ask'`)."""
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    (project / "notes.slow").write_text("hello world\n")
    home = make_home(tmp_path / "home", setup="{ edit_policy = 'ask' }")
    server = Path(__file__).with_name("slow_server.py")
    with (Path(home.env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua").open("a") as init:
        init.write(SLOW.format(python=sys.executable, server=str(server)))
    with watched(home, project, "notes.slow") as (term, nvim):
        yield term, nvim, project


@contextlib.contextmanager
def watched(home: Home, project: Path, file: str) -> Iterator[tuple[Terminal, pynvim.Nvim]]:
    """Neovim on `file` in a terminal, registered, with an RPC channel that only looks."""
    home.register()
    address = str(home.base.parent / "nvim.sock")
    term = Terminal(home, project, home.nvim, "--listen", address, file)
    nvim = attach(address)
    try:
        yield term, nvim
    finally:
        nvim.close()
        term.close()


def position_of(path: Path, text: str, word: str) -> tuple[int, int]:
    """1-based line and column of `word` on the line containing `text`."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return number, line.index(word, line.index(text)) + 1
    raise AssertionError(f"{text!r} not in {path}")


def test_references_report_and_jump_in_a_real_terminal(terminal: tuple[Terminal, Path]) -> None:
    term, project = terminal
    term.wait("class Product:", 30)
    line, col = position_of(project / "shop" / "models.py", "class Product:", "Product")
    term.keys(f":call cursor({line}, {col})", "Enter")
    # <Tab> completes modes, then options, without starting the Python host.
    term.keys(":Lsap ref", "Tab")
    term.wait(":Lsap references", 10)
    term.keys(" max", "Tab")
    term.wait(":Lsap references max_items=", 10)
    term.keys("Escape")
    term.keys(":LsapReferences", "Enter")

    screen = term.wait("# References: `Product`")
    assert (
        f"Anchor: `shop/models.py:Product@class <|>Product:` → shop/models.py:{line}:{col}"
        in screen
    )
    assert "### shop/catalog.py" in screen
    assert "lsap://report" in screen

    # An entry in the report: the use in catalog.py's CROISSANT line.
    target_line, target_col = position_of(
        project / "shop" / "catalog.py", "CROISSANT = Product", "Product"
    )
    term.keys("/CROISSANT = Product", "Enter")
    screen = term.wait(f"{target_line}| CROISSANT")
    # The report's numbers only: no line number column of 'number' before them.
    assert any(row.startswith(f"{target_line}| CROISSANT") for row in screen.splitlines()), screen
    term.keys("Enter")
    term.keys(':echo "AT " . expand("%:.") . ":" . line(".") . ":" . col(".")', "Enter")
    screen = term.wait("AT shop/")
    assert f"AT shop/catalog.py:{target_line}:{target_col}" in screen
    # After a file and a colon, <Tab> offers the file's symbol paths from its server: they
    # arrive after the first <Tab>, which waits for nothing.
    term.keys(":Lsap hover shop/promotions.py:Promotion.a", "Tab")
    term.wait(":Lsap hover shop/promotions.py:Promotion.apply", 30)
    term.keys("Escape")


def test_typing_while_a_slow_report_is_computed(editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, project = editor
    term.wait("hello world", 30)
    term.keys(":LsapHover", "Enter")
    # Slower than 300 ms: a line says what it waits for (the service, then the server).
    screen = term.wait("(lsap) hover: ", 10)
    assert any(state in screen for state in ("starting the lsap service", "slow is starting", "waiting for slow"))
    term.keys("G", "o")
    typed = "the human keeps typing "
    for _ in range(30):  # until the answer has arrived, while in Insert mode
        term.type(typed, 0.5)
        if nvim.exec_lua("return #require('lsap.report').history") > 0:
            break
    else:
        raise AssertionError(f"no answer; the screen:\n{term.screen()}")
    assert nvim.api.get_mode()["mode"] == "i"
    assert nvim.call("bufwinid", "lsap://report") == -1  # it waits while the human types
    term.type("and more", 0.5)
    term.keys("Escape")
    screen = term.wait("ready: <C-w>b goes there", 10)  # one line says where it is
    assert "(lsap) Hover: hello ready" in screen
    assert nvim.call("bufwinid", "lsap://report") != -1
    # Every key landed in the file, and the cursor is still there.
    assert nvim.current.buffer.name == str(project / "notes.slow")
    lines = nvim.current.buffer[:]
    assert lines[0] == "hello world" and lines[1].startswith(typed) and lines[1].endswith(typed + "and more")
    assert set(lines[1].split(typed)[:-1]) == {""}, lines[1]  # nothing missing between the chunks
    term.keys("C-w", "b")
    term.wait("slow answer", 5)
    assert nvim.current.buffer.name == "lsap://report"
    term.keys("q")
    wait_for(lambda: nvim.call("bufwinid", "lsap://report") == -1, 5, "the report closed")


def test_typing_while_an_agents_edit_waits(editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    term, nvim, project = editor
    term.wait("hello world", 30)
    # The agent socket, in the runtime directory of the human's environment.
    socket = f"{nvim.call('getenv', 'XDG_RUNTIME_DIR')}/lsap/nvim-{nvim.call('getpid')}.sock"
    wait_for(lambda: os.path.exists(socket), 60, "the agent socket")
    with Connection(socket) as conn:  # basedpyright up and indexed
        assert conn.call("request", {"request": {"mode": "hover", "locate": "shop/models.py:Order"}})["ok"]
    answer: dict[str, Any] = {}

    def agent() -> None:
        rename = {"mode": "rename", "locate": "shop/checkout.py:receipt", "new_name": "print_receipt"}
        with Connection(socket, name="claude") as conn:
            answer.update(conn.call("request", {"request": rename}))

    term.keys("G", "o")
    term.type("limit = 1", 0.3)
    asking = threading.Thread(target=agent, daemon=True)
    asking.start()
    wait_for(lambda: nvim.exec_lua("return #require('lsap.approval').waiting()") == 1, 30, "the question")
    term.keys("Enter")  # an <Enter> and an `a`, `r`, `d`: the prompt's keys, typed into the file
    term.type("a r d done", 1)
    assert "a apply" not in term.screen()  # nothing opened while typing
    term.keys("Escape")
    screen = term.wait("a apply · r refuse", 10)
    assert "claude wants to rename" in screen and "+def print_receipt(order: Order) -> str:" in screen
    assert nvim.current.buffer[:] == ["hello world", "limit = 1", "a r d done"]
    assert not answer  # undecided until the human answers
    term.keys(":Lsap approval", "Enter")
    term.keys("a")
    asking.join(30)
    assert answer.get("ok"), answer
    assert "def print_receipt(" in (project / "shop" / "checkout.py").read_text()
    assert nvim.current.buffer.name == str(project / "notes.slow")
    assert nvim.current.buffer[:] == ["hello world", "limit = 1", "a r d done"]



def test_a_refused_rename_leaves_the_human_in_normal_mode(editor: tuple[Terminal, pynvim.Nvim, Path]) -> None:
    """basedpyright refuses `__debug__` by telling the human (`window/showMessageRequest`),
    which Neovim's own handler asks with `inputlist()`: the human was left at a prompt that
    took their next keys. The message is the agent's now: in its error, and in the log."""
    term, nvim, project = editor
    term.wait("hello world", 30)
    socket = f"{nvim.call('getenv', 'XDG_RUNTIME_DIR')}/lsap/nvim-{nvim.call('getpid')}.sock"
    wait_for(lambda: os.path.exists(socket), 60, "the agent socket")
    models = (project / "shop" / "models.py").read_text()
    rename = {"mode": "rename", "locate": "shop/models.py@class <|>Product", "new_name": "__debug__"}
    with Connection(socket, name="claude") as conn:
        answer = conn.call("request", {"request": rename})
    assert not answer["ok"] and answer["error"]["code"] == "invalid_request", answer
    message = answer["error"]["message"]
    assert message.startswith("basedpyright refused to rename `Product` to '__debug__': it said: "), message
    assert "it's a Python keyword" in message, message
    assert (project / "shop" / "models.py").read_text() == models
    time.sleep(1.0)  # a prompt would be on the screen by now
    screen = term.screen()
    assert "Type number and <Enter>" not in screen and "Press ENTER" not in screen, screen
    assert nvim.api.get_mode() == {"mode": "n", "blocking": False}
    # The human's next keys are theirs: a normal-mode command runs.
    term.keys("G", "o")
    term.type("still mine", 0.3)
    term.keys("Escape")
    wait_for(lambda: nvim.current.buffer[:] == ["hello world", "still mine"]
             and nvim.api.get_mode()["mode"] == "n", 10, "the keys typed in the file, back in Normal mode")
    log = nvim.exec_lua("return require('lsap.log').lines()")
    assert any("basedpyright — said: " in line and "__debug__" in line for line in log), log
