"""CPU-heavy work of a request off the event loop (doc/architecture.md, Costs).

One loop serves every agent and the human's commands: a call that computes for seconds on
it (matching a long `find` that has no exact match, the anchors of a large text block)
would hold every other client's answer, `ping` included, and no timeout could fire. Such
work runs on a small pool of worker threads instead; the loop keeps answering while it
runs (it still shares the GIL: each step of the loop waits at most a switch interval).
A worker cannot be interrupted: a call cancelled or timed out while its work runs lets it
finish and drops the result, and work not started yet is dropped at once; request size
limits (`models.MAX_FIND`, `lsreq.parser.MAX_LINES`) bound how long one piece can take.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

WORKERS = 2  # at most this many pieces compute at once; more wait for a worker
_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="lsap-cpu")


async def off_loop(heavy: bool, work: Callable[[], T]) -> T:
    """`work()`, on a worker thread when the caller deems it `heavy`, else right here (a
    thread hop costs more than cheap work)."""
    if not heavy:
        return work()
    return await asyncio.get_running_loop().run_in_executor(_pool, work)
