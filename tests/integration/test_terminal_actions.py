"""Code actions and formatting as the human uses them, in a real terminal (basedpyright and
`ruff server`): `:LsapActions` lists the server's preferred fix first and `<CR>` on it runs
it; `:LsapFormat` with no range formats the whole file, wherever the cursor is."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

from .nvim_home import make_home, wait_for
from .test_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

RUFF = """
vim.lsp.config('ruff', { cmd = { 'ruff', 'server' }, filetypes = { 'python' }, root_markers = { 'pyproject.toml' } })
vim.lsp.enable('ruff')
"""
MESSY = "import os\n\n\ndef f( x ):\n    return x+1\n\n\ndef g(y):\n    return  y*2\n"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    project = tmp_path / "shop"
    shutil.copytree(EXAMPLE, project)
    (project / "shop" / "messy.py").write_text(MESSY)
    home = make_home(tmp_path / "home")
    with (Path(home.env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua").open("a") as init:
        init.write(RUFF)
    home.register()
    term = Terminal(home, project, home.nvim, "shop/messy.py")
    yield term, project
    term.close()


def test_enter_on_the_preferred_action_runs_it_and_format_takes_the_whole_file(
        terminal: tuple[Terminal, Path]) -> None:
    term, project = terminal
    messy = project / "shop" / "messy.py"
    term.wait("def f( x ):", 30)
    term.keys(":LsapActions", "Enter")  # on line 1, `import os`: unused (F401)
    screen = term.wait("# Code actions", 60)
    first = next(row for row in screen.splitlines() if row.startswith("1. `"))
    assert "preferred" in first and "F401" in first, screen
    assert "Run one: `:Lsap code_action_execute " in screen.replace("\n", "")
    term.keys("/^1\\. `", "Enter")
    term.keys("Enter")  # <CR> on the first action: runs it
    wait_for(lambda: not messy.read_text().startswith("import os"), 60, "the unused import removed on disk")
    assert "def f( x ):" in messy.read_text()  # only the fix ran

    term.keys(":wincmd p", "Enter", ":call cursor(2, 1)", "Enter")
    term.keys(":LsapFormat", "Enter")
    try:
        wait_for(lambda: "def g(y):\n    return y * 2\n" in messy.read_text(), 60, "the whole file formatted")
    except AssertionError:
        raise AssertionError(term.screen() + messy.read_text()) from None
    assert "def f(x):\n    return x + 1\n" in messy.read_text()
