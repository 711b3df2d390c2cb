"""7: scale: generated files inside the corpus (a class used 200, 2,000, 20,000 times; files
of 200, 2,000, 20,000 lines): the bridge's first page against the raw references with the
symbols and reads of the first 50, and peak Python memory of each side."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from lsap_bridge.workspace import uri_of

from ..baselines import Point, point_of, raw_first_page, raw_outline
from ..corpus import raw_twin, scale_outline, scale_references
from ..report import Results
from ..rig import Rig, medians, peak_mb, rss_mb, timed
from .start import total

REPS = 5
COLD = 3  # cold outlines per side and size: a file each, so that every one is cold
Step = tuple[int, float, float, float]  # size, seconds, peak MB, the raw side's seconds
# Issue 21: the first page costs what the page needs, whatever the total.
REFERENCES_RATIO = 1.2  # references, at the largest size
OUTLINE_RATIO = 1.3  # a cold outline, at the largest size
GROWTH_NOISE = 1.1  # into the largest size, time growth per x10 items no worse than raw's, within this


@dataclass(frozen=True)
class Generated:
    """Anchors of the classes by number of uses, and paths of the files by number of lines
    (`COLD` files of the same text each, the last also measured warm)."""

    references: dict[int, str]
    outlines: dict[int, list[str]]

    @classmethod
    def write(cls, root: Path, sizes: tuple[int, ...]) -> Generated:
        """Before the server starts, so that it indexes them like the rest."""
        return cls({n: scale_references(root, n) for n in sizes},
                   {n: [scale_outline(root, n, copy) for copy in range(COLD)] for n in sizes})


async def measure(rig: Rig, results: Results, generated: Generated) -> None:
    previous: Step | None = None
    for size, anchor in generated.references.items():
        point = await point_of(rig, anchor, "textDocument/references")
        payload = {"mode": "references", "locate": anchor}
        # Warms the server's caches for this symbol; the timed requests are as agents send them.
        _, answer = await rig.bridge({**payload, "format": "json"})
        refs = (await raw_first_page(rig, point)).answers["references"] or []
        seconds, raw_seconds = await medians(rig, payload, partial(raw_first_page, rig, point), REPS)
        peak, raw_peak = await peak_mb(rig.bridge(payload)), await peak_mb(raw_first_page(rig, point))
        count = total(answer)
        if count < 0:
            results.note(f"references of {anchor} failed: {answer['text'][:300]}")
        largest = size == max(generated.references)
        target = f"ratio <= {REFERENCES_RATIO}" if largest else ""
        results.add("7 scale", f"references, {count} results: first page (median of {REPS})", seconds * 1000,
                    raw_seconds * 1000, "ms", target, seconds <= REFERENCES_RATIO * raw_seconds if largest else None)
        results.add("7 scale", f"  peak Python memory ({len(refs)} raw results)", peak, raw_peak, "MB")
        previous = growth(results, "items", previous, (size, seconds, peak, raw_seconds), against_raw=largest)
    results.add("7 scale", "Neovim RSS after the scale runs", rss_mb(rig.gateway.nvim_pid), None, "MB")
    client = await point_of(rig, rig.corpus.widely_used, "textDocument/documentSymbol")
    previous = None
    for lines, paths in generated.outlines.items():
        # Each side on its own identical file, so that both start cold; the sides alternate.
        colds: list[float] = []
        raw_colds: list[float] = []
        failed = False
        for index, path in enumerate(paths):
            twin = raw_twin(rig.corpus.root / path)
            raw = Point(twin, client.client_id, None, {"textDocument": {"uri": uri_of(twin)}})
            if index % 2:
                raw_colds.append(await timed(raw_outline(rig, raw)))
            seconds, answer = await rig.bridge({"mode": "outline", "file_path": path})
            colds.append(seconds)
            failed = failed or not answer["ok"]
            if not index % 2:
                raw_colds.append(await timed(raw_outline(rig, raw)))
        cold, raw_cold = statistics.median(colds), statistics.median(raw_colds)
        payload = {"mode": "outline", "file_path": paths[-1]}  # warm now, as is `raw`
        warm, raw_warm = await medians(rig, payload, partial(raw_outline, rig, raw), REPS)
        peak, raw_peak = await peak_mb(rig.bridge(payload)), await peak_mb(raw_outline(rig, raw))
        largest = lines == max(generated.outlines)
        results.add("7 scale", f"outline of a {lines}-line file: first page, cold (median of {COLD})"
                    + (" (failed)" if failed else ""), cold * 1000, raw_cold * 1000, "ms",
                    f"ratio <= {OUTLINE_RATIO}" if largest else "",
                    not failed and cold <= OUTLINE_RATIO * raw_cold if largest else None)
        results.add("7 scale", f"  same, warm (median of {REPS})", warm * 1000, raw_warm * 1000, "ms")
        results.add("7 scale", "  peak Python memory", peak, raw_peak, "MB")
        previous = growth(results, "lines", previous, (lines, warm, peak, raw_warm))


def growth(results: Results, unit: str, previous: Step | None, step: Step, against_raw: bool = False) -> Step:
    """How time and memory grew from the previous size to this one; this one, for the next.
    `against_raw`: the target not to grow faster than the raw side (the step into the
    largest size, where the items' cost outweighs what a request costs anyway)."""
    if previous:
        (size, seconds, peak, raw), (last, last_seconds, last_peak, last_raw) = step, previous
        grew, raw_grew = seconds / last_seconds, raw / last_raw
        results.add("7 scale", f"  growth for x{size // last} {unit}: time, memory",
                    f"x{grew:.1f}, x{peak / max(last_peak, 1e-6):.1f}", f"x{raw_grew:.1f}",
                    "", f"time <= raw's x{GROWTH_NOISE}" if against_raw else "",
                    grew <= raw_grew * GROWTH_NOISE if against_raw else None)
    return step
