"""A young server's references are asked again until the count holds (doc/architecture.md, Costs)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lsap_bridge.capabilities import references
from lsap_bridge.decode import PackedLocations, location_count
from lsap_bridge.editor import Client
from lsap_bridge.jsonvalue import Json
from lsap_bridge.session.targets import Target


class Answers:
    """Stands in for Servers.read: successive answers of a server still loading (packed, as
    the editor sends them)."""

    def __init__(self, counts: list[int]) -> None:
        self.counts = counts
        self.calls = 0
        self.settled: set[int] = set()

    async def read(self, target: Target, method: str, params: dict[str, Any], read: Callable[[Json], PackedLocations],
                   packed: bool = False) -> PackedLocations:
        count = self.counts[min(self.calls, len(self.counts) - 1)]
        self.calls += 1
        return read({"packed": [["file:///w/a.ts", [n for line in range(count) for n in (line, 0, line, 1)]]]})


def target(age: float | None) -> Target:
    started = None if age is None else time.monotonic() - age
    client = Client(1, "ts_ls", "utf-16", frozenset({references.METHOD}), started=started)
    return Target(Path("/w/a.ts"), 1, client, (client,), False)


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(references, "RECHECK", 0.01)
    monkeypatch.setattr(references, "SETTLE_LIMIT", 0.5)


def settle(answers: Answers, age: float | None) -> tuple[int, bool]:
    raw, growing = asyncio.run(references.settled(SimpleNamespace(servers=answers), target(age), {}))  # type: ignore[arg-type]
    return location_count(raw), growing


def test_a_young_server_is_asked_until_the_count_holds() -> None:
    answers = Answers([21, 180, 420, 420])
    count, growing = settle(answers, age=2.0)
    assert count == 420 and not growing
    assert answers.calls == 4
    settle(answers, age=2.0)
    assert answers.calls == 5, "a server whose count held once is trusted afterwards"


def test_a_count_that_never_holds_is_reported_partial() -> None:
    answers = Answers(list(range(1, 10_000)))
    count, growing = settle(answers, age=2.0)
    assert growing and count > 1


def test_an_old_or_unknown_server_is_asked_once() -> None:
    for age in (None, references.YOUNG + 1):
        answers = Answers([21, 420])
        count, growing = settle(answers, age=age)
        assert count == 21 and not growing and answers.calls == 1
