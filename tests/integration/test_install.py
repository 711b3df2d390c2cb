"""The Neovim install as doc/lsap.txt documents it, run in an isolated HOME on a clone of
the plugin: `require('lsap').build()` makes the Python host (or uses the one named),
installs lsap_bridge, registers the remote plugin, writes the help tags and puts `lsap`
on PATH; after a restart `:help lsap` works, `:checkhealth lsap` is clean and
`:LsapReferences` answers. lazy.nvim's `build` (in a coroutine) and a python3_host_prog
that is externally managed are covered too."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pynvim
import pytest

from tests.conftest import ROOT

from .nvim_home import Home, checkhealth, lines, make_home, path_outside_checkout, section, wait_for
from .test_terminal import Terminal

pytestmark = [pytest.mark.integration, pytest.mark.slow]

BUILD = "lua require('lsap').build()"  # the documented by-hand step


def clone(target: Path) -> Path:
    """What `git clone` gives: the repository's files (tracked and new), nothing ignored."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_bytes(source.read_bytes())
    return target


def user_home(tmp_path: Path, python: str | None) -> tuple[Home, Path]:
    """A first-time user: HOME of their own with ~/.local/bin on PATH, nothing of the
    checkout on PATH but basedpyright (their language server), the plugin cloned into
    Neovim's package directory."""
    plugin = clone(tmp_path / "lsap.nvim")
    home = make_home(tmp_path / "xdg", python=python, plugin=plugin)
    user, servers = tmp_path / "user", tmp_path / "servers"
    servers.mkdir()
    (servers / "basedpyright-langserver").symlink_to(Path(sys.executable).parent / "basedpyright-langserver")
    home.env["HOME"] = str(user)
    home.env["PATH"] = os.pathsep.join([str(user / ".local" / "bin"), str(servers), *path_outside_checkout()])
    return home, plugin


def lazy_spec() -> str:
    """The Lua table of the lazy.nvim spec, as doc/lsap.txt shows it."""
    doc = (ROOT / "doc" / "lsap.txt").read_text()
    block = doc.split("*lsap-lazy*", 1)[1].split(">lua\n", 1)[1].split("\n<", 1)[0]
    return textwrap.dedent(block)


def readme_block(after: str) -> str:
    """The first fenced Lua block of README.md after the text `after`."""
    readme = (ROOT / "README.md").read_text()
    assert after in readme, after
    return readme.split(after, 1)[1].split("```lua\n", 1)[1].split("\n```", 1)[0] + "\n"


def without_comments(lua: str) -> str:
    return re.sub(r"\s+", "", re.sub(r"--[^\n]*", "", lua))


def test_readme_quick_start_runs_as_written(tmp_path: Path, shop: Path) -> None:
    # The README's init.lua lines, exactly, in a Neovim whose packpath holds the checkout
    # (its package directory links to it) with isolated XDG dirs. The one line added is
    # the Python host that build() would make (the build itself: the tests above).
    snippet = readme_block("tests/integration/test_install.py starts Neovim from the next block")
    home = make_home(tmp_path / "home")
    init = Path(home.env["XDG_CONFIG_HOME"]) / "nvim" / "init.lua"
    init.write_text(f"vim.g.python3_host_prog = {sys.executable!r}\n" + snippet)
    home.register()
    nvim = home.attach(shop)
    try:
        assert nvim.exec_lua("return vim.fn.resolve(require('lsap').root)") == str(ROOT)
        shown = "\n".join(references(nvim, ["basedpyright", "ruff"]))
    finally:
        nvim.close()
    assert shown.startswith("# References: `Product`"), shown
    assert "18 references in 4 files · basedpyright" in shown and "### shop/catalog.py > find" in shown
    # The README's lazy.nvim spec is the one the lazy test below runs (doc/lsap.txt's).
    assert without_comments(readme_block("with [lazy.nvim]")) == without_comments(lazy_spec())


def references(nvim: pynvim.Nvim, servers: list[str]) -> list[str]:
    """`:LsapReferences` on Product once `servers` are attached to shop/models.py and the
    service runs: the report's lines."""
    nvim.command("edit shop/models.py")
    attached = "return vim.tbl_map(function(c) return c.name end, vim.lsp.get_clients({ bufnr = 0 }))"
    wait_for(lambda: set(nvim.exec_lua(attached)) >= set(servers), 60, ", ".join(servers))
    wait_for(lambda: nvim.exec_lua("return require('lsap').state") == "running", 60, "the service")
    nvim.command("LsapReferences shop/models.py:Product")

    def report() -> list[str]:
        if nvim.call("bufnr", "lsap://report") < 0:
            return []
        shown: list[str] = nvim.call("getbufline", "lsap://report", 1, "$")
        return shown if shown[0].startswith("# References") else []

    return wait_for(report, 90, "the References report")


def restarted(home: Home, shop: Path, plugin: Path) -> tuple[list[str], str]:
    """After the build, a new Neovim: the help it opens, the References report on Product,
    and the health report once the service runs and basedpyright is attached."""
    nvim = home.attach(shop)
    try:
        nvim.command("help lsap")
        help_file = nvim.current.buffer.name
        nvim.command("only")
        shown = references(nvim, ["basedpyright"])
        nvim.command("wincmd p")
        health = checkhealth(nvim)
    finally:
        nvim.close()
    assert Path(help_file) == plugin / "doc" / "lsap.txt"
    return shown, health


def assert_clean(health: str) -> None:
    assert lines(health, "ERROR") == [] and lines(health, "WARNING") == [], health


@pytest.mark.parametrize("named", [False, True], ids=["python3_host_prog unset", "python3_host_prog names a venv"])
def test_documented_install_by_hand(named: bool, tmp_path: Path, shop: Path) -> None:
    chosen = tmp_path / "my-venv" / "bin" / "python"
    home, plugin = user_home(tmp_path, str(chosen) if named else None)
    venv = chosen.parent.parent if named else Path(home.env["XDG_DATA_HOME"]) / "nvim" / "lsap" / "venv"
    built = home.run("+" + BUILD, "+qa", timeout=600)
    said = built.stderr
    assert f"creating the Python host {venv}" in said.replace("~", home.env["HOME"]), said
    assert "installing lsap_bridge" in said and "registering the remote plugin" in said
    [result] = [line for line in said.splitlines() if "(lsap) ready:" in line]
    assert ":help lsap" in result and "Restart Neovim" in result
    command = venv / "bin" / "lsap"
    link = Path(home.env["HOME"]) / ".local" / "bin" / "lsap"
    assert link.resolve() == command.resolve()
    assert f"linked ~/.local/bin/lsap → {command}".replace(home.env["HOME"], "~") in result
    assert "lsap.txt\tlsap.txt\t/*lsap.txt*" in (plugin / "doc" / "tags").read_text()
    imported = subprocess.run([str(venv / "bin" / "python"), "-c", "import lsap_bridge; print(lsap_bridge.__file__)"],
                              cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60).stdout
    assert Path(imported.strip()) == plugin / "lsap_bridge" / "__init__.py"

    shown, health = restarted(home, shop, plugin)
    assert "18 references in 4 files · basedpyright" in "\n".join(shown)
    assert_clean(health)
    origin = "vim.g.python3_host_prog" if named else 'the venv of require("lsap").build()'
    assert f"OK Python host: {venv / 'bin' / 'python'} (Python 3." in health and origin in health
    assert f"OK lsap command: {command} (on PATH" in health


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_build_in_a_running_neovim_shows_each_step_and_keeps_the_editor(tmp_path: Path, shop: Path) -> None:
    home, _ = user_home(tmp_path, None)
    venv = Path(home.env["XDG_DATA_HOME"]) / "nvim" / "lsap" / "venv"
    term = Terminal(home, shop, "env", f"HOME={home.env['HOME']}", home.nvim, "shop/models.py")
    try:
        term.wait("class Product:", 30)
        term.keys(":" + BUILD, "Enter")
        # At once, not a blank screen; cut to the message line, so no hit-enter prompt.
        assert "Press ENTER" not in term.wait("(lsap) creating the Python host", 30)
        assert "Press ENTER" not in term.wait("(lsap) installing lsap_bridge into", 60)
        # While pip runs, the editor takes commands: the build does not hold it.
        term.keys(":echo 'typed during the build'", "Enter")
        term.wait("typed during the build", 30)
        assert not list(venv.glob("lib/python3*/site-packages/__editable__*lsap*")), "pip had finished"
        term.wait("(lsap) ready:", 300)
    finally:
        term.close()
    manifest = (Path(home.env["XDG_DATA_HOME"]) / "nvim" / "rplugin.vim").read_text()
    assert "'name': 'LsapStart'" in manifest and (venv / "bin" / "lsap").is_file()


def test_lazy_spec_build_yields_progress_and_installs_into_the_named_host(tmp_path: Path, shop: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    home, plugin = user_home(tmp_path, python)
    spec = tmp_path / "spec.lua"
    spec.write_text("return " + lazy_spec())
    # What lazy.nvim does: run `build` in a coroutine, show what it yields, resume it on
    # every turn of the loop until it ends; then call setup(opts).
    driver = tmp_path / "lazy.lua"
    driver.write_text(textwrap.dedent(f"""\
        local spec = dofile({str(spec)!r})
        local co = coroutine.create(function() spec.build({{ dir = {str(plugin)!r} }}) end)
        local yielded = {{}}
        while coroutine.status(co) ~= 'dead' do
          local ok, message = coroutine.resume(co)
          assert(ok, message)
          if message then yielded[#yielded + 1] = message end
          vim.wait(10)
        end
        require('lsap').setup(spec.opts)
        io.stdout:write(vim.json.encode(vim.fn.uniq(yielded)))
        """))
    built = home.run("-c", f"luafile {driver}", "+qa", timeout=600)
    yielded = built.stdout
    assert f"installing lsap_bridge into {venv}" in yielded, built
    assert "registering the remote plugin" in yielded
    assert "creating the Python host" not in yielded  # the named venv exists
    assert "(lsap) ready:" in built.stderr
    manifest = (Path(home.env["XDG_DATA_HOME"]) / "nvim" / "rplugin.vim").read_text()
    assert f"'{plugin}/rplugin/python3/lsap.py'" in manifest and "'name': 'LsapStart'" in manifest

    nvim = home.attach(shop)
    try:
        text = checkhealth(nvim)
    finally:
        nvim.close()
    for name in ("Python host", "Remote plugin"):
        assert_clean(section(text, name))
    assert f"OK Python host: {python} (Python 3." in text


def externally_managed() -> str | None:
    """A Python that pip must not install into (PEP 668), such as Debian's own."""
    python = "/usr/bin/python3"
    probe = [python, "-c", "import os, sys, sysconfig; print(sys.prefix == sys.base_prefix and "
             "os.path.isfile(os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')))"]
    try:
        managed = subprocess.run(probe, capture_output=True, text=True, timeout=30).stdout.strip() == "True"
    except OSError:
        return None
    return python if managed else None


@pytest.mark.skipif(externally_managed() is None, reason="no externally managed /usr/bin/python3 here")
def test_externally_managed_host_gets_a_venv_and_the_exact_setting(tmp_path: Path, shop: Path) -> None:
    managed = externally_managed()
    assert managed is not None
    home, _ = user_home(tmp_path, managed)
    venv = Path(home.env["XDG_DATA_HOME"]) / "nvim" / "lsap" / "venv"
    said = home.run("+" + BUILD, "+qa", timeout=600).stderr
    setting = f"set vim.g.python3_host_prog = \"{venv / 'bin' / 'python'}\" in your config"
    assert setting in said and f"{managed} is externally managed (PEP 668)" in said, said
    assert "externally-managed-environment" not in said and "E5108" not in said
    assert (venv / "bin" / "lsap").is_file()

    nvim = home.attach(shop)
    try:
        part = section(checkhealth(nvim), "Python host")
    finally:
        nvim.close()
    errors = lines(part, "ERROR")
    assert errors, part
    assert f"{managed} is externally managed (PEP 668), so pip cannot install into it" in part
    assert "set vim.g.python3_host_prog to the venv it makes" in part
