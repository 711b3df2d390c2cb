"""A foreign writer racing a rename through pylsp (issue 47): is its write ever lost?

40 modules import `Gizmo0`; the bridge renames it through pylsp (jedi's edits replace
whole files); meanwhile another process rewrites one of those modules with a plain
`open(path, "w").write(...)` (truncate, then write: two steps) at a random moment 0.05–1.0 s
after the request was sent. Each run ends in one of: `conflict` (nothing changed), `kept`
(the rename answered ok and the file holds the writer's text), `lost` (answered ok and the
writer's text is gone: the bug), or another error. The deterministic trials, one per
window, are tests/integration/test_rename_races.py.

    .venv/bin/python -m benchmarks.pylsp_race [runs] [seed] [loaded|disk]

`loaded`: the modules are in buffers (as after a first rename: the bridge opens the files
it changed), `disk`: no buffer holds them.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from lsap_bridge.embedded import start_embedded
from lsap_bridge.gateway import EditorGateway, Timeouts
from lsap_bridge.service import Service
from lsap_bridge.workspace import Workspace

MODULES = 40
VICTIM = "m17.py"
# Waits for a line on stdin, sleeps the given time, then truncates and writes, as a plain
# `open(path, "w").write(...)` does.
WRITER = "import sys, time; sys.stdin.readline(); time.sleep(float(sys.argv[2])); " \
         "open(sys.argv[1], 'w').write(sys.argv[3])"


def module(index: int) -> str:
    return f"from gizmos import Gizmo0\n\n\ndef make_{index}() -> Gizmo0:\n    return Gizmo0()\n"


def project(root: Path) -> None:
    (root / "gizmos.py").write_text("class Gizmo0:\n    pass\n")
    for index in range(MODULES):
        (root / f"m{index:02}.py").write_text(module(index))


async def trial(service: Service, gateway: EditorGateway, root: Path, rng: random.Random, run: int,
                loaded: bool) -> str:
    if not loaded:  # the modules as no buffer holds them (pylsp reads them from disk)
        await gateway.exec_lua(
            "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
            "if vim.api.nvim_buf_get_name(b):match('/m%d%d%.py$') then "
            "pcall(vim.api.nvim_buf_delete, b, {force = true}) end end")
    project(root)
    await asyncio.sleep(0.3)  # the files' stamps settle (no racy stamps) and are seen
    await service.handle({"mode": "info"})
    text = f"from gizmos import Gizmo0\n\nFOREIGN_{run} = Gizmo0()  # the writer's\n"
    delay = rng.uniform(0.05, 1.0)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(root / VICTIM), str(delay), text],
                              stdin=subprocess.PIPE, text=True)
    assert writer.stdin is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()
    response = await service.handle({"mode": "rename", "locate": "gizmos.py@class <|>Gizmo0",
                                     "new_name": "Gizmo1", "format": "json"})
    writer.wait(30)
    held = (root / VICTIM).read_text()
    # Whatever the answer, the writer's text is the file's last word (renamed, if the
    # server computed the rename on it).
    kept = held in (text, text.replace("Gizmo0", "Gizmo1"))
    if response.ok:
        return "ok, kept" if kept else "ok, LOST"
    assert response.error is not None
    return f"{response.error.code.value}, {'kept' if kept else 'LOST'}"


async def main(runs: int, seed: int, loaded: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="lsap-race-"))
    project(root)
    embedded = await start_embedded(root, ["pylsp"], Timeouts(request=120, attach=60))
    try:
        service = Service(embedded.gateway, Workspace.of(root))
        rng = random.Random(seed)
        outcomes: Counter[str] = Counter()
        started = time.monotonic()
        for run in range(runs):
            outcome = await trial(service, embedded.gateway, root, rng, run, loaded)
            outcomes[outcome] += 1
            print(f"run {run + 1}/{runs}: {outcome}", flush=True)
        print(f"{runs} runs in {time.monotonic() - started:.0f} s, seed {seed}: "
              + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
              + f"; lost: {sum(n for k, n in outcomes.items() if 'LOST' in k)}/{runs}")
    finally:
        await embedded.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50,
                     int(sys.argv[2]) if len(sys.argv) > 2 else 47,
                     (sys.argv[3] if len(sys.argv) > 3 else "loaded") == "loaded"))
