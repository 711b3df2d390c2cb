"""A language server that holds every hover until it is cancelled: `held_server.py <log>`
writes a line to `<log>` for each `textDocument/hover` it gets ("hover", never answered)
and each `$/cancelRequest` ("cancel"), for tests of calls abandoned while a server works."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import reply, serve

LOG = Path(sys.argv[1])


def note(what: str) -> None:
    with LOG.open("a") as log:
        log.write(what + "\n")


def answer(method: str, msg_id: Any) -> bool:
    if method in ("textDocument/hover", "$/cancelRequest"):
        note("hover" if method == "textDocument/hover" else "cancel")
        return True
    if method == "textDocument/documentSymbol":
        reply(msg_id, [])
        return True
    return False


if __name__ == "__main__":
    serve({"hoverProvider": True, "documentSymbolProvider": True, "textDocumentSync": 1}, answer)
