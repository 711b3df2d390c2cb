"""Disk truth at monorepo scale (issue 32): a generated workspace of `--files` code files
(100,000 by default) with examples/shop inside it, against one of 1,000, each on a real
headless Neovim with basedpyright, the service in-process.

Measured in the same run: the freshness check (`DiskWatch.changes`) through the watcher
against the stat scan it replaces (ratio); an agent's disk edit to a deep file seen by the
next `references`; a warm `hover` in the large workspace against the small one (median of
`--hover-reps`, alternating, ratio <= 1.05); the watcher's CPU while idle (<= 1 %); its watches and the Python
memory of its watch set. The generated files are Go files (code files the disk watch
watches and a scan stats, that basedpyright does not index), so the servers' start stays
what it is and the cost measured is the disk watch's.

    .venv/bin/python -m benchmarks.disk_scale [--files 100000] [--reps 15]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from lsap_bridge.diskwatch import DiskWatch
from lsap_bridge.embedded import Embedded, start_embedded
from lsap_bridge.service import Service
from lsap_bridge.watcher import Watcher
from lsap_bridge.workspace import Workspace

from .rig import TIMEOUTS

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "shop"
DEEP = "shop/deep/a/b/c/d/e/f/g/leaf.py"
USES = "from shop.models import Product\n\n\ndef first(items: list[Product]) -> Product:\n    return items[0]\n"
PER_DIR = 50  # files per generated directory, 4 levels of directories


def generate(root: Path, files: int) -> Path:
    """examples/shop with `files` generated code files around it, `.gitignore`d trees and a
    `node_modules/` that cost nothing; the deep file the agent edits."""
    project = root / "shop"
    shutil.copytree(EXAMPLE, project)
    (project / DEEP).parent.mkdir(parents=True)
    (project / DEEP).write_text(USES)
    for n in range(files):
        d = n // PER_DIR
        directory = project / "gen" / f"p{d // 1000}" / f"q{d // 100 % 10}" / f"r{d % 100}"
        if n % PER_DIR == 0:
            directory.mkdir(parents=True)
        (directory / f"f{n}.go").write_text(f"package gen\n\nconst V{n} = {n}\n")
    (project / "node_modules" / "pkg").mkdir(parents=True)
    (project / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    return project


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def ask(service: Service, **payload: Any) -> dict[str, Any]:
    response = await service.handle({**payload, "format": "json"})
    assert response.ok, response.text
    data: dict[str, Any] = json.loads(response.text)
    return data


async def hover(service: Service) -> float:
    start = time.perf_counter()
    await ask(service, mode="hover", locate="shop/models.py:Product")
    return time.perf_counter() - start


async def started(project: Path) -> tuple[Embedded, Service, dict[str, Any]]:
    """The workspace's Neovim and service, with what setting up the disk watch cost."""
    embedded = await start_embedded(project, ["basedpyright"], TIMEOUTS)
    begun = time.perf_counter()
    service = Service(embedded.gateway, Workspace.of(project))
    setup = time.perf_counter() - begun
    watch = service.session.servers.watch
    assert watch.watcher is not None
    tracemalloc.start()
    Watcher([project])  # the same watch set again, measured
    held = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return embedded, service, {"setup_s": setup, "watches": watch.watcher.watches,
                               "python_mb": held / 2**20, "scanning": watch.scanning}


async def measure(project: Path, service: Service, out: dict[str, Any], reps: int) -> None:
    """The deep edit, the freshness check against a scan, the idle CPU."""
    watch = service.session.servers.watch
    anchor = "shop/models.py:Product"
    before = 0
    for _ in range(120):  # the server indexes the deep file at its own pace
        before = (await ask(service, mode="references", locate=anchor, max_items=500))["total"]
        if before >= 21:  # examples/shop's 18 and the deep file's 3
            break
        await asyncio.sleep(0.5)
    (project / DEEP).write_text(USES + "\nSPARE = Product\n")
    after = (await ask(service, mode="references", locate=anchor, max_items=500))["total"]
    out["deep_edit"] = (before, after)
    scan = DiskWatch(service.session.workspace, lambda: None, watcher=Watcher([project], 0))
    scan.changes()
    out["check_watcher"] = [timed(watch.changes) for _ in range(reps)]
    out["check_scan"] = [timed(scan.changes) for _ in range(max(3, reps // 5))]
    cpu = time.process_time()
    await asyncio.sleep(5)
    out["idle_cpu_pct"] = (time.process_time() - cpu) / 5 * 100


def timed(call: Any) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--reps", type=int, default=31)
    parser.add_argument("--hover-reps", type=int, default=301, help="a warm hover is ~2 ms: many")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lsap-disk-scale-") as tmp:
        made = time.perf_counter()
        large = generate(Path(tmp) / "large", args.files)
        small = generate(Path(tmp) / "small", args.small)
        print(f"generated {args.files:,} + {args.small:,} files in {time.perf_counter() - made:.1f} s")
        big_nvim, big_service, big = await started(large)
        little_nvim, little_service, little = await started(small)
        try:
            await measure(large, big_service, big, args.reps)
            await measure(small, little_service, little, args.reps)
            # Warm hovers, alternating between the workspaces (the machine's noise on both).
            await hover(big_service)
            await hover(little_service)
            for _ in range(args.hover_reps):
                big.setdefault("hover", []).append(await hover(big_service))
                little.setdefault("hover", []).append(await hover(little_service))
        finally:
            await big_nvim.close()
            await little_nvim.close()
    for name, r in (("large", big), ("small", little)):
        print(f"{name}: {r['watches']:,} watches, watch set {r['python_mb']:.2f} MB Python (peak while built), "
              f"service started in {r['setup_s']:.2f} s, scanning: {r['scanning']}, references before/after the "
              f"deep edit: {r['deep_edit']}, freshness check {median_ms(r['check_watcher']):.3f} ms (a scan of up "
              f"to 10,000: {median_ms(r['check_scan']):.1f} ms), idle CPU {r['idle_cpu_pct']:.2f} %")
    ratio = statistics.median(big["hover"]) / statistics.median(little["hover"])
    print(f"warm hover: {median_ms(big['hover']):.2f} ms ({args.files:,} files) vs {median_ms(little['hover']):.2f} ms "
          f"({args.small:,}): ratio {ratio:.3f} (target <= 1.05) {'PASS' if ratio <= 1.05 else 'FAIL'}")
    print(f"freshness check, watcher vs scan ({args.files:,} files): "
          f"{median_ms(big['check_watcher']) / median_ms(big['check_scan']):.5f}x")
    seen = all(r["deep_edit"][1] == r["deep_edit"][0] + 1 for r in (big, little))
    ok = seen and big["idle_cpu_pct"] <= 1 and ratio <= 1.05
    print("PASS" if ok else "FAIL")

if __name__ == "__main__":
    asyncio.run(main())
