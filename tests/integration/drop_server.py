"""A real language server behind a proxy that loses one diagnostics answer.

`drop_server.py <arm file> <server command…>` runs the server and passes every message
through, except the answer to the first `textDocument/diagnostic` request asked while the
arm file exists (the proxy then removes it): that answer never arrives. The shape of a
pull the server (or the wire) lost, as ruff once did for a file being typed in (issue 36);
armed by the test, because Neovim pulls by itself too (on attach and after changes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import relay, send


def main() -> None:
    arm = Path(sys.argv[1])
    lost: set[Any] = set()  # the id of the pull whose answer is lost

    def asked(message: dict[str, Any]) -> None:
        if message.get("method") == "textDocument/diagnostic" and not lost and arm.exists():
            lost.add(message["id"])
            arm.unlink()

    def answered(message: dict[str, Any]) -> None:
        if "method" not in message and message.get("id") in lost:
            return
        send(message)

    relay(sys.argv[2:], answered, asked)


if __name__ == "__main__":
    main()
