"""What a `check` costs the editor: Neovim's CPU while checks of rich 13.9.4 wait for
basedpyright, against basedpyright's own CPU in the same checks (a ratio, so that a loaded
machine slows both sides alike).

    python -m benchmarks.check_cpu            # 3 rounds
    python -m benchmarks.check_cpu --rounds 1

A round: `loop_first` (rich/_loop.py, 4 calls in 3 other files) given a new required
argument on disk, checked until nothing is pending; then put back, checked again. The wait
looks at every buffer still waited for each tick (25 ms): what it costs there is Neovim's
main loop, which the human's keys share.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .corpus import fetch_rich
from .rig import Rig

SIGNATURE = "def loop_first(values: Iterable[T]) -> Iterable[Tuple[bool, T]]:"
BROKEN = "def loop_first(values: Iterable[T], *, strict: bool) -> Iterable[Tuple[bool, T]]:"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def descendants(pid: int) -> set[int]:
    children: dict[int, set[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, set()).add(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), set()) - out:
            out.add(child)
            todo.append(child)
    return out


def servers(nvim: int) -> set[int]:
    named = set()
    for pid in descendants(nvim):
        try:
            if b"basedpyright" in Path(f"/proc/{pid}/cmdline").read_bytes():
                named.add(pid)
        except OSError:
            continue
    return named


async def check(rig: Rig) -> float:
    """Checks until nothing was left pending (at most three): their seconds."""
    started = time.monotonic()
    for _ in range(3):
        _, result = await rig.bridge({"request": {"mode": "check", "format": "json"}})
        if not json.loads(result["text"])["pending"]:
            break
    return time.monotonic() - started


async def measure(rounds: int) -> str:
    corpus = fetch_rich()
    with tempfile.TemporaryDirectory(prefix="lsap-check-cpu-") as tmp:
        root = Path(tmp) / "rich"
        shutil.copytree(corpus.root / "rich", root / "rich")
        (root / "pyproject.toml").write_text('[project]\nname = "rich"\nversion = "13.9.4"\n')
        rig = await Rig.start(dataclasses.replace(corpus, root=root), Path(tmp) / "s.sock")
        try:
            nvim = rig.gateway.nvim_pid
            first = cpu_seconds(nvim), time.monotonic()
            await check(rig)  # the baseline: every file opened and waited for, servers starting
            baseline = cpu_seconds(nvim) - first[0], time.monotonic() - first[1]
            loop = root / "rich" / "_loop.py"
            text = loop.read_text()
            watched = {nvim} | servers(nvim)
            before = {pid: cpu_seconds(pid) for pid in watched}
            took: list[float] = []
            for _ in range(rounds):
                loop.write_text(text.replace(SIGNATURE, BROKEN))
                took.append(await check(rig))
                loop.write_text(text)
                took.append(await check(rig))
            spent = {pid: cpu_seconds(pid) - before[pid] for pid in watched}
        finally:
            await rig.close()
    editor = spent.pop(nvim)
    server = sum(spent.values())
    return (f"baseline check {baseline[1]:.1f} s: Neovim {baseline[0]:.1f} CPU s; "
            f"{2 * rounds} checks of rich ({', '.join(f'{s:.1f}' for s in took)} s): Neovim {editor:.1f} CPU s, "
            f"basedpyright {server:.1f} CPU s: Neovim/basedpyright {editor / server:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    print(asyncio.run(measure(parser.parse_args().rounds)))


if __name__ == "__main__":
    main()
