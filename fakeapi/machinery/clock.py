"""Time comes from an injected clock: real by default, virtual in tests and replays.

Every emulated-time timer (watch timeouts and bookmarks, queue backoff, cleanup delays)
is scheduled with `Clock.call_later`, so a `VirtualClock` can run hours of them at once.
Both clocks can also wait until the work their probes watch over has settled.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    """A scheduled callback that can still be called off (asyncio.TimerHandle is one)."""

    def cancel(self) -> None:
        """Don't run the callback (no effect once it has run)."""
        ...


class Clock(Protocol):
    """What components read time and schedule timers through."""

    def now(self) -> dt.datetime:
        """Current wall time, timezone-aware UTC."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (for timeouts and intervals)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` on this clock."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` once `delay` seconds have passed on this clock."""
        ...

    def add_probe(self, busy: Callable[[], bool]) -> None:
        """Register a check that says whether some work is still pending."""
        ...

    async def run_until_settled(self) -> None:
        """Let the event loop run until no probe is busy and no timer is due."""
        ...


SETTLED_AFTER = 5
"""Consecutive idle loop iterations after which the loop counts as settled (a woken task may
take a few iterations before it makes a probe busy)."""
FAST_SPINS = 100
"""Busy iterations yielded with `sleep(0)` before yielding 1 ms of real time per iteration
(work waiting on a real-time loop timer, such as the log's wake-up window, needs that)."""
SETTLE_LIMIT = 60.0
"""Real seconds `run_until_settled` waits for busy probes before it gives up."""


class SettleTimeout(TimeoutError):
    """Work never settled: some probe stayed busy for `SETTLE_LIMIT` real seconds."""


class _Settling:
    """Work-pending probes and the one settle loop both clocks share."""

    def __init__(self) -> None:
        self._probes: list[Callable[[], bool]] = []

    def add_probe(self, busy: Callable[[], bool]) -> None:
        """Register `busy()`: True while work it watches over is pending."""
        self._probes.append(busy)

    def _fire_due(self) -> bool:
        """Run the timers due now; True when any ran (real timers run on the loop: none)."""
        return False

    async def run_until_settled(self, *, limit: float = SETTLE_LIMIT) -> None:
        """Yield to the event loop until no probe is busy for `SETTLED_AFTER` iterations in a
        row and no timer is due (due timers fire here); SettleTimeout after `limit` seconds."""
        idle = spins = 0
        started = time.monotonic()
        while idle < SETTLED_AFTER:
            fired = self._fire_due()
            busy = [probe for probe in self._probes if probe()]
            if not busy and not fired:
                idle += 1
                await asyncio.sleep(0)
                continue
            idle = 0
            spins += 1
            if spins <= FAST_SPINS:
                await asyncio.sleep(0)
                continue
            if time.monotonic() - started > limit:
                raise SettleTimeout(f"still busy after {limit} s: {busy}")
            await asyncio.sleep(0.001)


class RealClock(_Settling):
    """The system clock; timers run on the event loop."""

    def now(self) -> dt.datetime:
        """Current UTC time."""
        return dt.datetime.now(dt.UTC)

    def monotonic(self) -> float:
        """time.monotonic()."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """asyncio.sleep()."""
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """The running loop's call_later()."""
        return asyncio.get_running_loop().call_later(delay, callback)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _VirtualTimer:
    """One entry of a VirtualClock's timer heap (cancelled ones are dropped lazily)."""

    __slots__ = ("_clock", "callback", "pending")

    def __init__(self, clock: VirtualClock, callback: Callable[[], None]) -> None:
        self._clock = clock
        self.callback = callback
        self.pending = True

    def cancel(self) -> None:
        """Don't fire (no effect once fired or cancelled)."""
        if self.pending:
            self.pending = False
            self._clock._cancelled_one()


class VirtualClock(_Settling):
    """A clock that only moves when told to (`advance()`); its timers fire in time order."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        super().__init__()
        self._start = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        self._elapsed = 0.0
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = itertools.count()
        self._cancelled = 0  # cancelled timers still in the heap

    def now(self) -> dt.datetime:
        """Start time plus the advanced seconds."""
        return self._start + dt.timedelta(seconds=self._elapsed)

    def monotonic(self) -> float:
        """Seconds advanced so far."""
        return self._elapsed

    async def sleep(self, seconds: float) -> None:
        """Block until the clock has been advanced to now + seconds."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = self.call_later(seconds, functools.partial(_resolve, fut))
        try:
            await fut
        finally:
            timer.cancel()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Fire `callback` when the clock reaches now + delay (fired by `advance()` or
        `run_until_settled()`; a delay <= 0 runs on the loop's next iteration, as asyncio's)."""
        if delay <= 0:
            try:
                return asyncio.get_running_loop().call_soon(callback)
            except RuntimeError:  # no loop yet: the next settle fires it
                pass
        timer = _VirtualTimer(self, callback)
        heapq.heappush(self._timers, (self._elapsed + max(delay, 0.0), next(self._seq), timer))
        return timer

    def next_deadline(self) -> float | None:
        """The monotonic() time of the next pending timer (None when there is none)."""
        self._drop_cancelled()
        return self._timers[0][0] if self._timers else None

    async def advance(self, seconds: float) -> None:
        """Settle; fire each timer due by now + seconds at its own time, settling after each;
        then stand at now + seconds and settle again."""
        if seconds < 0:
            raise ValueError(f"a clock can't go back: advance({seconds})")
        target = self._elapsed + seconds
        await self.run_until_settled()
        while (deadline := self.next_deadline()) is not None and deadline <= target:
            _, _, timer = heapq.heappop(self._timers)
            self._elapsed = max(self._elapsed, deadline)
            self._fire(timer)
            await self.run_until_settled()
        self._elapsed = target
        await self.run_until_settled()

    def _fire_due(self) -> bool:
        fired = False
        while (deadline := self.next_deadline()) is not None and deadline <= self._elapsed:
            self._fire(heapq.heappop(self._timers)[2])
            fired = True
        return fired

    def _fire(self, timer: _VirtualTimer) -> None:
        """Run a popped timer; an exception goes to the loop's handler, as asyncio's do."""
        timer.pending = False
        try:
            timer.callback()
        except Exception as e:
            asyncio.get_running_loop().call_exception_handler({
                "message": f"Exception in VirtualClock timer {timer.callback!r}",
                "exception": e})

    def _drop_cancelled(self) -> None:
        heap = self._timers
        while heap and not heap[0][2].pending:
            heapq.heappop(heap)
            self._cancelled -= 1

    def _cancelled_one(self) -> None:
        """Count a cancellation; rebuild the heap once cancelled entries dominate it."""
        self._cancelled += 1
        if self._cancelled > 64 and self._cancelled * 2 > len(self._timers):
            self._timers = [entry for entry in self._timers if entry[2].pending]
            heapq.heapify(self._timers)
            self._cancelled = 0
