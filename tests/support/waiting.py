"""Waiting for a condition instead of sleeping for a fixed time.

In process, on a virtual clock, a test waits on `ControlPlane.settle()` (or the clock's
`run_until_settled()`/`advance()`): it returns once the work is done, with no real time spent
on waiting. Against a real server process, which runs on real time, a test polls with `poll`
(or `poll_async` inside an event loop): a deadline, and a failure that says what never came
and the last value seen.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

TIMEOUT = 30.0
"""Real seconds a poll waits by default."""
INTERVAL = 0.05
"""Real seconds between two looks by default."""


class _Deadline:
    """When a poll gives up, and what it then says."""

    def __init__(self, timeout: float, what: str) -> None:
        self.timeout = timeout
        self.what = what
        self.at = time.monotonic() + timeout

    def passed(self, last: object) -> None:
        """Fail once the deadline has passed, naming the condition and the last value."""
        if time.monotonic() >= self.at:
            raise AssertionError(f"{self.what}: not reached after {self.timeout} s; "
                                 f"last seen: {last!r}")


def poll(get: Callable[[], T], *, what: str, until: Callable[[T], object] = bool,
         timeout: float = TIMEOUT, interval: float = INTERVAL) -> T:
    """Call `get()` until `until(value)` holds (by default: the value is truthy) and return
    that value; fail with `what` and the last value after `timeout` real seconds."""
    deadline = _Deadline(timeout, what)
    while not until(value := get()):
        deadline.passed(value)
        time.sleep(interval)
    return value


@overload
async def poll_async(get: Callable[[], Awaitable[T]], *, what: str,
                     until: Callable[[T], object] = ..., timeout: float = ...,
                     interval: float = ...) -> T: ...


@overload
async def poll_async(get: Callable[[], T], *, what: str, until: Callable[[T], object] = ...,
                     timeout: float = ..., interval: float = ...) -> T: ...


async def poll_async(get: Callable[[], Any], *, what: str,
                     until: Callable[[Any], object] = bool, timeout: float = TIMEOUT,
                     interval: float = INTERVAL) -> Any:
    """`poll` inside an event loop: `get` may be a coroutine function, and the loop runs
    between two looks."""
    deadline = _Deadline(timeout, what)
    while True:
        value = get()
        if inspect.isawaitable(value):
            value = await value
        if until(value):
            return value
        deadline.passed(value)
        await asyncio.sleep(interval)
