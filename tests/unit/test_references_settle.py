"""A young server's references are asked again until the count holds (doc/architecture.md, Costs)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lsap_bridge.capabilities import references
from lsap_bridge.editor import Client
from lsap_bridge.session.targets import Target


class Answers:
    """Stands in for Servers.call_json: successive answers of a server still loading."""

    def __init__(self, counts: list[int]) -> None:
        self.counts = counts
        self.calls = 0
        self.settled: set[int] = set()

    async def call_json(self, target: Target, method: str, params: dict[str, Any], packed: bool = False) -> list[int]:
        count = self.counts[min(self.calls, len(self.counts) - 1)]
        self.calls += 1
        return list(range(count))


def target(age: float | None) -> Target:
    started = None if age is None else time.monotonic() - age
    client = Client(1, "ts_ls", "utf-16", frozenset({references.METHOD}), started=started)
    return Target(Path("/w/a.ts"), 1, client, (client,), False)


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(references, "RECHECK", 0.01)
    monkeypatch.setattr(references, "SETTLE_LIMIT", 0.5)


def settle(answers: Answers, age: float | None) -> tuple[Any, bool]:
    return asyncio.run(references.settled(SimpleNamespace(servers=answers), target(age), {}))  # type: ignore[arg-type]


def test_a_young_server_is_asked_until_the_count_holds() -> None:
    answers = Answers([21, 180, 420, 420])
    raw, growing = settle(answers, age=2.0)
    assert len(raw) == 420 and not growing
    assert answers.calls == 4
    settle(answers, age=2.0)
    assert answers.calls == 5, "a server whose count held once is trusted afterwards"


def test_a_count_that_never_holds_is_reported_partial() -> None:
    answers = Answers(list(range(1, 10_000)))
    raw, growing = settle(answers, age=2.0)
    assert growing and len(raw) > 1


def test_an_old_or_unknown_server_is_asked_once() -> None:
    for age in (None, references.YOUNG + 1):
        answers = Answers([21, 420])
        raw, growing = settle(answers, age=age)
        assert len(raw) == 21 and not growing and answers.calls == 1
