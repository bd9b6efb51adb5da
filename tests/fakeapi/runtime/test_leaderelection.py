"""Leader election over a Lease (`fakeapi.runtime.leaderelection`) on the virtual clock with
a real in-process cluster: of two candidates one leads and runs its components (a real
informer each); the other
takes over only once the silent leader's Lease has gone unrenewed for its duration; a
leader that cannot renew within its deadline stops its components."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import VirtualClock
from fakeapi.runtime.informer import Informer
from fakeapi.runtime.leaderelection import LEASES, LeaderElector, LeaseTiming
from fakeapi.runtime.supervisor import Supervisor

TIMING = LeaseTiming(release_on_cancel=False)  # upstream's 15 s, 10 s, 2 s; a cancel is a kill


class Led:
    """Whether an elector's led component (a real informer) runs now."""

    def __init__(self, led: Supervisor) -> None:
        self._unit = led.units["informer"]

    @property
    def running(self) -> bool:
        return self._unit.state == "running"


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def cluster(clock: VirtualClock) -> Cluster:
    cluster = Cluster(ClusterConfig(seed=5), clock=clock)
    clock.add_probe(lambda: cluster.log.wake_pending)
    return cluster


def candidate(cluster: Cluster, clock: VirtualClock, name: str,
              timing: LeaseTiming = TIMING) -> tuple[LeaderElector, Led]:
    client = cluster.client("system:kube-scheduler")
    led = Supervisor(clock=clock)
    led.add("informer", Informer(client=client, resource="configmaps"))
    return LeaderElector(client=client, clock=clock, name="kube-scheduler", led=led,
                         identity=name, timing=timing), Led(led)


@pytest.fixture
async def tasks() -> AsyncIterator[list[asyncio.Task[None]]]:
    started: list[asyncio.Task[None]] = []
    yield started
    for t in started:
        t.cancel()
    await asyncio.gather(*started, return_exceptions=True)


async def test_one_leads_and_the_other_takes_over_after_the_lease_duration(
        cluster: Cluster, clock: VirtualClock, tasks: list[asyncio.Task[None]]) -> None:
    a, run_a = candidate(cluster, clock, "a")
    b, run_b = candidate(cluster, clock, "b")
    tasks.append(asyncio.create_task(a.run()))
    await clock.run_until_settled()
    tasks.append(asyncio.create_task(b.run()))
    await clock.advance(30)  # a renews every 2 s; b keeps seeing a fresh record
    assert (a.leading, run_a.running, b.leading, run_b.running) == (True, True, False, False)
    lease = await cluster.client("admin").get(LEASES, "kube-scheduler", "kube-system")
    assert lease["spec"]["holderIdentity"] == "a"
    assert lease["spec"]["leaseDurationSeconds"] == 15

    tasks[0].cancel()  # a dies without releasing its Lease (kill -9)
    await asyncio.gather(tasks[0], return_exceptions=True)
    assert not run_a.running
    await clock.advance(12)
    assert not b.leading  # the Lease is not yet expired for b
    await clock.advance(6)
    assert b.leading and run_b.running
    lease = await cluster.client("admin").get(LEASES, "kube-scheduler", "kube-system")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseTransitions"]) == ("b", 1)


async def test_a_leader_that_cannot_renew_stops_leading_by_its_deadline(
        cluster: Cluster, clock: VirtualClock, tasks: list[asyncio.Task[None]]) -> None:
    a, run_a = candidate(cluster, clock, "a")
    tasks.append(asyncio.create_task(a.run()))
    await clock.run_until_settled()
    assert a.leading and run_a.running
    admin = cluster.client("admin")
    lease = await admin.get(LEASES, "kube-scheduler", "kube-system")  # another takes it
    await admin.update(LEASES, {**lease, "spec": {**lease["spec"], "holderIdentity": "z"}})
    await clock.advance(TIMING.renew_deadline + TIMING.retry_period)
    assert not a.leading and not run_a.running


async def test_a_stopped_leader_releases_the_lease_and_the_other_takes_it_at_once(
        cluster: Cluster, clock: VirtualClock, tasks: list[asyncio.Task[None]]) -> None:
    a, _ = candidate(cluster, clock, "a", LeaseTiming())
    b, _ = candidate(cluster, clock, "b", LeaseTiming())
    tasks.append(asyncio.create_task(a.run()))
    await clock.run_until_settled()
    tasks.append(asyncio.create_task(b.run()))
    await clock.advance(4)
    assert a.leading and not b.leading
    tasks[0].cancel()  # a graceful stop
    await asyncio.gather(tasks[0], return_exceptions=True)
    lease = await cluster.client("admin").get(LEASES, "kube-scheduler", "kube-system")
    assert (lease["spec"]["holderIdentity"], lease["spec"]["leaseDurationSeconds"]) == ("", 1)
    await clock.advance(TIMING.retry_period)
    assert b.leading
