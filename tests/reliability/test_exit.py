"""Clean exits: when Neovim quits (or is SIGKILLed) or the embedded daemon stops (idle
timeout, `lsap daemon stop`, SIGKILL), no process of its tree lives on, and no socket or
discovery file is left that a client would trust."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsap_bridge.client import Connection
from lsap_bridge.discovery import SessionInfo, session_for, sessions
from tests.integration.human import HumanNvim, register_remote_plugin

from .processes import names, running, server_names, start_daemon, tree, wait_until

pytestmark = pytest.mark.integration


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


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return register_remote_plugin(tmp_path_factory.mktemp("rplugin"))


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


@pytest.mark.parametrize("how", ["idle", "stop", "sigkill"])
def test_daemon_exit_leaves_no_orphans(shop: Path, how: str, reap: set[int]) -> None:
    process, info = start_daemon(shop, reap, idle=6 if how == "idle" else 120)
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

