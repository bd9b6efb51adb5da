"""Node lifecycle on a virtual clock: a NodeFault stops the heartbeat; after the grace
period the node is Unknown with the unreachable taints and its pods not Ready; pods are
evicted after their tolerationSeconds (at once without a toleration, never with one that
has none); the node comes back Ready, loses the taints, and its kubelet finishes the
evicted pods' graceful deletion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from kubelet_emu.node_lifecycle import NodeLifecycleController
from tests.support.emulated_nodes import condition, emulated_plane, present_condition

NODE_FAULTS = "nodefaults.emulator.fakeapi.dev"
COMPONENTS = "kubelet,node-lifecycle-controller,taint-eviction-controller"
UNREACHABLE = "node.kubernetes.io/unreachable"


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


def pod(name: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"nodeName": "worker-0", "containers": [
        {"name": "c", "image": "ubuntu", "command": ["bash", "-c",
                                                     "trap 'exit 0' TERM; sleep 9999 & wait"]}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def unreachable(seconds: int | None = None) -> list[dict[str, Any]]:
    t: dict[str, Any] = {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return [t]


async def stop_heartbeat(c: Client) -> None:
    """worker-0's kubelet stops heartbeating (a NodeFault named w0-down)."""
    await c.create(NODE_FAULTS, {"metadata": {"name": "w0-down"},
                                 "spec": {"nodeName": "worker-0"}})


async def exists(c: Client, name: str) -> dict[str, Any] | None:
    try:
        return await c.get("pods", name, "default")
    except ApiError as e:
        assert e.code == 404
        return None


async def test_a_node_fault_makes_the_node_unknown_and_evicts_its_pods(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=2, components=COMPONENTS) as plane:
        c = admin(plane)
        defaulted = await c.create("pods", pod("untolerant", tolerations=[]))
        # upstream's DefaultTolerationSeconds admission: 300 s unless the pod says otherwise
        assert {(t["key"], t.get("tolerationSeconds")) for t in defaulted["spec"][
            "tolerations"]} == {(UNREACHABLE, 300), ("node.kubernetes.io/not-ready", 300)}
        await c.create("pods", pod("impatient", unreachable(0)))
        await c.create("pods", pod("patient", unreachable(100)))
        await c.create("pods", pod("forever", unreachable()))
        await plane.settle()
        await stop_heartbeat(c)
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(45)
        node = await c.get("nodes", "worker-0")
        assert present_condition(node, "Ready")["status"] == "True"
        assert not node["spec"].get("taints")
        await plane.clock.advance(20)
        node = await c.get("nodes", "worker-0")
        ready = condition(node, "Ready")
        assert ready is not None and ready["status"] == "Unknown"
        assert ready["reason"] == "NodeStatusUnknown"
        assert ready["message"] == "Kubelet stopped posting node status."
        assert {c["type"]: c["status"] for c in node["status"]["conditions"]} == {
            "Ready": "Unknown", "MemoryPressure": "Unknown", "DiskPressure": "Unknown",
            "PIDPressure": "Unknown"}
        assert sorted((t["key"], t["effect"]) for t in node["spec"]["taints"]) == [
            (UNREACHABLE, "NoExecute"), (UNREACHABLE, "NoSchedule")]
        other = await c.get("nodes", "worker-1")
        assert present_condition(other, "Ready")["status"] == "True"
        # the pods: not Ready; the impatient one evicted at once (Terminating: no kubelet)
        forever = await c.get("pods", "forever", "default")
        assert present_condition(forever, "Ready")["status"] == "False"
        evicted = await c.get("pods", "impatient", "default")
        assert evicted["metadata"]["deletionTimestamp"]
        target = condition(evicted, "DisruptionTarget")
        assert target is not None and target["reason"] == "DeletionByTaintManager"
        patient = await c.get("pods", "patient", "default")
        assert not patient["metadata"].get("deletionTimestamp")
        await plane.clock.advance(100)
        patient = await c.get("pods", "patient", "default")
        assert patient["metadata"]["deletionTimestamp"]
        assert not (await c.get("pods", "forever", "default"))["metadata"].get(
            "deletionTimestamp")

        # the node comes back: Ready, no taints, and its kubelet finishes the deletions
        await c.delete(NODE_FAULTS, "w0-down")
        await plane.clock.advance(10)
        node = await c.get("nodes", "worker-0")
        assert present_condition(node, "Ready")["status"] == "True"
        assert not node["spec"].get("taints")
        assert await exists(c, "impatient") is None
        assert await exists(c, "patient") is None
        forever = await c.get("pods", "forever", "default")
        assert forever["status"]["phase"] == "Running"
        assert present_condition(forever, "Ready")["status"] == "True"

        # as upstream reports all that: the kubelet's start and conditions, the node
        # controller's registration and NotReady, the kubelet's Ready again, the evictions
        events = {(e["source"]["component"], e["reason"], e["message"]): e["count"]
                  for e in await c.list("events", "default")
                  if e["involvedObject"]["name"] == "worker-0"}
        assert events == {
            **{("kubelet", reason, message): 1 for reason, message in [
                ("Starting", "Starting kubelet."),
                ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")]},
            # the conditions the node controller set Unknown come back: each reported again
            **{("kubelet", reason, f"Node worker-0 status is now: {reason}"): 2
               for reason in ("NodeHasSufficientMemory", "NodeHasNoDiskPressure",
                              "NodeHasSufficientPID", "NodeReady")},
            ("node-controller", "RegisteredNode",
             "Node worker-0 event: Registered Node worker-0 in Controller"): 1,
            ("node-controller", "NodeNotReady", "Node worker-0 status is now: NodeNotReady"): 1}
        evictions = {e["involvedObject"]["name"]: (e["source"]["component"], e["message"])
                     for e in await c.list("events", "default")
                     if e["reason"] == "TaintManagerEviction"}
        assert evictions == {name: ("taint-eviction-controller",
                                    f"Marking for deletion Pod default/{name}")
                             for name in ("impatient", "patient")}


async def test_a_node_that_never_reported_gets_the_startup_grace(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=0, components=COMPONENTS) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "ghost", "labels": {
            "emulator.fakeapi.dev/managed": "false"}}})
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(55)
        assert condition(await c.get("nodes", "ghost"), "Ready") is None
        await plane.clock.advance(10)
        ready = condition(await c.get("nodes", "ghost"), "Ready")
        assert ready is not None and ready["status"] == "Unknown"
        assert ready["reason"] == "NodeStatusNeverUpdated"


@pytest.mark.parametrize("status", ["False"])
async def test_a_not_ready_node_is_tainted_not_ready(tmp_path: Path, status: str) -> None:
    async with emulated_plane(tmp_path, nodes=0, components=COMPONENTS) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "sick", "labels": {
            "emulator.fakeapi.dev/managed": "false"}}})
        now = "2026-01-01T00:00:00Z"
        await c.patch("nodes", "sick", {"status": {"conditions": [
            {"type": "Ready", "status": status, "reason": "KubeletNotReady",
             "lastHeartbeatTime": now, "lastTransitionTime": now}]}}, subresource="status")
        await plane.settle()
        taints = (await c.get("nodes", "sick"))["spec"]["taints"]
        assert sorted((t["key"], t["effect"]) for t in taints) == [
            ("node.kubernetes.io/not-ready", "NoExecute"),
            ("node.kubernetes.io/not-ready", "NoSchedule")]
        assert [t for t in taints if t["effect"] == "NoExecute"][0]["timeAdded"]


async def test_whole_list_writes_never_overwrite_a_change_they_did_not_read(
        tmp_path: Path) -> None:
    """The controller writes the node's conditions and taints as whole lists: from a stale
    read the write is refused (409), and the retry keeps the other writer's change."""
    async with emulated_plane(tmp_path, nodes=1, components=COMPONENTS) as plane:
        c = admin(plane)
        controller = plane.components["node-lifecycle-controller"]
        assert isinstance(controller, NodeLifecycleController)
        stale = await c.get("nodes", "worker-0")
        other = {"type": "example.com/Custom", "status": "True", "reason": "Mine"}
        node = await c.get("nodes", "worker-0")
        await c.patch("nodes", "worker-0", {"metadata": {
            "resourceVersion": node["metadata"]["resourceVersion"]}, "status": {
            "conditions": [*node["status"]["conditions"], other]}}, subresource="status")
        await c.patch("nodes", "worker-0", {"spec": {"taints": [
            {"key": "example.com/mine", "effect": "NoSchedule"}]}})
        await plane.settle()
        unknown = {**stale, "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}}
        for write in (lambda: controller.mark_unknown(stale, False),
                      lambda: controller.write_taints(unknown)):
            with pytest.raises(ApiError) as e:
                await write()
            assert e.value.code == 409
        await stop_heartbeat(c)
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(70)
        node = await c.get("nodes", "worker-0")
        assert present_condition(node, "Ready")["status"] == "Unknown"
        assert present_condition(node, "example.com/Custom")["reason"] == "Mine"
        assert {t["key"] for t in node["spec"]["taints"]} == {"example.com/mine", UNREACHABLE}
