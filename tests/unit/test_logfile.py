"""The Python side of the shared log file rule (lsap_bridge/logfile.py; the Lua side's cases
are tests/lua/test_logfile.lua): rotation by size under the lock, reopening after the other
writer rotated."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsap_bridge.logfile import SharedLog, rotate


def _logger(path: Path, max_bytes: int) -> tuple[logging.Logger, SharedLog]:
    handler = SharedLog(str(path), encoding="utf-8", delay=True)
    handler.max_bytes = max_bytes
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(f"lsap-test-{path}")
    logger.propagate = False
    logger.addHandler(handler)
    return logger, handler


def test_a_full_log_is_rotated_to_dot_1_before_the_next_line(tmp_path: Path) -> None:
    path = tmp_path / "lsap.log"
    logger, handler = _logger(path, 30)
    for i in range(4):
        logger.error("line %d of the log", i)  # 18 bytes each: the third line rotates two out
    handler.close()
    assert (tmp_path / "lsap.log.1").read_text().splitlines() == ["line 0 of the log", "line 1 of the log"]
    assert path.read_text().splitlines() == ["line 2 of the log", "line 3 of the log"]
    assert not (tmp_path / "lsap.log.lock").exists()


def test_after_the_lua_side_rotated_the_next_line_goes_to_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "lsap.log"
    logger, handler = _logger(path, 10 * 1024 * 1024)
    logger.error("before")
    os.replace(path, tmp_path / "lsap.log.1")  # what lua/lsap/logfile.lua's rotate does
    logger.error("after")
    handler.close()
    assert path.read_text() == "after\n"
    assert (tmp_path / "lsap.log.1").read_text() == "before\n"


def test_a_live_lock_defers_the_rotation_and_a_stale_one_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "lsap.log"
    path.write_text("x" * 40 + "\n")
    lock = tmp_path / "lsap.log.lock"
    lock.mkdir()
    rotate(str(path), 10)
    assert path.exists() and not (tmp_path / "lsap.log.1").exists()
    os.utime(lock, (0, 0))  # its writer died long ago
    rotate(str(path), 10)
    assert (tmp_path / "lsap.log.1").exists() and not path.exists() and not lock.exists()
