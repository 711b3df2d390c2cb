"""The session guard of tests/conftest.py (issue 48): a process a test leaves behind is
ended when the session ends and the run fails, whatever ends the session: the tests
passing, Ctrl-C or SIGTERM, on one process or on xdist's workers (a killed worker's
processes are the controller's to end). Each case runs `leaver.py` in a pytest of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.integration

LEAVER = "tests/reliability/leaver.py"
# A hang bound, not a timing: the inner pytest starts in 2-4 s and its guard waits 5 s for
# the process to exit by itself, then 2 s after SIGTERM; 60 s is well over 5x that.
BOUND = 60.0


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def run(tmp_path: Path, test: str, *options: str, interrupt: int | None = None) -> tuple[int, str, int]:
    """The inner pytest's exit code and output, and the pid of the process its test left
    (ended here if the guard did not, so that this test leaves nothing either)."""
    pidfile = tmp_path / "left.pid"
    env = {**os.environ, "LSAP_LEAVER_PID": str(pidfile)}
    env.pop("LSAP_TEST_LEFTOVERS", None)
    inner = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, f"{LEAVER}::{test}"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + BOUND
        while not pidfile.exists() and inner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pidfile.exists(), "the inner test never started its process"
        if interrupt is not None:
            time.sleep(0.5)  # the pid is written before the test sleeps: let it get there
            inner.send_signal(interrupt)
        output, _ = inner.communicate(timeout=BOUND)
        left = int(pidfile.read_text())
    finally:
        inner.kill()
        if pidfile.exists():
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
    return inner.returncode, output, left


def test_a_process_left_by_a_passing_test_is_ended_and_fails_the_run(tmp_path: Path) -> None:
    code, output, left = run(tmp_path, "test_leaves")
    assert "1 passed" in output
    assert "processes left behind" in output and "sleep 600" in output
    assert code == pytest.ExitCode.TESTS_FAILED
    assert not alive(left)


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_ends_what_its_test_started(tmp_path: Path, interrupt: int) -> None:
    code, output, left = run(tmp_path, "test_hangs", interrupt=interrupt)
    assert code != 0 and "sleep 600" in output, output
    assert not alive(left)


def test_an_interrupted_xdist_run_ends_what_a_worker_test_started(tmp_path: Path) -> None:
    """xdist kills the workers of an interrupted run: what their tests started is orphaned,
    and the controller's guard finds it by the chain of pids in its marker."""
    code, output, left = run(tmp_path, "test_hangs", "-n", "1", interrupt=signal.SIGTERM)
    assert code != 0, output
    assert not alive(left)
