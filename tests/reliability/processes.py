"""Processes as the reliability tests see them, from /proc (no psutil): trees, process
groups, memory and CPU, and a real embedded daemon started the way `lsap` starts it."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lsap_bridge.client import Connection
from lsap_bridge.discovery import SessionInfo, daemon_name, sessions

HERE = Path(__file__).resolve().parent


def stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, pgrp, …)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def children() -> dict[int, list[int]]:
    """ppid -> pids."""
    out: dict[int, list[int]] = {}
    for pid in pids():
        fields = stat(pid)
        if fields is not None:
            out.setdefault(int(fields[1]), []).append(pid)
    return out


def tree(pid: int) -> set[int]:
    """A process and all its descendants, now."""
    kids, found, todo = children(), set(), [pid]
    while todo:
        current = todo.pop()
        found.add(current)
        todo += kids.get(current, [])
    return found


def groups(of: set[int]) -> set[int]:
    """The process groups of these processes."""
    return {int(fields[2]) for pid in of if (fields := stat(pid)) is not None}


def in_groups(wanted: set[int]) -> set[int]:
    """Every live process (zombies aside) in one of these process groups, now."""
    return {pid for pid in pids() if (fields := stat(pid)) is not None
            and int(fields[2]) in wanted and fields[0] != "Z"}


def running(pid: int) -> bool:
    fields = stat(pid)
    return fields is not None and fields[0] != "Z"


def names(of: set[int]) -> list[str]:
    out = []
    for pid in of:
        with contextlib.suppress(OSError):
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            out.append(f"{pid}:{command[:120]}")
    return out


def server_names(of: set[int]) -> list[str]:
    return [n for n in names(of) if "node" in n or "pyright" in n or "fault_server" in n]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time the process has used so far."""
    fields = stat(pid)
    assert fields is not None, f"no process {pid}"
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def schedstat(pid: int) -> tuple[float, float] | None:
    """Seconds the main thread of `pid` has run on a CPU, and been runnable but waiting for
    one (Linux's /proc schedstat: what a loaded machine adds, as the kernel counts it);
    None once the process is gone."""
    try:
        ran, waited, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return None
    return int(ran) / 1e9, int(waited) / 1e9


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def start_daemon(root: Path, reap: set[int], idle: float = 120, servers: str = "basedpyright",
                 launcher: list[str] | None = None) -> tuple[subprocess.Popen[bytes], SessionInfo]:
    """The embedded daemon for `root`, serving and warm (a hover answered). `launcher`: what
    runs instead of `python -m lsap_bridge.daemon` (the same arguments follow)."""
    command = [sys.executable, *(launcher or ["-m", "lsap_bridge.daemon"]), "--root", str(root),
               "--servers", servers, "--idle-timeout", str(idle)]
    log = root.parent / "daemon.log"
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=log.open("wb"), start_new_session=True)
    reap.add(process.pid)
    name = daemon_name(root.resolve())
    assert wait_until(lambda: any(s.name == name for s in sessions()), 90), (
        f"the daemon did not start (exit {process.poll()}): " + log.read_text()[-2000:])
    info = next(s for s in sessions() if s.name == name)
    with Connection(info.socket) as conn:
        assert conn.call("request", {"mode": "hover", "locate": "shop/models.py:Product"})["ok"]
    return process, info
