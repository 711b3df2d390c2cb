"""How `make test`'s xdist workers share the suite: a module whose tests share a module- or
class-scoped fixture (a warm bridge), or take bridges from the run's pool, is one unit of
work, run on one worker, so the fixture (or the pool's bridge) starts once; any other test
is a unit of its own. The units go out longest first (LPT), so that no worker starts a
test of minutes while the others run out of work.

The grouping is ours, not `--dist loadgroup`'s: xdist 3.8 names a group by rewriting a
test's `_nodeid`, which pytest 9 no longer reads (its node ids are structured), so every
test was a unit of its own and each worker set up the module fixtures again. The workers
write the groups they collected into a file the controller names (`pytest_configure_node`),
and the controller's scheduler (`Grouped`) reads it once every worker has collected.

A unit's length is the sum of what its tests took in the last recorded run (`durations.json`
beside this file: by test, so that a part of a module run apart, the `serial` tests, counts
what it holds), a guess for a test the file does not name (`UNKNOWN`);
`LSAP_RECORD_DURATIONS=1 make test` writes the file anew from that run."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
# Seconds a test the file does not name is taken to last: one on a real Neovim with its
# servers (marker `integration`) a second, as most of them take, any other a tenth.
UNKNOWN, UNKNOWN_INTEGRATION = 0.1, 1.0
KEPT = 0.1  # seconds: a shorter test is left out of the file (a guess is near enough)
RECORD = "LSAP_RECORD_DURATIONS"
GROUPS = "lsap_groups"  # the key of the groups file's path in a worker's `workerinput`
# The run's pool of warm bridges (tests/conftest.py), one per worker, keyed by servers and
# project: a module whose tests take one is a unit too, so that its bridges start once, on
# one worker, instead of on each worker that happened to run one of its tests.
POOL = "bridges"


def group(item: pytest.Item) -> str | None:
    """The module of a test that shares a module-, class- or package-scoped fixture, or
    takes a bridge from the run's pool (`POOL`)."""
    fixtures = getattr(item, "_fixtureinfo", None)
    shared = fixtures is not None and (POOL in fixtures.names_closure or any(
        d.scope in ("module", "class", "package") for defs in fixtures.name2fixturedefs.values() for d in defs))
    return item.nodeid.split("::", 1)[0] if shared else None


def unit(nodeid: str, groups: dict[str, str]) -> str:
    return groups.get(nodeid, nodeid)


def recorded() -> dict[str, float]:
    """The seconds of each test in the last recorded run (its setup, call and teardown)."""
    try:
        data: dict[str, float] = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return data


def arrange(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On a worker: the collection sorted by its units' lengths, longest first (stable: a
    module's order is kept), and the groups written where the controller reads them."""
    groups = {item.nodeid: name for item in items if (name := group(item)) is not None}
    known = recorded()
    length: dict[str, float] = defaultdict(float)
    for item in items:
        guess = UNKNOWN_INTEGRATION if item.get_closest_marker("integration") is not None else UNKNOWN
        length[unit(item.nodeid, groups)] += known.get(item.nodeid, guess)
    items.sort(key=lambda item: -length[unit(item.nodeid, groups)])
    path = Path(config.workerinput[GROUPS])  # type: ignore[attr-defined]
    ours = path.with_name(f"{path.name}.{os.getpid()}")
    ours.write_text(json.dumps(groups))
    ours.replace(path)  # every worker collects the same tests: whichever is last, it is whole


def read_groups(path: Path) -> dict[str, str]:
    try:
        data: dict[str, str] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data


def scheduler(config: pytest.Config, log: Any, path: Path) -> Any:
    """xdist's scope scheduling over our units, in the collection's order (not re-sorted by
    their number of tests)."""
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):  # type: ignore[misc]
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # first asked once every worker has collected
                self.groups = read_groups(path)
            return unit(nodeid, self.groups)

    config.option.loadscopereorder = False
    return Grouped(config, log)


class Recorder:
    """A plugin of the controller: the seconds of each test of this run (setup, call and
    teardown), from the workers' reports; written into `DURATIONS` at the end, over the
    entries of the tests this run had (a part of the suite run alone keeps the others')."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @staticmethod
    def wanted() -> bool:
        return os.environ.get(RECORD) == "1"

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] += report.duration

    def pytest_sessionfinish(self) -> None:
        kept = {nodeid: s for nodeid, s in recorded().items() if nodeid not in self.seconds}
        kept.update({nodeid: round(s, 1) for nodeid, s in self.seconds.items() if s >= KEPT})
        ordered = dict(sorted(kept.items(), key=lambda entry: -entry[1]))
        DURATIONS.write_text(json.dumps(ordered, indent=1) + "\n")
