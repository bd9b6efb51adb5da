"""Claims on emulated nodes, on a virtual clock, with the claim controller and the scheduler
doing their part: each claim is prepared by its drivers (CDI spec, device-metadata files),
the container sees the CDI environment and mounts; unprepare removes the files; a claim
shared by pods is prepared once; drivers refuse bad configs as the example driver; a pod
bound behind the scheduler's back waits until its claims are allocated and reserved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from kubelet_emu.metadata import read_stream
from tests.support.emulated_nodes import (
    CLAIMS,
    CLASSES,
    SLICES,
    WITH_SCHEDULING,
    device_index,
    emulated_plane,
    kubelet_of,
)

DEMO = "export; trap 'exit 0' TERM; sleep 9999 & wait"
GPU = "gpu.example.com"
NIC = "nic.example.com"


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


def demo_pod(name: str, claims: list[dict[str, Any]], *, containers: int = 1,
             refs: list[dict[str, Any]] | None = None, node: str = "") -> dict[str, Any]:
    """A pod for the scheduler (or bound to `node` already, behind its back)."""
    spec: dict[str, Any] = {
        "resourceClaims": claims,
        "containers": [{"name": f"ctr{i}", "image": "ubuntu:22.04",
                        "command": ["bash", "-c"], "args": [DEMO],
                        "resources": {"claims": refs or [{"name": claims[0]["name"]}]}}
                       for i in range(containers)]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


def claim(name: str, requests: list[dict[str, Any]], config: list[dict[str, Any]] | None = None
          ) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": requests}
    if config:
        devices["config"] = config
    return {"metadata": {"name": name, "namespace": "default"}, "spec": {"devices": devices}}


def gpu_request(name: str = "gpu", index: int | None = None, **extra: Any) -> dict[str, Any]:
    """A request for one GPU (the one with this index, when given)."""
    exactly: dict[str, Any] = {"deviceClassName": GPU, **extra}
    if index is not None:
        exactly["selectors"] = [device_index(index)]
    return {"name": name, "exactly": exactly}


def log_of(plane: ControlPlane, pod: str, container: str = "ctr0") -> str:
    text = kubelet_of(plane).container_log("default", pod, container)
    assert text is not None
    return text


def env_of(log: str) -> dict[str, str]:
    out = {}
    for line in log.splitlines():
        if line.startswith('declare -x ') and "=" in line:
            k, _, v = line.removeprefix("declare -x ").partition("=")
            out[k] = json.loads(v)
    return out


async def run(plane: ControlPlane, c: Client, pod_body: dict[str, Any]) -> dict[str, Any]:
    """Create the pod and let the control plane work; the pod as it ends up."""
    await c.create("pods", pod_body)
    await plane.settle()
    return await c.get("pods", pod_body["metadata"]["name"], "default")


async def claim_of(c: Client, pod: dict[str, Any], pod_claim: str) -> dict[str, Any]:
    """The ResourceClaim behind one of the pod's claims (named, or made from its template)."""
    [entry] = [e for e in pod["spec"]["resourceClaims"] if e["name"] == pod_claim]
    name = entry.get("resourceClaimName") or {
        s["name"]: s["resourceClaimName"] for s in pod["status"]["resourceClaimStatuses"]
    }[pod_claim]
    return await c.get(CLAIMS, name, "default")


async def test_a_scheduled_pod_runs_with_the_cdi_environment(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await c.create("resourceclaimtemplates.resource.k8s.io", {
            "metadata": {"name": "single-gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [gpu_request(index=2)]}}}})
        p = await run(plane, c, demo_pod("pod0", [
            {"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]))
        assert (p["spec"]["nodeName"], p["status"]["phase"]) == ("worker-0", "Running")
        the_claim = await claim_of(c, p, "gpu")
        assert [r["device"] for r in the_claim["status"]["allocation"]["devices"][
            "results"]] == ["gpu-2"]
        env = env_of(log_of(plane, "pod0"))
        assert env["GPU_DEVICE_2"] == "gpu-2"
        assert env["GPU_DEVICE_2_SHARING_STRATEGY"] == "TimeSlicing"
        assert env["GPU_DEVICE_2_TIMESLICE_INTERVAL"] == "Default"
        assert env["DRA_ADMIN_ACCESS"] == "false"
        assert env["KUBERNETES_NODE_NAME"] == "worker-0"
        gpu_values = [v for k, v in env.items() if k.startswith("GPU_DEVICE_")]
        assert [v for v in gpu_values if v.startswith("gpu-")] == ["gpu-2"]

        # the CDI spec: valid JSON, one device per allocated device, the env edits
        uid = the_claim["metadata"]["uid"]
        cdi_dir = tmp_path / "nodes" / "worker-0" / "var" / "run" / "cdi"
        spec = json.loads((cdi_dir / f"k8s.{GPU}-gpu_{uid}.json").read_text())
        assert spec["kind"] == f"k8s.{GPU}/gpu" and spec["cdiVersion"]
        assert [d["name"] for d in spec["devices"]] == [f"{uid}-gpu-2"]
        assert "GPU_DEVICE_2=gpu-2" in spec["devices"][0]["containerEdits"]["env"]

        # the metadata file, as the seed shows it, mounted read-only
        path = ("/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/gpu/"
                f"{GPU}-metadata.json")
        assert f"mounted {path}" not in log_of(plane, "pod0")  # the demo prints env only
        host = next((tmp_path / "nodes").rglob("metadata.json"))
        assert host.stat().st_mode & 0o777 == 0o444
        stream = read_stream(host.read_text())
        assert [o["apiVersion"] for o in stream] == ["metadata.resource.k8s.io/v1beta1",
                                                     "metadata.resource.k8s.io/v1alpha1"]
        first = stream[0]
        assert first["kind"] == "DeviceMetadata"
        assert first["metadata"] == {"name": the_claim["metadata"]["name"],
                                     "namespace": "default", "uid": uid, "generation": 1}
        assert first["podClaimName"] == "gpu"
        [request] = first["requests"]
        assert request["name"] == "gpu"
        [device] = request["devices"]
        assert (device["driver"], device["pool"], device["name"]) == (GPU, "worker-0", "gpu-2")
        assert {"driverVersion", "index", "model", "uuid"} <= set(device["attributes"])
        assert device["attributes"]["model"] == {"string": "LATEST-GPU-MODEL"}
        meta_spec = json.loads((cdi_dir / f"{GPU}_metadata_{uid}_gpu.json").read_text())
        [mount] = meta_spec["devices"][0]["containerEdits"]["mounts"]
        assert mount == {"hostPath": str(host), "containerPath": path,
                         "options": ["ro", "bind"]}
        # the example driver's device status
        stored = await c.get(CLAIMS, the_claim["metadata"]["name"], "default")
        [entry] = stored["status"]["devices"]
        assert set(entry["data"]) == {"uuid", "model", "driverVersion"}

        await c.delete("pods", "pod0", "default")
        await plane.settle()
        assert await c.list("pods", "default") == []  # its kubelet confirmed the deletion
        assert not list((tmp_path / "nodes").rglob("metadata.json"))
        assert sorted(p.name for p in cdi_dir.iterdir()) == [f"k8s.{GPU}-gpu_common.json"]


@pytest.mark.parametrize(("claims", "waiting_for"), [
    ([{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
     "waiting for the ResourceClaim of pod claim gpu to be created"),
    ([{"name": "gpu", "resourceClaimName": "missing"}],
     "failed to fetch ResourceClaim missing referenced by pod default/late: "
     'resourceclaim.resource.k8s.io "missing" not found'),
    ([{"name": "gpu", "resourceClaimName": "idle"}], "claim default/idle is not allocated"),
    ([{"name": "gpu", "resourceClaimName": "taken"}],
     "pod late ({uid}) is not allowed to use ResourceClaim default/taken"),
], ids=["template-claim-not-made", "claim-missing", "not-allocated", "not-reserved"])
async def test_a_pod_bound_behind_the_schedulers_back_waits_for_its_claims(
        tmp_path: Path, claims: list[dict[str, Any]], waiting_for: str) -> None:
    """Without the claim controller, nobody makes template claims or reserves claims for a
    pod created with spec.nodeName (the scheduler leaves such pods alone)."""
    async with emulated_plane(tmp_path, nodes=1, components="kubelet,scheduler") as plane:
        c = admin(plane)
        await c.create(CLAIMS, claim("idle", [gpu_request()]))
        await c.create(CLAIMS, claim("taken", [gpu_request()]))
        owner = await run(plane, c, demo_pod("owner", [
            {"name": "gpu", "resourceClaimName": "taken"}]))  # allocated, reserved for it
        assert owner["status"]["phase"] == "Running"
        p = await run(plane, c, demo_pod("late", claims, node="worker-0"))
        assert p["status"]["phase"] == "Pending"
        assert p["status"]["containerStatuses"][0]["state"] == {
            "waiting": {"reason": "ContainerCreating"}}
        [event] = [e for e in await c.list("events", "default")
                   if e["involvedObject"]["name"] == "late"]
        assert (event["type"], event["reason"], event["source"]) == (
            "Warning", "FailedPrepareDynamicResources",
            {"component": "kubelet", "host": "worker-0"})
        assert event["message"] == waiting_for.format(uid=p["metadata"]["uid"])


async def test_a_claim_shared_by_pods_is_prepared_once(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        shared = await c.create(CLAIMS, claim("single-gpu", [gpu_request(index=0)]))
        for name in ("pod0", "pod1"):
            await run(plane, c, demo_pod(name, [
                {"name": "shared-gpu", "resourceClaimName": "single-gpu"}]))
        reserved = (await c.get(CLAIMS, "single-gpu", "default"))["status"]["reservedFor"]
        assert sorted(r["name"] for r in reserved) == ["pod0", "pod1"]
        for name in ("pod0", "pod1"):
            assert (await c.get("pods", name, "default"))["status"]["phase"] == "Running"
            assert env_of(log_of(plane, name))["GPU_DEVICE_0"] == "gpu-0"
        files = lambda: list((tmp_path / "nodes").rglob("metadata.json"))  # noqa: E731
        assert len(files()) == 1
        host = files()[0]
        # the path of a directly referenced claim
        spec_dir = tmp_path / "nodes" / "worker-0" / "var" / "run" / "cdi"
        uid = shared["metadata"]["uid"]
        mount = json.loads((spec_dir / f"{GPU}_metadata_{uid}_gpu.json").read_text())[
            "devices"][0]["containerEdits"]["mounts"][0]
        assert mount["containerPath"] == ("/var/run/kubernetes.io/dra-device-attributes/"
                                          f"resourceclaims/single-gpu/gpu/{GPU}-metadata.json")
        await c.delete("pods", "pod0", "default")
        await plane.settle()
        assert files() == [host]  # pod1 still uses it
        await c.delete("pods", "pod1", "default")
        await plane.settle()
        assert files() == []


@pytest.mark.parametrize(("config", "want"), [
    ({"sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Long"}}},
     {"SHARING_STRATEGY": "TimeSlicing", "TIMESLICE_INTERVAL": "Long"}),
    ({"sharing": {"strategy": "SpacePartitioning",
                  "spacePartitioningConfig": {"partitionCount": 10}}},
     {"SHARING_STRATEGY": "SpacePartitioning", "PARTITION_COUNT": "10"}),
    ({}, {"SHARING_STRATEGY": "TimeSlicing", "TIMESLICE_INTERVAL": "Default"}),
])
async def test_gpu_configs_set_the_sharing_environment(tmp_path: Path, config: dict[str, Any],
                                                       want: dict[str, str]) -> None:
    params = {"apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig", **config}
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await c.create(CLAIMS, claim("cfg", [gpu_request(index=5)], [
            {"requests": ["gpu"], "opaque": {"driver": GPU, "parameters": params}}]))
        await run(plane, c, demo_pod("p", [{"name": "gpu", "resourceClaimName": "cfg"}]))
        env = env_of(log_of(plane, "p"))
        assert {k.removeprefix("GPU_DEVICE_5_"): v for k, v in env.items()
                if k.startswith("GPU_DEVICE_5_") and "RESOURCE_CLAIM" not in k} == want


async def test_the_last_matching_config_wins_and_claim_configs_beat_class_configs(
        tmp_path: Path) -> None:
    def gpu_config(interval: str) -> dict[str, Any]:
        return {"opaque": {"driver": GPU, "parameters": {
            "apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig",
            "sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {
                "interval": interval}}}}}
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        cls = await c.get("deviceclasses.resource.k8s.io", GPU)
        cls["spec"]["config"] = [gpu_config("Short")]
        await c.update("deviceclasses.resource.k8s.io", cls)
        await c.create(CLAIMS, claim("cfg", [
            gpu_request("a", index=0),
            {"name": "b", "firstAvailable": [{"name": "sub", "deviceClassName": GPU,
                                              "selectors": [device_index(1)]}]},
            gpu_request("c", index=2)], [
            {"requests": ["a"], **gpu_config("Medium")},
            {"requests": ["a"], **gpu_config("Long")},
            {"requests": ["b"], **gpu_config("Long")}]))
        await run(plane, c, demo_pod("p", [{"name": "g", "resourceClaimName": "cfg"}]))
        results = (await c.get(CLAIMS, "cfg", "default"))["status"]["allocation"]["devices"][
            "results"]
        assert [(r["request"], r["device"]) for r in results] == [
            ("a", "gpu-0"), ("b/sub", "gpu-1"), ("c", "gpu-2")]
        env = env_of(log_of(plane, "p"))
        assert env["GPU_DEVICE_0_TIMESLICE_INTERVAL"] == "Long"   # the last claim config for a
        assert env["GPU_DEVICE_1_TIMESLICE_INTERVAL"] == "Short"  # "b" is not "b/sub": exact
        assert env["GPU_DEVICE_2_TIMESLICE_INTERVAL"] == "Short"  # the class config


@pytest.mark.parametrize(("params", "message"), [
    ({"sharing": {"strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Forever"}}},
     "unknown time-slice interval: Forever"),
    ({"sharing": {"strategy": "Magic"}}, "unknown GPU sharing strategy: Magic"),
    ({"sharing": {"strategy": "SpacePartitioning",
                  "spacePartitioningConfig": {"partitionCount": -1}}},
     "invalid partition count: -1"),
])
async def test_bad_configs_fail_preparation_with_the_drivers_message(
        tmp_path: Path, params: dict[str, Any], message: str) -> None:
    params = {"apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig", **params}
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        await c.create(CLAIMS, claim("bad", [gpu_request()], [
            {"opaque": {"driver": GPU, "parameters": params}}]))
        p = await run(plane, c, demo_pod("p", [{"name": "g", "resourceClaimName": "bad"}]))
        assert (p["spec"]["nodeName"], p["status"]["phase"]) == ("worker-0", "Pending")
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(2 * 60)  # tried again at each resync: one Event, counted
        [event] = [e for e in await c.list("events", "default")
                   if e["reason"] == "FailedPrepareDynamicResources"]
        assert event["message"].startswith(
            "Failed to prepare dynamic resources: prepare dynamic resources: "
            "NodePrepareResources failed for ResourceClaim bad: ")
        assert message in event["message"]
        assert event["count"] >= 3 and event["firstTimestamp"] < event["lastTimestamp"]
        assert not list((tmp_path / "nodes").rglob("metadata.json"))


async def test_the_nic_writes_network_status_and_deferred_metadata(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        nic = await c.create(CLAIMS, claim("macvlan-eth0", [
            {"name": "macvlan-eth0", "exactly": {"deviceClassName": NIC,
                                                 "selectors": [device_index(0, NIC)]}}]))
        await run(plane, c, demo_pod("p", [{"name": "net", "resourceClaimName": "macvlan-eth0"}]))
        stored = await c.get(CLAIMS, "macvlan-eth0", "default")
        [result] = stored["status"]["allocation"]["devices"]["results"]
        assert result["consumedCapacity"] == {"bandwidth": "1G"}  # the capacity's default
        [entry] = stored["status"]["devices"]
        assert (entry["driver"], entry["pool"], entry["device"], entry["shareID"]) == (
            NIC, "worker-0", "nic-0", result["shareID"])
        [cond] = entry["conditions"]
        assert (cond["type"], cond["status"], cond["reason"]) == ("NetworkReady", "True",
                                                                  "NetworkReady")
        assert cond["message"] == "Device successfully allocated and assigned to the pod"
        network = entry["networkData"]
        assert network["interfaceName"] == "net1"
        assert network["ips"][0].endswith("/24") and network["ips"][1].startswith("2001:db8::")
        assert len(network["hardwareAddress"].split(":")) == 6
        # written with the driver's node-bound identity (the synthetic permission)
        assert any(m["manager"] == "dra-kubelet-plugin" and m.get("subresource") == "status"
                   for m in stored["metadata"]["managedFields"])
        [host] = (tmp_path / "nodes").rglob("metadata.json")
        first = read_stream(host.read_text())[0]
        assert first["metadata"]["generation"] == 2  # the deferred network data
        assert first["requests"][0]["devices"][0]["networkData"] == network
        assert nic["metadata"]["uid"] == first["metadata"]["uid"]


async def test_extended_resources_get_the_devices_of_their_mapped_requests(
        tmp_path: Path) -> None:
    """DRAExtendedResource: the scheduler made the pod's special claim; the kubelet prepares it
    like any claim and gives each container (an init container too) the devices of the
    requests `status.extendedResourceClaimStatus.requestMappings` map to it."""
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        gpu_class = await c.get(CLASSES, GPU)
        gpu_class["spec"]["extendedResourceName"] = "example.com/gpu"
        await c.update(CLASSES, gpu_class)

        def asks(name: str, gpus: int) -> dict[str, Any]:
            return {"name": name, "image": "ubuntu:22.04", "command": ["bash", "-c"],
                    "args": [DEMO if name == "main" else "export"],
                    "resources": {"limits": {"example.com/gpu": str(gpus)}}}
        p = await run(plane, c, {"metadata": {"name": "xr", "namespace": "default"}, "spec": {
            "initContainers": [asks("setup", 1)], "containers": [asks("main", 2)]}})
        assert p["status"]["phase"] == "Running"
        status = p["status"]["extendedResourceClaimStatus"]
        special = await c.get(CLAIMS, status["resourceClaimName"], "default")
        by_request: dict[str, list[str]] = {}
        for r in special["status"]["allocation"]["devices"]["results"]:
            by_request.setdefault(r["request"], []).append(r["device"])
        for container in ("setup", "main"):
            [request] = [m["requestName"] for m in status["requestMappings"]
                         if m["containerName"] == container]
            gpus = sorted(v for k, v in env_of(log_of(plane, "xr", container)).items()
                          if k.startswith("GPU_DEVICE_") and v.startswith("gpu-"))
            assert gpus == sorted(by_request[request]), container
        assert len(by_request["container-1-request-0"]) == 2
        # what PodResources reports for the container: the special claim's devices
        [view] = [v for v in kubelet_of(plane).pod_views("worker-0") if v.name == "xr"]
        main = next(ct for ct in view.containers if ct.name == "main")
        [(claim_name, _, devices)] = main.claims
        assert claim_name == special["metadata"]["name"]
        assert sorted(d.device for d in devices) == sorted(by_request["container-1-request-0"])
        # unprepared with the pod: its CDI spec goes
        await c.delete("pods", "xr", "default")
        await plane.settle()
        cdi_dir = tmp_path / "nodes" / "worker-0" / "var" / "run" / "cdi"
        assert not list(cdi_dir.glob(f"*{special['metadata']['uid']}*"))


def binding_profile(tmp_path: Path, *, plugins: list[str], device_status: bool) -> str:
    """A profile file: the example GPUs with binding conditions, and these controller
    plugins."""
    path = tmp_path / "binding.yaml"
    path.write_text(yaml.safe_dump({"name": "binding", "drivers": [{
        "name": GPU, "type": "example-gpu", "count": 2, "bindingConditions": True,
        "deviceStatus": device_status, "controllerPlugins": plugins}]}))
    return str(path)


@pytest.mark.parametrize("device_status", [False, True], ids=["conditions", "with-data"])
async def test_the_drivers_controller_satisfies_binding_conditions(
        tmp_path: Path, device_status: bool) -> None:
    """The example driver's BindingConditions plugin sets each allocated device's condition
    True, so the scheduler binds the pod; the device status written at prepare time keeps
    the condition."""
    profile = binding_profile(tmp_path, plugins=["BindingConditions"],
                              device_status=device_status)
    async with emulated_plane(tmp_path / "state", nodes=1, components=WITH_SCHEDULING,
                              profile=profile) as plane:
        c = admin(plane)
        [published] = (await c.list(SLICES))[0]["spec"]["devices"][:1]
        assert (published["bindingConditions"], published["bindingFailureConditions"]) == (
            ["BindingConditions"], ["BindingFailureConditions"])
        await c.create(CLAIMS, claim("bc", [gpu_request()]))
        p = await run(plane, c, demo_pod("p", [{"name": "gpu", "resourceClaimName": "bc"}]))
        assert (p["spec"]["nodeName"], p["status"]["phase"]) == ("worker-0", "Running")
        stored = await c.get(CLAIMS, "bc", "default")
        [result] = stored["status"]["allocation"]["devices"]["results"]
        assert result["bindingConditions"] == ["BindingConditions"]
        [entry] = stored["status"]["devices"]
        assert (entry["driver"], entry["pool"], entry["device"]) == (
            GPU, "worker-0", result["device"])
        [cond] = entry["conditions"]
        assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
            "type": "BindingConditions", "status": "True", "reason": "Ready",
            "message": "Device is ready"}
        assert ("data" in entry) == device_status
        assert env_of(log_of(plane, "p"))[f"GPU_DEVICE_{result['device'][4:]}"] == \
            result["device"]


async def test_without_the_controller_plugin_the_pod_waits_for_its_binding_conditions(
        tmp_path: Path) -> None:
    """bindingConditions published with no controller to satisfy them: the scheduler
    allocates, reserves and waits (as for a driver author's own controller under test)."""
    profile = binding_profile(tmp_path, plugins=[], device_status=False)
    async with emulated_plane(tmp_path / "state", nodes=1, components=WITH_SCHEDULING,
                              profile=profile) as plane:
        c = admin(plane)
        await c.create(CLAIMS, claim("bc", [gpu_request()]))
        p = await run(plane, c, demo_pod("p", [{"name": "gpu", "resourceClaimName": "bc"}]))
        assert "nodeName" not in p["spec"]
        stored = await c.get(CLAIMS, "bc", "default")
        assert stored["status"]["allocation"]["devices"]["results"][0]["bindingConditions"]
        assert "devices" not in stored["status"]
