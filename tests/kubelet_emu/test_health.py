"""Device health in pod status, and fault injection, on a virtual clock: a DeviceFault makes
the pod's allocatedResourcesStatus Unhealthy with the message and deleting it heals it; a
silenced device turns Unknown after the health timeout; faults can last a while; a
terminated pod's status is left alone; bad faults are refused with field causes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from tests.support.emulated_nodes import (
    CLAIMS,
    LEASES,
    WITH_SCHEDULING,
    device_index,
    emulated_plane,
)

DEVICE_FAULTS = "devicefaults.emulator.fakeapi.dev"
NODE_FAULTS = "nodefaults.emulator.fakeapi.dev"
GPU = "gpu.example.com"


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


async def gpu_pod(plane: ControlPlane, c: Client, *, script: str = "sleep 9999",
                  policy: str = "Always") -> None:
    """A pod using gpu-2 of worker-0 (picked by a selector), scheduled and running."""
    await c.create(CLAIMS, {"metadata": {"name": "g", "namespace": "default"},
                            "spec": {"devices": {"requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": GPU,
                                                            "selectors": [device_index(2)]}}]}}})
    await c.create("pods", {"metadata": {"name": "p", "namespace": "default"}, "spec": {
        "restartPolicy": policy, "resourceClaims": [{"name": "gpu", "resourceClaimName": "g"}],
        "containers": [{"name": "ctr0", "image": "ubuntu", "command": ["bash", "-c", script],
                        "resources": {"claims": [{"name": "gpu", "request": "gpu"}]}},
                       {"name": "sidecar", "image": "busybox"}]}})
    await plane.settle()
    assert (await c.get("pods", "p", "default"))["spec"]["nodeName"] == "worker-0"


async def health_of(c: Client) -> list[dict[str, Any]]:
    pod = await c.get("pods", "p", "default")
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert "allocatedResourcesStatus" not in statuses["sidecar"]  # it uses no device
    return statuses["ctr0"]["allocatedResourcesStatus"]


def fault(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
            "metadata": {"name": name},
            "spec": {"nodeName": "worker-0", "driver": GPU, "device": "gpu-2", **spec}}


async def test_a_device_fault_turns_the_pod_status_unhealthy_until_deleted(
        tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await gpu_pod(plane, c)
        assert await health_of(c) == [{"name": "claim:gpu/gpu", "resources": [
            {"resourceID": f"{GPU}/worker-0/gpu-2", "health": "Healthy"}]}]
        await c.create(DEVICE_FAULTS, fault("ecc", message="ECC error count exceeded threshold"))
        await plane.settle()
        assert await health_of(c) == [{"name": "claim:gpu/gpu", "resources": [
            {"resourceID": f"{GPU}/worker-0/gpu-2", "health": "Unhealthy",
             "message": "ECC error count exceeded threshold"}]}]
        # a fault on another device changes nothing here
        await c.create(DEVICE_FAULTS, fault("other", device="gpu-3", message="x"))
        await plane.settle()
        assert (await health_of(c))[0]["resources"][0]["health"] == "Unhealthy"
        await c.delete(DEVICE_FAULTS, "ecc")
        await plane.settle()
        assert (await health_of(c))[0]["resources"] == [
            {"resourceID": f"{GPU}/worker-0/gpu-2", "health": "Healthy"}]


@pytest.mark.parametrize(("driver", "device"), [(GPU, "gpu-99"), ("ext.example.com", "dev-0")],
                         ids=["no such device", "not an emulator driver"])
async def test_a_fault_on_no_fake_device_is_reported_not_ignored(
        tmp_path: Path, driver: str, device: str) -> None:
    async with emulated_plane(tmp_path, nodes=1, components="kubelet") as plane:
        c = admin(plane)
        await plane.settle()
        await c.create(DEVICE_FAULTS, fault("typo", driver=driver, device=device))
        await plane.settle()
        [event] = [e for e in await c.list("events", "default")
                   if e["involvedObject"]["kind"] == "DeviceFault"]
        assert (event["type"], event["reason"], event["involvedObject"]["name"]) == (
            "Warning", "FaultNotApplied", "typo")
        assert event["message"] == (f"{driver}/{device} is not a device of the emulator's fake "
                                    "drivers on node worker-0: a DeviceFault acts on those only")
        [applied] = (await c.get(DEVICE_FAULTS, "typo"))["status"]["conditions"]
        assert (applied["type"], applied["status"], applied["reason"], applied["message"]) == (
            "Applied", "False", "NotApplied", event["message"])


def applied(fault_: dict[str, Any]) -> tuple[str, str, str]:
    [condition] = fault_["status"]["conditions"]
    assert condition["type"] == "Applied"
    return condition["status"], condition["reason"], condition["message"]


@pytest.mark.parametrize(("kind", "body", "doing"), [
    ("devicefaults", fault("ecc", message="ECC"),
     f"{GPU}/gpu-2 on node worker-0 is reported Unhealthy: ECC"),
    ("devicefaults", fault("quiet", mode="StopReporting"),
     f"{GPU}/gpu-2 on node worker-0 is left out of its driver's health reports"),
    ("nodefaults", {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "NodeFault",
                    "metadata": {"name": "down"}, "spec": {"nodeName": "worker-0"}},
     "the kubelet of node worker-0 stops heartbeating"),
], ids=["unhealthy", "stop reporting", "node"])
async def test_a_fault_s_status_and_events_follow_it_from_applied_to_expired_and_healed(
        tmp_path: Path, kind: str, body: dict[str, Any], doing: str) -> None:
    async with emulated_plane(tmp_path, nodes=1, components="kubelet") as plane:
        c = admin(plane)
        await plane.settle()
        resource = f"{kind}.emulator.fakeapi.dev"
        name = body["metadata"]["name"]
        await c.create(resource, {**body, "spec": {**body["spec"], "durationSeconds": 60}})
        await plane.settle()
        assert applied(await c.get(resource, name)) == ("True", "Applied", doing)
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(61)
        assert applied(await c.get(resource, name)) == ("False", "Expired",
                                                        "its 60 s are over")
        await c.delete(resource, name)
        await plane.settle()
        events = sorted((e for e in await c.list("events", "default")
                         if e["involvedObject"]["name"] == name),
                        key=lambda e: e["metadata"]["name"])
        assert [(e["type"], e["reason"], e["message"], e["source"]["component"])
                for e in events] == [
            ("Normal", "FaultApplied", doing, "kubelet"),
            ("Normal", "FaultExpired", "its 60 s are over", "kubelet"),
            ("Normal", "FaultHealed", f"{body['kind']} {name} was deleted: healed", "kubelet")]


async def test_a_silenced_device_turns_unknown_after_the_timeout(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await gpu_pod(plane, c)
        await c.create(DEVICE_FAULTS, fault("quiet", mode="StopReporting"))
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(25)
        assert (await health_of(c))[0]["resources"][0]["health"] == "Healthy"
        await plane.clock.advance(10)
        assert (await health_of(c))[0]["resources"][0] == {
            "resourceID": f"{GPU}/worker-0/gpu-2", "health": "Unknown"}
        await c.delete(DEVICE_FAULTS, "quiet")
        await plane.settle()
        assert (await health_of(c))[0]["resources"][0]["health"] == "Healthy"


async def test_a_fault_with_a_duration_heals_by_itself(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await gpu_pod(plane, c)
        await c.create(DEVICE_FAULTS, fault("blip", message="thermal", durationSeconds=60))
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(30)
        assert (await health_of(c))[0]["resources"][0]["health"] == "Unhealthy"
        await plane.clock.advance(31)
        assert (await health_of(c))[0]["resources"][0]["health"] == "Healthy"
        assert await c.get(DEVICE_FAULTS, "blip")  # the object stays; it just ended


async def test_a_terminated_pods_health_is_not_updated(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await gpu_pod(plane, c, script="sleep 5; exit 1", policy="Never")
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(6)
        assert (await c.get("pods", "p", "default"))["status"]["phase"] == "Running"  # sidecar
        await c.create(DEVICE_FAULTS, fault("late", message="too late"))
        await plane.settle()
        assert (await health_of(c))[0]["resources"][0]["health"] == "Unhealthy"


@pytest.mark.parametrize(("resource", "body", "causes"), [
    (DEVICE_FAULTS, {"spec": {"nodeName": "worker-0", "driver": GPU}},
     [("spec.device", "Required value")]),
    (DEVICE_FAULTS, {"spec": {"nodeName": "worker-0", "driver": GPU, "device": "gpu-0",
                              "mode": "Melt"}},
     [("spec.mode", 'Unsupported value: "Melt": supported values: "Unhealthy", '
       '"StopReporting"')]),
    (DEVICE_FAULTS, {"spec": {"nodeName": "worker-0", "driver": "Bad_Driver",
                              "device": "gpu-0", "durationSeconds": 0}},
     [("spec.driver", "Invalid value"), ("spec.durationSeconds", "must be greater than")]),
    (NODE_FAULTS, {"spec": {}}, [("spec.nodeName", "Required value")]),
])
async def test_bad_faults_are_refused_with_field_causes(
        tmp_path: Path, resource: str, body: dict[str, Any],
        causes: list[tuple[str, str]]) -> None:
    async with emulated_plane(tmp_path, nodes=0) as plane:
        c = admin(plane)
        with pytest.raises(ApiError) as e:
            await c.create(resource, {"metadata": {"name": "bad"}, **body})
        assert e.value.code == 422 and e.value.reason == "Invalid"
        got = [(cause.field, cause.message) for cause in e.value.causes]
        for field, text in causes:
            assert any(f == field and text in m for f, m in got), got
        assert await c.list(resource) == []


async def test_a_node_fault_stops_the_heartbeat_until_deleted(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create(NODE_FAULTS, {"metadata": {"name": "down"},
                                     "spec": {"nodeName": "worker-0"}})
        await plane.settle()
        before = (await c.get(LEASES, "worker-0", "kube-node-lease"))["spec"]["renewTime"]
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(60)
        assert (await c.get(LEASES, "worker-0", "kube-node-lease"))["spec"][
            "renewTime"] == before
        await c.delete(NODE_FAULTS, "down")
        await plane.settle()
        assert (await c.get(LEASES, "worker-0", "kube-node-lease"))["spec"][
            "renewTime"] != before
