""":checkhealth lsap on a first-time user's Neovim: every section OK on a good set-up, and
the exact advice when the remote plugin is not registered or no server is attached."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE

from .nvim_home import checkhealth, lines, make_home, section, sections, wait_for

pytestmark = pytest.mark.integration

SECTIONS = [
    "Neovim",
    "Python host",
    "Remote plugin",
    "Language servers",
    "Agent socket",
    "Configuration",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(EXAMPLE, root)
    return root


def test_good_setup_is_ok_in_every_section(tmp_path: Path, project: Path) -> None:
    home = make_home(tmp_path / "home")
    home.register()
    nvim = home.attach(project)
    try:
        nvim.command("edit shop/models.py")
        wait_for(
            lambda: nvim.exec_lua("return #vim.lsp.get_clients({ bufnr = 0 })"), 60, "basedpyright"
        )
        # setup() in init.lua starts the service once Neovim has started (socket = true).
        wait_for(
            lambda: nvim.exec_lua("return require('lsap').state") == "running", 60, "the service"
        )
        text = checkhealth(nvim)
    finally:
        nvim.close()
    assert sections(text) == SECTIONS
    assert lines(text, "ERROR") == [] and lines(text, "WARNING") == [], text
    ok = "\n".join(lines(text, "OK"))
    assert "Neovim 0.1" in ok
    assert re.search(r"lsap_bridge \d+\.\d+\.\d+", ok)
    for dep in ("pynvim", "msgpack", "jinja2", "pydantic", "rapidfuzz"):
        assert re.search(rf"^- \S* ?OK {dep} \d", text, re.M), dep
    assert "registered (LsapStart)" in ok
    assert "basedpyright on shop/models.py (utf-16" in ok and "references, definition" in ok
    assert re.search(r"listening on \S+/lsap/nvim-\d+\.sock \(mode 600\)", ok)
    assert "no unknown options" in ok


def test_advice_when_not_registered_and_no_server(tmp_path: Path, project: Path) -> None:
    home = make_home(tmp_path / "home", setup="{ colour = 'blue' }")  # no :UpdateRemotePlugins
    (project / "notes.txt").write_text("no language server for this\n")
    nvim = home.attach(project)
    try:
        nvim.command("edit notes.txt")
        text = checkhealth(nvim)
        nvim.exec_lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
        nvim.command("LsapReferences")
        messages = nvim.exec_lua("return table.concat(_G.notes, '\\n')")
    finally:
        nvim.close()
    assert sections(text) == SECTIONS
    [error] = lines(text, "ERROR")
    assert "the remote plugin is not registered" in error
    after = text.split(error, 1)[1]
    assert "run :UpdateRemotePlugins, then restart Neovim" in after.split("~")[0]
    warnings = lines(text, "WARNING")
    assert any("no language server is attached to notes.txt" in w for w in warnings), text
    assert "vim.lsp.config() and vim.lsp.enable()" in text
    assert any("unknown option colour" in w for w in warnings)
    assert "run :UpdateRemotePlugins and restart Neovim" in messages
    log = (home.log_dir / "lsap.log").read_text()
    assert "ERROR [lua] the remote plugin is not registered" in log


def test_service_failures_go_to_the_log_file(tmp_path: Path, project: Path) -> None:
    # No socket, so no start at VimEnter: the host starts the service once, and the start
    # below must be that one (a running service makes later starts no-ops).
    home = make_home(tmp_path / "home", setup="{ socket = false }")
    home.register()
    nvim = home.attach(project)
    log = home.log_dir / "lsap.log"
    try:
        # A service that cannot reach Neovim: the host thread's exception must not vanish.
        nvim.exec_lua(
            "vim.fn.LsapStart({ address = ..., log_file = require('lsap').log_file() })",
            str(tmp_path / "no-such.sock"),
        )
        text = wait_for(lambda: log.exists() and log.read_text(), 30, "the log file")
    finally:
        nvim.close()
    assert "ERROR [python] lsap_bridge.host: the lsap service stopped" in text
    assert "Traceback" in text and "FileNotFoundError" in text


def test_advice_when_the_manifest_registers_another_copy(tmp_path: Path, project: Path) -> None:
    home = make_home(tmp_path / "home")
    home.register()
    manifest = Path(home.env["XDG_DATA_HOME"]) / "nvim" / "rplugin.vim"
    moved = re.sub(
        r"'[^']*/rplugin/python3/lsap\.py'",
        "'/old/lsap.nvim/rplugin/python3/lsap.py'",
        manifest.read_text(),
    )
    manifest.write_text(moved)
    nvim = home.attach(project)
    try:
        part = section(checkhealth(nvim), "Remote plugin")
    finally:
        nvim.close()
    [warning] = lines(part, "WARNING")
    assert "another copy of lsap: /old/lsap.nvim/rplugin/python3/lsap.py" in warning
    assert "run :UpdateRemotePlugins, then restart Neovim" in part
