"""A counting tap in front of a language server, for the peers benchmark.

    python lsp_tap.py LOG SERVER [ARGS...]

Starts SERVER with its standard output inherited (answers go straight to the client, not
through this process) and copies the client's messages to its standard input, appending the
method of every request (a message with both `id` and `method`) to LOG, one a line. A peer
that launches its server itself is given this command instead, so that the LSP requests each
tool makes are counted the same way, outside the tool. Standard library only: it runs under
whichever Python the peer runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from typing import BinaryIO


def read_message(source: BinaryIO) -> bytes | None:
    """One framed message (headers and body), or None at the end of the stream."""
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = source.read(1)
        if not byte:
            return None
        header += byte
    length = next(
        int(line.split(b":", 1)[1])
        for line in header.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return header + source.read(length)


def request_method(message: bytes) -> str | None:
    try:
        body = json.loads(message.split(b"\r\n\r\n", 1)[1])
    except ValueError:
        return None
    if isinstance(body, dict) and "id" in body and "method" in body:
        return str(body["method"])
    return None


def relay(source: BinaryIO, server: subprocess.Popen[bytes], log_path: str) -> None:
    """Copy the client's messages to the server, logging each request's method."""
    assert server.stdin is not None
    with open(log_path, "a", encoding="utf-8") as log:
        while (message := read_message(source)) is not None:
            try:
                server.stdin.write(message)
                server.stdin.flush()
            except (BrokenPipeError, ValueError):
                return
            if (method := request_method(message)) is not None:
                log.write(method + "\n")
                log.flush()
    with contextlib.suppress(BrokenPipeError):
        server.stdin.close()


def main() -> int:
    """The server's exit code, as soon as it exits: a client waits for this process to end, not
    for its own end of the pipe to close."""
    log_path, *command = sys.argv[1:]
    server = subprocess.Popen(command, stdin=subprocess.PIPE)
    threading.Thread(target=relay, args=(sys.stdin.buffer, server, log_path), daemon=True).start()
    return server.wait()


if __name__ == "__main__":
    # At once, not through interpreter shutdown, which would wait for the relay's blocked read
    # of stdin (every logged line is already flushed).
    os._exit(main())
