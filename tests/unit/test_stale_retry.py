"""A capability whose held text went stale runs once more on fresh text, and only once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from lsap_bridge.capabilities.base import REGISTRY, Report, Request, capability
from lsap_bridge.errors import ErrorCode, LsapError
from lsap_bridge.gateway import StaleText


class ProbeRequest(Request):
    mode: str = "stale_probe"


class Probe:
    """A mode that fails with StaleText its first `stale` runs; counts its runs."""

    def __init__(self) -> None:
        self.stale = 0
        self.runs = 0

    async def run(self, _session: Any, _request: Any) -> Report:
        self.runs += 1
        if self.runs <= self.stale:
            raise StaleText("the buffer changed")
        return Report("locate", {"attempt": self.runs})

    def __call__(self) -> Report:
        return asyncio.run(REGISTRY["stale_probe"].run(None, ProbeRequest()))


@pytest.fixture
def probe() -> Iterator[Probe]:
    probe = Probe()
    capability("stale_probe", ProbeRequest, "test only")(probe.run)
    yield probe
    del REGISTRY["stale_probe"]


def test_one_stale_buffer_runs_the_capability_again(probe: Probe) -> None:
    probe.stale = 1
    assert probe().data == {"attempt": 2}


def test_fresh_text_runs_once(probe: Probe) -> None:
    assert probe().data == {"attempt": 1}


def test_a_file_that_keeps_changing_is_a_conflict(probe: Probe) -> None:
    probe.stale = 5
    with pytest.raises(LsapError) as failure:
        probe()
    assert failure.value.code is ErrorCode.CONFLICT
    assert "send the request again" in (failure.value.hint or "")
    assert probe.runs == 2
