"""Abandoned calls on a loaded machine: clients that connect, send a call and close at once,
then other clients asking, each timed.

    python -m benchmarks.abandoned                  # 1,500 abandoned, 20 asking, loaded
    python -m benchmarks.abandoned --calls 300 --no-load

The daemon is started the way `lsap` starts it, on a scratch copy of examples/shop with
basedpyright, in a runtime directory of its own; its files are opened once. A CPU-bound
process runs on each core (unless `--no-load`). Then `--calls` clients (8 threads) each
connect, send one read request (the soak's: locate, hover, definition, references, …) and close
at once; meanwhile, spread over the flood, `--askers` clients ask `info`, each with a 30 s
limit.
Printed: how many of them answered, their latencies, and what the abandoned calls cost the
service (`info`'s stats: calls into Neovim, LSP requests, requests cancelled), and how long
until it had nothing running or waiting. The target: every asker answered within 1 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsap_bridge.client import Connection, start_daemon
from lsap_bridge.jsonvalue import obj

from .corpus import example_copy
from .soak import READS, ended, isolated


def burn() -> None:
    """A CPU-bound process (the machine's load)."""
    n = 0
    while True:
        n = (n * 7 + 1) % 1_000_003


def abandon(path: str, n: int) -> None:
    """One client: connect, send a call, close."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        message = {"jsonrpc": "2.0", "id": n, "method": "request", "params": {"request": READS[n % len(READS)]}}
        sock.sendall(json.dumps(message).encode() + b"\n")


def ask(path: str, _n: int) -> float | None:
    """One client asking `info`: seconds until its answer (None: none within 30 s)."""
    started = time.monotonic()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(path)
            sock.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "info", "params": {}}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    return None
                data += chunk
    except OSError as exc:
        print(f"  an asker failed: {exc!r}", file=sys.stderr)
        return None
    return time.monotonic() - started


def info(path: str) -> dict[str, Any]:
    with Connection(path) as conn:
        return obj(conn.call("info"))


def run(root: Path, calls: int, askers: int, load: bool) -> dict[str, Any]:
    daemon = start_daemon(root, ["basedpyright"], idle_timeout=600)
    burners: list[multiprocessing.Process] = []
    try:
        with Connection(daemon.socket) as conn:  # warm: files opened, the server indexed
            for read in READS:
                conn.call("request", read)
        before = info(daemon.socket)["stats"]
        if load:
            burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(os.cpu_count() or 1)]
            for burner in burners:
                burner.start()
        started = time.monotonic()
        sent = [0]

        def flood(n: int) -> None:
            abandon(daemon.socket, n)
            sent[0] += 1

        with ThreadPoolExecutor(8) as flooding, ThreadPoolExecutor(askers) as asking:
            flooded = flooding.map(flood, range(calls))
            asked = []
            for n in range(askers):  # spread over the flood, and one right after it
                while sent[0] < calls * n // askers:
                    time.sleep(0.001)
                asked.append(asking.submit(ask, daemon.socket, n))
            list(flooded)
            flood_s = time.monotonic() - started
            waits = [a.result() for a in asked]
        until = time.monotonic() + 120
        while time.monotonic() < until:
            counts = info(daemon.socket)["scheduler"]
            if (counts["running"], counts["queued"]) == (0, 0):
                break
            time.sleep(0.1)
        idle = time.monotonic() - started
        after = info(daemon.socket)["stats"]
    finally:
        for burner in burners:
            burner.kill()
        Connection(daemon.socket).call("shutdown")
        deadline = time.monotonic() + 30  # its files go with it: wait before removing the dir
        while not ended(daemon.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
    answered = [w for w in waits if w is not None]
    return {"calls": calls, "flood_s": round(flood_s, 2), "askers": askers, "answered": len(answered),
            "within_1s": sum(1 for w in answered if w <= 1.0),
            "median_s": round(statistics.median(answered), 3) if answered else None,
            "max_s": round(max(answered), 3) if answered else None,
            "idle_after_s": round(idle, 1), "load": load,
            "stats": {k: after.get(k, 0) - before.get(k, 0) for k in sorted(after)}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.abandoned", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--askers", type=int, default=20)
    parser.add_argument("--no-load", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lsap-abandoned-") as tmp:
        work = Path(tmp)
        isolated(work)
        result = run(example_copy(work).root, args.calls, args.askers, not args.no_load)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
