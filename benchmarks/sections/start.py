"""6: start: the embedded Neovim step by step (Neovim against a bare one, the servers'
attach, their indexing, the first answer and the first complete one), then the `lsap` CLI
cold (it starts the daemon) and warm."""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from lsap_bridge.embedded import find_nvim
from lsap_bridge.nvim_rpc import NvimConnection

from ..corpus import REPO, Corpus
from ..report import Results
from ..rig import Rig, timed


async def cold(corpus: Corpus, socket: Path, results: Results) -> Rig:
    """Start the rig, measuring each step; the rig, for the other sections."""
    bare = await timed(_bare_neovim())
    t0 = time.perf_counter()
    rig = await Rig.start(corpus, socket)
    t1 = time.perf_counter()
    bufnr = await rig.gateway.open(corpus.root / corpus.widely_used.split(":", 1)[0])
    clients = await rig.gateway.wait_for_clients(bufnr, "textDocument/references")
    t2 = time.perf_counter()
    idle = await rig.gateway.wait_until_idle([c.id for c in clients])
    t3 = time.perf_counter()
    payload = {"mode": "references", "locate": corpus.widely_used, "format": "json"}
    first, answer = await rig.bridge(payload)
    first_total, complete = total(answer), await _until_complete(rig, payload)
    warm, _ = await rig.bridge(payload)
    results.add("6 start", "Neovim start (raw: bare `nvim --embed --clean`)", (t1 - t0) * 1000, bare * 1000, "ms")
    results.add("6 start", f"server attach ({', '.join(c.name for c in clients)})", (t2 - t1) * 1000, None, "ms")
    results.add("6 start", "indexing (until $/progress is quiet)" + ("" if idle else ", gave up"), (t3 - t2) * 1000,
                None, "ms")
    results.add("6 start", "first references answer after that", first * 1000, None, "ms")
    results.add("6 start", f"  it had {first_total} results; all {complete[0]} after",
                (t3 - t0 + first + complete[1]) * 1000, None, "ms")
    results.add("6 start", "cold total (start to first answer)", (t3 - t0 + first) * 1000, None, "ms")
    results.add("6 start", "warm answer (same request again, in-process socket)", warm * 1000, None, "ms")
    if not answer["ok"]:
        results.note("first references answer failed: " + answer["text"][:300])
    return rig


def total(answer: dict[str, Any]) -> int:
    """The number of results of a `format: "json"` answer, -1 for an error."""
    return int(json.loads(answer["text"]).get("total", -1)) if answer["ok"] else -1


async def _bare_neovim() -> None:
    """The baseline of the embedded start: the same Neovim with no plugin, first answer."""
    conn = await NvimConnection.spawn([find_nvim(), "--embed", "--headless", "--clean", "-n", "-i", "NONE"])
    await conn.request("nvim_get_api_info")
    await conn.close()


async def _until_complete(rig: Rig, payload: dict[str, Any]) -> tuple[int, float]:
    """Ask again until the count holds for 3 s: a server that says it is ready may still be
    loading the project (doc/architecture.md, Costs), and warm figures must not be measured
    on a partial one."""
    start, last, since = time.perf_counter(), -1, time.perf_counter()
    while time.perf_counter() - start < 180:
        count = total((await rig.bridge(payload))[1])
        if count != last:
            last, since = count, time.perf_counter()
        elif time.perf_counter() - since >= 3:
            break
        await asyncio.sleep(0.5)
    return last, since - start


CLI_RATIO = 2.0  # issue 21: a warm call costs little more than starting Python
CLI_REPS = 15


def cli(corpus: Corpus, results: Results) -> None:
    """The `lsap` CLI as an agent runs it: cold (starts the daemon) and warm, the warm call
    against a bare `python -c pass` of the same interpreter, the two alternating, once the
    daemon's start-up work is done. The package's bytecode is compiled first, as installing
    a wheel does (a first run writes it too, unless PYTHONDONTWRITEBYTECODE is set)."""
    compileall.compile_dir(str(REPO / "lsap_bridge"), quiet=1)
    env = {**os.environ, "LSAP_SERVERS": ",".join(corpus.servers)}
    lsap = [str(Path(sys.executable).parent / "lsap"), "--root", str(corpus.root)]
    hover = [*lsap, "hover", corpus.hover]
    cold_cli = _timed(hover, env)
    sessions = json.loads(subprocess.run([*lsap, "sessions", "--json"], env=env, capture_output=True,
                                         text=True, timeout=60).stdout)
    _quiet([info["pid"] for info in sessions if info["kind"] == "daemon"])
    warm_times, bare_times = [], []
    for _ in range(CLI_REPS):
        warm_times.append(_timed(hover, env))
        bare_times.append(_timed([sys.executable, "-c", "pass"], env))
    warm, bare = statistics.median(warm_times), statistics.median(bare_times)
    results.add("6 start", "CLI `lsap hover` cold (starts the daemon)", cold_cli * 1000, None, "ms")
    results.add("6 start", f"CLI `lsap hover` warm daemon, whole process (raw: bare `python -c pass`, median of "
                f"{CLI_REPS})", warm * 1000, bare * 1000, "ms", f"ratio <= {CLI_RATIO}", warm <= CLI_RATIO * bare)
    warm_refs = statistics.median(_timed([*lsap, "references", corpus.widely_used], env) for _ in range(3))
    results.add("6 start", "CLI `lsap references` warm daemon", warm_refs * 1000, None, "ms")
    subprocess.run([*lsap, "daemon", "stop"], env=env, capture_output=True, timeout=60)


QUIET_CPU = 0.05  # seconds of CPU per second: the daemon's processes are done warming up
QUIET_LIMIT = 120.0


def _quiet(pids: list[int]) -> None:
    """Wait (bounded) until the daemon and everything it started (Neovim, the servers) use
    next to no CPU: the daemon opens the workspace for its servers after its first answer,
    and a warm call timed during that indexing measures the indexing."""
    deadline = time.monotonic() + QUIET_LIMIT
    last = _cpu_seconds(pids)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _cpu_seconds(pids)
        if now - last < QUIET_CPU:
            return
        last = now


def _cpu_seconds(roots: list[int]) -> float:
    """User and system CPU seconds of the processes `roots` and their descendants."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        pid = int(stat.parent.name)
        parents[pid], ticks[pid] = int(fields[1]), int(fields[11]) + int(fields[12])
    tree, grew = set(roots), True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return sum(ticks.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def _timed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return time.perf_counter() - start
