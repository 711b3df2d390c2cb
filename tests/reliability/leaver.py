"""Tests that leave a process behind, run only by `test_guard.py` in a pytest of their own
(the name keeps them out of the suite's collection): each starts a `sleep` in a session of
its own, as a daemon or Neovim does, writes its pid where `LSAP_LEAVER_PID` says and never
ends it; `test_hangs` then waits to be interrupted."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


def leave() -> None:
    child = subprocess.Popen(["sleep", "600"], start_new_session=True)
    Path(os.environ["LSAP_LEAVER_PID"]).write_text(str(child.pid))


def test_leaves() -> None:
    leave()


def test_hangs() -> None:
    leave()
    time.sleep(600)  # until test_guard.py interrupts the run
