"""A real language server behind a proxy that delays its diagnostics.

`delay_server.py <seconds> <part of a path> <server command…>` runs the server and passes
every message through at once, except the `textDocument/publishDiagnostics` of files whose
URI holds that part, which arrive `seconds` later, and what the server sent after them
behind them (a connection keeps the order of messages). That is a server that has
re-analysed the changed file but is still at its users: the shape in which two equal looks
at their diagnostics, a second apart, showed the state from before the change (issue 26).

`delay_server.py --attach <file> <server command…>` holds back the server's answer to
`initialize` instead (and what it sent after it) until `file` exists: a server still
attaching while another, quicker one is attached, as on a cold start, for as long as the
test needs (test_first_answer.py).

`delay_server.py --gate <file> <part of a path> <server command…>` holds only those
diagnostics (the server's other messages pass: it answers requests while still at those
files), for as long as `file` exists rather than for a time: the test closes the gate
(creates the file) before its edit and opens it once it has the answer given without them,
so "not arrived yet" is certain however loaded the machine, and nothing waits longer than
the test needs (test_edit_pending.py). While it holds one, `<file>.held` exists.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import relay, send


def main() -> None:
    if sys.argv[1] == "--attach":
        attach(Path(sys.argv[2]), sys.argv[3:])
        return
    if sys.argv[1] == "--gate":
        gate(Path(sys.argv[2]), sys.argv[3], sys.argv[4:])
        return
    delay, part = float(sys.argv[1]), sys.argv[2]
    late: queue.Queue[tuple[float, Any]] = queue.Queue()

    def deliver() -> None:
        while True:
            due, message = late.get()
            time.sleep(max(0.0, due - time.monotonic()))
            send(message)

    def held_back(message: dict[str, Any]) -> None:
        held = held_diagnostics(message, part)
        # In order, as on any connection: what the server sent after a held message
        # waits behind it.
        late.put((time.monotonic() + delay if held else 0.0, message))

    threading.Thread(target=deliver, daemon=True).start()
    relay(sys.argv[3:], held_back)


def held_diagnostics(message: dict[str, Any], part: str) -> bool:
    return message.get("method") == "textDocument/publishDiagnostics" and part in str(
        (message.get("params") or {}).get("uri"))


def gate(closed: Path, part: str, command: list[str]) -> None:
    """The diagnostics of files whose URI holds `part` held while `closed` exists; the
    server's other messages pass (it answers requests while still at those files)."""
    holding = closed.with_name(closed.name + ".held")
    late: queue.Queue[dict[str, Any]] = queue.Queue()
    lock = threading.Lock()
    queued = 0  # held messages not sent yet: a later one of those files goes behind them

    def deliver() -> None:
        nonlocal queued
        while True:
            message = late.get()
            while closed.exists():
                time.sleep(0.02)
            with lock:
                send(message)
                queued -= 1
                if not queued:
                    holding.unlink(missing_ok=True)

    def held_back(message: dict[str, Any]) -> None:
        nonlocal queued
        with lock:
            if held_diagnostics(message, part) and (queued or closed.exists()):
                queued += 1
                holding.touch()
                late.put(message)
                return
        send(message)

    threading.Thread(target=deliver, daemon=True).start()
    relay(command, held_back)


def attach(release: Path, command: list[str]) -> None:
    """The answer to `initialize`, and what follows it, held until `release` exists."""
    asked: set[Any] = set()  # the ids of the client's `initialize` requests

    def initialize(message: dict[str, Any]) -> None:
        if message.get("method") == "initialize":
            asked.add(message.get("id"))

    def held_back(message: dict[str, Any]) -> None:
        # This reading thread waits: what the server sends after it waits behind it.
        while "method" not in message and message.get("id") in asked and not release.exists():
            time.sleep(0.02)
        send(message)

    relay(command, held_back, initialize)


if __name__ == "__main__":
    main()
