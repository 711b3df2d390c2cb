"""The compact references report (issue 32) on rich 13.9.4: for a class, a function, a
method and a constant, every use in one report, its tokens (cl100k, as `benchmarks.cl100k.tokens`
counts them) in the compact form against the full one (`compact: false`) in the same run,
and whether anything was lost: every location of the JSON answer is a file and line of the
Markdown one.

    .venv/bin/python -m benchmarks.references_compact
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from lsap_bridge.embedded import start_embedded
from lsap_bridge.jsonvalue import JsonObject
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

from .cl100k import tokens
from .corpus import fetch_rich
from .peers import bridge_lines
from .rig import TIMEOUTS

SYMBOLS = {
    "class": "rich/console.py:Console",
    "function": "rich/cells.py:cell_len",
    "method": "rich/console.py:Console.print",
    "constant": "rich/console.py:WINDOWS",
}
CONSOLE_TOKENS = 4_000  # the target for `Console`, all 218 uses

def lost(markdown: str, report: dict[str, Any]) -> list[str]:
    """The uses of the JSON report (every group's) that the Markdown report does not show."""
    pairs = bridge_lines(markdown)
    return [f"{g['path']}:{u['line']}" for g in report["groups"] for u in g["uses"]
            if (g["path"], u["line"]) not in pairs]


async def main() -> None:
    corpus = fetch_rich()
    embedded = await start_embedded(corpus.root, corpus.servers, TIMEOUTS)
    try:
        service = Service(embedded.gateway, Workspace.of(corpus.root))
        ok = True
        for kind, anchor in SYMBOLS.items():
            payload: JsonObject = {"mode": "references", "locate": anchor, "max_items": 1000, "max_tokens": 100_000}
            answer = await service.handle({**payload, "format": "json"})
            assert answer.ok, answer.text
            report = json.loads(answer.text)
            compact = (await service.handle(payload)).text
            full = (await service.handle({**payload, "compact": False})).text
            uses = sum(len(g["uses"]) for g in report["groups"])
            missing = lost(compact, report) + lost(full, report)
            counted = tokens(compact)
            target = f", target <= {CONSOLE_TOKENS:,}" if kind == "class" else ""
            passed = not missing and uses == report["total"] and (kind != "class" or counted <= CONSOLE_TOKENS)
            ok = ok and passed
            print(f"{kind:9} {anchor}: {report['total']} uses in {report['files']} files, all in JSON: "
                  f"{uses == report['total']}, lost from Markdown: {len(missing)}; tokens compact {counted:,} vs "
                  f"full {tokens(full):,} ({counted / tokens(full):.2f}x){target} {'PASS' if passed else 'FAIL'}")
        print("PASS" if ok else "FAIL")
    finally:
        await embedded.close()


if __name__ == "__main__":
    asyncio.run(main())
