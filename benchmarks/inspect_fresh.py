"""`inspect` on rxjs against the raw work it replaces, with the freshness work on (the
disk watch, the workspace sync) and off, in the same run (issue 32: <= 1.1x raw with it
on). The same measurement as section 1's `inspect` row (`benchmarks/sections/latency.py`),
alone, so that it can be run without the whole benchmark.

    .venv/bin/python -m benchmarks.inspect_fresh [--reps 41] [--print]

Written into RESULTS.md between its markers (`--print`: printed only).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from functools import partial
from pathlib import Path

from lsap_bridge.diskwatch import Basis, fs_now_ns

from .baselines import METHODS, bridge_payload, point_of
from .corpus import HERE, fetch_rxjs
from .report import Results, write_measured
from .rig import alternate, median_ms
from .sections.start import cold

TARGET = 1.1
INSPECT_FRESH_MARKERS = ("<!-- inspect_fresh: python -m benchmarks.inspect_fresh -->", "<!-- /inspect_fresh -->")
TITLE = "## Warm `inspect` with the freshness work on and off (issue 32)"


def section(anchor: str, reps: int, on: float, off: float, raw: float) -> list[str]:
    """The RESULTS.md block's figures (milliseconds)."""
    ratio = on / raw
    return [f"`inspect` of `{anchor}` on rxjs against the raw work, median of {reps}, alternating: with the "
            f"freshness work (the disk watch, the workspace sync) {on:.1f} ms, without it {off:.1f} ms, raw "
            f"{raw:.1f} ms: **{ratio:.2f}x raw** (wanted <= {TARGET}; 1.35x before issue 32) "
            f"{'PASS' if ratio <= TARGET else 'FAIL'}."]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.inspect_fresh", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=41)
    parser.add_argument("--print", action="store_true", help="print the block, do not write RESULTS.md")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    started = time.monotonic()
    anchor, (on, raw, off) = asyncio.run(measure(args.reps))
    block = section(anchor, args.reps, median_ms(on), median_ms(off), median_ms(raw))
    print("\n".join(block))
    if not args.print:
        write_measured(args.out, TITLE, f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in "
                       f"{time.monotonic() - started:.0f} s. Reproduce: `python -m benchmarks.inspect_fresh`.",
                       block, INSPECT_FRESH_MARKERS)


async def measure(reps: int) -> tuple[str, list[list[float]]]:
    """The anchor, and the seconds of each side: the bridge with the freshness work, the
    raw work, the bridge without it."""
    corpus = fetch_rxjs()
    with tempfile.TemporaryDirectory(prefix="lsap-inspect-") as tmp:
        # Started as the main run starts it: warm figures once the server has the whole project.
        rig = await cold(corpus, Path(tmp) / "rig.sock", Results(corpus.name))
        try:
            method, raw_runner = METHODS["inspect"]
            payload = bridge_payload("inspect", corpus)
            point = await point_of(rig, payload["locate"], method)
            session = rig.service.session
            sync = session.servers.sync_disk

            async def no_sync(at_ns: int | None = None) -> Basis:
                """The freshness work off: the record as it stands, nothing scanned or told."""
                return session.servers.watch.basis(fs_now_ns() if at_ns is None else at_ns)

            async def fresh_off() -> object:
                session.servers.sync_disk = no_sync  # type: ignore[method-assign]
                try:
                    return await rig.bridge(payload)
                finally:
                    session.servers.sync_disk = sync  # type: ignore[method-assign]

            for _ in range(3):  # warm both sides: caches, server state
                _, answer = await rig.bridge(payload)
                assert answer["ok"], answer["text"][:300]
                await raw_runner(rig, point)
            return str(payload["locate"]), await alternate(
                rig, payload, [partial(raw_runner, rig, point), fresh_off], reps)
        finally:
            await rig.close()


if __name__ == "__main__":
    main()
