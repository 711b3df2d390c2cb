"""A blocking client for the agent socket, and finding (or starting) the session to ask."""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from .discovery import SessionInfo, daemon_name, runtime_dir, session_for, sessions

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "package.json", "tsconfig.json",
                "Cargo.toml", "go.mod", ".git")


class ClientError(Exception):
    """The session could not be reached or answered with a protocol error."""


def project_root(directory: Path) -> Path:
    """The nearest ancestor with a project marker, else the directory itself."""
    directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return directory


class Connection:
    def __init__(self, path: str, timeout: float = 300.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.ids = itertools.count(1)

    def call(self, method: str, params: Any = None) -> Any:
        msg_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            line = self.file.readline()
            if not line:
                raise ClientError("the session closed the connection")
            reply = json.loads(line)
            if reply.get("id") == msg_id:
                break
        if "error" in reply:
            raise ClientError(reply["error"].get("message", "error"))
        return reply["result"]

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def start_daemon(root: Path, servers: list[str], idle_timeout: float, wait: float = 90.0) -> SessionInfo:
    """Start the embedded daemon for `root` in the background and wait until it serves."""
    log = runtime_dir() / f"{daemon_name(root)}.log"
    with open(log, "ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "lsap_bridge.daemon", "--root", str(root),
             "--servers", ",".join(servers), "--idle-timeout", str(idle_timeout)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for info in sessions():
            if info.name == daemon_name(root):
                return info
        time.sleep(0.05)
    raise ClientError(f"the embedded Neovim did not start within {wait:g} s; see {log}")


def find_session(directory: Path, root: Path | None = None, session: str | None = None,
                 servers: list[str] | None = None, idle_timeout: float = 900.0,
                 start: bool = True) -> SessionInfo | None:
    """The editor or daemon session for a directory; starts a daemon if there is none."""
    if session:
        for info in sessions():
            if session in (info.name, str(info.pid)):
                return info
        raise ClientError(f"no session {session!r}; `lsap sessions` lists them")
    if root is None:
        found = session_for(directory)
        if found:
            return found
        root = project_root(directory)
    else:
        root = root.resolve()
        for info in sessions():
            if str(root) in info.roots:
                return info
    return start_daemon(root, servers or [], idle_timeout) if start else None


def env_servers() -> list[str]:
    return [s for s in os.environ.get("LSAP_SERVERS", "").split(",") if s]
