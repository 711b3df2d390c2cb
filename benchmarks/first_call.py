"""The first MCP tool call of a session, as an agent meets it: `lsap mcp` started by the
agent, the official SDK's client, the embedded daemon it starts.

    python -m benchmarks.first_call           # rich 13.9.4 (basedpyright)
    python -m benchmarks.first_call --quick   # examples/shop, one repetition

Three figures of the same tool call, each from a fresh `lsap mcp` and daemon (in a runtime
directory of the run's own): cold, sent right after initialize (nothing had time to start:
what every first call cost before `lsap mcp` reached its session at start and the daemon
opened the workspace); after a 5 s pause following initialize (what an agent reading the
instructions and the tool list gives it); and warm, the same call again. Medians of the
repetitions, cold and pre-warmed alternating; written into RESULTS.md between its markers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .corpus import HERE, Corpus, example_copy, fetch_rich
from .report import FIRST_CALL_MARKERS, fmt, write_measured
from .rig import timed

PAUSE = 5.0  # seconds between initialize and the first call, pre-warmed


def tool_calls(corpus: Corpus) -> dict[str, tuple[str, dict[str, Any]]]:
    """The first calls measured: an agent's usual first questions."""
    return {
        "references": ("lsap_references", {"locate": corpus.widely_used}),
        "hover": ("lsap_query", {"request": {"mode": "hover", "locate": corpus.hover}}),
    }


async def session_times(corpus: Corpus, env: dict[str, str], call: tuple[str, dict[str, Any]],
                        pause: float) -> tuple[float, float]:
    """Seconds of the first call (after `pause` seconds past initialize) and of the same call
    again, from a fresh `lsap mcp`; its daemon is stopped after."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    lsap = [sys.executable, "-m", "lsap_bridge", "--root", str(corpus.root)]
    params = StdioServerParameters(command=lsap[0], args=[*lsap[1:], "--servers", ",".join(corpus.servers),
                                                          "mcp"], cwd=str(corpus.root), env=env)
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await asyncio.sleep(pause)
            name, arguments = call
            answers: list[Any] = []

            async def ask() -> None:
                answers.append(await session.call_tool(name, arguments))

            first, again = await timed(ask()), await timed(ask())
            failed = [a.content[0].text[:300] for a in answers if a.is_error]
            if failed:
                raise RuntimeError(f"{name} failed: {failed[0]}")
            return first, again
    finally:
        subprocess.run([*lsap, "daemon", "stop"], env=env, capture_output=True, timeout=60)


async def measure(corpus: Corpus, reps: int, runtime: Path) -> list[str]:
    """The Markdown block: one row per tool call, medians of `reps` fresh sessions each."""
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    rows = [f"### {corpus.name} {corpus.version} ({', '.join(corpus.servers)})", "",
            "| first tool call | cold (right after initialize) | after a 5 s pause | warm (again) "
            "| pause / cold | pause / warm |", "|---|---:|---:|---:|---:|---:|"]
    for label, call in tool_calls(corpus).items():
        cold: list[float] = []
        paused: list[float] = []
        warm: list[float] = []
        for rep in range(reps):
            order: list[tuple[float, list[float]]] = [(0.0, cold), (PAUSE, paused)]
            for pause, into in order if rep % 2 == 0 else order[::-1]:
                first, again = await session_times(corpus, env, call, pause)
                into.append(first)
                warm.append(again)
                print(f"  {label:<11} pause {pause:g} s: first {first * 1000:.0f} ms, again {again * 1000:.0f} ms",
                      flush=True)
        c, p, w = (statistics.median(x) * 1000 for x in (cold, paused, warm))
        rows.append(f"| {label} | {fmt(c, 'ms')} | {fmt(p, 'ms')} | {fmt(w, 'ms')} | {p / c:.2f}x | {p / w:.2f}x |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_call", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="examples/shop, one repetition")
    parser.add_argument("--reps", type=int, default=None, help="fresh sessions per figure (default 3)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    reps = args.reps or (1 if args.quick else 3)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lsap-first-call-") as work:
        runtime = Path(work) / "runtime"
        runtime.mkdir(mode=0o700)
        corpus = example_copy(Path(work)) if args.quick else fetch_rich()
        block = asyncio.run(measure(corpus, reps, runtime))
    command = "python -m benchmarks.first_call" + (" --quick" if args.quick else "")
    write_measured(
        args.out, "## First MCP tool call",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {time.monotonic() - started:.0f} s, "
        f"median of {reps} fresh `lsap mcp` sessions and daemons per figure. Reproduce: `{command}`.",
        block, FIRST_CALL_MARKERS)


if __name__ == "__main__":
    main()
