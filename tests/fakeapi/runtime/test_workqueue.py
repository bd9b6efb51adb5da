"""The work queue on a virtual clock: deduplication, per-key backoff, Retry, errors logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from fakeapi.runtime.workqueue import RateLimiter, Retry, WorkQueue, process


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def queue(clock: VirtualClock) -> WorkQueue[str]:
    q: WorkQueue[str] = WorkQueue(clock=clock, name="test")
    clock.add_probe(q.busy)
    return q


@pytest.fixture
async def calls(clock: VirtualClock, queue: WorkQueue[str],
                request: pytest.FixtureRequest) -> AsyncIterator[list[tuple[str, float]]]:
    """Run one worker whose reconcile follows the test's `plan`: key -> outcomes in order
    (None succeeds, an exception instance is raised); records (key, time) of every call."""
    seen: list[tuple[str, float]] = []
    plan: dict[str, list[BaseException | None]] = request.param

    async def reconcile(key: str) -> None:
        seen.append((key, round(clock.monotonic(), 6)))
        outcomes = plan.get(key) or [None]
        outcome = outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]
        if outcome is not None:
            raise outcome

    worker = asyncio.create_task(process(queue, reconcile, name="test"))
    yield seen
    worker.cancel()
    await asyncio.gather(worker, return_exceptions=True)


def test_a_key_is_queued_once_however_often_it_is_added(queue: WorkQueue[str]) -> None:
    for key in ("a", "b", "a", "a", "c", "b"):
        queue.add(key)
    assert len(queue) == 3
    assert queue.adds == 3, "an add of a key already waiting is not counted"


async def test_a_key_added_while_processing_comes_back_after_done(
        queue: WorkQueue[str]) -> None:
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")  # changed again while being reconciled
    assert len(queue) == 0, "not handed to a second worker meanwhile"
    queue.done("a")
    assert await queue.get() == "a"
    queue.done("a")
    assert not queue.busy()


@pytest.mark.parametrize("calls,expected", [
    pytest.param({"k": [RuntimeError("boom")] * 3 + [None]},
                 [0.0, 0.005, 0.015, 0.035], id="errors back off 5ms, 10ms, 20ms"),
    pytest.param({"k": [ApiError(409, "Conflict", "stale")] * 2 + [None]},
                 [0.0, 0.005, 0.015], id="conflicts back off too"),
    pytest.param({"k": [Retry(after=30.0), None]}, [0.0, 30.0], id="Retry(after) waits"),
    pytest.param({"k": [Retry(), Retry(), None]}, [0.0, 0.005, 0.015],
                 id="Retry() takes the backoff"),
], indirect=["calls"])
async def test_failed_keys_come_back_on_the_virtual_clock(
        clock: VirtualClock, queue: WorkQueue[str], calls: list[tuple[str, float]],
        expected: list[float]) -> None:
    queue.add("k")
    await clock.advance(3600)
    assert [t for _, t in calls] == expected
    assert queue.limiter.retries("k") == 0, "a success resets the backoff"
    assert not queue.busy() and queue.waiting() == 0
    # what /metrics shows: every call was an add and a reconcile, every failure a retry
    assert (queue.adds, queue.reconciles, queue.retries) == (
        len(expected), len(expected), len(expected) - 1)


@pytest.mark.parametrize("calls", [{"bad": [ValueError("no such thing"), None]}],
                         indirect=True)
async def test_an_error_is_logged_with_its_traceback(
        clock: VirtualClock, queue: WorkQueue[str], calls: list[tuple[str, float]],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    queue.add("bad")
    await clock.advance(1)
    assert len(calls) == 2
    [record] = [r for r in caplog.records if "reconciling 'bad' failed" in r.getMessage()]
    assert record.exc_info is not None and "no such thing" in str(record.exc_info[1])


@pytest.mark.parametrize("calls", [{}], indirect=True)
async def test_an_earlier_delayed_add_wins_and_add_now_cancels_the_wait(
        clock: VirtualClock, queue: WorkQueue[str], calls: list[tuple[str, float]]) -> None:
    queue.add_after("x", 10)
    queue.add_after("x", 5)
    queue.add_after("x", 20)
    await clock.advance(60)
    assert calls == [("x", 5.0)]
    queue.add_after("y", 10)
    queue.add("y")
    await clock.advance(60)
    assert calls == [("x", 5.0), ("y", 60.0)]
    assert queue.waiting() == 0


def test_backoff_doubles_up_to_its_cap() -> None:
    limiter: RateLimiter[str] = RateLimiter(base=1.0, cap=10.0)
    assert [limiter.when("k") for _ in range(6)] == [1, 2, 4, 8, 10, 10]
    assert limiter.when("other") == 1
    limiter.forget("k")
    assert limiter.when("k") == 1
