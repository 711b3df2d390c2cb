"""LSP base-protocol framing on stdio (or given streams), for the fake language servers of
the tests (integration/slow_server.py, reliability/fault_server.py) and the filtering proxy
(integration/filter_server.py)."""

from __future__ import annotations

import json
import sys
import threading
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
