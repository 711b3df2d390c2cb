"""The one client of the agent socket (the CLI, `lsap mcp`, the benchmarks, the tests), and
finding (or starting) the session to ask.

`Rpc` is the protocol without I/O: framing, ids, the client's name, errors. `Connection`
(blocking, for the CLI) and `AsyncConnection` (asyncio, many calls in flight) carry it over
the Unix socket; `call_session` and `AsyncSession` add the finding of a session and the one
retry when a session went away before running a call.

The CLI's path imports only what a plain request needs: asyncio (about half the CLI's
imports) is imported where the asyncio classes use it, subprocess where a daemon is
started, so that a warm `lsap hover` costs little more than starting Python
(doc/architecture.md, Costs).
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, cast

from .discovery import SessionInfo, daemon_log, daemon_name, runtime_dir, session_for, sessions
from .errors import LsapBaseError, error_report
from .jsonvalue import Json, Jsonable, JsonObject, obj

if TYPE_CHECKING:
    import asyncio

ATTEMPTS = 2  # sends of one call: once more if its session went away before running it
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "package.json", "tsconfig.json",
                "Cargo.toml", "go.mod", ".git")


class ClientError(LsapBaseError):
    """The session could not be reached or answered with a protocol error; `code` is the
    stable code the session gave (`busy`, `session_gone`, `timeout`, …), if any."""

    def __init__(self, message: str, code: str | None = None, data: JsonObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data or {}

    @classmethod
    def of(cls, error: Json) -> ClientError:
        """From a JSON-RPC error object."""
        error = error if isinstance(error, dict) else {}
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        code = data.get("code")
        return cls(str(error.get("message", "error")), code if isinstance(code, str) else None, data)

    @property
    def never_ran(self) -> bool:
        """The session went away before running the call: sending it again is safe."""
        return self.code == "session_gone" and self.data.get("started") is False

    def send_again(self, attempt: int) -> bool:
        """Whether a call that failed so on its `attempt` (0, 1, …) is sent once more, to a
        session found anew: only one that never ran, and only within `ATTEMPTS`."""
        return self.never_ran and attempt + 1 < ATTEMPTS

    def report(self) -> str:
        """As an error report, for surfaces that show reports (the MCP tools)."""
        if self.code is None:
            return error_report("server_error", f"the lsap session is unreachable: {self}")
        return error_report(self.code, str(self))


def gone(what: str, started: bool) -> ClientError:
    return ClientError(f"the lsap session {what}; send the request again: lsap finds, or starts, "
                       "a session for it", "session_gone", {"started": started})


class Rpc:
    """JSON-RPC as every client of the socket speaks it, without I/O (the blocking and the
    asyncio connection wrap it): each call one JSON line with its id, the client's name
    (how `:Lsap log` shows it) and its surface (`cli`, `mcp`: the form the answers' follow-up
    requests are written in); a reply's result, or its error as a `ClientError`."""

    def __init__(self, name: str | None, surface: str | None = None) -> None:
        self.name, self.surface = name, surface
        self.ids = itertools.count(1)

    def request(self, method: str, params: Jsonable) -> tuple[int, bytes]:
        """The id of a new call, and its line."""
        named = {"client": self.name} if self.name else {}
        if self.surface:
            named["surface"] = self.surface
        if named and (params is None or isinstance(params, dict)):
            params = {**(params or {}), **named}
        msg_id = next(self.ids)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        return msg_id, json.dumps(message).encode() + b"\n"

    @staticmethod
    def outcome(reply: JsonObject) -> Json:
        if "error" in reply:
            raise ClientError.of(reply["error"])
        return reply["result"]


class Answered(TypedDict, total=False):
    """A session's result for `request` and `text` (server.response_result): the report,
    whether it is an answer, and the error's fields when not."""

    ok: bool
    text: str
    mode: str
    status: str  # "incomplete": the report left out what it should have compared
    error: JsonObject  # LsapError.to_dict()


def answered(result: Json) -> Answered:
    """A `request` or `text` call's result as what it is (the session's own shape)."""
    return cast(Answered, obj(result))


def unreachable(path: str, exc: OSError) -> ClientError:
    """A failed connect: a socket nobody listens on is a session that went away (the call
    never ran: finding a session again is safe), anything else is the caller's to see."""
    if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
        return gone(f"at {path} is gone", started=False)
    return ClientError(f"cannot connect to {path}: {exc.strerror or exc}")


def cut_off(journals: str = "", who: str | None = None, since: float = 0.0) -> ClientError:
    """A call the session never answered (it went away while running it): what the change
    sets in `journals` show it applied since it was sent, when the session published them."""
    applied: list[str] = []
    if journals and who:
        from .changes import made_since  # only when a call was cut off: `lsap`'s imports stay few

        with contextlib.suppress(OSError):
            applied = made_since(Path(journals), who, since)
    if not applied:
        return gone("closed the connection before answering", started=True)
    from .surface import NOT_AGAIN, applied_note

    return ClientError(f"the lsap session closed the connection before answering; {applied_note(applied)}; "
                       f"{NOT_AGAIN}", "session_gone", {"started": True, "applied": list[Json](applied)})


def _connected(path: str, timeout: float) -> socket.socket:
    """A connection to `path`, waiting (up to `timeout`) while its listen backlog is full: a
    Unix socket refuses at once (EAGAIN) then, where a TCP one would wait."""
    until = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
            return sock
        except BlockingIOError as exc:
            sock.close()
            if time.monotonic() > until:
                raise unreachable(path, exc) from None
            time.sleep(0.01)
        except OSError as exc:
            sock.close()
            raise unreachable(path, exc) from None


class Connection:
    """One blocking JSON-RPC connection, one call at a time (the CLI: no event loop to start)."""

    def __init__(self, path: str, timeout: float = 300.0, name: str | None = None,
                 surface: str | None = None, journals: str = "") -> None:
        self.journals = journals  # the session's (`SessionInfo.journals`): see `cut_off`
        self.sock = _connected(path, timeout)
        self.file = self.sock.makefile("rb")
        self.rpc = Rpc(name, surface)

    def call(self, method: str, params: Jsonable = None, on_progress: Callable[[str], None] | None = None) -> Json:
        """The call's result; `on_progress` hears the session's `progress` notifications
        meanwhile (the CLI writes them to stderr)."""
        msg_id, line = self.rpc.request(method, params)
        sent = time.time()
        self.sock.sendall(line)
        while True:
            answer = self.file.readline()
            if not answer:
                raise cut_off(self.journals, self.rpc.name, sent)
            reply = json.loads(answer)
            if reply.get("id") == msg_id:
                return self.rpc.outcome(reply)
            if reply.get("method") == "progress" and on_progress is not None:
                on_progress(str((reply.get("params") or {}).get("message", "")))

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class AsyncConnection:
    """JSON-RPC over the socket for asyncio code: many calls in flight on one connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 name: str | None, surface: str | None = None, journals: str = "") -> None:
        import asyncio

        self.reader, self.writer = reader, writer
        self.rpc = Rpc(name, surface)
        self.journals = journals  # the session's (`SessionInfo.journals`): see `cut_off`
        self.pending: dict[int, asyncio.Future[JsonObject]] = {}
        self.sent: dict[int, float] = {}  # when each pending call was sent
        self.on_progress: Callable[[str], None] | None = None  # the session's `progress` notes
        self.reading = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, path: str, name: str | None = None, surface: str | None = None,
                   journals: str = "") -> AsyncConnection:
        import asyncio

        try:
            reader, writer = await asyncio.open_unix_connection(path, limit=1 << 26)
        except OSError as exc:
            raise unreachable(path, exc) from None
        return cls(reader, writer, name, surface, journals)

    @property
    def closed(self) -> bool:
        return self.reading.done()

    async def call(self, method: str, params: Jsonable = None) -> Json:
        import asyncio

        if self.closed:
            raise gone("closed the connection", started=False)
        msg_id, line = self.rpc.request(method, params)
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self.pending[msg_id], self.sent[msg_id] = future, time.time()
        self.writer.write(line)
        try:
            await self.writer.drain()
            reply = await future
        finally:
            self.pending.pop(msg_id, None)
            self.sent.pop(msg_id, None)
        return self.rpc.outcome(reply)

    async def _read(self) -> None:
        try:
            while line := await self.reader.readline():
                reply = json.loads(line)
                if reply.get("method") == "progress" and self.on_progress is not None:
                    self.on_progress(str((reply.get("params") or {}).get("message", "")))
                future = self.pending.get(reply.get("id"))
                if future is not None and not future.done():
                    future.set_result(reply)
        except (ConnectionError, ValueError):
            pass
        finally:
            for msg_id, future in self.pending.items():
                if not future.done():
                    future.set_exception(cut_off(self.journals, self.rpc.name, self.sent.get(msg_id, 0.0)))

    async def close(self) -> None:
        self.reading.cancel()
        self.writer.close()


def say_progress(message: str) -> None:
    """A session's progress note for a shell agent: on stderr, the report keeps stdout."""
    print(f"lsap: {message}", file=sys.stderr, flush=True)


def call_session(find: Callable[[], SessionInfo | None], method: str, params: Jsonable,
                 name: str | None = None, surface: str | None = None,
                 on_progress: Callable[[str], None] | None = say_progress) -> Json:
    """One call to the session `find` picks, on a connection of its own; sent once more, to
    the session `find` picks then (it starts a daemon when none is left), when the first
    went away before running it (it stopped, or died, between being found and answering)."""
    for attempt in range(ATTEMPTS):
        info = find()
        if info is None:
            raise ClientError("no session to ask")
        try:
            with Connection(info.socket, name=name, surface=surface, journals=info.journals) as conn:
                return conn.call(method, params, on_progress)
        except ClientError as exc:
            if not exc.send_again(attempt):
                raise
    raise AssertionError("unreachable")


class AsyncSession:
    """`call_session` for asyncio code (the MCP server): the session is found on first use,
    in a thread (finding it may start a daemon); its one connection is shared by every call
    (and so is its queue); a call the session went away before running is sent once more,
    to the session found then."""

    def __init__(self, find: Callable[[], SessionInfo | None], name: str | None = None,
                 surface: str | None = None) -> None:
        import asyncio

        self.find, self.name, self.surface = find, name, surface
        self.conn: AsyncConnection | None = None
        self.opening = asyncio.Lock()
        self.on_progress: Callable[[str], None] | None = None  # given to each connection

    async def connection(self) -> AsyncConnection:
        import asyncio

        async with self.opening:
            if self.conn is None or self.conn.closed:
                info = await asyncio.to_thread(self.find)
                if info is None:
                    raise ClientError("no session to ask")
                self.conn = await AsyncConnection.open(info.socket, self.name, self.surface, info.journals)
                self.conn.on_progress = self.on_progress
            return self.conn

    async def send(self, method: str, params: Jsonable = None) -> Json:
        for attempt in range(ATTEMPTS):
            try:
                return await (await self.connection()).call(method, params)
            except ClientError as exc:
                if not exc.send_again(attempt):
                    raise
                self.conn = None
        raise AssertionError("unreachable")

    async def close(self) -> None:
        if self.conn is not None:
            await self.conn.close()


# -- which session to ask ----------------------------------------------------------------------


def project_root(directory: Path) -> Path:
    """The nearest ancestor with a project marker, else the directory itself."""
    return marked_root(directory)[0]


def marked_root(directory: Path) -> tuple[Path, str | None]:
    """The nearest ancestor with a project marker and that marker; else the directory
    itself and None (the asker should then be told how to choose one)."""
    directory = directory.resolve()
    for candidate in (directory, *directory.parents):
        for marker in ROOT_MARKERS:
            if (candidate / marker).exists():
                return candidate, marker
    return directory, None


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


def with_env_budget(request: Jsonable) -> Jsonable:
    """The request with `$LSAP_MAX_TOKENS` as its `max_tokens` unless it sets one: the
    budget travels with each call (a warm daemon started under another value keeps its own)."""
    budget = os.environ.get("LSAP_MAX_TOKENS", "").strip()
    if isinstance(request, dict) and "max_tokens" not in request and budget.isdigit():
        return {**request, "max_tokens": int(budget)}
    return request


def env_servers() -> list[str]:
    return [s for s in os.environ.get("LSAP_SERVERS", "").split(",") if s]


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
    import subprocess

    log = daemon_log(root)
    start = log.stat().st_size if log.exists() else 0
    with open(log, "ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "lsap_bridge.daemon", "--root", str(root),
             "--servers", ",".join(servers), "--idle-timeout", str(idle_timeout), "--log", str(log)],
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
