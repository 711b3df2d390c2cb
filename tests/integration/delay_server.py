"""A real language server behind a proxy that delays its diagnostics.

`delay_server.py <seconds> <part of a path> <server command…>` runs the server and passes
every message through at once, except the `textDocument/publishDiagnostics` of files whose
URI holds that part, which arrive `seconds` later, and what the server sent after them
behind them (a connection keeps the order of messages). That is a server that has
re-analysed the changed file but is still at its users: the shape in which two equal looks
at their diagnostics, a second apart, showed the state from before the change (issue 26).
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
    delay, part = float(sys.argv[1]), sys.argv[2]
    late: queue.Queue[tuple[float, Any]] = queue.Queue()

    def deliver() -> None:
        while True:
            due, message = late.get()
            time.sleep(max(0.0, due - time.monotonic()))
            send(message)

    def held_back(message: dict[str, Any]) -> None:
        held = message.get("method") == "textDocument/publishDiagnostics" and part in str(
            (message.get("params") or {}).get("uri"))
        # In order, as on any connection: what the server sent after a held message
        # waits behind it.
        late.put((time.monotonic() + delay if held else 0.0, message))

    threading.Thread(target=deliver, daemon=True).start()
    relay(sys.argv[3:], held_back)


if __name__ == "__main__":
    main()
