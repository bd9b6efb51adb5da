"""DRA node-allocatable resources (KEP-5517, DRANodeAllocatableResources): what a claim's
devices take from the node (`scheduler.nodeallocatable`, pure), and the scheduler on a
virtual clock charging them against the node's allocatable cpu, refusing a mapped claim
shared by another pod or used by no container, and recording them in the pod's
`status.nodeAllocatableResourceClaimStatuses` before it binds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from fractions import Fraction
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from scheduler.nodeallocatable import claim_status, containers_using, demand
from tests.support.plane import running_plane
from tests.support.scheduling import CLAIMS, NS, condition, node, scheduled

Obj = dict[str, Any]
CPU_DRIVER = "cpu.example.com"
KEY = f"{CPU_DRIVER}/cpu"


def result(device: str, **extra: Any) -> Obj:
    return {"request": "r", "driver": CPU_DRIVER, "pool": "n1", "device": device, **extra}


DEVICES: dict[str, Obj] = {
    "numa-0": {"name": "numa-0", "capacity": {KEY: {"value": "4"}},
               "nodeAllocatableResources": {"cpu": {"mapping": {
                   "capacityKey": KEY, "capacityMultiplier": "2"}}}},
    "core-0": {"name": "core-0", "nodeAllocatableResources": {"cpu": {"mapping": {
        "deviceMultiplier": "500m"}}}},
    "gpu-0": {"name": "gpu-0", "nodeAllocatableResources": {"memory": {"overhead": {
        "perPod": "1Gi", "perContainer": "512Mi"}}}},
    "plain": {"name": "plain"},
}


@pytest.mark.parametrize(("results", "want"), [
    # consumed capacity × multiplier, summed over the shares of one device
    ([result("numa-0", consumedCapacity={KEY: "1"}, shareID="a"),
      result("numa-0", consumedCapacity={KEY: "1500m"}, shareID="b")],
     {"mapping": [{"name": "cpu", "quantity": "5"}]}),
    # a device taken whole (no consumed capacity): its full capacity
    ([result("numa-0")], {"mapping": [{"name": "cpu", "quantity": "8"}]}),
    ([result("core-0"), result("core-0")], {"mapping": [{"name": "cpu", "quantity": "1"}]}),
    ([result("gpu-0")], {"overhead": [{"name": "memory", "perPod": "1Gi",
                                       "perContainer": "512Mi"}]}),
    ([result("plain")], None),
], ids=["capacity-key", "whole-device", "device-multiplier", "overhead", "unmapped"])
def test_a_claims_node_allocatable_status(results: list[Obj], want: Obj | None) -> None:
    got = claim_status("c", {"devices": {"results": results}}, ["ctr"],
                       lambda driver, pool, name: DEVICES.get(name))
    assert got == (None if want is None else {"resourceClaimName": "c", "containers": ["ctr"],
                                              **want})


def test_demand_counts_a_claim_once_and_its_per_container_overhead_per_user() -> None:
    statuses = [{"resourceClaimName": "a", "containers": ["x", "y"],
                 "mapping": [{"name": "cpu", "quantity": "2"}],
                 "overhead": [{"name": "memory", "perPod": "1Gi", "perContainer": "1Mi"}]},
                {"resourceClaimName": "b", "containers": ["x"],
                 "mapping": [{"name": "cpu", "quantity": "500m"}]}]
    assert demand(statuses) == {"cpu": Fraction(5, 2), "memory": Fraction(2**30 + 2 * 2**20)}


def test_containers_using_a_claim() -> None:
    pod = {"spec": {"initContainers": [{"name": "init", "resources": {"claims": [
        {"name": "cpus"}]}}], "containers": [
        {"name": "a", "resources": {"claims": [{"name": "cpus", "request": "r0"},
                                               {"name": "cpus", "request": "r1"}]}},
        {"name": "b"}]}}
    assert containers_using(pod, "cpus") == ["init", "a"]
    assert containers_using(pod, "other") == []


# ----- the scheduler --------------------------------------------------------------------------


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane("scheduler", seed=3,
                             gates={"DRANodeAllocatableResources": True}) as p:
        yield p


@pytest.fixture
async def admin(plane: ControlPlane) -> Client:
    c = plane.cluster.client("test")
    await c.create("deviceclasses.resource.k8s.io", {
        "metadata": {"name": CPU_DRIVER}, "spec": {"selectors": [
            {"cel": {"expression": f'device.driver == "{CPU_DRIVER}"'}}]}})
    await c.create("nodes", node("n1", cpu="4"))
    await c.create("resourceslices.resource.k8s.io", {
        "metadata": {"name": "n1-cpus"}, "spec": {
            "driver": CPU_DRIVER, "nodeName": "n1",
            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "numa-0", "allowMultipleAllocations": True,
                         "capacity": {KEY: {"value": "4"}},
                         "nodeAllocatableResources": {"cpu": {"mapping": {
                             "capacityKey": KEY, "capacityMultiplier": "1"}}}}]}})
    return c


def cpu_claim(name: str, *cpus: str) -> Obj:
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"devices": {"requests": [
        {"name": f"cpu{i}", "exactly": {"deviceClassName": CPU_DRIVER,
                                        "capacity": {"requests": {KEY: n}}}}
        for i, n in enumerate(cpus)]}}}


def cpu_pod(name: str, claim: str, *, cpu: str = "1", uses: bool = True) -> Obj:
    container: Obj = {"name": "ctr0", "image": "busybox",
                      "resources": {"requests": {"cpu": cpu}}}
    if uses:
        container["resources"]["claims"] = [{"name": "cpus"}]
    return {"metadata": {"name": name, "namespace": NS}, "spec": {
        "containers": [container],
        "resourceClaims": [{"name": "cpus", "resourceClaimName": claim}]}}


async def test_claimed_cpus_are_recorded_and_charged_to_the_node(plane: ControlPlane,
                                                                 admin: Client) -> None:
    await admin.create(CLAIMS, cpu_claim("two", "1", "1"))
    await admin.create("pods", cpu_pod("p0", "two"))
    p0 = await scheduled(plane, admin, "p0")
    assert p0["spec"]["nodeName"] == "n1"
    assert p0["status"]["nodeAllocatableResourceClaimStatuses"] == [{
        "resourceClaimName": "two", "containers": ["ctr0"],
        "mapping": [{"name": "cpu", "quantity": "2"}]}]
    results = (await admin.get(CLAIMS, "two", NS))["status"]["allocation"]["devices"]["results"]
    assert {r["device"] for r in results} == {"numa-0"}
    assert len({r["shareID"] for r in results}) == 2
    # 1 + 2 cpus of 4 taken: 1 + 1 more fits the device but not the node
    await admin.create(CLAIMS, cpu_claim("one", "1"))
    await admin.create("pods", cpu_pod("p1", "one"))
    p1 = await scheduled(plane, admin, "p1")
    assert "nodeName" not in p1["spec"]
    assert condition(p1)["message"] == (  # type: ignore[index]
        "0/1 nodes are available: 1 Insufficient cpu. still not schedulable, preemption: 0/1 "
        "nodes are available: 1 No preemption victims found for incoming pod.")
    # the first pod gone, there is room
    await admin.delete("pods", "p0", NS, grace_period_seconds=0)
    assert (await scheduled(plane, admin, "p1"))["spec"]["nodeName"] == "n1"


@pytest.mark.parametrize(("second", "message"), [
    (cpu_pod("p1", "shared", cpu="0"),
     "node allocatable resource claim shared is already used by another pod"),
    (cpu_pod("p1", "idle", cpu="0", uses=False),
     "claim idle: node-allocatable resource claim not referenced by any container within "
     "the pod"),
], ids=["shared-with-another-pod", "used-by-no-container"])
async def test_a_mapped_claim_is_for_one_pods_containers(plane: ControlPlane, admin: Client,
                                                         second: Obj, message: str) -> None:
    await admin.create(CLAIMS, cpu_claim("shared", "1"))
    await admin.create(CLAIMS, cpu_claim("idle", "1"))
    await admin.create("pods", cpu_pod("p0", "shared"))
    assert (await scheduled(plane, admin, "p0"))["spec"]["nodeName"] == "n1"
    await admin.create("pods", second)
    p1 = await scheduled(plane, admin, "p1")
    assert "nodeName" not in p1["spec"]
    assert message in condition(p1)["message"]  # type: ignore[index]
