"""`lsap hook` as Claude Code runs it after an Edit that breaks one caller in another file:
how long the PostToolUse answer takes (the subprocess, start to exit), against the type
checker's own CLI (`basedpyright` on the project) in the same run, and the tokens the answer
adds to the agent's context.

    python -m benchmarks.hook            # examples/shop, 5 repetitions
    python -m benchmarks.hook --reps 10

Each repetition: PreToolUse, the edit (`find` gets a required parameter: its caller in
shop/checkout.py breaks), PostToolUse timed; then the edit taken back the same way (timed
too: an answer with nothing new to say). The embedded daemon is started first and warm, in
a runtime directory of the run's own; written into RESULTS.md between its markers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .cl100k import tokens
from .corpus import HERE, example_copy
from .report import fmt, write_measured

HOOK_MARKERS = ("<!-- hook: python -m benchmarks.hook -->", "<!-- /hook -->")
SIGNATURE = "def find(name: str, products: list[Product]) -> Product | None:"
BROKEN = "def find(name: str, products: list[Product], strict: bool) -> Product | None:"


def event(root: Path, name: str, rep: int, old: str, new: str) -> str:
    path = root / "shop" / "catalog.py"
    payload: dict[str, Any] = {
        "session_id": "bench000-0000", "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
        "permission_mode": "default", "hook_event_name": name, "tool_name": "Edit",
        "tool_input": {"file_path": str(path), "old_string": old, "new_string": new}, "tool_use_id": f"toolu_{rep}"}
    if name == "PostToolUse":
        payload["tool_response"] = {"filePath": str(path), "success": True}
    return json.dumps(payload)


def timed(command: list[str], cwd: Path, env: dict[str, str], stdin: str | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300)
    return time.perf_counter() - started, done.stdout


def edit(root: Path, env: dict[str, str], rep: int, old: str, new: str) -> tuple[float, float, str]:
    """One Edit through the hooks: the PreToolUse's and the PostToolUse's seconds, and what
    the latter printed."""
    lsap = [sys.executable, "-m", "lsap_bridge", "hook"]
    before, _ = timed(lsap, root, env, event(root, "PreToolUse", rep, old, new))
    path = root / "shop" / "catalog.py"
    path.write_text(path.read_text().replace(old, new, 1))
    return (before, *timed(lsap, root, env, event(root, "PostToolUse", rep, old, new)))


def measure(root: Path, env: dict[str, str], reps: int) -> list[str]:
    lsap = [sys.executable, "-m", "lsap_bridge"]
    subprocess.run([*lsap, "daemon", "start", "--idle-timeout", "600"], cwd=root, env=env, check=True,
                   capture_output=True, timeout=120)
    try:
        subprocess.run([*lsap, "check"], cwd=root, env=env, capture_output=True, timeout=120)  # warm
        pre, broke, fixed, checker, told = [], [], [], [], []
        for rep in range(reps):
            asked, seconds, out = edit(root, env, 2 * rep, SIGNATURE, BROKEN)
            pre.append(asked)
            broke.append(seconds)
            context = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
            told.append(context)
            checker.append(timed(["basedpyright", "--outputjson"], root, env)[0])
            asked, seconds, out = edit(root, env, 2 * rep + 1, BROKEN, SIGNATURE)
            pre.append(asked)
            fixed.append(seconds)
            print(f"  rep {rep}: pre {pre[-2] * 1000:.0f} ms, broke {broke[-1] * 1000:.0f} ms ({tokens(context)} "
                  f"tokens), fixed {fixed[-1] * 1000:.0f} ms{' (said ' + repr(out[:60]) + ')' if out else ''}, "
                  f"basedpyright CLI {checker[-1] * 1000:.0f} ms", flush=True)
    finally:
        subprocess.run([*lsap, "daemon", "stop"], cwd=root, env=env, capture_output=True, timeout=60)
    p, b, f, c = (statistics.median(x) * 1000 for x in (pre, broke, fixed, checker))
    counted = sorted({tokens(t) for t in told})
    return ["| figure | median |", "|---|---:|",
            f"| PreToolUse answer (the files' texts kept, `check` of them and their users) | {fmt(p, 'ms')} |",
            f"| PostToolUse answer, an Edit breaking one caller (the `lsap hook` process) | {fmt(b, 'ms')} |",
            f"| PostToolUse answer, the Edit taken back (nothing new: no output) | {fmt(f, 'ms')} |",
            f"| `basedpyright --outputjson` on the project, same run | {fmt(c, 'ms')} |",
            f"| hook / checker CLI | {b / c:.2f}x |",
            f"| tokens added to the agent's context for the one broken caller (cl100k) | {counted} |",
            "", "The answer for the broken caller:", "", "```text", told[-1] if told else "", "```"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hook", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lsap-hook-") as work:
        runtime = Path(work) / "runtime"
        runtime.mkdir(mode=0o700)
        corpus = example_copy(Path(work))
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "LSAP_SERVERS": "basedpyright"}
        block = measure(corpus.root, env, args.reps)
    write_measured(
        args.out, "## Agent hooks: the PostToolUse answer (issue 45)",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {time.monotonic() - started:.0f} s on "
        f"examples/shop, median of {args.reps} repetitions. Reproduce: `python -m benchmarks.hook`.",
        block, HOOK_MARKERS)


if __name__ == "__main__":
    main()
