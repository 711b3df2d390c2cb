"""One side of the warm `locate` latency comparison (benchmarks/anchors.py runs it).

    python benchmarks/locate_latency.py SOURCE FINDS.json

SOURCE is a checkout whose `lsap_bridge` (and `benchmarks`) come first on sys.path, so that
the same script measures this checkout and a base commit alike. Prints one JSON line: the
median seconds in ms of each group of finds, after two warm-up rounds.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any


async def measure(spec: dict[str, Any]) -> dict[str, float]:
    from benchmarks.corpus import Corpus

    try:
        from benchmarks.rig import Rig
    except ImportError:  # a base commit from before benchmarks.run was split into modules
        from benchmarks.run import Rig  # type: ignore[attr-defined, no-redef]

    root = Path(spec["root"])
    corpus = Corpus("latency", "", root, spec["servers"], "", "", "", "", "")
    finds: list[tuple[str, dict[str, str]]] = [(group, find) for group, find in spec["finds"]]
    with tempfile.TemporaryDirectory(prefix="lsap-latency-") as tmp:
        rig = await Rig.start(corpus, Path(tmp) / "s.sock")
        try:
            for _ in range(2):  # warm: buffers loaded, servers attached, symbols cached
                for _, find in finds:
                    await rig.bridge({"mode": "locate", "locate": find})
            times: dict[str, list[float]] = {group: [] for group, _ in finds}
            for _ in range(spec["reps"]):
                for group, find in finds:
                    seconds, _answer = await rig.bridge({"mode": "locate", "locate": find})
                    times[group].append(seconds)
        finally:
            await rig.close()
    return {group: 1000 * statistics.median(samples) for group, samples in times.items()}


def main() -> None:
    source, payload = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    sys.path.insert(0, str(source))
    print(json.dumps(asyncio.run(measure(json.loads(payload.read_text())))))


if __name__ == "__main__":
    main()
