"""The compact references report (issue 32) on rich 13.9.4: for a class, a function, a
method and a constant, every use in one report, its tokens (cl100k, as `benchmarks.cl100k.tokens`
counts them) in the compact form against the full one (`compact: false`) in the same run,
and whether anything was lost: every location of the JSON answer is a file and line of the
Markdown one.

    .venv/bin/python -m benchmarks.references_compact [--print]

Written into RESULTS.md between its markers (`--print`: printed only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from lsap_bridge.embedded import start_embedded
from lsap_bridge.jsonvalue import JsonObject
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

from .cl100k import tokens
from .corpus import HERE, fetch_rich
from .peers import bridge_lines
from .report import write_measured
from .rig import TIMEOUTS

REFERENCES_COMPACT_MARKERS = ("<!-- references_compact: python -m benchmarks.references_compact -->",
                              "<!-- /references_compact -->")
TITLE = "## Compact references on rich 13.9.4 (issue 32)"

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


async def measure() -> list[dict[str, Any]]:
    """One row per symbol: its uses and files, the tokens of both forms, what was lost."""
    corpus = fetch_rich()
    embedded = await start_embedded(corpus.root, corpus.servers, TIMEOUTS)
    rows = []
    try:
        service = Service(embedded.gateway, Workspace.of(corpus.root))
        for kind, anchor in SYMBOLS.items():
            payload: JsonObject = {"mode": "references", "locate": anchor, "max_items": 1000, "max_tokens": 100_000}
            answer = await service.handle({**payload, "format": "json"})
            assert answer.ok, answer.text
            report = json.loads(answer.text)
            compact = (await service.handle(payload)).text
            full = (await service.handle({**payload, "compact": False})).text
            row = {"kind": kind, "anchor": anchor, "total": report["total"], "files": report["files"],
                   "in_json": sum(len(g["uses"]) for g in report["groups"]) == report["total"],
                   "lost": len(lost(compact, report) + lost(full, report)),
                   "compact": tokens(compact), "full": tokens(full)}
            rows.append(row)
            print(row, flush=True)
    finally:
        await embedded.close()
    return rows


def section(rows: list[dict[str, Any]]) -> list[str]:
    """The RESULTS.md block's figures: the table, then whether every use is in both forms."""
    table = ["References, every use in one report (`max_items` 1000), cl100k tokens:", "",
             "| symbol | kind | uses / files | compact | full (`compact: false`) | lost from Markdown | |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        bounded = r["kind"] != "class" or r["compact"] <= CONSOLE_TOKENS
        passed = r["in_json"] and not r["lost"] and bounded
        target = f" (<= {CONSOLE_TOKENS:,})" if r["kind"] == "class" else ""
        table.append(f"| `{r['anchor']}` | {r['kind']} | {r['total']} / {r['files']} | {r['compact']:,} "
                     f"| {r['full']:,} | {r['lost']} | {'PASS' if passed else 'FAIL'}{target} |")
    whole = all(r["in_json"] and not r["lost"] for r in rows)
    return [*table, "", "Every use is in the JSON (`groups[].uses`, with `kind`), and every file and line of it is "
            "in the Markdown of both forms." if whole else "**Uses are missing** (the rows that FAIL)."]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.references_compact",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--print", action="store_true", help="print the block, do not write RESULTS.md")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    started = time.monotonic()
    block = section(asyncio.run(measure()))
    print("\n".join(block))
    if not args.print:
        write_measured(args.out, TITLE, f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in "
                       f"{time.monotonic() - started:.0f} s. Reproduce: `python -m benchmarks.references_compact`.",
                       block, REFERENCES_COMPACT_MARKERS)


if __name__ == "__main__":
    main()
