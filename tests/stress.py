"""Timings and repetitions the suite does not assert (issue 48). A test states each figure
it measures with its target through `figure`, and asks `trials(n)` how often to repeat a
scenario. In the suite (`make test`, any pytest) a figure is only printed (`-s`) and a
scenario runs once: the suite asserts properties, and at most a hang bound. Under
`python -m benchmarks.run --only stress` (`benchmarks/stress.py`, LSAP_STRESS=1) the tests
marked `stress` run one at a time with their repetitions, every figure goes to
RESULTS.md, and one that misses its target fails its test, and so the benchmark."""

from __future__ import annotations

import json
import os

ACTIVE = "LSAP_STRESS"
FIGURES = "LSAP_STRESS_FIGURES"  # the JSON-lines file the figures are appended to


def active() -> bool:
    return os.environ.get(ACTIVE) == "1"


def trials(n: int, suite: int = 1) -> int:
    """How often to run a scenario repeated to estimate a rate: `suite` times in the suite
    (once, or once per variant the runs alternate)."""
    return n if active() else suite


def figure(name: str, value: float, unit: str = "s", *, at_most: float | None = None,
           at_least: float | None = None, detail: str = "") -> None:
    """A measured figure and its target: written down, and held to the target under stress."""
    ok = (at_most is None or value <= at_most) and (at_least is None or value >= at_least)
    target = " and ".join([*([f"<= {at_most:g} {unit}"] if at_most is not None else []),
                           *([f">= {at_least:g} {unit}"] if at_least is not None else [])])
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    line = {"test": test, "name": name, "value": value, "unit": unit, "target": target, "ok": ok}
    if path := os.environ.get(FIGURES):
        with open(path, "a") as out:
            out.write(json.dumps(line) + "\n")
    print(f"\nFIGURE {name}: {value:.4g} {unit} (target {target or 'none'}){' MISSED' if not ok else ''}")
    if active() and not ok:
        raise AssertionError(f"stress target missed: {name} = {value:.4g} {unit}, target {target}; {detail}")
