"""Record what real language servers answer for the replayed golden reports.

`python -m tests.record` runs every request of `tests/replayed.py` through the real service
on a copy of examples/shop (an embedded Neovim with basedpyright), keeps each LSP call the
capabilities made with the server's answer, and writes `tests/fixtures/recorded/shop.json`
(paths relative to `$ROOT`). The unit tests then run the same requests through the same
capabilities over `tests/fakes.FakeEditor`, answering from the recording, so a golden report
is what the capability code makes of real answers, not a hand-built dict. Run it again when a
capability asks something new (the replay names the call it has no answer to).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsap_bridge.gateway import LspCall
from tests.conftest import EXAMPLE
from tests.fakes import RECORDED, portable
from tests.integration.harness import Bridge
from tests.replayed import CASES


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "shop"
        shutil.copytree(EXAMPLE, root)
        bridge = Bridge(root, ["basedpyright"])
        gateway = bridge.embedded.gateway
        entries: dict[str, dict[str, Any]] = {}
        original = gateway.lsp

        async def recording(calls: list[LspCall], timeout: float | None = None, guard: Any = None) -> Any:
            answers = await original(calls, timeout, guard)
            for call, answer in zip(calls, answers, strict=True):
                key = call.method + json.dumps(call.params, sort_keys=True)
                entries[key] = {"method": call.method, "params": call.params, "result": answer.result,
                                "error": answer.error}
            return answers

        gateway.lsp = recording  # type: ignore[method-assign]
        try:
            for case in CASES.values():
                for _ in range(2):  # once cold, once warm: the servers' answers once settled
                    response = bridge.request(dict(case.request))
                    if not response.ok:
                        print(f"{case.name}: {response.text}", file=sys.stderr)
        finally:
            bridge.close()
        RECORDED.mkdir(parents=True, exist_ok=True)
        out = RECORDED / "shop.json"
        out.write_text(json.dumps(portable(list(entries.values()), root), indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(entries)} answers to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
