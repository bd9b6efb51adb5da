"""The device-taint eviction controller on a virtual clock: NoExecute taints of rules and
slices evict the users of a device (condition, Event, deletion) after any tolerationSeconds,
tolerated or cancelled evictions keep the Pod, and each rule's EvictionInProgress condition
says what happened, with upstream's messages.

The pods run on an emulated node (the kubelet component, two GPUs published by its driver),
whose kubelet finishes the graceful deletion the controller starts, as on a real cluster.
The tests play the scheduler: they allocate and reserve the claim, then bind the pod.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from controllers.devicetainteviction import DeviceTaintEvictionController
from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from kubelet_emu.profile import load_profile
from kubelet_emu.settings import EmulatorSettings
from tests.support import dra
from tests.support.dra import CLAIMS, RULES, SLICES
from tests.support.plane import running_plane, stall_calls

CONTROLLER = "device-taint-eviction-controller"
COMPONENTS = f"{CONTROLLER},kubelet"
NODE = "worker-0"
"""The emulated node (its pool has gpu-0 and gpu-1)."""
UNRUN_NODE = "worker-1"
"""A node no kubelet runs, whose slice the test publishes (with device taints, which the
emulated drivers never publish)."""
PROFILE = Path(__file__).resolve().parent.parent / "data" / "controllers" / "two-gpus.yaml"


def emulator(state: Path | None = None) -> EmulatorSettings:
    """One emulated node with two GPUs (files under `state`, else the plane's data dir)."""
    return EmulatorSettings(nodes=1, profile=load_profile(str(PROFILE)), state_dir=state)


@pytest.fixture
async def plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    async with running_plane(COMPONENTS, seed=5, emulator=emulator(tmp_path)) as p:
        yield p


@pytest.fixture
def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("admin")


@pytest.fixture
def clock(plane: ControlPlane) -> VirtualClock:
    assert isinstance(plane.clock, VirtualClock)
    return plane.clock


def gpu_slice(*devices: dra.Obj) -> dra.Obj:
    """The slice of the node no kubelet runs."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{UNRUN_NODE}-gpus"},
            "spec": {"driver": dra.DRIVER, "nodeName": UNRUN_NODE,
                     "pool": {"name": UNRUN_NODE, "generation": 1, "resourceSliceCount": 1},
                     "devices": list(devices) or [{"name": "gpu-0"}, {"name": "gpu-1"}]}}


def rule(name: str, effect: str = "NoExecute", **selector: str) -> dra.Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
            "metadata": {"name": name},
            "spec": {"deviceSelector": selector or {"driver": dra.DRIVER, "device": "gpu-0"},
                     "taint": {"key": "gpu.example.com/unhealthy", "value": "ecc",
                               "effect": effect}}}


async def running_pod(admin: Client, name: str, device: str = "gpu-0",
                      tolerations: list[dra.Obj] | None = None, node: str = NODE) -> dra.Obj:
    """A Pod using a claim allocated to `device` of the node's pool, reserved for it, then
    bound to the node: the scheduler's writes, in its order."""
    await admin.create(CLAIMS, dra.claim(f"{name}-claim"))
    pod = await admin.create("pods", dra.pod(name, claims=[
        dra.by_name("gpu", f"{name}-claim")]))
    extra: dict[str, Any] = {"tolerations": tolerations} if tolerations else {}
    await dra.allocate(admin, f"{name}-claim", results=[dra.result(device, pool=node, **extra)],
                       reserved_for=[dra.consumer(pod)])
    await dra.bind(admin, name, node)
    return pod


async def condition(admin: Client, name: str) -> dict[str, Any]:
    [c] = (await admin.get(RULES, name))["status"]["conditions"]
    return {k: c[k] for k in ("type", "status", "reason", "message")}


def disruption(pod: dra.Obj) -> tuple[str, str, str]:
    [c] = [c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    return c["status"], c["reason"], c["message"]


DISRUPTED = ("True", "DeletionByDeviceTaintManager",
             "Device Taint manager: deleting due to NoExecute taint")


async def test_a_no_execute_rule_evicts_the_pod_with_upstream_s_traces(
        plane: ControlPlane, admin: Client, clock: VirtualClock) -> None:
    victim = await running_pod(admin, "victim")
    await running_pod(admin, "bystander", device="gpu-1")
    await plane.settle()
    assert (await admin.get("pods", "victim", "default"))["status"]["phase"] == "Running"
    seen: list[tuple[str, dra.Obj]] = []
    plane.informers.get("pods").add_handler(lambda t, o, old: seen.append((t, o)))
    await admin.create(RULES, rule("broken-gpu"))
    await plane.settle()
    assert await dra.get_or_none(admin, "pods", "victim") is None  # its kubelet confirmed
    assert (await admin.get("pods", "bystander", "default"))["status"]["phase"] == "Running"
    [last] = [o for t, o in seen if t == "DELETED"]
    assert last["metadata"]["uid"] == victim["metadata"]["uid"]
    assert last["status"]["phase"] == "Succeeded"  # SIGTERM: the container exited 0
    assert disruption(last) == DISRUPTED
    events = {e["reason"]: e for e in await dra.events_about(admin, "victim")}
    assert sorted(events) == ["Created", "DeviceTaintManagerEviction", "Killing", "Pulled",
                              "Pulling", "Started"]
    event, killing = events["DeviceTaintManagerEviction"], events["Killing"]
    assert (event["type"], event["reason"], event["message"]) == (
        "Normal", "DeviceTaintManagerEviction", "Marking for deletion")
    assert event["source"] == {"component": CONTROLLER}
    assert (killing["reason"], killing["source"]["component"]) == ("Killing", "kubelet")
    await clock.advance(10)  # (the pending state is seen in the next test)
    assert await condition(admin, "broken-gpu") == {
        "type": "EvictionInProgress", "status": "False", "reason": "Completed",
        "message": "1 pod evicted since starting the controller."}


async def test_toleration_seconds_delay_the_eviction(plane: ControlPlane, admin: Client,
                                                     clock: VirtualClock) -> None:
    await running_pod(admin, "patient", tolerations=[{
        "key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute",
        "tolerationSeconds": 30}])
    await running_pod(admin, "stubborn", device="gpu-1", tolerations=[{
        "key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute"}])
    await admin.create(RULES, rule("broken-gpu", driver=dra.DRIVER, pool=NODE))  # both GPUs
    await plane.settle()
    assert await condition(admin, "broken-gpu") == {
        "type": "EvictionInProgress", "status": "True", "reason": "PodsPendingEviction",
        "message": "1 pod needs to be evicted in 1 namespace."}
    await clock.advance(29)
    patient = await admin.get("pods", "patient", "default")
    assert "deletionTimestamp" not in patient["metadata"]
    await clock.advance(1)
    assert await dra.get_or_none(admin, "pods", "patient") is None
    await clock.advance(10)
    stubborn = await admin.get("pods", "stubborn", "default")  # tolerated for ever
    assert "deletionTimestamp" not in stubborn["metadata"]
    assert (await condition(admin, "broken-gpu"))["reason"] == "Completed"


async def test_a_slice_s_own_taint_evicts_and_removing_it_cancels(
        plane: ControlPlane, admin: Client, clock: VirtualClock) -> None:
    """On the node no kubelet runs (the test is its driver): an evicted pod stays Terminating
    there, as on a real cluster whose node has no kubelet to confirm the deletion."""
    taint = {"key": "gpu.example.com/unhealthy", "effect": "NoExecute"}
    await admin.create(SLICES, gpu_slice({"name": "gpu-0", "taints": [taint]},
                                         {"name": "gpu-1"}))
    await running_pod(admin, "doomed", node=UNRUN_NODE)
    await running_pod(admin, "saved", device="gpu-1", node=UNRUN_NODE, tolerations=[{
        "key": "gpu.example.com/unhealthy", "operator": "Exists", "tolerationSeconds": 60}])
    await plane.settle()
    doomed = await admin.get("pods", "doomed", "default")
    assert doomed["metadata"]["deletionGracePeriodSeconds"] == 30  # a graceful deletion
    assert disruption(doomed) == DISRUPTED
    stored = await admin.get(SLICES, f"{UNRUN_NODE}-gpus")
    stored["spec"]["devices"][1]["taints"] = [taint]
    stored = await admin.update(SLICES, stored)
    await clock.advance(30)
    stored["spec"]["devices"][1].pop("taints")
    await admin.update(SLICES, stored)  # repaired in time
    await clock.advance(60)
    saved = await admin.get("pods", "saved", "default")
    assert "deletionTimestamp" not in saved["metadata"]
    assert [e["message"] for e in await dra.events_about(admin, "saved")] == [
        "Cancelling deletion"]


async def test_pods_not_using_the_device_stay(plane: ControlPlane, admin: Client) -> None:
    """Not scheduled, or not among the claim's reservations: nothing to evict."""
    await admin.create(CLAIMS, dra.claim("c"))
    await admin.create("pods", dra.pod("pending", claims=[dra.by_name("gpu", "c")]))
    await admin.create("pods", dra.pod("bound", node=NODE, claims=[dra.by_name("gpu", "c")]))
    await dra.allocate(admin, "c", results=[dra.result(pool=NODE)])
    await admin.create(RULES, rule("broken-gpu"))
    await plane.settle()
    pods = await admin.list("pods", "default")
    assert [p["metadata"].get("deletionTimestamp") for p in pods] == [None, None]
    assert (await condition(admin, "broken-gpu"))["reason"] == "NotStarted"


@pytest.mark.parametrize("effect,reason,message", [
    ("None", "NoEffect",
     "2 published devices selected. 1 allocated device selected. 1 pod would be evicted in "
     "1 namespace if the effect was NoExecute. This information will not be updated again. "
     "Recreate the DeviceTaintRule to trigger an update."),
    ("NoSchedule", "OtherEffect", "Eviction only happens for the NoExecute effect."),
])
async def test_rules_that_do_not_evict_say_so(plane: ControlPlane, admin: Client, effect: str,
                                              reason: str, message: str) -> None:
    await running_pod(admin, "safe")
    await admin.create(RULES, rule("preview", effect, driver=dra.DRIVER))
    await plane.settle()
    safe = await admin.get("pods", "safe", "default")
    assert "deletionTimestamp" not in safe["metadata"] and safe["status"]["phase"] == "Running"
    assert await condition(admin, "preview") == {
        "type": "EvictionInProgress", "status": "False", "reason": reason, "message": message}


async def test_stopped_before_the_deletion_a_restart_finishes_the_eviction(
        tmp_path: Path) -> None:
    async with running_plane(COMPONENTS, data_dir=tmp_path, emulator=emulator()) as first:
        admin = first.cluster.client("admin")
        controller = first.components[CONTROLLER]
        assert isinstance(controller, DeviceTaintEvictionController)
        blocked = stall_calls(controller.client, "delete")
        await running_pod(admin, "victim")
        await admin.create(RULES, rule("broken-gpu"))
        await blocked.wait()
        marked = await admin.get("pods", "victim", "default")
        assert disruption(marked) == DISRUPTED and "deletionTimestamp" not in marked["metadata"]
    async with running_plane(COMPONENTS, data_dir=tmp_path, emulator=emulator()) as second:
        admin = second.cluster.client("admin")
        assert await dra.get_or_none(admin, "pods", "victim") is None
