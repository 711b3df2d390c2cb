"""3: the tokens of the bridge's references report against the raw references JSON plus the
whole files an agent reads to see each use in context, and whether the report left any use,
or any use's enclosing symbol, out."""

from __future__ import annotations

import json
from typing import Any

from lsap_bridge.symbols import build_tree, document_symbols
from lsap_bridge.workspace import path_of

from ..baselines import RawWork, point_of, raw_references
from ..cl100k import encoder
from ..report import Results
from ..rig import Rig


async def measure(rig: Rig, results: Results) -> None:
    enc = encoder()
    corpus = rig.corpus
    point = await point_of(rig, corpus.widely_used, "textDocument/references")
    work = await raw_references(rig, point)
    total = len(work.answers["references"] or [])
    # Every use in one report (`max_tokens` past the 8,000 a default answer keeps to).
    payload = {"mode": "references", "locate": corpus.widely_used, "max_items": min(max(total, 1), 1000),
               "max_tokens": 100_000}
    _, answer = await rig.bridge(payload)
    _, shown = await rig.bridge({**payload, "format": "json"})  # the same report, as data
    report = answer["text"]
    bridge_tokens = len(enc.encode(report))
    raw_tokens = len(enc.encode(json.dumps(work.answers["references"]))) + len(enc.encode("".join(work.files.values())))
    results.add("3 tokens", f"references of `{corpus.widely_used}` ({total} uses, {len(work.files)} files)",
                bridge_tokens, raw_tokens, "", "ratio <= 0.2", raw_tokens >= 5 * bridge_tokens)
    results.add("3 tokens", "  times fewer tokens", f"{raw_tokens / bridge_tokens:.1f}x", None, "", ">= 5x")
    with_symbols = raw_tokens + len(enc.encode(json.dumps(work.symbols)))
    results.add("3 tokens", "  raw including documentSymbol JSON", bridge_tokens, with_symbols)
    missing, symbols_missing, expected_symbols = missing_from(rig, work, json.loads(shown["text"]))
    results.add("3 tokens", "  locations missing from the report", missing, 0, "", "0", missing == 0)
    results.add("3 tokens", "  enclosing symbols missing from the report", symbols_missing, 0, "",
                f"0 of {expected_symbols}", symbols_missing == 0)


def missing_from(rig: Rig, work: RawWork, report: dict[str, Any]) -> tuple[int, int, int]:
    """Raw locations whose line the report does not show in its file, and those not under
    their enclosing symbol (by the raw client's own documentSymbol), of how many have one."""
    shown: dict[tuple[str, str | None], set[int]] = {}
    for group in report.get("groups", []):
        shown.setdefault((group["path"], group["symbol"]), set()).update(u["line"] for u in group["uses"])
    workspace = rig.service.workspace
    trees = {uri: build_tree(document_symbols(result), work.files[uri].splitlines(), "utf-16")
             for uri, result in work.symbols.items()}
    missing = symbols_missing = expected_symbols = 0
    for ref in work.answers["references"] or []:
        path = path_of(ref["uri"])
        if not workspace.contains(path):
            continue
        line, column = ref["range"]["start"]["line"], ref["range"]["start"]["character"]
        symbol = trees[ref["uri"]].enclosing_path(line, column)
        display = workspace.display(path)
        if not any(p == display and line + 1 in lines for (p, _), lines in shown.items()):
            missing += 1
        if symbol:
            expected_symbols += 1
            if line + 1 not in shown.get((display, symbol), set()):
                symbols_missing += 1
    return missing, symbols_missing, expected_symbols
