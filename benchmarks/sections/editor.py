"""4: the editor's responsiveness under agent load: the round trip of a trivial `nvim_eval`
from another process on Neovim's own socket (the human's UI), idle and while four agent
processes send requests back to back.

    python -m benchmarks.sections.editor probe ADDRESS SAMPLES   (the UI's stand-in)
    python -m benchmarks.sections.editor agent SOCKET PAYLOADS   (one agent)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import statistics
import sys
import time
from pathlib import Path

from lsap_bridge.client import Connection

from ..baselines import bridge_payload
from ..corpus import REPO
from ..report import Results
from ..rig import Rig, Settings

AGENTS = 4


async def measure(rig: Rig, results: Results, settings: Settings) -> None:
    address = str(await rig.gateway.exec_lua("return vim.fn.serverstart()"))
    payload_file = rig.socket.with_suffix(".payloads.json")
    payload_file.write_text(json.dumps([bridge_payload(m, rig.corpus) for m in ("references", "definition", "hover")]))
    idle = await _probe(address, settings.probe_samples)
    agents = [await _role("agent", str(rig.socket), str(payload_file)) for _ in range(AGENTS)]
    await asyncio.sleep(1.0)
    loaded = await _probe(address, settings.probe_samples)
    done = 0
    for agent in agents:
        agent.terminate()
        out, _ = await agent.communicate()
        done += int(out.decode().strip() or 0)
    p99_idle, p99_loaded = _p99(idle), _p99(loaded)
    results.add("4 editor", f"nvim_eval RTT p99, {AGENTS} agents ({done} requests served)", p99_loaded, p99_idle,
                "ms", "p99 <= 50 ms", p99_loaded <= 50)
    results.add("4 editor", "nvim_eval RTT median under load", statistics.median(loaded), statistics.median(idle),
                "ms")


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def _role(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(sys.executable, "-m", __name__, *args, cwd=REPO,
                                                stdout=asyncio.subprocess.PIPE)


async def _probe(address: str, samples: int) -> list[float]:
    out, _ = await (await _role("probe", address, str(samples))).communicate()
    values: list[float] = json.loads(out)
    return values


def probe(address: str, samples: int) -> None:
    """The human's UI stand-in: a trivial `nvim_eval` every 10 ms, RTT in ms as JSON."""
    import pynvim

    nvim = pynvim.attach("socket", path=address)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        nvim.eval("1")
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    nvim.close()
    print(json.dumps(times))


def agent(socket: str, payload_file: str) -> None:
    """An agent sending requests back to back until SIGTERM, which lets the request in flight
    finish (no cancelled work left in the server); prints how many it sent."""
    payloads = json.loads(Path(payload_file).read_text())
    sent, stopping = 0, []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with Connection(socket) as connection:
        for payload in itertools.cycle(payloads):
            if stopping:
                break
            connection.call("request", payload)
            sent += 1
    print(sent, flush=True)


if __name__ == "__main__":
    role, first, second = sys.argv[1:4]
    if role == "probe":
        probe(first, int(second))
    else:
        agent(first, second)
