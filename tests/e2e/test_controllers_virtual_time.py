"""Controller scenarios that take emulated time, driven by kubectl v1.37: the server runs in
this process on a loopback port with a virtual clock, so an hour passes at once.

kubectl runs in a thread while the event loop serves it; the test moves the clock between
kubectl calls. Covered: a completed ResourcePoolStatusRequest is deleted after an hour, and a
NoExecute DeviceTaintRule evicts a pod (at once, or after its tolerationSeconds), with the
rule's condition updated after upstream's 10 s period.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from fakeapi import authn
from fakeapi.clock import VirtualClock
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.kubeconfig import write_kubeconfig
from fakeapi.server import create_app
from tests.conftest import SEED_GATES, Kubectl

DATA = Path(__file__).resolve().parent.parent / "data"
COMPONENTS = ("garbage-collector,resourcepoolstatusrequest-controller,"
              "device-taint-eviction-controller")
GATES = {item.split("=")[0]: item.split("=")[1] == "true" for item in SEED_GATES.split(",")}


class Session:
    """kubectl against the in-process server, and the clock behind it."""

    def __init__(self, kubectl: Kubectl, plane: ControlPlane, clock: VirtualClock) -> None:
        self.kubectl = kubectl
        self.plane = plane
        self.clock = clock

    async def __call__(self, *args: str, input: str | None = None) -> str:
        """Run kubectl (in a thread: the loop keeps serving); its stdout."""
        return await asyncio.to_thread(self.kubectl, *args, input=input)

    async def fails(self, *args: str) -> str:
        """Run kubectl expecting an error; its stderr."""
        res = await asyncio.to_thread(self.kubectl.run, *args, check=False)
        assert res.returncode != 0, res.stdout
        return res.stderr

    async def json(self, *args: str) -> Any:
        return json.loads(await self("get", *args, "-o", "json"))


@pytest.fixture
async def session(tmp_path: Path, kubectl_binary: str) -> AsyncIterator[Session]:
    clock = VirtualClock()
    plane = ControlPlane(ClusterConfig(feature_gates=GATES, seed=9), clock=clock,
                         components=COMPONENTS)
    app = create_app(plane.cluster, authenticator=authn.Authenticator(fallback=authn.UNSECURED),
                     checks=plane.health, metrics=plane.metrics_text)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await plane.start()
    await plane.settle()
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, server=f"http://127.0.0.1:{port}", pki=None)
    try:
        yield Session(Kubectl(kubectl_binary, kubeconfig), plane, clock)
    finally:
        await runner.cleanup()
        await plane.stop()


async def test_a_completed_request_is_deleted_after_an_hour(session: Session) -> None:
    await session("apply", "-f", str(DATA / "seeds" / "09-check-gpus-rpsr.yaml"))
    await session("wait", "--for=condition=Complete", "resourcepoolstatusrequest/check-gpus",
                  "--timeout=30s")
    await session.clock.advance(3599)
    assert "check-gpus" in await session("get", "resourcepoolstatusrequests")
    await session.clock.advance(2)
    stderr = await session.fails("get", "resourcepoolstatusrequest/check-gpus")
    assert 'resourcepoolstatusrequests.resource.k8s.io "check-gpus" not found' in stderr


async def _running_pod(session: Session, name: str, tolerations: list[Any] | None = None) -> None:
    """A pod bound to worker-1 whose claim is allocated gpu-0 and reserved for it, written as
    the scheduler would write them."""
    result: dict[str, Any] = {"request": "gpu", "driver": "gpu.example.com",
                              "pool": "worker-1", "device": "gpu-0"}
    if tolerations:
        result["tolerations"] = tolerations
    await session("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": f"{name}-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [
             {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"nodeName": "worker-1",
                  "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]}}]))
    uid = (await session.json("pod", name))["metadata"]["uid"]
    await session("patch", "resourceclaim", f"{name}-gpu", "--type=merge", "-p", json.dumps(
        {"metadata": {"finalizers": ["resource.kubernetes.io/delete-protection"]}}))
    await session("patch", "resourceclaim", f"{name}-gpu", "--subresource=status",
                  "--type=merge", "-p", json.dumps({"status": {
                      "allocation": {"devices": {"results": [result]}},
                      "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}}))


SLICE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": "worker-1-gpus"},
         "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
                  "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}}
RULE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
        "metadata": {"name": "gpu-0-broken"},
        "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "worker-1",
                                    "device": "gpu-0"},
                 "taint": {"key": "gpu.example.com/unhealthy", "value": "ecc",
                           "effect": "NoExecute"}}}


async def test_a_no_execute_device_taint_rule_evicts_a_pod(session: Session) -> None:
    await session("apply", "-f", "-", input=yaml.safe_dump(SLICE))
    await _running_pod(session, "victim")
    await session("apply", "-f", "-", input=yaml.safe_dump(RULE))
    await session("wait", "--for=delete", "pod/victim", "--timeout=30s")
    events = await session.json("events", "--field-selector", "involvedObject.name=victim")
    assert [(e["reason"], e["message"]) for e in events["items"]] == [
        ("DeviceTaintManagerEviction", "Marking for deletion")]
    await session.clock.advance(10)  # upstream's status period
    await session("wait", "--for=condition=EvictionInProgress=false",
                  "devicetaintrule/gpu-0-broken", "--timeout=30s")
    [condition] = (await session.json("devicetaintrule", "gpu-0-broken"))["status"]["conditions"]
    assert (condition["reason"], condition["message"]) == (
        "Completed", "1 pod evicted since starting the controller.")


async def test_toleration_seconds_delay_the_eviction(session: Session) -> None:
    await session("apply", "-f", "-", input=yaml.safe_dump(SLICE))
    await _running_pod(session, "patient", tolerations=[{
        "key": "gpu.example.com/unhealthy", "operator": "Exists", "effect": "NoExecute",
        "tolerationSeconds": 60}])
    await session("apply", "-f", "-", input=yaml.safe_dump(RULE))
    await session("wait", "--for=condition=EvictionInProgress=true",
                  "devicetaintrule/gpu-0-broken", "--timeout=30s")
    message = await session("get", "devicetaintrule", "gpu-0-broken", "-o",
                            "jsonpath={.status.conditions[0].message}")
    assert message == "1 pod needs to be evicted in 1 namespace."
    await session.clock.advance(59)
    assert (await session.json("pod", "patient"))["metadata"]["name"] == "patient"
    await session.clock.advance(1)
    await session("wait", "--for=delete", "pod/patient", "--timeout=30s")
