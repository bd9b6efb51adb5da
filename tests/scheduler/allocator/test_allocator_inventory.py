"""The Inventory kept up to date from informer events, its caches, and the AllocatedState."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi import cel
from fakeapi.machinery.features import FeatureGates
from scheduler.allocator import (
    AllocatedState,
    AllocatorFeatures,
    ClaimUnschedulable,
    Inventory,
    allocate,
)

Obj = dict[str, Any]
NODE: Obj = {"metadata": {"name": "node-1", "labels": {"zone": "a"}}}


def gpu_class(expression: str = 'device.driver == "gpu.example.com"') -> Obj:
    return {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression":
                                                                           expression}}]}}


def gpu_slice(devices: list[Obj], *, rv: str = "1", node: str = "node-1",
              selector: Obj | None = None) -> Obj:
    spec: Obj = {"driver": "gpu.example.com",
                 "pool": {"name": "pool", "generation": 1, "resourceSliceCount": 1},
                 "devices": devices}
    if selector is not None:
        spec["nodeSelector"] = selector
    else:
        spec["nodeName"] = node
    return {"metadata": {"name": "slice", "resourceVersion": rv}, "spec": spec}


def gpu_claim(uid: str = "uid-1", count: int = 1) -> Obj:
    return {"metadata": {"name": f"claim-{uid}", "namespace": "default", "uid": uid},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": count}}]}}}


def devices_of(results: list[Obj] | None) -> list[str]:
    assert results is not None
    return [r["device"] for result in results for r in result["devices"]["results"]]


def run(inv: Inventory, state: AllocatedState | None = None, *, claim: Obj | None = None,
        node: Obj = NODE) -> list[Obj] | None:
    return allocate(claims=[claim or gpu_claim()], node=node, inventory=inv,
                    allocated=state or AllocatedState(), new_share_id=lambda: "share")


@pytest.fixture
def inv() -> Inventory:
    inventory = Inventory()
    inventory.set_class(gpu_class())
    inventory.set_slice(gpu_slice([{"name": "gpu-0"}, {"name": "gpu-1"}]))
    return inventory


def test_slice_updates_and_removal(inv: Inventory) -> None:
    assert devices_of(run(inv)) == ["gpu-0"]
    inv.set_slice(gpu_slice([{"name": "gpu-7"}], rv="2"))
    assert devices_of(run(inv)) == ["gpu-7"]
    inv.remove_slice("slice")
    assert run(inv) is None
    inv.remove_slice("slice")  # deleting twice is harmless (a relist after a delete)
    assert run(inv) is None


def test_same_version_again_keeps_the_parsed_slice(inv: Inventory) -> None:
    view = inv.view("node-1", NODE["metadata"]["labels"])
    inv.set_slice(copy.deepcopy(gpu_slice([{"name": "gpu-0"}, {"name": "gpu-1"}])))
    assert inv.view("node-1", NODE["metadata"]["labels"]) is view


def test_views_follow_node_labels() -> None:
    inv = Inventory()
    inv.set_class(gpu_class())
    inv.set_slice(gpu_slice([{"name": "gpu-0"}], selector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}))
    assert run(inv) is None
    relabelled = {"metadata": {"name": "node-1", "labels": {"zone": "b"}}}
    assert devices_of(run(inv, node=relabelled)) == ["gpu-0"]


def test_class_changes_apply_to_the_next_attempt(inv: Inventory) -> None:
    inv.set_class(gpu_class('device.driver == "other.example.com"'))
    assert run(inv) is None
    inv.remove_class("gpu")
    with pytest.raises(ClaimUnschedulable, match="request gpu: device class gpu does not "
                       "exist"):
        run(inv)


def test_taint_rules_come_and_go(inv: Inventory) -> None:
    rule = {"metadata": {"name": "maintenance"}, "spec": {
        "deviceSelector": {"device": "gpu-0"}, "taint": {"key": "m", "effect": "NoSchedule"}}}
    inv.set_taint_rule(rule)
    assert devices_of(run(inv)) == ["gpu-1"]
    inv.set_slice(gpu_slice([{"name": "gpu-0"}, {"name": "gpu-1"}], rv="2"))
    assert devices_of(run(inv)) == ["gpu-1"], "a new slice version gets the rule's taint too"
    inv.remove_taint_rule("maintenance")
    assert devices_of(run(inv)) == ["gpu-0"]


class CountingMatches:
    """Counts the CEL evaluations the allocator asks fakeapi.cel for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        self.real = cel.matches
        monkeypatch.setattr(cel, "matches", self)

    def __call__(self, program: cel.Program, device: cel.DeviceInput) -> bool:
        self.calls += 1
        return self.real(program, device)


def test_a_selector_runs_once_per_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many pods' claims on the same node: each device is evaluated once, not once per pod."""
    counter = CountingMatches(monkeypatch)
    inv = Inventory()
    inv.set_class(gpu_class())
    inv.set_slice(gpu_slice([{"name": f"gpu-{i}"} for i in range(10)]))
    state = AllocatedState()
    for pod in range(10):
        results = run(inv, state, claim=gpu_claim(f"uid-{pod}"))
        assert devices_of(results) == [f"gpu-{pod}"]
        assert results is not None
        state.add(f"uid-{pod}", results[0])
    assert counter.calls == 10


def test_cel_results_survive_an_update_that_keeps_the_devices(
        inv: Inventory, monkeypatch: pytest.MonkeyPatch) -> None:
    run(inv, claim=gpu_claim("both", count=2))
    counter = CountingMatches(monkeypatch)
    tainted: list[Obj] = [{"name": "gpu-0", "taints": [{"key": "k", "effect": "NoSchedule"}]},
               {"name": "gpu-1"}]
    inv.set_slice(gpu_slice(tainted, rv="2"))
    assert devices_of(run(inv)) == ["gpu-1"]
    assert counter.calls == 0
    inv.set_slice(gpu_slice([{"name": "gpu-0", "attributes": {"x": {"int": 1}}}], rv="3"))
    assert devices_of(run(inv)) == ["gpu-0"]
    assert counter.calls == 1, "a changed device is evaluated again"


def test_claim_plans_are_cached_by_uid_or_identity(inv: Inventory) -> None:
    claim = gpu_claim()
    assert inv.plan(claim) is inv.plan(copy.deepcopy(claim))
    anonymous = {"metadata": {"namespace": "default", "generateName": "x-"},
                 "spec": claim["spec"]}
    plan = inv.plan(anonymous)
    assert inv.plan(anonymous) is plan
    other = copy.deepcopy(anonymous)
    other["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    assert inv.plan(other) is not plan
    assert inv.plan(other).requests[0][0].count == 2


def test_allocated_state_tracks_claims() -> None:
    state = AllocatedState()
    key = "gpu.example.com/pool/gpu-0"
    allocation = {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "gpu-0"},
        {"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "gpu-1",
         "adminAccess": True},
        {"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "gpu-2",
         "shareID": "s1", "consumedCapacity": {"memory": "1Gi"}}]}}
    state.add("a", allocation)
    state.add("b", {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "gpu-2",
         "shareID": "s2", "consumedCapacity": {"memory": "512Mi"}}]}})
    assert state.allocated(key)
    assert not state.allocated("gpu.example.com/pool/gpu-1"), "admin access never counts"
    assert state.capacity["gpu.example.com/pool/gpu-2"] == {"memory": 1536 * 2**20}
    state.add("a", allocation)  # the same claim again replaces, it doesn't double count
    assert state.capacity["gpu.example.com/pool/gpu-2"] == {"memory": 1536 * 2**20}
    state.remove("a")
    assert not state.allocated(key)
    assert state.capacity["gpu.example.com/pool/gpu-2"] == {"memory": 512 * 2**20}
    state.add("b", None)
    assert not state.allocated("gpu.example.com/pool/gpu-2")
    assert "b" not in state


def test_in_flight_allocations_keep_two_pods_apart(inv: Inventory) -> None:
    """What Reserve does: the first pod's result goes into the state before the next pod."""
    state = AllocatedState()
    first = run(inv, state, claim=gpu_claim("one"))
    assert first is not None
    state.add("one", first[0])
    assert devices_of(run(inv, state, claim=gpu_claim("two"))) == ["gpu-1"]
    state.remove("one")  # Unreserve
    assert devices_of(run(inv, state, claim=gpu_claim("two"))) == ["gpu-0"]


@pytest.mark.parametrize(("overrides", "changed"), [
    ({}, {}),
    ({"DRADeviceBindingConditions": False}, {"binding_conditions": False}),
    ({"DRAListTypeAttributes": True, "DRADerivedAttributes": True},
     {"list_type_attributes": True, "derived_attributes": True}),
    ({"DRAConsumableCapacity": False, "DRAPartitionableDevices": False,
      "DRADeviceCompatibilityGroups": False},
     {"consumable_capacity": False, "partitionable_devices": False}),
    ({"DRADeviceTaintRules": False}, {"device_taint_rules": False}),
])
def test_features_from_gates(overrides: dict[str, bool], changed: dict[str, bool]) -> None:
    """Same mapping as upstream's AllocatorFeatures(); the defaults are 1.37's."""
    assert AllocatorFeatures.from_gates(FeatureGates(overrides)) == AllocatorFeatures(**changed)


def test_a_nodes_slice_change_keeps_other_nodes_views() -> None:
    """A kubelet plugin republishing its node's slice costs the other nodes nothing; a
    network-attached slice concerns every node."""
    inv = Inventory()
    inv.set_class(gpu_class())
    labels: dict[str, str] = {}
    for n in ("node-1", "node-2"):
        s = gpu_slice([{"name": "gpu-0"}], node=n)
        s["metadata"]["name"] = s["spec"]["pool"]["name"] = n
        inv.set_slice(s)
    one, two = inv.view("node-1", labels), inv.view("node-2", labels)
    update = gpu_slice([{"name": "gpu-9"}], node="node-1", rv="2")
    update["metadata"]["name"] = update["spec"]["pool"]["name"] = "node-1"
    inv.set_slice(update)
    assert inv.view("node-2", labels) is two
    assert inv.view("node-1", labels) is not one
    assert [d.name for d in inv.view("node-1", labels).devices] == ["gpu-9"]
    shared = gpu_slice([{"name": "nic-0"}], selector={"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]})
    shared["metadata"]["name"] = "shared"
    inv.set_slice(shared)
    assert inv.view("node-2", labels) is not two
    assert [d.name for d in inv.view("node-2", labels).devices] == ["gpu-0", "nic-0"]
