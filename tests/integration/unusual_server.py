"""A language server offering a method none of lsap's modes names (linked editing ranges),
to show that the bridge asks Neovim about any method rather than a list of its own."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from lsp_wire import reply, serve

RANGES = {"ranges": [{"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}}]}


def answer(method: str, msg_id: Any) -> bool:
    if method == "textDocument/linkedEditingRange":
        reply(msg_id, RANGES)
        return True
    return False


def main() -> None:
    serve({"linkedEditingRangeProvider": True, "textDocumentSync": 1}, answer)


if __name__ == "__main__":
    main()
