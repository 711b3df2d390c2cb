"""LSP base-protocol framing on stdio, for the fake language servers of the tests
(integration/slow_server.py, reliability/fault_server.py)."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

_lock = threading.Lock()


def send(message: dict[str, Any]) -> None:
    body = json.dumps(message).encode()
    with _lock:
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()


def read() -> dict[str, Any] | None:
    """The next message, or None at the end of input."""
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    message: dict[str, Any] = json.loads(sys.stdin.buffer.read(length))
    return message
