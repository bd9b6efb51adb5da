"""fakeapi.machinery.clock: wire timestamps (the per-second cache of `rfc3339` changes nothing),
timers on
the virtual and real clocks, and settling."""

from __future__ import annotations

import asyncio
import datetime as dt
import functools
import random
import zoneinfo
from collections.abc import Callable

import pytest

from fakeapi.machinery.clock import (
    SETTLED_AFTER,
    RealClock,
    SettleTimeout,
    VirtualClock,
    clock_mode,
)
from fakeapi.machinery.timestamps import rfc3339


def _plain(t: dt.datetime) -> str:
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_rfc3339_matches_strftime_across_second_boundaries() -> None:
    rng = random.Random(7)
    base = dt.datetime(2026, 11, 30, 23, 59, 58, tzinfo=dt.UTC)
    times = [base + dt.timedelta(microseconds=rng.randrange(3_000_000)) for _ in range(2000)]
    times += [base + dt.timedelta(seconds=s, microseconds=us)
              for s in (0, 1, 2) for us in (0, 1, 999_999)]
    times += [t - dt.timedelta(days=400) for t in times[:50]]  # and back in time
    for t in times:
        assert rfc3339(t) == _plain(t), t


@pytest.mark.parametrize("t", [
    dt.datetime(2026, 1, 1, 1, 0, 0, 500_000, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.datetime(2026, 10, 25, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"), fold=0),
    dt.datetime(2026, 10, 25, 2, 30, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"), fold=1),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC),
    dt.datetime(1, 1, 1, tzinfo=dt.UTC),
])
def test_rfc3339_other_zones_and_extremes(t: dt.datetime) -> None:
    rfc3339(dt.datetime(2026, 10, 25, 0, 30, tzinfo=dt.UTC))  # something else cached first
    assert rfc3339(t) == _plain(t)
    assert rfc3339(t) == _plain(t)


def test_rfc3339_same_second_is_cached_text() -> None:
    t = dt.datetime(2030, 5, 6, 7, 8, 9, 10, tzinfo=dt.UTC)
    assert rfc3339(t) == "2030-05-06T07:08:09Z"
    assert rfc3339(t + dt.timedelta(microseconds=999_989)) == "2030-05-06T07:08:09Z"
    assert rfc3339(t + dt.timedelta(microseconds=999_990)) == "2030-05-06T07:08:10Z"


# ----- timers, advance and settling ------------------------------------------------------------


CLOCKS = [RealClock, VirtualClock]


@pytest.mark.parametrize(("timers", "cancelled", "fired"), [
    ([("a", 1.0), ("b", 2.0), ("c", 2.0), ("d", 0.5)], set(), ["d@0.5", "a@1.0", "b@2.0",
                                                               "c@2.0"]),
    ([("a", 1.0), ("b", 2.0), ("c", 3.5)], {"b"}, ["a@1.0"]),
    ([("a", 3.0), ("b", 3.0)], {"a", "b"}, []),
    ([("late", 3.01)], set(), []),
], ids=["in-deadline-order-ties-by-schedule", "cancelled-skipped", "all-cancelled",
        "after-the-target"])
async def test_advance_fires_due_timers_in_order_at_their_own_time(
        timers: list[tuple[str, float]], cancelled: set[str], fired: list[str]) -> None:
    clock = VirtualClock()
    seen: list[str] = []
    handles = {name: clock.call_later(delay, functools.partial(
        lambda n: seen.append(f"{n}@{clock.monotonic()}"), name)) for name, delay in timers}
    for name in cancelled:
        handles[name].cancel()
    await clock.advance(3.0)
    assert seen == fired
    assert clock.monotonic() == 3.0
    for handle in handles.values():
        handle.cancel()  # cancelling a fired or cancelled timer changes nothing
    assert clock.next_deadline() is None


async def test_advance_settles_between_timers() -> None:
    """A task woken by one timer runs, and its own new timer fires in order, before the next."""
    clock = VirtualClock()
    seen: list[tuple[str, float]] = []

    async def sleeper() -> None:
        await clock.sleep(1)
        seen.append(("woke", clock.monotonic()))
        clock.call_later(0.2, lambda: seen.append(("chained", clock.monotonic())))

    task = asyncio.create_task(sleeper())
    clock.call_later(1.5, lambda: seen.append(("timer", clock.monotonic())))
    await clock.advance(2)
    assert seen == [("woke", 1.0), ("chained", 1.2), ("timer", 1.5)]
    assert task.done()


async def test_sleep_waits_for_virtual_time_only() -> None:
    clock = VirtualClock()
    task = asyncio.create_task(clock.sleep(10))
    await clock.advance(9.5)
    assert not task.done()
    assert clock.next_deadline() == 10
    await clock.advance(0.5)
    assert task.done()
    assert clock.now() == dt.datetime(2026, 1, 1, 0, 0, 10, tzinfo=dt.UTC)


async def test_a_cancelled_sleep_cancels_its_timer() -> None:
    clock = VirtualClock()
    task = asyncio.create_task(clock.sleep(5))
    await clock.run_until_settled()
    assert clock.next_deadline() == 5
    task.cancel()
    await clock.run_until_settled()
    assert task.cancelled()
    assert clock.next_deadline() is None


async def test_many_cancelled_timers_leave_the_next_deadline_right() -> None:
    clock = VirtualClock()
    keep = clock.call_later(500.5, lambda: None)
    for i in range(1000):
        clock.call_later(i + 1, lambda: None).cancel()
        assert clock.next_deadline() == 500.5
    keep.cancel()
    assert clock.next_deadline() is None


async def test_a_zero_delay_timer_runs_on_the_loop_without_advance() -> None:
    clock = VirtualClock()
    seen: list[int] = []
    clock.call_later(0, lambda: seen.append(1))
    clock.call_later(-1, lambda: seen.append(2)).cancel()
    await asyncio.sleep(0)
    assert seen == [1]
    assert clock.monotonic() == 0


async def test_a_failing_timer_is_reported_and_the_next_still_fires() -> None:
    clock = VirtualClock()
    reported: list[dict[str, object]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: reported.append(ctx))
    seen: list[str] = []

    def boom() -> None:
        raise RuntimeError("boom")

    clock.call_later(1, boom)
    clock.call_later(2, lambda: seen.append("next"))
    await clock.advance(2)
    assert seen == ["next"]
    assert [str(ctx["exception"]) for ctx in reported] == ["boom"]


@pytest.mark.parametrize("seconds", [-1, -0.001])
async def test_time_never_goes_back(seconds: float) -> None:
    clock = VirtualClock()
    with pytest.raises(ValueError, match="can't go back"):
        await clock.advance(seconds)
    assert clock.monotonic() == 0


async def test_real_clock_timers_run_on_the_loop_and_cancel() -> None:
    clock = RealClock()
    fired = asyncio.get_running_loop().create_future()
    seen: list[str] = []
    clock.call_later(0.001, lambda: fired.set_result(None))
    clock.call_later(0, lambda: seen.append("cancelled")).cancel()
    await asyncio.wait_for(fired, 5)
    assert seen == []


@pytest.mark.parametrize("make", CLOCKS)
@pytest.mark.parametrize("hand_on", ["next-iteration", "real-time-timer"])
async def test_run_until_settled_waits_for_every_probe_to_go_idle(
        make: type[RealClock | VirtualClock], hand_on: str) -> None:
    """A chain of work items, each handed on at the next loop iteration or after a short
    real-time loop timer (as the log's watch wake-up window does), is all done when settling
    returns."""
    clock = make()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[int] = asyncio.Queue()
    in_flight = [0]  # queued, being worked on, or waiting on the loop timer
    done: list[int] = []

    def put(i: int) -> None:
        queue.put_nowait(i)

    async def worker() -> None:
        while True:
            i = await queue.get()
            await asyncio.sleep(0)
            done.append(i)
            if i < 5:
                in_flight[0] += 1
                if hand_on == "real-time-timer":
                    loop.call_later(0.003, put, i + 1)
                else:
                    put(i + 1)
            in_flight[0] -= 1
            clock.probe_changed()  # the probe's owner says when it may have gone idle

    clock.add_probe(lambda: in_flight[0] > 0)
    task = asyncio.create_task(worker())
    in_flight[0] += 1
    put(0)
    await clock.run_until_settled()
    assert done == [0, 1, 2, 3, 4, 5]
    assert in_flight == [0]
    task.cancel()


@pytest.mark.parametrize("make", CLOCKS)
async def test_a_busy_probe_is_looked_at_again_only_when_told(
        make: type[RealClock | VirtualClock]) -> None:
    """Settling waits for `probe_changed()`, not for time: a probe that stays busy through a
    real-time wait is asked once at the start and once after each change it reports."""
    clock = make()
    loop = asyncio.get_running_loop()
    pending = [True]
    asked: list[bool] = []

    def busy() -> bool:
        asked.append(pending[0])
        return pending[0]

    def told(still_busy: bool) -> None:
        pending[0] = still_busy
        clock.probe_changed()

    clock.add_probe(busy)
    loop.call_later(0.02, told, True)  # a change that leaves it busy
    loop.call_later(0.04, told, False)
    await clock.run_until_settled()
    assert asked == [True, True] + [False] * SETTLED_AFTER


@pytest.mark.parametrize("make", CLOCKS)
async def test_a_probe_that_never_goes_idle_fails_settling(
        make: type[RealClock | VirtualClock]) -> None:
    clock = make()
    clock.add_probe(lambda: True)
    with pytest.raises(SettleTimeout, match="still busy"):
        await clock.run_until_settled(limit=0.05)


@pytest.mark.parametrize("make", CLOCKS)
async def test_run_until_settled_returns_at_once_when_idle(
        make: type[RealClock | VirtualClock]) -> None:
    clock = make()
    clock.add_probe(lambda: False)
    started = asyncio.get_running_loop().time()
    await clock.run_until_settled()
    assert asyncio.get_running_loop().time() - started < 0.5


async def _spin_until(done: Callable[[], bool], turns: int = 10_000) -> None:
    """Let the loop run until `done()` (at most `turns` iterations, then fail)."""
    for _ in range(turns):
        if done():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"not done after {turns} loop iterations")


async def test_concurrent_advances_take_turns() -> None:
    """Two callers advancing at once each get their whole span, one after the other."""
    clock = VirtualClock()
    seen: list[float] = []
    for delay in (1, 2, 3, 4, 5):
        clock.call_later(delay, lambda: seen.append(clock.monotonic()))
    await asyncio.gather(clock.advance(2.5), clock.advance(2.5))
    assert seen == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert clock.monotonic() == 5.0


async def test_auto_jumps_to_each_timer_once_idle_and_waits_when_none_is_left() -> None:
    clock = VirtualClock(auto=True)
    seen: list[float] = []
    busy = [True]
    clock.add_probe(lambda: busy[0])
    clock.call_later(30, lambda: seen.append(clock.monotonic()))
    clock.call_later(300, lambda: seen.append(clock.monotonic()))
    auto = asyncio.create_task(clock.run_auto())
    for _ in range(20):
        await asyncio.sleep(0)
    assert (seen, clock.monotonic()) == ([], 0.0)  # a busy probe holds time still
    busy[0] = False
    clock.probe_changed()
    await clock.run_until_settled()
    await _spin_until(lambda: len(seen) == 2)
    assert seen == [30.0, 300.0]
    for _ in range(20):
        await asyncio.sleep(0)
    assert clock.monotonic() == 300.0  # no timer left: time stands
    clock.call_later(5, lambda: seen.append(clock.monotonic()))  # a new one wakes it
    await _spin_until(lambda: len(seen) == 3)
    assert seen[2] == 305.0
    auto.cancel()
    with pytest.raises(asyncio.CancelledError):
        await auto


async def test_an_advance_during_auto_jumps_is_not_overshot() -> None:
    """The auto loop and a caller share the clock: every timer fires at its own time."""
    clock = VirtualClock(auto=True)
    seen: list[tuple[int, float]] = []
    for i in range(1, 50):
        clock.call_later(i * 10, functools.partial(lambda n: seen.append(
            (n, clock.monotonic())), i))
    auto = asyncio.create_task(clock.run_auto())
    await clock.advance(100)
    await _spin_until(lambda: len(seen) == 49)
    auto.cancel()
    assert seen == [(i, i * 10.0) for i in range(1, 50)]


def test_resume_moves_forward_only() -> None:
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    clock = VirtualClock(start)
    clock.resume_at(start + dt.timedelta(hours=1))
    assert clock.now() == start + dt.timedelta(hours=1)
    clock.resume_at(start)
    assert clock.monotonic() == 3600.0


@pytest.mark.parametrize(("clock", "mode"), [
    (RealClock(), "real"), (VirtualClock(), "virtual"),
    (VirtualClock(auto=True), "virtual:auto")])
def test_clock_mode(clock: RealClock | VirtualClock, mode: str) -> None:
    assert clock_mode(clock) == mode
