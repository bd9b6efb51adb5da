"""Gang scheduling (GangScheduling, KEP-4671) on an in-process cluster with a virtual clock:
a PodGroup with `schedulingPolicy.gang.minCount` binds all of its pods or none, its waiting
pods are rejected at the permit timeout with upstream's message and their reservations
undone, and with the gate off its pods are scheduled one by one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from scheduler.gang import TIMEOUT, timeout_message
from scheduler.scheduler import Scheduler
from tests.support.plane import running_plane
from tests.support.scheduling import CLAIMS, NS, claim, events, gpus, node, pod

Obj = dict[str, Any]
GROUPS = "podgroups.scheduling.k8s.io"
ON = {"GenericWorkload": True, "GangScheduling": True}
OFF = {"GenericWorkload": True}
REJECTED = timeout_message(TIMEOUT)


def group(name: str, min_count: int) -> Obj:
    return {"metadata": {"name": name, "namespace": NS},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group_name: str, *, gpu: bool = True, cpu: str | None = None) -> Obj:
    """A pod of the group, with a claim of its own (`NAME-gpu`) for one GPU."""
    claims = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}] if gpu else None
    return pod(name, cpu=cpu, claims=claims, schedulingGroup={"podGroupName": group_name})


async def gang(admin: Client, size: int, *members: Obj) -> None:
    await admin.create(GROUPS, group("g", size))
    for m in members:
        if m["spec"].get("resourceClaims"):
            await admin.create(CLAIMS, claim(f"{m['metadata']['name']}-gpu"))
        await admin.create("pods", m)


async def nodes_of(plane: ControlPlane, admin: Client, *names: str) -> list[str | None]:
    await plane.settle()
    return [(await admin.get("pods", n, NS))["spec"].get("nodeName") for n in names]


async def claim_states(admin: Client, *pods: str) -> list[tuple[bool, int]]:
    """(allocated, number of reservations) of each pod's claim."""
    out = []
    for p in pods:
        status = (await admin.get(CLAIMS, f"{p}-gpu", NS)).get("status") or {}
        out.append(("allocation" in status, len(status.get("reservedFor") or ())))
    return out


@pytest.fixture
async def gang_plane() -> AsyncIterator[ControlPlane]:
    async with running_plane("scheduler", seed=5, gates=ON) as p:
        yield p


@pytest.fixture
def admin(gang_plane: ControlPlane) -> Client:
    return gang_plane.cluster.client("test")


def scheduler_of(plane: ControlPlane) -> Scheduler:
    found = plane.components["scheduler"]
    assert isinstance(found, Scheduler)
    return found


async def test_a_gang_that_can_bind_binds_all(gang_plane: ControlPlane, admin: Client) -> None:
    await gpus(admin, "n1", "n2")
    await gang(admin, 2, member("a", "g"), member("b", "g"))
    assert sorted(map(str, await nodes_of(gang_plane, admin, "a", "b"))) == ["n1", "n2"]
    assert await claim_states(admin, "a", "b") == [(True, 1), (True, 1)]


async def test_no_pod_is_tried_before_min_count_pods_exist(gang_plane: ControlPlane,
                                                          admin: Client) -> None:
    await admin.create("nodes", node("n1"))
    await gang(admin, 3, *(member(n, "g", gpu=False) for n in ("a", "b")))
    assert await nodes_of(gang_plane, admin, "a", "b") == [None, None]
    assert await events(admin, "a") == []  # PreEnqueue: no condition, no event
    assert "conditions" not in ((await admin.get("pods", "a", NS)).get("status") or {})
    await admin.create("pods", member("c", "g", gpu=False))
    assert await nodes_of(gang_plane, admin, "a", "b", "c") == ["n1", "n1", "n1"]


async def test_a_gang_that_cannot_reach_min_count_binds_nothing_and_times_out(
        gang_plane: ControlPlane, admin: Client) -> None:
    clock = gang_plane.clock
    assert isinstance(clock, VirtualClock)
    await gpus(admin, "n1", "n2")
    # two pods fit and wait at Permit; the third needs a third GPU
    await gang(admin, 3, *(member(n, "g") for n in ("a", "b", "c")))
    assert await nodes_of(gang_plane, admin, "a", "b", "c") == [None, None, None]
    assert await claim_states(admin, "a", "b", "c") == [(False, 0)] * 3
    sched = scheduler_of(gang_plane)
    waiting = [k for k in ("default/a", "default/b", "default/c") if sched.gangs.parked(k)]
    assert len(waiting) == 2  # reserved in the scheduler only
    assert all(sched.cache.assumed(k) for k in waiting)
    uids = {k: (await admin.get(CLAIMS, f"{k[8:]}-gpu", NS))["metadata"]["uid"]
            for k in waiting}
    assert all(sched.cache.claim_in_flight(u) for u in uids.values())

    await clock.advance(TIMEOUT - 1)
    assert all(sched.gangs.parked(k) for k in waiting)
    await clock.advance(2)
    for k in waiting:
        assert ("Warning", "FailedScheduling", REJECTED) in await events(admin, k[8:])
        p = await admin.get("pods", k[8:], NS)
        assert "nodeName" not in p["spec"]
        cond = next(c for c in p["status"]["conditions"] if c["type"] == "PodScheduled")
        assert (cond["status"], cond["reason"], cond["message"]) == (
            "False", "Unschedulable", REJECTED)
        assert not sched.gangs.parked(k) and not sched.cache.assumed(k)
    assert not any(sched.cache.claim_in_flight(u) for u in uids.values())
    assert await claim_states(admin, "a", "b", "c") == [(False, 0)] * 3


async def test_the_timeout_frees_the_devices_for_others(gang_plane: ControlPlane,
                                                       admin: Client) -> None:
    clock = gang_plane.clock
    assert isinstance(clock, VirtualClock)
    await gpus(admin, "n1")
    # "a" takes the only GPU and waits; "b" asks for more CPU than any node has
    await gang(admin, 2, member("a", "g"), member("b", "g", gpu=False, cpu="64"))
    await gang_plane.settle()
    await admin.create(CLAIMS, claim("solo-gpu"))
    await admin.create("pods", pod("solo", claims=[{"name": "gpu",
                                                   "resourceClaimName": "solo-gpu"}]))
    assert await nodes_of(gang_plane, admin, "solo") == [None]  # the GPU is reserved
    await clock.advance(TIMEOUT + 1)
    await admin.delete("pods", "a", NS)  # gone before the queue would try it again
    await clock.advance(10)  # past solo's retry (upstream's 5-minute unschedulable flush)
    assert await nodes_of(gang_plane, admin, "solo") == ["n1"]
    assert await claim_states(admin, "solo") == [(True, 1)]


async def test_with_the_gate_off_pods_are_scheduled_one_by_one() -> None:
    async with running_plane("scheduler", seed=5, gates=OFF) as plane:
        admin = plane.cluster.client("test")
        await gpus(admin, "n1", "n2")
        await gang(admin, 3, member("a", "g"), member("b", "g"))
        assert sorted(map(str, await nodes_of(plane, admin, "a", "b"))) == ["n1", "n2"]
        assert await claim_states(admin, "a", "b") == [(True, 1), (True, 1)]
