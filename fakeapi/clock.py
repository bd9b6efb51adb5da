"""Time comes from an injected clock: real by default, virtual in tests and replays."""

from __future__ import annotations

import asyncio
import datetime as dt
import heapq
import itertools
import time
from typing import Protocol


class Clock(Protocol):
    """What components read time through."""

    def now(self) -> dt.datetime:
        """Current wall time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (for timeouts and intervals)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock."""
        ...


_ONE_SECOND = dt.timedelta(seconds=1)
_LAST_START = dt.datetime.max.replace(microsecond=0, tzinfo=dt.UTC)
# The UTC second formatted last, [start, end), and its text (starts empty: end < start).
_last_second = (_LAST_START, _LAST_START - _ONE_SECOND, "")


def rfc3339(t: dt.datetime) -> str:
    """Kubernetes `metav1.Time` wire form: second precision, `Z` suffix.

    Every write stamps the clock's current second (often twice), so the last UTC second
    formatted is remembered: two comparisons cost far less than `strftime`.
    """
    global _last_second
    if t.tzinfo is not dt.UTC:  # other zones (and their folds) take the plain path
        return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    start, end, text = _last_second
    if start <= t < end:
        return text
    start = t.replace(microsecond=0)
    text = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    if start < _LAST_START:  # (the very last second has no end to remember)
        _last_second = (start, start + _ONE_SECOND, text)
    return text


def rfc3339_micro(t: dt.datetime) -> str:
    """Kubernetes `metav1.MicroTime` wire form (managedFields use second precision; leases this)."""
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> dt.datetime:
    """Parse an RFC 3339 timestamp as found in objects."""
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))


class RealClock:
    """The system clock."""

    def now(self) -> dt.datetime:
        """Current UTC time."""
        return dt.datetime.now(dt.UTC)

    def monotonic(self) -> float:
        """time.monotonic()."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """asyncio.sleep()."""
        await asyncio.sleep(seconds)


class VirtualClock:
    """A clock that only moves when a test calls `advance()`; sleepers wake in time order."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self._start = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        self._elapsed = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> dt.datetime:
        """Start time plus the advanced seconds."""
        return self._start + dt.timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        """Seconds advanced so far."""
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        """Block until the clock has been advanced past now + seconds."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._elapsed + seconds, next(self._seq), fut))
        await fut

    async def advance(self, seconds: float) -> None:
        """Move time forward, waking (in order) every sleeper whose deadline passed."""
        target = self._elapsed + seconds
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline, _, fut = heapq.heappop(self._sleepers)
            self._elapsed = max(self._elapsed, deadline)
            if not fut.done():
                fut.set_result(None)
            await asyncio.sleep(0)
        self._elapsed = target
        await asyncio.sleep(0)
