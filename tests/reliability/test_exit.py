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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lsap_bridge.client import ClientError, Connection
from lsap_bridge.discovery import SessionInfo, session_for, sessions
from lsap_bridge.jsonvalue import Params
from tests import stress
from tests.integration.human import HumanNvim, register_remote_plugin

from .processes import (
    HERE,
    cpu_seconds,
    groups,
    in_groups,
    names,
    running,
    server_names,
    start_daemon,
    tree,
    wait_until,
)

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


def big_module(path: Path, functions: int = 6000) -> None:
    """Python that keeps basedpyright checking for a long while (well under the size limit):
    every function's return type is inferred from the one before."""
    lines = ["def f0(x):\n    return [x]\n"]
    for n in range(1, functions):
        lines.append(f"def f{n}(x):\n    y = f{n - 1}(x)\n    return [y, y[0]] if x else {{'k': y}}\n")
    path.write_text("\n".join(lines))


def at_once(info: SessionInfo, *calls: Params) -> None:
    """The `request` calls sent together, each on a connection of its own, and each given up
    (a `ClientError`) when its `timeout` runs out: the servers are set to work side by side,
    not each after the last one's timeout. Any other failure is raised here."""

    def send(call: Params) -> None:
        with Connection(info.socket) as conn, contextlib.suppress(ClientError):
            conn.call("request", call)

    with ThreadPoolExecutor(len(calls)) as pool:
        list(pool.map(send, calls))


def busy(*pids: int, within: float = 30.0) -> bool:
    """Whether one of the processes spends half a second on the CPU within the next
    `within`: one that computes gets that much however many others share the two cores
    (a tenth of a core is 3 s here), one that waits never does. Counted in CPU seconds, not
    in a second's share, so that a loaded machine only makes it take longer."""
    deadline = time.monotonic() + within
    before = {pid: cpu_seconds(pid) for pid in pids}
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if any(cpu_seconds(pid) - spent > 0.5 for pid, spent in before.items()):
            return True
    return False


@pytest.mark.slow
@pytest.mark.stress  # gone within 12 s
@pytest.mark.parametrize("how", ["stop", "sigterm", "neovim crash"])
def test_busy_servers_ignoring_shutdown_are_gone_when_the_daemon_stops(
    shop: Path, how: str, reap: set[int]
) -> None:
    """basedpyright deep in a big file, and a server that computes forever, reads nothing
    more and ignores SIGTERM: a few seconds after the daemon stops (asked to, by a signal,
    or because its Neovim crashed), neither is left."""
    (shop / "notes.fault").write_text("alpha beta gamma\n")
    big_module(shop / "shop" / "big.py")
    pid_file = shop.parent / "fault.pid"
    process, info = start_daemon(shop, reap, launcher=[str(HERE / "fault_daemon.py"), str(pid_file)])
    # The fault server, sent into its endless computation (the answer never comes), and
    # basedpyright, checking the big file (the request stops waiting after two seconds).
    pid_file.with_suffix(".mode").write_text("busy")
    at_once(info, {"request": {"mode": "hover", "locate": "notes.fault@beta"}, "timeout": 3},
            {"request": {"mode": "diagnostics", "file_path": "shop/big.py"}, "timeout": 2})
    fault = int(pid_file.read_text())
    procs = tree(process.pid)
    reap.update(procs)
    servers = groups(procs) - groups({process.pid})
    assert busy(fault), names(procs)
    node = [p for p in procs if "node" in " ".join(names({p}))]
    assert node and busy(*node), names(procs)
    reap.update(in_groups(servers))
    started = time.monotonic()
    if how == "stop":
        Connection(info.socket).call("shutdown")
    elif how == "sigterm":
        os.kill(process.pid, signal.SIGTERM)
    else:
        os.kill(info.nvim_pid, signal.SIGKILL)
    process.wait(30)
    assert wait_until(lambda: not in_groups(servers), 10), names(in_groups(servers))
    assert not any(running(p) for p in procs), names({p for p in procs if running(p)})
    stress.figure(f"busy servers gone after {how}", time.monotonic() - started, at_most=12)
    # Ended by their watchdogs once Neovim had gone (lsap_bridge/watchdog.py), or else by
    # the daemon, which then logs it: either way the log holds no error.
    assert "Traceback" not in (shop.parent / "daemon.log").read_text()


def large_tree(root: Path, packages: int = 30, modules: int = 40) -> None:
    """Python enough to keep basedpyright indexing for a good while: packages of modules,
    each importing the one before and using what it defines."""
    for p in range(packages):
        package = root / f"gen{p:02}"
        package.mkdir()
        (package / "__init__.py").write_text("")
        for m in range(modules):
            previous = f"from gen{p:02}.m{m - 1:02} import Node{m - 1}, build{m - 1}\n" if m else ""
            uses = f"        self.parent = build{m - 1}(value)\n" if m else ""
            chain = "".join(f"def f{n}(x):\n    y = {f'f{n - 1}(x)' if n else 'x'}\n"
                            f"    return [y, y] if x else {{'k': y}}\n\n\n" for n in range(60))
            (package / f"m{m:02}.py").write_text(
                f"{previous}\n\nclass Node{m}:\n    def __init__(self, value: int) -> None:\n"
                f"        self.value = value\n{uses}\n\n"
                f"def build{m}(value: int) -> Node{m}:\n    return Node{m}(value + {m})\n\n\n{chain}")


@pytest.mark.parametrize("what", ["the daemon", "the daemon and its Neovim"])
def test_servers_die_with_a_sigkilled_daemon_while_basedpyright_indexes(
    shop: Path, what: str, reap: set[int]
) -> None:
    """SIGKILL leaves the daemon no way to end what it started (and, for its whole process
    group, its Neovim none either): basedpyright deep in a large tree, and a server that
    reads nothing more and ignores SIGTERM, are gone within 5 s all the same (the
    parent-death signal and lsap_bridge/watchdog.py)."""
    large_tree(shop)
    (shop / "notes.fault").write_text("alpha beta gamma\n")
    pid_file = shop.parent / "fault.pid"
    process, info = start_daemon(shop, reap, launcher=[str(HERE / "fault_daemon.py"), str(pid_file)])
    pid_file.with_suffix(".mode").write_text("busy")
    # the fault server sent into its endless computation; references over the whole tree
    # and the diagnostics of a package: basedpyright checks module after module
    calls: list[Params] = [{"request": call, "timeout": 2} for call in (
        {"mode": "hover", "locate": "notes.fault@beta"},
        {"mode": "references", "locate": "gen00/m00.py:Node0"},
        {"mode": "diagnostics", "file_path": "gen01"})]
    at_once(info, *calls)
    procs = tree(process.pid)
    reap.update(procs)
    servers = groups(procs) - groups({process.pid})
    reap.update(in_groups(servers))
    node = [p for p in in_groups(servers) if "node" in " ".join(names({p}))]
    assert node and busy(*node), names(procs)
    assert busy(int(pid_file.read_text()))
    if what == "the daemon":
        os.kill(process.pid, signal.SIGKILL)
    else:
        os.killpg(process.pid, signal.SIGKILL)  # it leads its group (start_new_session)
    killed = time.monotonic()
    process.wait(10)
    assert wait_until(lambda: not in_groups(servers), 5), names(in_groups(servers))
    print(f"{what}: no server left {time.monotonic() - killed:.2f} s after SIGKILL")
    assert wait_until(lambda: not any(running(p) for p in procs), 5), names({p for p in procs if running(p)})
