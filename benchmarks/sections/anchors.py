"""5: anchor accuracy: the accuracy corpus (`benchmarks/accuracy.py`) through the bridge's
real `locate` mode over the real buffers."""

from __future__ import annotations

import random
import time

from .. import accuracy
from ..report import Results
from ..rig import Rig, Settings


async def measure(rig: Rig, results: Results, settings: Settings) -> None:
    corpus = rig.corpus
    cases = accuracy.generate(corpus.root, corpus.files, corpus.language, settings.accuracy_per_kind,
                              random.Random(7))
    start = time.perf_counter()
    outcome = await accuracy.run(rig.service, rig.gateway, cases)
    seconds = time.perf_counter() - start
    for metric, value, unit, target, ok in accuracy.rows(outcome):
        results.add("5 anchors", metric, value, None, unit, target, ok)
    least = settings.min_locates
    results.add("5 anchors", f"total locates ({len(cases)}), mean time each", 1000 * seconds / len(cases), None, "ms",
                f">= {least} locates" if least else "", len(cases) >= least if least else None)
