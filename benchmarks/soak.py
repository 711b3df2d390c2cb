"""Soak: agents asking the embedded daemon for minutes on end, memory sampled as they go.

    python -m benchmarks.soak                        # 8 agents, 10 minutes, into RESULTS.md
    python -m benchmarks.soak --minutes 1 --out /tmp/soak.md

The daemon is started the way `lsap` starts it, on a scratch copy of examples/shop with
basedpyright, in a runtime directory of its own. Each agent has one connection and sends
mixed requests back to back: reads (locate, hover, definition, references, outline,
search) and, every tenth, a rename of its own helper back and forth. The RSS of the
daemon (the host) and of its Neovim is sampled every 30 s. It passes with no failed
request and flat memory: the last sample within 10 % of the one after the first minute
(the warm-up: files opened, servers indexed, caches filled).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsap_bridge.client import Connection, answered, start_daemon
from lsap_bridge.discovery import alive

from .corpus import HERE, REPO, example_copy
from .report import SOAK_MARKERS, machine, versions, write_block
from .rig import rss_mb

WARM_UP = 60.0  # seconds
FLAT = 0.10  # the last sample may differ from the one after the warm-up by this much

READS: list[dict[str, Any]] = [
    {"mode": "locate", "locate": "shop/models.py:Order.total@return <|>result"},
    {"mode": "hover", "locate": "shop/models.py:Product@class <|>Product"},
    {"mode": "definition", "locate": "shop/checkout.py@order = <|>Order()"},
    {"mode": "references", "locate": "shop/models.py:Product@class <|>Product", "max_items": 20},
    {"mode": "outline", "file_path": "shop/models.py"},
    {"mode": "search", "query": "Order"},
    {"mode": "references", "locate": "shop/models.py:Order.add@def <|>add"},
]


def agent_files(root: Path, n: int) -> None:
    """Each agent renames its own helper, defined in one file and used in another."""
    (root / "shop" / f"load_{n}.py").write_text(
        f"def helper_{n}(x: int) -> int:\n    return x + {n}\n\n\ndef twice_{n}(x: int) -> int:\n"
        f"    return helper_{n}(helper_{n}(x))\n"
    )
    (root / "shop" / f"load_use_{n}.py").write_text(
        f"from shop.load_{n} import helper_{n}\n\nVALUE = helper_{n}(1)\n"
    )


def mixed(n: int, i: int) -> dict[str, Any]:
    """Agent n's i-th request: a read, and every tenth a rename of its helper, back and forth."""
    if i % 10 == 9:
        names = [f"helper_{n}", f"helper_{n}_b"]
        old, new = names[(i // 10) % 2], names[(i // 10 + 1) % 2]
        return {"mode": "rename", "new_name": new, "locate": f"shop/load_{n}.py@def <|>{old}"}
    return READS[(i + n) % len(READS)]


def run_agent(path: str, n: int, more: Callable[[int], bool], failures: list[str],
              latencies: list[float]) -> None:
    """One agent's requests while `more(i)`; failed ones (errors and protocol failures alike)
    go to `failures`."""
    with Connection(path, timeout=120, name=f"agent {n}") as conn:
        i = 0
        while more(i):
            payload = mixed(n, i)
            started = time.monotonic()
            try:
                result = conn.call("request", payload)
            except Exception as exc:
                failures.append(f"agent {n} #{i} {payload['mode']}: {exc!r}")
            else:
                latencies.append(time.monotonic() - started)
                if not (answer := answered(result)).get("ok"):
                    failures.append(f"agent {n} #{i} {payload['mode']}: {answer.get('text', '')[:300]}")
            i += 1


@dataclass
class Soak:
    clients: int
    seconds: float
    every: float
    samples: list[tuple[float, float, float, int]] = field(default_factory=list)  # s, host MB, Neovim MB, answered
    load: list[float] = field(default_factory=list)  # the machine's 1-minute load average, per sample
    failures: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def warm(self) -> tuple[float, float, float, int]:
        """The first sample after the warm-up."""
        return next((s for s in self.samples if s[0] >= min(WARM_UP, self.seconds / 2)), self.samples[-1])

    def drift(self, column: int) -> float:
        return (self.samples[-1][column] - self.warm()[column]) / self.warm()[column]

    @property
    def passed(self) -> bool:
        return not self.failures and abs(self.drift(1)) <= FLAT and abs(self.drift(2)) <= FLAT


def soak(root: Path, clients: int, seconds: float, every: float) -> Soak:
    for n in range(clients):
        agent_files(root, n)
    info = start_daemon(root, ["basedpyright"], idle_timeout=3600)
    result = Soak(clients, seconds, every)
    try:
        with Connection(info.socket) as conn:  # every agent's files opened once
            for n in range(clients):
                conn.call("request", {"mode": "outline", "file_path": f"shop/load_{n}.py"})
        started = time.monotonic()
        until = started + seconds
        agents = [threading.Thread(target=run_agent, args=(
            info.socket, n, lambda _i: time.monotonic() < until, result.failures, result.latencies))
            for n in range(clients)]
        for agent in agents:
            agent.start()
        for k in range(int(seconds // every) + 1):
            time.sleep(max(0.0, started + min(k * every, seconds) - time.monotonic()))
            result.samples.append((time.monotonic() - started, rss_mb(info.pid),
                                   rss_mb(info.nvim_pid), len(result.latencies)))
            result.load.append(os.getloadavg()[0])
            now, host, nvim, answered = result.samples[-1]
            print(f"  {now:5.0f} s  host {host:6.1f} MB  Neovim {nvim:6.1f} MB  {answered} answered, "
                  f"{len(result.failures)} failed", flush=True)
        for agent in agents:
            agent.join(180)
    finally:
        Connection(info.socket).call("shutdown")
        deadline = time.monotonic() + 30  # its files go with it: wait before removing the dir
        while not ended(info.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    return result


def isolated(work: Path) -> None:
    """This process's (and its children's) XDG directories under `work`, the project's tools
    first on PATH: a daemon of its own, leaving nothing in $HOME."""
    for name in ("XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        (work / name.lower()).mkdir(mode=0o700)
        os.environ[name] = str(work / name.lower())
    os.environ["PATH"] = os.pathsep.join(
        [str(REPO / "node_modules" / ".bin"), str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def ended(pid: int) -> bool:
    """Whether the daemon (a child of this process, which reaps it here) has exited."""
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:  # reaped already
        return not alive(pid)


def markdown(result: Soak, took: float) -> list[str]:
    latencies = sorted(result.latencies) or [0.0]
    warm = result.warm()
    lines = [
        "",
        f"### Soak: the embedded daemon under {result.clients} agents for {result.seconds / 60:g} min",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} in {took:.0f} s with "
        f"`python -m benchmarks.soak`, on examples/shop with basedpyright. Machine: "
        + "; ".join(machine()) + ". Versions: " + "; ".join(versions()) + ".",
        "",
        f"Each agent sends mixed requests back to back on its own connection (locate, hover, "
        f"definition, references, outline, search; every tenth a rename back and forth). RSS is "
        f"sampled every {result.every:g} s; memory is flat when the last sample is within "
        f"{FLAT:.0%} of the first one after {WARM_UP:g} s of warm-up. The machine was shared: "
        f"its load average ranged {min(result.load):.1f}–{max(result.load):.1f} during the run.",
        "",
        "| time | host RSS | Neovim RSS | requests answered |",
        "|---:|---:|---:|---:|",
        *(f"| {s:.0f} s | {host:.1f} MB | {nvim:.1f} MB | {answered} |"
          for s, host, nvim, answered in result.samples),
        "",
        f"- {len(result.latencies)} requests answered ({len(result.latencies) / result.seconds:.0f}/s), "
        f"{len(result.failures)} failed; p50 {latencies[len(latencies) // 2] * 1000:.0f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)] * 1000:.0f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms",
        f"- host RSS {warm[1]:.1f} MB after warm-up, {result.samples[-1][1]:.1f} MB at the end "
        f"({result.drift(1):+.1%}); Neovim {warm[2]:.1f} → {result.samples[-1][2]:.1f} MB "
        f"({result.drift(2):+.1%})",
        f"- verdict: {'PASS' if result.passed else 'FAIL'} (0 failures, memory flat within {FLAT:.0%})",
        *(f"- failure: {f}" for f in result.failures[:5]),
        "",
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--every", type=float, default=30, help="seconds between memory samples")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args(argv)
    begun = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lsap-soak-") as tmp:
        work = Path(tmp)
        isolated(work)
        result = soak(example_copy(work).root, args.clients, args.minutes * 60, args.every)
    section = markdown(result, time.monotonic() - begun)
    write_block(args.out, section, *SOAK_MARKERS)
    print("\n".join(section))
    raise SystemExit(0 if result.passed else 1)


if __name__ == "__main__":
    main()
