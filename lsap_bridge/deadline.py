"""Awaiting with a time limit, without the task `asyncio.wait_for` makes on Python < 3.12.

`wait_for` wraps a coroutine in a new task (Python 3.11: for a future too, a waiter and a
callback), which costs loop iterations on every request; `asyncio.timeout` (3.11+) cancels
the awaiting task in place. Both raise `asyncio.TimeoutError` when the time is up.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float) -> T:
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)
