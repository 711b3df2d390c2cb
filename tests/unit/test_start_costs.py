"""What a process of the bridge pays at its start and end (issue 28): only what it uses."""

from __future__ import annotations

import pytest

from lsap_bridge import cpu


def test_a_session_end_collects_only_after_a_pool_was_started(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[int] = []
    monkeypatch.setattr(cpu.gc, "collect", lambda: collections.append(1) or 0)
    monkeypatch.setattr(cpu, "_uncollected", False)
    cpu.shutdown()
    assert collections == []  # no pool: no semaphore to unlink, no full collection
    monkeypatch.setattr(cpu, "_uncollected", True)  # as `_current` leaves it on making a pool
    cpu.shutdown()
    cpu.shutdown()
    assert collections == [1]  # once per pool started, not at every end
