"""A real language server behind a proxy that delays its diagnostics.

`delay_server.py <seconds> <server command…>` runs the server and passes every message
through at once, except `textDocument/publishDiagnostics`, which arrive `seconds` later (in
order). That is a server still analysing the users of a changed file while it answers
everything else: the shape in which two equal looks at its diagnostics, a second apart,
showed the state from before the change (issue 26).
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import read, send


def main() -> None:
    delay = float(sys.argv[1])
    server = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdin is not None and server.stdout is not None
    late: queue.Queue[tuple[float, Any]] = queue.Queue()
    lock = threading.Lock()  # one writer at a time on our stdout

    def deliver() -> None:
        while True:
            due, message = late.get()
            time.sleep(max(0.0, due - time.monotonic()))
            with lock:
                send(message)

    def from_server() -> None:
        assert server.stdout is not None
        while (message := read(server.stdout)) is not None:
            if message.get("method") == "textDocument/publishDiagnostics":
                late.put((time.monotonic() + delay, message))
                continue
            with lock:
                send(message)

    threading.Thread(target=deliver, daemon=True).start()
    threading.Thread(target=from_server, daemon=True).start()
    while (message := read()) is not None:
        send(message, server.stdin)
        if message.get("method") == "exit":
            break
    server.stdin.close()
    server.wait(10)


if __name__ == "__main__":
    main()
