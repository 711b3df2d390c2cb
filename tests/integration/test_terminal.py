"""The human's path end to end, in a real terminal: Neovim under tmux with the plugin
installed as documented, :LsapReferences through the remote plugin, the report read off
the screen, <CR> on an entry, and the cursor on the reference."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

from .nvim_home import Home, make_home, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


class Terminal:
    """A tmux server of its own with one 120x40 window."""

    def __init__(self, home: Home, cwd: Path, *argv: str) -> None:
        self.socket = f"lsap-test-{os.getpid()}"
        env = [f"{k}={v}" for k, v in home.env.items() if k.startswith("XDG_") or k == "PATH"]
        self.tmux(
            "new-session",
            "-d",
            "-x",
            "120",
            "-y",
            "40",
            "-c",
            str(cwd),
            "env",
            *env,
            "TERM=xterm-256color",
            *argv,
        )
        self.path = Path(self.tmux("display-message", "-p", "#{socket_path}").strip())

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def wait(self, text: str, timeout: float = 90) -> str:
        def showing() -> str:
            screen = self.screen()
            return screen if text in screen else ""

        try:
            return wait_for(showing, timeout, f"{text!r} on the screen")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen()}") from None

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        self.path.unlink(missing_ok=True)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    home = make_home(tmp_path / "home")
    home.register()
    term = Terminal(home, project, home.nvim, "shop/models.py")
    yield term, project
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
    term.wait(f"{target_line}| CROISSANT")
    term.keys("Enter")
    term.keys(':echo "AT " . expand("%:.") . ":" . line(".") . ":" . col(".")', "Enter")
    screen = term.wait("AT shop/")
    assert f"AT shop/catalog.py:{target_line}:{target_col}" in screen
