"""A small asyncio msgpack-RPC client for Neovim.

pynvim's session API is synchronous (greenlets); the bridge needs many requests in
flight and notifications routed to futures, so the bridge speaks msgpack-RPC itself: the
gateway over it, the editor's host (`host.py`) and the embedded daemon (`embedded.py`) to
open the channel it runs on.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable

import msgpack

from .errors import LsapBaseError
from .jsonvalue import Json, Packable

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2

NotificationHandler = Callable[[str, list[Json]], None]


class NvimRpcError(LsapBaseError):
    """Neovim answered a request with an error."""


class NvimDisconnected(LsapBaseError):
    """The connection to Neovim is gone (Neovim exited or the socket closed)."""


def _ext_hook(code: int, data: bytes) -> int:
    # Buffer, Window and Tabpage handles arrive as ext types; the bridge only needs the id.
    return int(msgpack.unpackb(data))


class NvimConnection:
    """One msgpack-RPC channel to Neovim over a stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Json]] = {}
        self._notification_handlers: list[NotificationHandler] = []
        self._closed = False
        self._read_task = asyncio.get_running_loop().create_task(self._read_loop())
        self.process: asyncio.subprocess.Process | None = None

    @classmethod
    async def spawn(cls, argv: list[str], env: dict[str, str] | None = None,
                    preexec: Callable[[], object] | None = None) -> NvimConnection:
        """Start `nvim --embed` and talk to it over its stdin/stdout (`preexec`: run in the
        child before Neovim starts)."""
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            limit=2**24,
            preexec_fn=preexec,
        )
        assert process.stdout is not None and process.stdin is not None
        writer = process.stdin
        conn = cls(process.stdout, writer)
        conn.process = process
        return conn

    @classmethod
    async def connect(cls, address: str) -> NvimConnection:
        """Connect to a running Neovim's `v:servername` (a Unix socket or host:port)."""
        if ":" in address and not address.startswith("/"):
            host, port = address.rsplit(":", 1)
            reader, writer = await asyncio.open_connection(host, int(port), limit=2**24)
        else:
            reader, writer = await asyncio.open_unix_connection(address, limit=2**24)
        return cls(reader, writer)

    def on_notification(self, handler: NotificationHandler) -> None:
        self._notification_handlers.append(handler)

    @property
    def closed(self) -> bool:
        return self._closed

    def when_closed(self, callback: Callable[[], None]) -> None:
        """Have `callback` called once the connection is gone (soon, if it is already)."""
        self._read_task.add_done_callback(lambda _task: callback())

    async def request(self, method: str, *args: Packable) -> Json:
        if self._closed:
            raise NvimDisconnected("Neovim connection is closed")
        msgid = next(self._ids)
        future: asyncio.Future[Json] = asyncio.get_running_loop().create_future()
        self._pending[msgid] = future
        self._writer.write(msgpack.packb([REQUEST, msgid, method, list(args)]))
        try:
            await self._writer.drain()
            return await future
        finally:
            self._pending.pop(msgid, None)

    async def close(self) -> None:
        self._closed = True
        self._read_task.cancel()
        with contextlib.suppress(Exception):
            self._writer.close()
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except asyncio.TimeoutError:
                self.process.kill()
                await self.process.wait()

    async def _read_loop(self) -> None:
        unpacker = msgpack.Unpacker(ext_hook=_ext_hook, raw=False, max_buffer_size=2**30)
        try:
            while True:
                data = await self._reader.read(1 << 16)
                if not data:
                    break
                unpacker.feed(data)
                for message in unpacker:
                    self._dispatch(message)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._closed = True
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(NvimDisconnected("Neovim exited"))

    def _dispatch(self, message: list[Json]) -> None:
        kind = message[0]
        if kind == RESPONSE:
            _, msgid, error, result = message
            future = self._pending.get(msgid) if isinstance(msgid, int) else None
            if future is None or future.done():
                return
            if error is not None:
                text = error[1] if isinstance(error, list) and len(error) > 1 else error
                future.set_exception(NvimRpcError(str(text)))
            else:
                future.set_result(result)
        elif kind == NOTIFICATION:
            _, method, params = message
            for handler in self._notification_handlers:
                handler(str(method), params if isinstance(params, list) else [])
        elif kind == REQUEST:
            # Neovim never needs to ask the bridge anything synchronously: refuse politely.
            _, msgid, method, _params = message
            self._writer.write(
                msgpack.packb([RESPONSE, msgid, f"lsap: no handler for {method}", None])
            )
