"""A capability whose held text went stale runs once more on fresh text, and only once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lsap_bridge.errors import ErrorCode, LsapError, StaleText
from lsap_bridge.failures import as_error
from lsap_bridge.gateway import LspAnswer
from lsap_bridge.models import Report, Request
from lsap_bridge.modes import Answer, Capability, Offer
from tests.fakes import fake_session


class ProbeRequest(Request):
    mode: str = "stale_probe"


class ProbeReport(Report):
    attempt: int


class Probe:
    """A mode that fails with StaleText its first `stale` runs; counts its runs."""

    def __init__(self, root: Path) -> None:
        self.stale = 0
        self.runs = 0
        self.session = fake_session(root, lambda call: LspAnswer())
        self.capability = Capability("stale_probe", ProbeRequest, ProbeReport, self.run, "test only",
                                     None, None, "locate", False, Offer())

    async def run(self, _session: Any, _request: Any) -> Answer:
        self.runs += 1
        if self.runs <= self.stale:
            raise StaleText("the buffer changed")
        return Answer(ProbeReport(attempt=self.runs))

    def __call__(self) -> Report:
        return asyncio.run(self.session.run(self.capability, ProbeRequest())).report


@pytest.fixture
def probe(tmp_path: Path) -> Probe:
    return Probe(tmp_path)


def test_one_stale_buffer_runs_the_capability_again(probe: Probe) -> None:
    probe.stale = 1
    assert probe().model_dump() == {"attempt": 2}


def test_fresh_text_runs_once(probe: Probe) -> None:
    assert probe().model_dump() == {"attempt": 1}


def test_a_file_that_keeps_changing_is_a_conflict(probe: Probe) -> None:
    probe.stale = 5
    with pytest.raises(StaleText) as stale:
        probe()
    failure = as_error(stale.value, "the probe")  # what the asker gets (the one translation)
    assert isinstance(failure, LsapError) and failure.code is ErrorCode.CONFLICT
    assert "send the request again" in (failure.hint or "")
    assert probe.runs == 2
