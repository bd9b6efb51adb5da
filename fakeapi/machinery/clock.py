"""Time comes from an injected clock: real by default, virtual in tests and replays.

Every emulated-time timer (watch timeouts and bookmarks, queue backoff, cleanup delays, the
failed log's resume probe) is scheduled with `Clock.call_later` or `Clock.sleep`, so a
`VirtualClock` can run hours of them at once. Both clocks can also wait until the work their
probes watch over has settled: whoever owns a probe says when its answer may have turned
idle (`probe_changed`), so settling waits for that instead of polling.

A server's clock is one of three modes (`fakeapi serve --clock`): `real`, `virtual` (time
moves only when advanced) and `virtual:auto` (also, whenever everything has settled, the
clock jumps to its next timer, as Go's testing/synctest bubbles do).
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

    deterministic: bool
    """Whether nothing may depend on real time (a virtual clock): the real-time batching
    devices (the log's wake-up window, the WAL's sync thread) then run at fixed points of the
    event loop, so the same inputs give the same log."""

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

    def probe_changed(self) -> None:
        """Say that a probe may have gone idle (work finished, a wake-up ran, a reader
        caught up): a waiting `run_until_settled` looks at the probes again."""
        ...

    async def run_until_settled(self) -> None:
        """Let the event loop run until no probe is busy and no timer is due."""
        ...


SETTLED_AFTER = 5
"""Consecutive idle loop iterations after which the loop counts as settled (a woken task may
take a few iterations before it makes a probe busy)."""
SETTLE_LIMIT = 60.0
"""Real seconds `run_until_settled` waits for busy probes before it gives up (a safety net
for a probe that never goes idle, not a wait: settling is woken by `probe_changed`)."""


REAL, VIRTUAL, VIRTUAL_AUTO = "real", "virtual", "virtual:auto"
CLOCK_MODES = (REAL, VIRTUAL, VIRTUAL_AUTO)
"""The modes of `fakeapi serve --clock`."""


class SettleTimeout(TimeoutError):
    """Work never settled: some probe stayed busy for `SETTLE_LIMIT` real seconds."""


class _Settling:
    """Work-pending probes and the one settle loop both clocks share."""

    def __init__(self) -> None:
        self._probes: list[Callable[[], bool]] = []
        self._changed: asyncio.Future[None] | None = None  # what a busy settle waits on

    def add_probe(self, busy: Callable[[], bool]) -> None:
        """Register `busy()`: True while work it watches over is pending. Its owner calls
        `probe_changed()` whenever the answer may have turned False."""
        self._probes.append(busy)

    def probe_changed(self) -> None:
        """Wake a settle that waits on busy probes, so it looks at them again (cheap when
        none waits: the hot paths call this)."""
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)

    def _fire_due(self) -> bool:
        """Run the timers due now; True when any ran (real timers run on the loop: none)."""
        return False

    async def run_until_settled(self, *, limit: float = SETTLE_LIMIT) -> None:
        """Yield to the event loop until no probe is busy for `SETTLED_AFTER` iterations in a
        row and no timer is due (due timers fire here). While a probe is busy this waits for
        `probe_changed()`, not for time; SettleTimeout after `limit` real seconds of it."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + limit
        idle = 0
        while idle < SETTLED_AFTER:
            fired = self._fire_due()
            busy = [probe for probe in self._probes if probe()]
            if not busy:
                idle = 0 if fired else idle + 1
                await asyncio.sleep(0)
                continue
            idle = 0
            changed = self._changed
            if changed is None:
                changed = self._changed = loop.create_future()
            try:
                async with asyncio.timeout_at(give_up):
                    await asyncio.shield(changed)
            except TimeoutError:
                raise SettleTimeout(f"still busy after {limit} s: {busy}") from None


class RealClock(_Settling):
    """The system clock; timers run on the event loop."""

    deterministic = False

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
    """A clock that only moves when told to (`advance()`); its timers fire in time order.

    With `auto`, `run_auto()` also moves it: whenever every probe is idle, to the next timer.
    """

    def __init__(self, start: dt.datetime | None = None, *, auto: bool = False,
                 deterministic: bool = True) -> None:
        super().__init__()
        self.deterministic = deterministic
        """False keeps the real-time batching devices (for tests of those devices)."""
        self._start = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
        self.auto = auto
        self._elapsed = 0.0
        self._timers: list[tuple[float, int, _VirtualTimer]] = []
        self._seq = itertools.count()
        self._cancelled = 0  # cancelled timers still in the heap
        self._moving = asyncio.Lock()  # one advance at a time (callers and the auto loop)
        self._scheduled: asyncio.Future[None] | None = None  # the idle auto loop waits here

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
        if self._scheduled is not None:
            _resolve(self._scheduled)
            self._scheduled = None
        return timer

    def next_deadline(self) -> float | None:
        """The monotonic() time of the next pending timer (None when there is none)."""
        self._drop_cancelled()
        return self._timers[0][0] if self._timers else None

    def resume_at(self, when: dt.datetime) -> None:
        """Stand at `when` if it is later than now (a restart continues where a recorded run
        left off); timers due by then fire at the next settle."""
        self._elapsed = max(self._elapsed, (when - self._start).total_seconds())

    async def advance(self, seconds: float) -> None:
        """Settle; fire each timer due by now + seconds at its own time, settling after each;
        then stand at now + seconds and settle again. Concurrent advances take turns."""
        if seconds < 0:
            raise ValueError(f"a clock can't go back: advance({seconds})")
        async with self._moving:
            await self._advance(seconds)

    async def run_auto(self) -> None:
        """`virtual:auto`: forever (until cancelled), whenever every probe is idle, jump to
        the next timer and fire it; with no timer, wait until one is scheduled."""
        while True:
            try:
                await self.run_until_settled()
            except SettleTimeout:  # busy for a long while (a big apply): look again
                continue
            async with self._moving:
                deadline = self.next_deadline()
                if deadline is not None:
                    await self._advance(max(deadline - self._elapsed, 0.0))
                    continue
            self._scheduled = asyncio.get_running_loop().create_future()
            await self._scheduled

    async def _advance(self, seconds: float) -> None:
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
        """Fire the timers due by now (a resumed or advanced clock's); True when any ran."""
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


def clock_mode(clock: Clock) -> str:
    """The `--clock` mode a clock runs in: `real`, `virtual` or `virtual:auto`."""
    if isinstance(clock, VirtualClock):
        return VIRTUAL_AUTO if clock.auto else VIRTUAL
    return REAL


def clock_for(mode: str) -> Clock:
    """A new clock of a `--clock` mode (ValueError for another name)."""
    if mode not in CLOCK_MODES:
        raise ValueError(f"unknown clock {mode!r}: one of {', '.join(CLOCK_MODES)}")
    return RealClock() if mode == REAL else VirtualClock(auto=mode == VIRTUAL_AUTO)
