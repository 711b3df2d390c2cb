"""A blocking client for the agent socket, and finding (or starting) the session to ask."""

from __future__ import annotations

import asyncio
import fcntl
import itertools
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .discovery import SessionInfo, daemon_name, runtime_dir, session_for, sessions

ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "package.json", "tsconfig.json",
                "Cargo.toml", "go.mod", ".git")


class ClientError(Exception):
    """The session could not be reached or answered with a protocol error; `code` is the
    stable code the session gave (`busy`, `session_gone`, `timeout`, …), if any."""

    def __init__(self, message: str, code: str | None = None, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data or {}

    @classmethod
    def of(cls, error: dict[str, Any]) -> ClientError:
        """From a JSON-RPC error object."""
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        return cls(str(error.get("message", "error")), data.get("code"), data)

    @property
    def never_ran(self) -> bool:
        """The session went away before running the call: sending it again is safe."""
        return self.code == "session_gone" and self.data.get("started") is False

    def report(self) -> str:
        """As an error report, for surfaces that show reports (the MCP tools)."""
        if self.code is None:
            return f"# Error: server_error\n\nthe lsap session is unreachable: {self}\n"
        return f"# Error: {self.code}\n\n{self}\n"


def gone(what: str, started: bool) -> ClientError:
    return ClientError(f"the lsap session {what}; send the request again: lsap finds, or starts, "
                       "a session for it", "session_gone", {"started": started})


def project_root(directory: Path) -> Path:
    """The nearest ancestor with a project marker, else the directory itself."""
    directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return directory


class Connection:
    """One blocking JSON-RPC connection; `name` is how `:Lsap log` shows this client."""

    def __init__(self, path: str, timeout: float = 300.0, name: str | None = None) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            self.sock.close()
            raise gone(f"at {path} is gone", started=False) from None
        except OSError as exc:
            self.sock.close()
            raise ClientError(f"cannot connect to {path}: {exc.strerror or exc}") from None
        self.file = self.sock.makefile("rb")
        self.ids = itertools.count(1)
        self.name = name

    def call(self, method: str, params: Any = None) -> Any:
        if self.name and (params is None or isinstance(params, dict)):
            params = {**(params or {}), "client": self.name}
        msg_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            line = self.file.readline()
            if not line:
                raise gone("closed the connection before answering", started=True)
            reply = json.loads(line)
            if reply.get("id") == msg_id:
                break
        if "error" in reply:
            raise ClientError.of(reply["error"])
        return reply["result"]

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def start_daemon(root: Path, servers: list[str], idle_timeout: float,
                 wait: float = 90.0) -> SessionInfo:
    """Start the embedded daemon for `root` in the background and wait until it serves.

    A lock file makes two `lsap` calls racing for the same root start one daemon: the
    second waits for the lock, then finds the first one's session.
    """
    name = daemon_name(root)
    with open(runtime_dir() / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for info in sessions():
            if info.name == name:
                return info
        return _spawn_daemon(root, servers, idle_timeout, wait)


def _spawn_daemon(root: Path, servers: list[str], idle_timeout: float, wait: float) -> SessionInfo:
    log = runtime_dir() / f"{daemon_name(root)}.log"
    start = log.stat().st_size if log.exists() else 0
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lsap_bridge.daemon", "--root", str(root),
             "--servers", ",".join(servers), "--idle-timeout", str(idle_timeout)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        for info in sessions():
            if info.name == daemon_name(root):
                return info
        if process.poll() is not None:
            tail = log.read_bytes()[start:].decode(errors="replace").strip().splitlines()[-3:]
            raise ClientError("the embedded daemon exited at start: " + " / ".join(tail)
                              + f" (log: {log})")
        time.sleep(0.05)
    raise ClientError(f"the embedded Neovim did not start within {wait:g} s; see {log}")


def call_session(find: Callable[[], SessionInfo | None], method: str, params: Any,
                 name: str | None = None) -> Any:
    """One call to the session `find` picks. When that session went away before running it
    (it stopped, or died, between being found and answering), `find` runs again (it starts
    a daemon when none is left) and the call is sent once more."""
    for attempt in range(2):
        info = find()
        if info is None:
            raise ClientError("no session to ask")
        try:
            with Connection(info.socket, name=name) as conn:
                return conn.call(method, params)
        except ClientError as exc:
            if attempt or not exc.never_ran:
                raise
    raise AssertionError("unreachable")


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


class AsyncConnection:
    """JSON-RPC over the socket for asyncio code (the MCP server): many calls in flight."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 name: str | None) -> None:
        self.reader, self.writer, self.name = reader, writer, name
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.reading = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, path: str, name: str | None = None) -> AsyncConnection:
        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        except (FileNotFoundError, ConnectionRefusedError):
            raise gone(f"at {path} is gone", started=False) from None
        except OSError as exc:
            raise ClientError(f"cannot connect to {path}: {exc.strerror or exc}") from None
        return cls(reader, writer, name)

    async def call(self, method: str, params: Any = None) -> Any:
        if self.name and (params is None or isinstance(params, dict)):
            params = {**(params or {}), "client": self.name}
        if self.reading.done():
            raise gone("closed the connection", started=False)
        msg_id = next(self.ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        self.writer.write(json.dumps(message).encode() + b"\n")
        try:
            await self.writer.drain()
            reply = await future
        finally:
            self.pending.pop(msg_id, None)
        if "error" in reply:
            raise ClientError.of(reply["error"])
        return reply["result"]

    async def _read(self) -> None:
        try:
            while line := await self.reader.readline():
                reply = json.loads(line)
                future = self.pending.get(reply.get("id"))
                if future is not None and not future.done():
                    future.set_result(reply)
        except (ConnectionError, ValueError):
            pass
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(gone("closed the connection before answering", started=True))

    async def close(self) -> None:
        self.reading.cancel()
        self.writer.close()
