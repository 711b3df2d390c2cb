"""Complete references against grep on rich 13.9.4 (issue 50): for six names an agent asks
about, the cl100k tokens of the bridge's report of every use (one answer, `max_items` 1000)
against those of `grep -rnw NAME rich/` (which finds the word, not the symbol, and shows
one line per hit), and whether the report lost a use (every use of its JSON answer is a
file and line of its Markdown). Targets: each at most 1.0x grep, the six together <= 0.3x.

    .venv/bin/python -m benchmarks.references_grep [--dump DIR]

`--dump DIR` also writes each JSON report to DIR (to render the template offline).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
from pathlib import Path

from lsap_bridge.embedded import start_embedded
from lsap_bridge.jsonvalue import JsonObject
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

from .cl100k import tokens
from .corpus import HERE, fetch_rich
from .references_compact import lost
from .report import REFERENCES_GREP_MARKERS, write_block
from .rig import TIMEOUTS

NAMES = {  # anchor: the word grep looks for
    "rich/console.py:Console": "Console",
    "rich/cells.py:cell_len": "cell_len",
    "rich/segment.py:Segment": "Segment",
    "rich/_loop.py:loop_first": "loop_first",
    "rich/text.py:Text.append": "append",
    "rich/style.py:Style.parse": "parse",
}
EACH, TOGETHER = 1.0, 0.3


def grep_tokens(root: Path, word: str) -> tuple[int, int]:
    """Lines and tokens of `grep -rnw WORD rich/` in the corpus."""
    out = subprocess.run(["grep", "-rnw", word, "rich/"], cwd=root, capture_output=True, text=True, check=False)
    return out.stdout.count("\n"), tokens(out.stdout)


async def measure(dump: Path | None) -> list[str]:
    corpus = fetch_rich()
    embedded = await start_embedded(corpus.root, corpus.servers, TIMEOUTS)
    rows = ["| name | uses / files | lsap tokens | `grep -rnw` lines / tokens | ratio | lost | |",
            "|---|---:|---:|---:|---:|---:|---|"]
    total_bridge = total_grep = 0
    ok = True
    try:
        service = Service(embedded.gateway, Workspace.of(corpus.root))
        for anchor in NAMES:  # once before measuring: a server still indexing adds a note
            await service.handle({"mode": "references", "locate": anchor, "max_items": 1, "format": "json"})
        clients = [c.id for c in await embedded.gateway.all_clients()]
        for anchor, word in NAMES.items():
            await embedded.gateway.wait_until_idle(clients)  # else a note says the index may grow
            payload: JsonObject = {"mode": "references", "locate": anchor, "max_items": 1000,
                                   "max_tokens": 100_000}
            answer = await service.handle({**payload, "format": "json"})
            assert answer.ok, answer.text
            report = json.loads(answer.text)
            await embedded.gateway.wait_until_idle(clients)  # the files the JSON answer opened
            markdown = (await service.handle(payload)).text
            if dump:
                (dump / f"{word}.json").write_text(answer.text)
                (dump / f"{word}.md").write_text(markdown)
            missing = lost(markdown, report)
            counted = tokens(markdown)
            grep_lines, grep = grep_tokens(corpus.root, word)
            passed = not missing and counted <= EACH * grep
            ok = ok and passed
            total_bridge, total_grep = total_bridge + counted, total_grep + grep
            rows.append(f"| `{anchor}` | {report['total']} / {report['files']} | {counted:,} | {grep_lines} / "
                        f"{grep:,} | {counted / grep:.2f}x | {len(missing)} | {'PASS' if passed else 'FAIL'} |")
    finally:
        await embedded.close()
    together = total_bridge / total_grep
    rows.append(f"| the six together | | {total_bridge:,} | {total_grep:,} | {together:.3f}x | | "
                f"{'PASS' if ok and together <= TOGETHER else 'FAIL'} (each <= {EACH}x, together <= {TOGETHER}x) |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, help="write each JSON and Markdown report here")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.dump))
    print("\n".join(rows))
    intro = ["## Complete references against grep (issue 50)", "",
             "References on rich 13.9.4, every use in one report, cl100k tokens, against `grep -rnw NAME rich/`",
             "(grep finds the word: `append` and `parse` hit other classes' too); `lost`: uses of the JSON",
             "answer missing from the Markdown. `.venv/bin/python -m benchmarks.references_grep`:", ""]
    write_block(HERE / "RESULTS.md", [*intro, *rows], *REFERENCES_GREP_MARKERS)


if __name__ == "__main__":
    main()
