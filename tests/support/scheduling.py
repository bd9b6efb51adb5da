"""What the scheduler's tests share: the nodes they make, and reading a pod once the control
plane has settled."""

from __future__ import annotations

from typing import Any

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.registry.kinds import RESOURCE_CLAIMS

Obj = dict[str, Any]
CLAIMS = RESOURCE_CLAIMS.resource_id
NS = "default"
DRIVER = "gpu.example.com"


def node(name: str, *, cpu: str = "4", labels: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}},
            "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


async def scheduled(plane: ControlPlane, admin: Client, name: str) -> Obj:
    await plane.settle()
    return await admin.get("pods", name, NS)


def condition(p: Obj) -> Obj | None:
    """The pod's PodScheduled condition, or None."""
    return next((c for c in (p.get("status") or {}).get("conditions") or []
                 if c["type"] == "PodScheduled"), None)


def pod(name: str, *, cpu: str | None = None, claims: list[Obj] | None = None,
        **spec: Any) -> Obj:
    container: Obj = {"name": "c", "image": "busybox"}
    if cpu:
        container["resources"] = {"requests": {"cpu": cpu}}
    if claims:
        container.setdefault("resources", {})["claims"] = [{"name": c["name"]} for c in claims]
    body: Obj = {"metadata": {"name": name, "namespace": NS},
                 "spec": {"containers": [container], **spec}}
    if claims:
        body["spec"]["resourceClaims"] = claims
    return body


def device_class(name: str = DRIVER) -> Obj:
    return {"metadata": {"name": name}, "spec": {"selectors": [
        {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}


def gpu_slice(node_name: str, devices: int = 1, **device: Any) -> Obj:
    return {"metadata": {"name": f"{node_name}-gpus"}, "spec": {
        "driver": DRIVER, "nodeName": node_name,
        "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"gpu-{i}", **device} for i in range(devices)]}}


def claim(name: str, request: str = "gpu", class_name: str = DRIVER) -> Obj:
    return {"metadata": {"name": name, "namespace": NS}, "spec": {"devices": {"requests": [
        {"name": request, "exactly": {"deviceClassName": class_name}}]}}}


async def events(admin: Client, name: str) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in await admin.list("events", NS)
            if e["involvedObject"]["name"] == name]


async def gpus(admin: Client, *nodes: str, devices: int = 1, **device: Any) -> None:
    await admin.create("deviceclasses.resource.k8s.io", device_class())
    for n in nodes:
        await admin.create("nodes", node(n))
        await admin.create("resourceslices.resource.k8s.io", gpu_slice(n, devices, **device))
