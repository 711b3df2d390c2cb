"""Processes that die with the one that started them, however it dies (SIGKILL included).

`die_with_parent` asks the kernel for a signal when the parent goes (Linux's
PR_SET_PDEATHSIG): the embedded daemon starts its Neovim so. Neovim starts the language
servers itself, so each embedded server runs under this file as a small wrapper
(`command()`):

    python -I -S watchdog.py <server command…>

The wrapper starts the server as its child, in its own process group (Neovim starts it
detached), with stdin and stdout handed straight through, and waits. When Neovim goes
(the parent-death signal, or a changed parent pid where there is no such signal), the
server had its stdin closed: it gets GRACE[0] seconds to exit, then the whole group gets
SIGTERM, then SIGKILL GRACE[1] seconds later. A SIGTERM from Neovim (a client stopped by
force) ends the group the same way. Standard library only, no package import: it starts
in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

PR_SET_PDEATHSIG = 1
GRACE = (1.0, 1.0)  # seconds: to exit by itself once the parent is gone; after SIGTERM
POLL = 0.5  # seconds between looks at the parent where no signal tells


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Have the kernel send `sig` to this process when its parent exits (Linux only).
    Meant for `preexec_fn`. Returns whether it is in place."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0)
    return False


def command() -> list[str]:
    """The prefix that runs a server under this wrapper."""
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve())]


def end(child: subprocess.Popen[bytes]) -> None:
    """End the server and whatever it started: SIGTERM, then SIGKILL, to the group when
    this wrapper leads one (Neovim's `detached`), else to the server alone."""
    own = os.getpgrp() == os.getpid()
    for sig, wait in ((signal.SIGTERM, GRACE[1]), (signal.SIGKILL, 0.0)):
        with contextlib.suppress(ProcessLookupError):
            if own:  # SIGKILL ends this wrapper too: nothing is left to do then
                os.killpg(os.getpid(), sig)
            else:
                child.send_signal(sig)
        deadline = time.monotonic() + wait
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: watchdog.py <command> [args…]", file=sys.stderr)
        return 2
    parent = os.getppid()
    stop = threading.Event()

    def on_signal(_sig: int, _frame: FrameType | None) -> None:
        stop.set()

    # SIGUSR1: the parent died (below); SIGTERM, SIGHUP, SIGINT: asked to stop.
    for sig in (signal.SIGUSR1, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_signal)
    die_with_parent(signal.SIGUSR1)
    if os.getppid() != parent:  # gone before the signal was in place
        return 1
    try:
        child = subprocess.Popen(argv)
    except OSError as exc:
        print(f"watchdog: cannot run {argv[0]}: {exc}", file=sys.stderr)
        return 127
    while child.poll() is None:
        stop.wait(POLL)
        orphaned = os.getppid() != parent
        if orphaned or stop.is_set():
            if orphaned:  # its stdin is closed: a moment to exit by itself
                deadline = time.monotonic() + GRACE[0]
                while child.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)
            # Not ourselves: this wrapper leaves the group's SIGTERM to end the others.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            end(child)
            break
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
