"""`lsap` exits 5 on a report whose status is `incomplete` (issue 44, item 2): files it
should have compared were not; the agent sends the request the report gives (doc/lsap.txt,
lsap-exit-codes). A session of the test's own answers so (test_exit_codes.Answering)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_exit_codes import Answering, answering, lsap

pytestmark = pytest.mark.integration

__all__ = ["answering"]  # the fixture, used below


def test_an_incomplete_report_exits_5(tmp_path: Path, answering: list[Answering]) -> None:
    text = "# Check 2: 3 files not compared yet; nothing new in the files compared since 12:00:00\n"
    answering.append(Answering({"result": {"ok": True, "text": text, "mode": "check", "status": "incomplete"}}))
    done = lsap(tmp_path, "--session", "answering", "check")
    assert done.returncode == 5 and done.stdout == text, done.stdout + done.stderr
