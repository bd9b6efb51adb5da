"""Controller scenarios that take emulated time, driven by kubectl v1.37: the server runs in
this process on a loopback port with a virtual clock, so an hour passes at once.

kubectl runs in a thread while the event loop serves it; the test moves the clock between
kubectl calls. Covered: a completed ResourcePoolStatusRequest is deleted after an hour, and a
NoExecute DeviceTaintRule evicts a pod (at once, or after its claim's tolerationSeconds),
with the rule's condition updated after upstream's 10 s period. The evictions run on the
whole control plane with one emulated node: the scheduler allocates the pod's device and
binds it, the node's kubelet runs it and finishes the deletion the controller starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_emu.settings import EmulatorSettings
from tests.support.inprocess import Session, serving

DATA = Path(__file__).resolve().parent.parent / "data"
COMPONENTS = ("garbage-collector,resourcepoolstatusrequest-controller,"
              "device-taint-eviction-controller")


@pytest.fixture
async def session(tmp_path: Path, kubectl_binary: str) -> AsyncIterator[Session]:
    async with serving(tmp_path, kubectl_binary, COMPONENTS) as s:
        yield s


@pytest.fixture
async def cluster(tmp_path: Path, kubectl_binary: str) -> AsyncIterator[Session]:
    """The whole control plane with one emulated node (worker-0, the default profile)."""
    async with serving(tmp_path, kubectl_binary, "*",
                       EmulatorSettings(nodes=1, state_dir=tmp_path / "state")) as s:
        await s("wait", "--for=condition=Ready", "node/worker-0", "--timeout=30s")
        yield s


async def test_a_completed_request_is_deleted_after_an_hour(session: Session) -> None:
    await session("apply", "-f", str(DATA / "seeds" / "09-check-gpus-rpsr.yaml"))
    await session("wait", "--for=condition=Complete", "resourcepoolstatusrequest/check-gpus",
                  "--timeout=30s")
    await session.clock.advance(3599)
    assert "check-gpus" in await session("get", "resourcepoolstatusrequests")
    await session.clock.advance(2)
    stderr = await session.fails("get", "resourcepoolstatusrequest/check-gpus")
    assert 'resourcepoolstatusrequests.resource.k8s.io "check-gpus" not found' in stderr


async def _running_pod(session: Session, name: str,
                       tolerations: list[Any] | None = None) -> dict[str, Any]:
    """A pod whose claim asks for a GPU (tolerating these taints), scheduled and running;
    the device the scheduler allocated it."""
    exactly: dict[str, Any] = {"deviceClassName": "gpu.example.com"}
    if tolerations:
        exactly["tolerations"] = tolerations
    await session("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": f"{name}-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]}}]))
    await session("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=30s")
    [result] = (await session.json("resourceclaim", f"{name}-gpu"))["status"]["allocation"][
        "devices"]["results"]
    assert result.get("tolerations") == tolerations  # the scheduler copies the request's
    return dict(result)


def rule_for(device: dict[str, Any]) -> dict[str, Any]:
    """A NoExecute DeviceTaintRule for one allocated device."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
            "metadata": {"name": "gpu-broken"},
            "spec": {"deviceSelector": {k: device[k] for k in ("driver", "pool", "device")},
                     "taint": {"key": "gpu.example.com/unhealthy", "value": "ecc",
                               "effect": "NoExecute"}}}


async def test_a_no_execute_device_taint_rule_evicts_a_pod(cluster: Session) -> None:
    device = await _running_pod(cluster, "victim")
    await cluster("apply", "-f", "-", input=yaml.safe_dump(rule_for(device)))
    await cluster("wait", "--for=delete", "pod/victim", "--timeout=30s")  # the kubelet confirmed
    events = await cluster.json("events", "--field-selector", "involvedObject.name=victim")
    # (Events of one instant from different components list in no set order)
    assert sorted((e["source"]["component"], e["reason"], e["message"])
                  for e in events["items"]) == sorted([
        ("default-scheduler", "Scheduled", "Successfully assigned default/victim to worker-0"),
        ("kubelet", "Pulling", 'Pulling image "registry.k8s.io/pause:3.10"'),
        ("kubelet", "Pulled", 'Successfully pulled image "registry.k8s.io/pause:3.10" in 0s '
                              '(0s including waiting). Image size: 0 bytes.'),
        ("kubelet", "Created", "Container created"),
        ("kubelet", "Started", "Container started"),
        ("device-taint-eviction-controller", "DeviceTaintManagerEviction",
         "Marking for deletion"),
        ("kubelet", "Killing", "Stopping container main")])
    await cluster.clock.advance(10)  # upstream's status period
    await cluster("wait", "--for=condition=EvictionInProgress=false",
                  "devicetaintrule/gpu-broken", "--timeout=30s")
    [condition] = (await cluster.json("devicetaintrule", "gpu-broken"))["status"]["conditions"]
    assert (condition["reason"], condition["message"]) == (
        "Completed", "1 pod evicted since starting the controller.")
    # the claim is free again: the claim controller deallocated it once the pod was gone
    assert (await cluster.json("resourceclaim", "victim-gpu"))["status"] == {}


async def test_toleration_seconds_delay_the_eviction(cluster: Session) -> None:
    device = await _running_pod(cluster, "patient", tolerations=[{
        "key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute",
        "tolerationSeconds": 60}])
    await cluster("apply", "-f", "-", input=yaml.safe_dump(rule_for(device)))
    await cluster("wait", "--for=condition=EvictionInProgress=true",
                  "devicetaintrule/gpu-broken", "--timeout=30s")
    message = await cluster("get", "devicetaintrule", "gpu-broken", "-o",
                            "jsonpath={.status.conditions[0].message}")
    assert message == "1 pod needs to be evicted in 1 namespace."
    await cluster.clock.advance(59)
    patient = await cluster.json("pod", "patient")
    assert "deletionTimestamp" not in patient["metadata"]
    assert patient["status"]["phase"] == "Running"
    await cluster.clock.advance(1)
    await cluster("wait", "--for=delete", "pod/patient", "--timeout=30s")
