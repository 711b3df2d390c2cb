"""The stress section (issue 48): the timings, floods and repetitions the suite does not
assert. It runs the tests marked `stress` one at a time with LSAP_STRESS=1 (their full
repetitions, each figure held to its target: `tests/stress.py`), and writes every figure
with its target into RESULTS.md. A missed target fails its test: the run says so and exits
non-zero.

    python -m benchmarks.run --only stress
    python -m benchmarks.stress -k quit          # a part of it
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from .corpus import HERE, REPO
from .report import STRESS_MARKERS, fmt, machine, versions, write_block


def run(out: Path, selection: list[str]) -> int:
    """The stress tests' exit code, their figures written between the markers of `out`."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lsap-stress-") as work:
        figures, junit = Path(work) / "figures.jsonl", Path(work) / "junit.xml"
        env = {**os.environ, "LSAP_STRESS": "1", "LSAP_STRESS_FIGURES": str(figures),
               "PATH": os.pathsep.join([str(REPO / "node_modules" / ".bin"), str(Path(sys.executable).parent),
                                        os.environ.get("PATH", "")])}
        code = subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf",
                                "-m", "stress", "--basetemp", str(Path(work) / "t"), "--junitxml", str(junit),
                                *selection, "tests"],
                               cwd=REPO, env=env)
        lines = [json.loads(line) for line in figures.read_text().splitlines()] if figures.exists() else []
        failed = failures(junit)
    missed = [f for f in lines if not f["ok"]]
    block = ["## Stress: the timings, floods and repetitions the suite does not assert", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {time.monotonic() - started:.0f} s; "
             f"pytest exit code {code}, {len(missed)} figure(s) past their target, "
             f"{len(failed)} test(s) failed{': ' if failed else ''}{', '.join(failed)}. "
             "Reproduce: `python -m benchmarks.run --only stress`.", "",
             "Machine: " + "; ".join(machine()), "", "Versions: " + "; ".join(versions()), "",
             "| test | figure | measured | target |", "|---|---|---:|---|"]
    block += [f"| `{f['test'].split('::', 1)[-1]}` | {f['name']} | {fmt(f['value'], f['unit'])} | "
              f"{f['target'] or '–'} {'ok' if f['ok'] else '**MISSED**'} |" for f in lines]
    write_block(out, block, *STRESS_MARKERS)
    if code != 0:
        print(f"\nSTRESS FAILED: pytest exited {code}; failed: {', '.join(failed) or 'none'}; missed: "
              + (", ".join(f"{f['name']} = {fmt(f['value'], f['unit'])} ({f['target']})" for f in missed) or "none"),
              file=sys.stderr)
    return code


def failures(junit: Path) -> list[str]:
    """The tests that failed or erred, from pytest's JUnit XML (a target missed or not)."""
    if not junit.exists():
        return []
    return [f"`{case.get('name')}`" for case in ElementTree.parse(junit).iter("testcase")
            if case.find("failure") is not None or case.find("error") is not None]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.stress", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args, selection = parser.parse_known_args(argv)
    sys.exit(run(args.out, selection))


if __name__ == "__main__":
    main()
