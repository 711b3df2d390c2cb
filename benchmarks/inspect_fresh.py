"""`inspect` on rxjs against the raw work it replaces, with the freshness work on (the
disk watch, the workspace sync) and off, in the same run (issue 32: <= 1.1x raw with it
on). The same measurement as section 1's `inspect` row (`benchmarks/sections/latency.py`),
alone, so that it can be run without the whole benchmark.

    .venv/bin/python -m benchmarks.inspect_fresh [--reps 21]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from functools import partial
from pathlib import Path

from lsap_bridge.diskwatch import Basis, fs_now_ns

from .baselines import METHODS, bridge_payload, point_of
from .corpus import fetch_rxjs
from .rig import Rig, alternate, median_ms

TARGET = 1.1


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=21)
    args = parser.parse_args()
    corpus = fetch_rxjs()
    with tempfile.TemporaryDirectory(prefix="lsap-inspect-") as tmp:
        rig = await Rig.start(corpus, Path(tmp) / "rig.sock")
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
            on, raw, off = await alternate(rig, payload, [partial(raw_runner, rig, point), fresh_off], args.reps)
        finally:
            await rig.close()
    b, r, o = median_ms(on), median_ms(raw), median_ms(off)
    print(f"inspect `{payload['locate']}` warm, median of {args.reps}: bridge {b:.1f} ms with the freshness work, "
          f"{o:.1f} ms without it; raw {r:.1f} ms; ratio {b / r:.3f} (target <= {TARGET}), "
          f"without it {o / r:.3f} {'PASS' if b / r <= TARGET else 'FAIL'}")


if __name__ == "__main__":
    asyncio.run(main())
