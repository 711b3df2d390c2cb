"""The benchmark runner: the bridge against the same work done with raw LSP, in one run.

    python -m benchmarks.run                 # rich 13.9.4 (Python) and rxjs 7.8.1 (TypeScript)
    python -m benchmarks.run --corpus rich   # one corpus
    python -m benchmarks.run --quick         # examples/shop, small sizes, no download
    python -m benchmarks.run --peers         # beside lsap-sdk and Serena (benchmarks/peers.py)
    python -m benchmarks.run --only stress   # the suite's timings and floods (benchmarks/stress.py)
    python -m benchmarks.run --only quit     # :qa! right after start (benchmarks/quit_at_start.py)

One embedded headless Neovim per corpus serves both sides (`rig.py`): the bridge through its
agent socket, the raw baseline as the LSP requests an agent needs (`baselines.py`), sent
through the same Neovim with the same transport. Every figure with a baseline is a ratio of
the two medians of the same run, so that a busy shared machine moves both sides alike. Each
section is a module of `sections/`; `report.py` writes RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from . import quit_at_start, stress
from .corpus import HERE, REPO, Corpus, example_copy, fetch_rich, fetch_rxjs
from .report import EDIT_LOOP_MARKERS, Results, write_report, write_section
from .rig import FULL, QUICK, Settings
from .sections import actions, anchors, edit_loop, editor, latency, scale, start, tokens

SECTIONS = ("start", "latency", "tokens", "editor", "anchors", "scale", "edit_loop", "actions")


async def run_corpus(corpus: Corpus, settings: Settings, sections: set[str], workdir: Path) -> Results:
    results = Results(f"{corpus.name} {corpus.version} ({', '.join(corpus.servers)})")
    print(f"\n== {results.corpus} ==", flush=True)
    if "scale" in sections and corpus.language != "python":
        sections = sections - {"scale"}
        results.note("scale runs on the Python corpus only (its generated files are Python)")
    generated = scale.Generated.write(corpus.root, settings.scale_sizes if "scale" in sections else ())
    rig = await start.cold(corpus, workdir / f"{corpus.name.replace('/', '-')}.sock", results)
    try:
        if "latency" in sections:
            await latency.measure(rig, results, settings)
        if "tokens" in sections:
            await tokens.measure(rig, results)
        if "anchors" in sections:
            await anchors.measure(rig, results, settings)
        if "scale" in sections:
            await scale.measure(rig, results, generated)
        if "edit_loop" in sections:
            await edit_loop.measure(rig, results, settings)
        if "editor" in sections:  # the load it puts on the server stays out of the rest
            await editor.measure(rig, results, settings)
        if "actions" in sections:  # last: it may start ruff server beside the corpus's servers
            await actions.measure(rig, results, settings)
    finally:
        await rig.close()
    if settings.daemon and "start" in sections:
        await asyncio.to_thread(start.cli, corpus, results)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny corpus (examples/shop), no download")
    parser.add_argument("--corpus", choices=("rich", "ts", "all"), default="all")
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections: " + ",".join(SECTIONS)
                        + "; `stress` and `quit` (not in the default) run alone, after any other")
    parser.add_argument("--out", type=Path, help="where to write the results (Markdown)")
    parser.add_argument("--peers", action="store_true", help="rich beside lsap-sdk and Serena (benchmarks/peers.py)")
    args = parser.parse_args(argv)
    if args.peers:  # its own module, which reuses the rig: run it, not import it
        os.execv(sys.executable, [sys.executable, "-m", "benchmarks.peers"])
    sections = set(args.only.split(","))
    if sections - {"stress", "quit"}:
        run_corpora(args, sections - {"stress", "quit"})
    if "quit" in sections:  # Neovims of its own in tmux, not a corpus's section
        quit_at_start.run(args.out or HERE / "RESULTS.md", 20)
    if "stress" in sections:  # not a corpus's section: the suite's tests marked `stress`
        sys.exit(stress.run(args.out or HERE / "RESULTS.md", []))


def run_corpora(args: argparse.Namespace, sections: set[str]) -> None:
    settings = QUICK if args.quick else FULL
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lsap-bench-") as tmp:
        workdir = Path(tmp)
        # The daemon and its discovery files live here, away from anyone's real sessions.
        os.environ["XDG_RUNTIME_DIR"] = str(workdir)
        os.environ["PATH"] = os.pathsep.join(
            [str(REPO / "node_modules" / ".bin"), str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        if args.quick:
            corpora = [example_copy(workdir)]
        else:
            corpora = ([fetch_rich()] if args.corpus in ("rich", "all") else []) + (
                [fetch_rxjs()] if args.corpus in ("ts", "all") else [])
        all_results = [asyncio.run(run_corpus(c, settings, sections, workdir)) for c in corpora]
    out = args.out or (HERE / ".corpus" / "RESULTS-quick.md" if args.quick else HERE / "RESULTS.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    command = ("python -m benchmarks.run" + (" --quick" if args.quick else "")
               + (f" --corpus {args.corpus}" if args.corpus != "all" else ""))
    if sections == {"edit_loop"} and not args.out and not args.quick:  # its own block of RESULTS.md
        write_section(out, all_results, edit_loop.SECTION, edit_loop.TITLE, time.perf_counter() - started,
                      EDIT_LOOP_MARKERS)
    else:
        write_report(out, all_results, command, time.perf_counter() - started)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
