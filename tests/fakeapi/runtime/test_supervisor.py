"""The supervisor on a virtual clock: crashes logged, counted and restarted with backoff."""

from __future__ import annotations

import asyncio
import logging

import pytest

from fakeapi.machinery.clock import VirtualClock
from fakeapi.runtime.supervisor import Health, Supervisor
from fakeapi.runtime.workqueue import WorkQueue


class Flaky:
    """Crashes `crashes` times (or returns, with `returns`), then runs until cancelled."""

    def __init__(self, clock: VirtualClock, crashes: int, *, returns: bool = False,
                 fail_on_cancel: bool = False) -> None:
        self.clock = clock
        self.crashes = crashes
        self.returns = returns
        self.fail_on_cancel = fail_on_cancel
        self.starts: list[float] = []

    async def run(self) -> None:
        self.starts.append(self.clock.monotonic())
        if len(self.starts) <= self.crashes:
            if self.returns:
                return
            raise RuntimeError(f"boom {len(self.starts)}")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if self.fail_on_cancel:
                raise ValueError("could not stop cleanly") from None
            raise

    def busy(self) -> bool:
        return False

    def ready(self) -> bool:
        return True


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.mark.parametrize("returns", [False, True], ids=["raises", "returns"])
async def test_a_crashed_component_is_logged_counted_and_restarted_with_backoff(
        clock: VirtualClock, caplog: pytest.LogCaptureFixture, returns: bool) -> None:
    caplog.set_level(logging.WARNING)
    sup = Supervisor(clock=clock, base_backoff=1.0, max_backoff=60.0)
    flaky = Flaky(clock, crashes=3, returns=returns)
    sup.add("flaky", flaky)
    sup.start()
    await clock.run_until_settled()
    assert sup.health() == [Health("flaky", False, sup.health()[0].reason)]
    assert "restarting" in sup.health()[0].reason
    await clock.advance(100)
    assert flaky.starts == [0.0, 1.0, 3.0, 7.0], "backoff doubles: 1 s, 2 s, 4 s"
    assert sup.units["flaky"].crashes == 3
    assert sup.health() == [Health("flaky", True)]
    messages = [r for r in caplog.records if r.getMessage().startswith("component flaky")]
    assert len(messages) == 3
    if not returns:
        assert all(r.exc_info and "boom" in str(r.exc_info[1]) for r in messages)
    assert 'fakeapi_component_crashes_total{component="flaky"} 3' in sup.metrics_text()
    assert 'fakeapi_component_ready{component="flaky"} 1' in sup.metrics_text()
    await sup.stop()
    assert sup.health() == [Health("flaky", False, "stopped")]


async def test_metrics_show_each_work_queue_of_a_component(clock: VirtualClock) -> None:
    class Queued(Flaky):
        def __init__(self, clock: VirtualClock) -> None:
            super().__init__(clock, crashes=0)
            self.pods: WorkQueue[str] = WorkQueue(clock=clock, name="two/pods")
            self.nodes: WorkQueue[str] = WorkQueue(clock=clock, name="two/nodes")

        def queues(self) -> list[WorkQueue[str]]:
            return [self.pods, self.nodes]

    sup = Supervisor(clock=clock)
    two = Queued(clock)
    sup.add("two", two)
    sup.add("plain", Flaky(clock, crashes=0))
    for key in ("a", "b", "a"):
        two.pods.add(key)
    lines = sup.metrics_text().splitlines()
    assert 'fakeapi_workqueue_depth{component="two",queue="two/pods"} 2' in lines
    assert 'fakeapi_workqueue_adds_total{component="two",queue="two/pods"} 2' in lines
    assert 'fakeapi_workqueue_depth{component="two",queue="two/nodes"} 0' in lines
    assert 'fakeapi_workqueue_reconciles_total{component="two",queue="two/nodes"} 0' in lines
    assert not [line for line in lines if 'component="plain"' in line and "workqueue" in line]


async def test_backoff_starts_over_after_a_stable_run(clock: VirtualClock) -> None:
    sup = Supervisor(clock=clock, base_backoff=1.0, stable_after=10.0)

    class Periodic(Flaky):
        async def run(self) -> None:
            self.starts.append(self.clock.monotonic())
            await self.clock.sleep(30)  # runs well, then fails
            raise RuntimeError("late failure")

    comp = Periodic(clock, 0)
    sup.add("periodic", comp)
    sup.start()
    await clock.advance(100)
    assert comp.starts == [0.0, 31.0, 62.0, 93.0], "each restart after the base backoff"
    await sup.stop()


async def test_an_error_while_stopping_is_logged_not_swallowed(
        clock: VirtualClock, caplog: pytest.LogCaptureFixture) -> None:
    sup = Supervisor(clock=clock)
    sup.add("stubborn", Flaky(clock, 0, fail_on_cancel=True))
    sup.start()
    await clock.run_until_settled()
    await sup.stop()
    [record] = [r for r in caplog.records if "failed while stopping" in r.getMessage()]
    assert record.exc_info and "could not stop cleanly" in str(record.exc_info[1])


def test_a_name_is_supervised_once(clock: VirtualClock) -> None:
    sup = Supervisor(clock=clock)
    sup.add("x", Flaky(clock, 0))
    with pytest.raises(ValueError, match="added twice"):
        sup.add("x", Flaky(clock, 0))
