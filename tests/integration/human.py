"""The human's Neovim for tests: a real headless `nvim --listen` with this plugin on the
runtimepath and the remote plugin registered through `:UpdateRemotePlugins`, so the service
starts the way it does for a user (`require('lsap').setup()` → `LsapStart` → host.py)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsap_bridge.discovery import SessionInfo, sessions
from lsap_bridge.embedded import nvim_program, server_path

from .nvim_home import attach

ROOT = Path(__file__).resolve().parents[2]


def user_init(directory: Path) -> Path:
    """A user's init.lua: the plugin on the runtimepath, the venv's Python as the host."""
    init = directory / "init.lua"
    init.write_text(f"vim.opt.rtp:prepend({str(ROOT)!r})\n"
                    f"vim.g.python3_host_prog = {sys.executable!r}\n")
    return init


def register_remote_plugin(directory: Path) -> dict[str, str]:
    """Run `:UpdateRemotePlugins` once; returns the environment pointing at the manifest."""
    env = {**os.environ, "PATH": server_path(),
           "NVIM_RPLUGIN_MANIFEST": str(directory / "rplugin.vim")}
    subprocess.run([nvim_program(), "--headless", "-u", str(user_init(directory)), "-i", "NONE", "-n",
                    "-c", "UpdateRemotePlugins", "-c", "qa!"],
                   env=env, check=True, timeout=120, capture_output=True)
    assert "LsapStart" in (directory / "rplugin.vim").read_text()
    return env


class HumanNvim:
    """One human's editor on `root`, with language servers attached and lsap set up."""

    def __init__(self, root: Path, env: dict[str, str], servers: list[str],
                 setup: dict[str, Any] | None = None, session: bool = True) -> None:
        """`session`: wait for the service to publish its session (with the socket on)."""
        self.root = root
        self.dir = Path(tempfile.mkdtemp(prefix="lsaph"))  # short: AF_UNIX paths are limited
        self.address = str(self.dir / "nvim.sock")
        manifest_dir = Path(env["NVIM_RPLUGIN_MANIFEST"]).parent
        self.process = subprocess.Popen(
            [nvim_program(), "--headless", "-u", str(manifest_dir / "init.lua"), "-i", "NONE", "-n",
             "--listen", self.address],
            cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.nvim = attach(self.address)
        self.pid = int(self.nvim.call("getpid"))
        self.nvim.exec_lua("require('lsap.servers').enable(...)", servers, str(root))
        self.nvim.exec_lua("require('lsap').setup(...)", setup or {})
        if session and (setup or {}).get("socket", True):
            self.session = self.wait_for_session()

    def wait_for_session(self, timeout: float = 60) -> SessionInfo:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for info in sessions():
                if info.nvim_pid == self.pid:
                    return info
            time.sleep(0.1)
        raise AssertionError("the service did not publish a session")

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # Neovim quits before it can answer
            self.nvim.command("qa!")
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
