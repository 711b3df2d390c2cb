"""The log file in the human's editor: `stdpath('log')/lsap.log`, shared with the Lua side.

The remote plugin's host has no terminal, so whatever goes wrong in the service thread
(an exception, a task that failed unseen) would vanish; this sends it to the file that
`:checkhealth lsap` and the help's troubleshooting section point to.
"""

from __future__ import annotations

import logging

FORMAT = "%(asctime)s %(levelname)s [python] %(name)s: %(message)s"
LEVELS = {
    "error": logging.ERROR,
    "warn": logging.WARNING,
    "info": logging.INFO,
    "debug": logging.DEBUG,
}


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
    handler = logging.FileHandler(path, encoding="utf-8", delay=True)
    handler.setFormatter(logging.Formatter(FORMAT, "%Y-%m-%d %H:%M:%S"))
    handler.setLevel(level)
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)
