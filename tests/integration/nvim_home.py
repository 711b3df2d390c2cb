"""A first-time user's Neovim: isolated XDG dirs and an init.lua that installs the plugin
the way doc/lsap.txt documents it (a native package, the Python host, :UpdateRemotePlugins)
and configures basedpyright as the human's own server."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pynvim

from lsap_bridge.embedded import nvim_program
from tests.conftest import ROOT

T = TypeVar("T")

INIT = """\
{host}vim.lsp.config('basedpyright', {{
  cmd = {{ 'basedpyright-langserver', '--stdio' }},
  filetypes = {{ 'python' }},
  root_markers = {{ 'pyproject.toml', '.git' }},
}})
vim.lsp.enable('basedpyright')
require('lsap').setup({setup})
"""


@dataclass
class Home:
    base: Path
    env: dict[str, str]
    nvim: str

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A headless Neovim with this home, for set-up steps such as :UpdateRemotePlugins."""
        return subprocess.run(
            [self.nvim, "--headless", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )

    def register(self) -> None:
        self.run("+UpdateRemotePlugins", "+qa")

    def attach(self, cwd: Path) -> pynvim.Nvim:
        """An embedded Neovim of this home, driven synchronously from the test."""
        argv = [
            "env",
            "-C",
            str(cwd),
            *(f"{k}={v}" for k, v in self.env.items()),
            self.nvim,
            "--embed",
            "--headless",
        ]
        return pynvim.attach("child", argv=argv)

    @property
    def plugin(self) -> Path:
        """Where Neovim finds the plugin: the package directory (a link to the plugin)."""
        return Path(self.env["XDG_DATA_HOME"]) / "nvim" / "site" / "pack" / "lsap" / "start" / "lsap.nvim"

    @property
    def log_dir(self) -> Path:
        return Path(self.env["XDG_STATE_HOME"]) / "nvim"


def make_home(base: Path, setup: str = "{}", python: str | None = sys.executable, plugin: Path = ROOT) -> Home:
    """XDG dirs under `base`, `plugin` linked in as a native package, init.lua written
    (with `python` as the Python 3 host, or python3_host_prog left unset). The runtime
    directory is a short one of its own, removed when the tests end: the agent socket's path
    must fit AF_UNIX's 107 bytes, which a long test's temp dir under an xdist worker's
    (`…/popen-gw0/test_agents_and_follow_with_tw0/…`) does not leave."""
    env = dict(os.environ)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        path = base / name.lower()
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        env[name] = str(path)
    env["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="lsapr")
    atexit.register(shutil.rmtree, env["XDG_RUNTIME_DIR"], True)
    env.pop("NVIM", None)
    env.pop("VIMINIT", None)
    home = Home(base, env, nvim_program())
    home.plugin.parent.mkdir(parents=True)
    home.plugin.symlink_to(plugin)
    config = base / "xdg_config_home" / "nvim"
    config.mkdir(parents=True)
    host = f"vim.g.python3_host_prog = {python!r}\n" if python else ""
    (config / "init.lua").write_text(INIT.format(host=host, setup=setup))
    return home


def path_outside_checkout() -> list[str]:
    """PATH without the checkout's directories (its venv, node_modules): what a user has."""
    return [entry for entry in os.environ["PATH"].split(os.pathsep)
            if entry and not Path(entry).resolve().is_relative_to(ROOT)]


def wait_for(check: Callable[[], T], timeout: float = 60, what: str = "condition") -> T:
    """Poll until `check()` is truthy; fail with `what` when time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def attach(address: str, timeout: float = 30) -> pynvim.Nvim:
    """An RPC channel to the Neovim listening at `address`: its socket file appears a moment
    before it accepts on it (a connect then is refused), so both are waited for."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return pynvim.attach("socket", path=address)
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise AssertionError(f"Neovim did not listen at {address}") from None
            time.sleep(0.05)


def checkhealth(nvim: pynvim.Nvim) -> str:
    nvim.command("tab checkhealth lsap")
    text = "\n".join(nvim.current.buffer[:])
    nvim.command("tabclose")
    return text


def sections(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^(\S[^\n]*?) ~$", text, re.M)]


def lines(text: str, level: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(rf"^- \S* ?{level} ", line)]


def section(text: str, name: str) -> str:
    """The lines of one section of a health report."""
    return text.split(f"\n{name} ~\n", 1)[1].split(" ~\n", 1)[0]
