""":checkhealth lsap on a first-time user's Neovim: every section OK on a good set-up, and
advice that names the real missing piece — no Python with pynvim, pynvim, the package,
the remote plugin's registration, a language server — and the command that fixes it."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from lsap_bridge.lua_shared import dependencies

from .nvim_home import Home, checkhealth, lines, make_home, section, sections, wait_for
from .test_terminal import Terminal

BUILD = ':lua require("lsap").build()'
HOST_FIX = "run :lua require('lsap').build()"  # what a host that cannot start gets, at start-up and here

pytestmark = pytest.mark.integration

SECTIONS = [
    "Neovim",
    "Python host",
    "Remote plugin",
    "Language servers",
    "Agent socket",
    "Configuration",
    "Edit journal",
]


def test_good_setup_is_ok_in_every_section(tmp_path: Path, shop: Path) -> None:
    home = make_home(tmp_path / "home")
    home.register()
    nvim = home.attach(shop)
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
    for dep in (d["name"] for d in dependencies() if d.get("platform", sys.platform) == sys.platform):
        assert re.search(rf"^- \S* ?OK {dep} \d", text, re.M), dep
    assert "registered (LsapStart)" in ok
    assert "basedpyright on shop/models.py (utf-16" in ok and "references, definition" in ok
    assert re.search(r"listening on \S+/lsap/nvim-\d+\.sock \(mode 600\)", ok)
    assert "no unknown options" in ok
    assert "no unfinished edit (" in ok


def test_advice_when_not_registered_and_no_server(tmp_path: Path, shop: Path) -> None:
    home = make_home(tmp_path / "home", setup="{ colour = 'blue' }")  # no :UpdateRemotePlugins
    (shop / "notes.txt").write_text("no language server for this\n")
    nvim = home.attach(shop)
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
    assert f"the remote plugin is not registered: run {BUILD}" in messages
    log = (home.log_dir / "lsap.log").read_text()
    assert "ERROR [lua] the remote plugin is not registered" in log


def advice(text: str, error: str) -> str:
    """The advice lines under one error of a health report."""
    return re.split(r"^- ", text.split(error, 1)[1], maxsplit=1, flags=re.M)[0]


def health_then_references(home: Home, shop: Path, want: str) -> tuple[str, str]:
    """The health report, then what `:LsapReferences` notifies once a note contains `want`."""
    nvim = home.attach(shop)
    try:
        text = checkhealth(nvim)
        nvim.exec_lua("_G.notes = {}; vim.notify = function(m) table.insert(_G.notes, m) end")
        nvim.command("LsapReferences shop/models.py:Product")
        notes = wait_for(lambda: (s := nvim.exec_lua("return table.concat(_G.notes, '\\n')")) and want in s and s,
                         30, f"a notification with {want!r}")
    finally:
        nvim.close()
    return text, str(notes)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with nothing installed: no pynvim, no lsap_bridge."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return venv / "bin" / "python"


@pytest.mark.parametrize("named", [True, False], ids=["python3_host_prog without pynvim", "no Python with pynvim"])
def test_advice_when_pynvim_is_missing(named: bool, bare_python: Path, tmp_path: Path, shop: Path) -> None:
    home = make_home(tmp_path / "home", python=str(bare_python) if named else None)
    if not named:
        home.env["PATH"] = str(bare_python.parent)  # Pythons, none with pynvim
    text, messages = health_then_references(home, shop, "not registered")
    host = section(text, "Python host")
    if named:
        # The host itself is the error (not an OK host with a missing module), with start-up's fix first.
        error = f"ERROR the Python host cannot start: pynvim is missing in {bare_python} (Python 3."
        assert error in host and "OK Python host" not in host, host
        fixes = advice(host, error)
        assert fixes.index("run :lua require('lsap').build()") < fixes.index(f"run {BUILD}, or in a shell: "), fixes
        assert f"run {BUILD}, or in a shell: {bare_python} -m pip install -e {home.plugin}" in fixes
        assert f"the Python package lsap_bridge is not installed in {bare_python}" in host
    else:
        [error] = lines(host, "ERROR")
        first = bare_python.parent / "python3"
        assert f"Neovim has no Python 3 host: no Python on PATH has pynvim (the first is {first})" in error
        assert f"run {BUILD}: it makes a venv for Neovim with pynvim and lsap_bridge in it" in host
    assert "Python >= 3.10" not in host.split("ADVICE")[0]  # Python is there: pynvim is what is missing
    plugin = section(text, "Remote plugin")
    assert "the remote plugin is not registered" in plugin
    assert f"run {BUILD}: it sets up the Python host above and registers the remote plugin" in plugin
    assert ":UpdateRemotePlugins" not in plugin  # it would fail without a host
    assert f"run {BUILD}" in messages and "run :UpdateRemotePlugins" not in messages


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_a_host_without_pynvim_starts_with_one_line_and_no_traceback(tmp_path: Path, shop: Path) -> None:
    # Built once (the remote plugin is registered), then the host named by python3_host_prog
    # is a venv made without pynvim: the start-up's LsapStart cannot start the host.
    bare = Path(tempfile.mkdtemp(prefix="lsapb"))  # short, so the line and the health fit the screen
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
        python = bare / "bin" / "python"
        home = make_home(tmp_path / "home")
        home.register()
        init = Path(home.env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua"
        init.write_text(init.read_text().replace(repr(sys.executable), repr(str(python))))
        line = f"(lsap) the Python host cannot start: pynvim is missing in {python}; {HOST_FIX}"
        term = Terminal(home, shop, home.nvim, "shop/models.py", columns=160)
        try:
            screen = term.wait("(lsap) the Python host", 60)
            time.sleep(2)  # nothing else follows it
            screen = term.screen()
            said = [row.rstrip() for row in screen.splitlines() if "(lsap)" in row]
            assert said == [line], screen
            for noise in ("stack traceback", "E5108", "Press ENTER", "Error executing"):
                assert noise not in screen, screen
            term.keys(":checkhealth lsap", "Enter")
            health = term.wait("Remote plugin", 60)
        finally:
            term.close()
    finally:
        shutil.rmtree(bare, ignore_errors=True)
    host = health.split("Python host", 1)[1].split("Remote plugin", 1)[0]
    assert f"ERROR the Python host cannot start: pynvim is missing in {python} (Python 3." in host, health
    assert "OK Python host" not in host
    advice_lines = host.split("ADVICE:", 1)[1].splitlines()
    assert advice_lines[1].strip() == f"- {HOST_FIX}", host  # the same fix as the start-up line


def test_advice_when_the_package_is_missing(tmp_path: Path, shop: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "pynvim"], check=True, timeout=300)
    home = make_home(tmp_path / "home", setup="{ socket = false }", python=str(python))
    home.register()  # the adapter needs pynvim only: registering works
    text, messages = health_then_references(home, shop, "does not import")
    host = section(text, "Python host")
    assert re.search(r"OK pynvim \d", host)
    error = f"the Python package lsap_bridge is not installed in {python}"
    [line] = lines(host, "ERROR")
    assert error in line
    assert f"run {BUILD}, or in a shell: {python} -m pip install -e {home.plugin}" in advice(host, error)
    assert "OK registered (LsapStart)" in section(text, "Remote plugin")
    # The remote plugin is registered, so the command reaches the host, which cannot import
    # the package: the adapter says so, with the fix, instead of a traceback.
    assert f"lsap_bridge does not import in Neovim's Python host {python}" in messages
    assert f"No module named 'lsap_bridge'): run {BUILD}" in messages


# A sitecustomize that makes one installed package fail to import, as a host lacking it would.
BLOCK = """\
import sys


class Block:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {name!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, Block())
"""


def test_a_dependency_that_does_not_import_is_missing(tmp_path: Path, shop: Path) -> None:
    # cachetools' metadata stays installed; only its import fails (the probe used to check
    # the metadata of a hand-kept list without it, and import the package's __init__ only).
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK.format(name="cachetools"))
    home = make_home(tmp_path / "home", setup="{ socket = false }")
    home.env["PYTHONPATH"] = str(blocker)
    home.register()  # the adapter imports pynvim only
    nvim = home.attach(shop)
    try:
        host = section(checkhealth(nvim), "Python host")
    finally:
        nvim.close()
    errors = lines(host, "ERROR")
    assert any(re.search(r"ERROR cachetools is missing: cachetools \d\S* is installed but does not import "
                         r"\(ModuleNotFoundError: No module named 'cachetools'\)", e) for e in errors), host
    assert any("lsap_bridge does not import (lsap_bridge.host, lsap_bridge.hostexit, what the remote plugin imports): "
               "ModuleNotFoundError: No module named 'cachetools'" in e for e in errors), host
    assert re.search(r"OK pydantic \d", host) and not re.search(r"OK cachetools", host), host


def test_service_failures_go_to_the_log_file(tmp_path: Path, shop: Path) -> None:
    # No socket, so no start at VimEnter: the host starts the service once, and the start
    # below must be that one (a running service makes later starts no-ops).
    home = make_home(tmp_path / "home", setup="{ socket = false }")
    home.register()
    nvim = home.attach(shop)
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


def test_advice_when_the_manifest_registers_another_copy(tmp_path: Path, shop: Path) -> None:
    home = make_home(tmp_path / "home")
    home.register()
    manifest = Path(home.env["XDG_DATA_HOME"]) / "nvim" / "rplugin.vim"
    moved = re.sub(
        r"'[^']*/rplugin/python3/lsap\.py'",
        "'/old/lsap.nvim/rplugin/python3/lsap.py'",
        manifest.read_text(),
    )
    manifest.write_text(moved)
    nvim = home.attach(shop)
    try:
        part = section(checkhealth(nvim), "Remote plugin")
    finally:
        nvim.close()
    [warning] = lines(part, "WARNING")
    assert "another copy of lsap: /old/lsap.nvim/rplugin/python3/lsap.py" in warning
    assert "run :UpdateRemotePlugins, then restart Neovim" in part
