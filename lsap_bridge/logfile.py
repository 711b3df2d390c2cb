"""The log file in the human's editor: `stdpath('log')/lsap.log`, shared with the Lua side.

The remote plugin's host has no terminal, so whatever goes wrong in the service thread
(an exception, a task that failed unseen) would vanish; this sends it to the file that
`:checkhealth lsap` and the help's troubleshooting section point to.

Neovim (lua/lsap/logfile.lua) writes the same file, each side by the same rule, so that
neither needs the other alive to say why it failed (doc/architecture.md, "The log file"):
one handle, reopened when the file at the path is another one; a file of `MAX_BYTES` or
more renamed to `lsap.log.1` before the next line, under a lock both sides take (the
directory `lsap.log.lock`); each line one append-mode write.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import time

FORMAT = "%(asctime)s %(levelname)s [python] %(name)s: %(message)s"
LEVELS = {
    "error": logging.ERROR,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}
MAX_BYTES = 10 * 1024 * 1024  # the rotation size (the same in lua/lsap/logfile.lua)
STALE_S = 10  # a lock this old is a dead writer's


def rotate(path: str, max_bytes: int = MAX_BYTES) -> None:
    """Rename a full log to `<path>.1` under the shared lock; a writer holding the lock is
    rotating it already (this line then goes to the file it leaves)."""
    lock = path + ".lock"
    try:
        os.mkdir(lock, 0o700)
    except FileExistsError:
        try:
            if time.time() - os.stat(lock).st_mtime < STALE_S:
                return
            os.rmdir(lock)  # a writer died holding it
            os.mkdir(lock, 0o700)
        except OSError:
            return
    except OSError:
        return
    with contextlib.suppress(OSError):
        if os.stat(path).st_size >= max_bytes:  # again, under the lock
            os.replace(path, path + ".1")
    with contextlib.suppress(OSError):
        os.rmdir(lock)


class SharedLog(logging.handlers.WatchedFileHandler):
    """The log file by the shared rule: WatchedFileHandler reopens the file when the one at
    the path is another (the Lua side rotated it); before a line a full file is rotated."""

    max_bytes = MAX_BYTES

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(OSError):  # no file yet: the write below makes it
            if os.stat(self.baseFilename).st_size >= self.max_bytes:
                rotate(self.baseFilename, self.max_bytes)
        super().emit(record)


def log_to_file(path: str | None, level_name: str = "warn") -> None:
    """Send this process's messages at `level_name` (setup()'s `log_level`) and above,
    asyncio's included, to `path`, once."""
    if not path:
        return
    level = LEVELS.get(level_name, logging.WARNING)
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.FileHandler) and handler.baseFilename == path:
            return
    handler = SharedLog(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter(FORMAT, "%Y-%m-%d %H:%M:%S"))
    handler.setLevel(level)
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)
