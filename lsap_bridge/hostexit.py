"""How Neovim's Python host ends when Neovim quits: at once, with status 0.

Neovim's exit sends its host SIGTERM and closes its stdin, then waits for it to end (up to
2 s). pynvim would stop its loop and raise ("Received signal SIGTERM", or EOFError), and the
interpreter would then finalise: join the worker threads of `asyncio.to_thread`, collect and
tear down every module (0.3–0.45 s of CPU), and end with status 1; a SIGTERM while the
service was still being imported waited for the imports. Nothing of the service is worth
that wait: an edit cut off is settled by its journal at the next start, and the session's
files are removed by Neovim itself (`gateway.remove_on_exit`). So the host flushes its log
and leaves with `os._exit(0)`: on SIGTERM, and when pynvim's loop ends because its channel is
gone or on a signal it caught first (`sys.excepthook`). The SIGTERM handler is a plain one,
which Python runs between any two bytecodes of the main thread (even amid the service's
imports), where pynvim's asyncio handler waits for its loop's turn; pynvim sets its own as
its loop starts, after the plugins loaded, so the remote plugin sets this one again when its
first function runs (`install` at load and in `LsapStart`). Before all of that, while Python
still loads pynvim, the host's own first line (`lsap.compat.start_python_plugin`) has set a
handler that leaves with `os._exit(0)` too.

Imported by the remote plugin at load: nothing but the standard library here.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import NoReturn


def _end() -> NoReturn:
    logging.shutdown()  # lsap.log flushed; nothing else is waited for
    os._exit(0)


def _on_signal(_signum: int, _frame: FrameType | None) -> None:
    _end()


def _ending(kind: type[BaseException], value: BaseException) -> bool:
    """Whether an exception out of pynvim's loop says that Neovim is gone, or quits."""
    return issubclass(kind, (EOFError, ConnectionError)) or str(value).startswith("Received signal")


def install() -> None:
    """Set how the host ends (see the module docstring); from the host's main thread, where
    pynvim's loop and the remote plugins run (elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGTERM, _on_signal)
    previous = sys.excepthook
    if getattr(previous, "lsap", False):
        return

    def hook(kind: type[BaseException], value: BaseException, trace: TracebackType | None) -> None:
        if _ending(kind, value):
            _end()
        previous(kind, value, trace)

    hook.lsap = True  # type: ignore[attr-defined]
    sys.excepthook = hook
