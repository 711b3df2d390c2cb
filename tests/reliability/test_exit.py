"""Clean exits: when Neovim quits (or is SIGKILLed) or the embedded daemon stops (idle
timeout, `lsap daemon stop`, SIGKILL), no process of its tree lives on, and no socket or
discovery file is left that a client would trust."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lsap_bridge.client import Connection
from lsap_bridge.discovery import SessionInfo, daemon_name, session_for, sessions
from tests.integration.human import HumanNvim, register_remote_plugin

pytestmark = pytest.mark.integration


def children() -> dict[int, list[int]]:
    """ppid -> pids, from /proc (no psutil)."""
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def tree(pid: int) -> set[int]:
    """A process and all its descendants, now."""
    kids, found, todo = children(), set(), [pid]
    while todo:
        current = todo.pop()
        found.add(current)
        todo += kids.get(current, [])
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def names(pids: set[int]) -> list[str]:
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
            out.append(f"{pid}:{command}")
    return out


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def trusted(info: SessionInfo) -> bool:
    """Whether a client would still use this session: listed, or its socket answers."""
    if any(s.name == info.name for s in sessions()):
        return True
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(info.socket)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def server_names(pids: set[int]) -> list[str]:
    return [n for n in names(pids) if "node" in n or "pyright" in n]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return register_remote_plugin(tmp_path_factory.mktemp("rplugin"))


@pytest.fixture
def reap() -> Iterator[set[int]]:
    """Pids a test started: whatever still runs when it ends (a failed test) is killed."""
    pids: set[int] = set()
    yield pids
    for pid in sorted(pids):
        if running(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def open_editor(env: dict[str, str], root: Path, reap: set[int]) -> tuple[HumanNvim, set[int]]:
    editor = HumanNvim(root, env, ["basedpyright"])
    reap.add(editor.process.pid)
    editor.lua("vim.cmd.edit(...)", str(root / "shop" / "models.py"))
    with Connection(editor.session.socket) as conn:  # the service, a server, all running
        assert conn.call("request", {"mode": "hover", "locate": "shop/models.py:Product"})["ok"]
    procs = tree(editor.process.pid)
    reap.update(procs)
    assert server_names(procs), names(procs)
    return editor, procs


@pytest.mark.parametrize("how", ["quit", "sigkill"])
def test_editor_exit_leaves_no_process_socket_or_trusted_session(
    env: dict[str, str], shop: Path, how: str, reap: set[int]
) -> None:
    editor, procs = open_editor(env, shop, reap)
    info = editor.session
    assert Path(info.socket).exists() and info.file.exists()
    if how == "quit":
        editor.close()
    else:
        os.kill(editor.process.pid, signal.SIGKILL)
        editor.process.wait(10)
    assert wait_until(lambda: not any(running(p) for p in procs), 20), names(
        {p for p in procs if running(p)}
    )
    assert not trusted(info)
    assert session_for(shop) is None
    # whatever the way out, the files are gone once a client has looked (or at once on quit)
    assert not Path(info.socket).exists() and not info.file.exists()


def start_daemon(
    root: Path, idle: float, reap: set[int]
) -> tuple[subprocess.Popen[bytes], SessionInfo]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lsap_bridge.daemon",
            "--root",
            str(root),
            "--servers",
            "basedpyright",
            "--idle-timeout",
            str(idle),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=(root.parent / "daemon.log").open("wb"),
    )
    reap.add(process.pid)
    name = daemon_name(root.resolve())
    assert wait_until(lambda: any(s.name == name for s in sessions()), 90), (
        f"the daemon did not start (exit {process.poll()}): "
        + (root.parent / "daemon.log").read_text()[-2000:]
    )
    info = next(s for s in sessions() if s.name == name)
    with Connection(info.socket) as conn:
        assert conn.call("request", {"mode": "hover", "locate": "shop/models.py:Product"})["ok"]
    return process, info


@pytest.mark.parametrize("how", ["idle", "stop", "sigkill"])
def test_daemon_exit_leaves_no_orphans(shop: Path, how: str, reap: set[int]) -> None:
    process, info = start_daemon(shop, 6 if how == "idle" else 120, reap)
    procs = tree(process.pid)
    reap.update(procs)
    assert info.nvim_pid in procs and server_names(procs), names(procs)
    started = time.monotonic()
    if how == "stop":
        stop = subprocess.run(
            [sys.executable, "-m", "lsap_bridge", "daemon", "stop"],
            cwd=shop,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert stop.returncode == 0, stop.stderr
    elif how == "sigkill":
        os.kill(process.pid, signal.SIGKILL)
    process.wait(30)
    assert wait_until(lambda: not any(running(p) for p in procs), 20), names(
        {p for p in procs if running(p)}
    )
    if how == "idle":
        assert 4 < time.monotonic() - started < 25
    assert not trusted(info)
    assert not any(s.name == info.name for s in sessions())
    assert not Path(info.socket).exists() and not info.file.exists()
