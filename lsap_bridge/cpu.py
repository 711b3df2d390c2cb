"""CPU-heavy work of a request in worker processes (doc/architecture.md, Costs).

One loop serves every agent and the human's commands: a call that computes for seconds on
it (matching a long `find` that has no exact match, the anchors of a large text block)
would hold every other client's answer, `ping` included, and no timeout could fire. A
worker thread is not enough: it shares the interpreter's lock with the loop, and a C
scorer (rapidfuzz) holding it for a long step delays a `ping` by 0.1-0.2 s. Such work runs
in a small pool of worker processes instead, started at the first piece of heavy work
(`spawn`: nothing of the service's threads or state is copied), each dying with the
process that started it (a parent-death signal, and a look at its parent pid where there
is no such signal), ended by `shutdown` when the session ends.

What crosses to a worker is a module-level function and picklable arguments of bounded
size (a file's lines, the request's text): request size limits (`models.MAX_FIND`,
`lsreq.parser.MAX_LINES`) bound both them and the work. Work that costs less than the hop
(about half a millisecond) runs right here. A call cancelled or timed out while its work
runs ends the pool (a process cannot be interrupted otherwise; the next piece starts a
new one); work not started yet is dropped at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker
from typing import ParamSpec, TypeVar

from .watchdog import POLL, die_with_parent

T = TypeVar("T")
P = ParamSpec("P")

WORKERS = 2  # at most this many pieces compute at once; more wait for a worker
_pool: ProcessPoolExecutor | None = None
_lock = threading.Lock()  # one pool, whichever thread's loop asks first
_ending: set[threading.Thread] = set()  # pools being ended away from the loop
# A pool was started since the last `shutdown` collected: only then has it semaphores to
# collect (a full collection costs a session's end 0.1-0.4 s of CPU, for nothing without).
_uncollected = False


async def off_loop(heavy: bool, work: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`work(*args)` in a worker process when the caller deems it `heavy`, else right here.

    A call cancelled while its work runs ends the pool (a process is the only thing that
    can be stopped mid-work; another call running then starts again on a new pool), and a
    pool whose worker died (killed, or its parent thread gone) is replaced once."""
    if not heavy:
        return work(*args, **kwargs)
    for attempt in (1, 2):
        pool = _current()
        future = pool.submit(work, *args, **kwargs)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if not future.cancel():
                _end_soon(pool)
            raise
        except BrokenProcessPool:
            _end_soon(pool)
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def running() -> list[int]:
    """The pids of the worker processes alive now (what the tests look at)."""
    pool = _pool
    if pool is None:
        return []
    return [pid for pid, process in list(pool._processes.items()) if process.is_alive()]


def shutdown() -> None:
    """End the workers at once (a piece of work running is dropped) and the process that
    tracks their semaphores, so no process of the pool outlives the session."""
    pool = _forget(None)
    if pool is not None:
        _end(pool)
        del pool
    for thread in list(_ending):
        thread.join(5)
    global _uncollected
    if _uncollected:
        _uncollected = False
        gc.collect()  # the pools' semaphores unlink themselves: the tracker has none left to warn of
    tracker = resource_tracker._resource_tracker
    stop = getattr(tracker, "_stop", None)  # private: without it, the tracker ends with this process
    if getattr(tracker, "_pid", None) is not None and stop is not None:
        with contextlib.suppress(Exception):
            stop()


def _current() -> ProcessPoolExecutor:
    global _pool, _uncollected
    with _lock:
        if _pool is None:
            _uncollected = True
            _pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_watch_parent, initargs=(os.getpid(),))
        return _pool


def _forget(pool: ProcessPoolExecutor | None) -> ProcessPoolExecutor | None:
    """No new work goes to `pool` (None: the current one), which is returned."""
    global _pool
    with _lock:
        if pool is None or _pool is pool:
            pool, _pool = _pool, None
        return pool


def _end_soon(pool: ProcessPoolExecutor) -> None:
    """`_end` on a thread of its own: the loop does not wait for the workers to go."""
    _forget(pool)

    def end() -> None:
        try:
            _end(pool)
        finally:
            _ending.discard(thread)

    thread = threading.Thread(target=end, name="lsap-cpu-end", daemon=True)
    _ending.add(thread)
    thread.start()


def _end(pool: ProcessPoolExecutor) -> None:
    """Kill `pool`'s workers and wait until they and the pool's thread are gone (no zombie)."""
    processes = list(pool._processes.values()) if pool._processes else []
    for process in processes:
        with contextlib.suppress(Exception):
            process.kill()
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(2)
    pool.shutdown(wait=True, cancel_futures=True)  # at once: no worker is left to wait for


def _watch_parent(parent: int) -> None:
    """In each worker, before any work: die with the session's process, however it dies."""
    if die_with_parent(signal.SIGKILL):
        if os.getppid() != parent:  # gone before the signal was in place
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL)
        os._exit(1)

    threading.Thread(target=watch, name="lsap-cpu-parent", daemon=True).start()
