"""LSP base-protocol framing on stdio (or given streams), for the fake language servers of
the tests (integration/slow_server.py, unusual_server.py, reliability/fault_server.py) and
the proxies before real ones (integration/filter_server.py, delay_server.py); `serve` is the
fake servers' loop, `relay` the proxies'."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

_lock = threading.Lock()


def send(message: dict[str, Any], stream: IO[bytes] | None = None) -> None:
    body = json.dumps(message).encode()
    out = stream or sys.stdout.buffer
    with _lock:
        out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        out.flush()


def read(stream: IO[bytes] | None = None) -> dict[str, Any] | None:
    """The next message, or None at the end of input."""
    source = stream or sys.stdin.buffer
    length = 0
    while True:
        line = source.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(source.read(length))
    return message


def reply(msg_id: Any, result: Any) -> None:
    send({"jsonrpc": "2.0", "id": msg_id, "result": result})


def serve(capabilities: dict[str, Any], handle: Callable[[str, Any], bool]) -> None:
    """A fake server's life on stdio: `initialize` answered with `capabilities`, `shutdown`
    and `exit` as the protocol says, any other message given to `handle(method, id)`, which
    returns whether it dealt with it; a request it did not gets a null result."""
    while (message := read()) is not None:
        method, msg_id = message.get("method"), message.get("id")
        if method == "initialize":
            reply(msg_id, {"capabilities": capabilities})
        elif method == "shutdown":
            reply(msg_id, None)
        elif method == "exit":
            return
        elif not handle(str(method), msg_id) and msg_id is not None:
            reply(msg_id, None)


def relay(argv: list[str], on_server: Callable[[dict[str, Any]], None],
          on_client: Callable[[dict[str, Any]], None] = lambda message: None) -> None:
    """A proxy's life between the client on stdio and the real server `argv` runs: what the
    client sends goes to the server as it is (`on_client` sees it first); what the server
    sends is handed to `on_server`, which sends it on (`send`), changed, late, or not."""
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    out = server.stdout

    def from_server() -> None:
        while (message := read(out)) is not None:
            on_server(message)

    threading.Thread(target=from_server, daemon=True).start()
    while (message := read()) is not None:
        on_client(message)
        send(message, server.stdin)
        if message.get("method") == "exit":
            break
    server.stdin.close()
    server.wait(10)
