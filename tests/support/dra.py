"""DRA objects for the controller tests, and the writes a scheduler would make.

The controller tests run a controller without the scheduler: they allocate and reserve
claims themselves and bind pods, as an admin client writing through the registry exactly
what the scheduler writes, in its order (finalizer, then status; then the binding).
"""

from __future__ import annotations

from typing import Any

from fakeapi.client import Client
from fakeapi.machinery.errors import ApiError

Obj = dict[str, Any]
CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"
POD_GROUPS = "podgroups.scheduling.k8s.io"
RULES = "devicetaintrules.resource.k8s.io"
RPSRS = "resourcepoolstatusrequests.resource.k8s.io"
PROTECTION = "resource.kubernetes.io/delete-protection"
WORKLOAD_GATES = {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}
DRIVER = "gpu.example.com"


def claim_spec(request: str = "gpu", device_class: str = DRIVER) -> Obj:
    """A claim spec for one device of a class."""
    return {"devices": {"requests": [{"name": request,
                                      "exactly": {"deviceClassName": device_class}}]}}


def template(name: str, namespace: str = "default", **labels: str) -> Obj:
    """A ResourceClaimTemplate for one GPU."""
    meta: Obj = {"labels": labels} if labels else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"metadata": meta, "spec": claim_spec()}}


def claim(name: str, namespace: str = "default") -> Obj:
    """A ResourceClaim for one GPU."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": claim_spec()}


def pod(name: str, namespace: str = "default", *, claims: list[Obj] | None = None,
        group: str = "", node: str = "") -> Obj:
    """A Pod with these `spec.resourceClaims`, in a PodGroup and bound to a node if given."""
    spec: Obj = {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}]}
    if claims:
        spec["resourceClaims"] = claims
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


def pod_group(name: str, namespace: str = "default", *, claims: list[Obj]) -> Obj:
    """A PodGroup with these `spec.resourceClaims`."""
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"schedulingPolicy": {"basic": {}}, "resourceClaims": claims}}


def extended_class(resource_name: str, name: str = DRIVER) -> Obj:
    """A DeviceClass of the driver's devices that backs an extended resource (its pods ask
    for `resource_name` in their containers' requests, and the scheduler makes the claim)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}],
                     "extendedResourceName": resource_name}}


def node_slice(node: str, devices: int) -> Obj:
    """The ResourceSlice of a node with `devices` devices of the driver, gpu-0 on."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": node,
                     "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(devices)]}}


def requesting(body: Obj, resource_name: str, count: int) -> Obj:
    """A Pod body whose first container asks for `count` of an extended resource."""
    container = body["spec"]["containers"][0]
    amount = {resource_name: str(count)}
    container["resources"] = {"requests": amount, "limits": dict(amount)}
    return body


def from_template(name: str, template_name: str) -> Obj:
    """A `resourceClaims` entry using a template."""
    return {"name": name, "resourceClaimTemplateName": template_name}


def by_name(name: str, claim_name: str) -> Obj:
    """A `resourceClaims` entry naming a claim."""
    return {"name": name, "resourceClaimName": claim_name}


def result(device: str = "gpu-0", pool: str = "worker-1", request: str = "gpu",
           driver: str = DRIVER, **extra: Any) -> Obj:
    """One allocation result."""
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


async def allocate(client: Client, name: str, namespace: str = "default", *,
                   results: list[Obj] | None = None, reserved_for: list[Obj] | None = None,
                   ) -> Obj:
    """Allocate a claim as the scheduler does: the delete-protection finalizer first, then
    `status.allocation` (and `reservedFor` when given)."""
    current = await client.get(CLAIMS, name, namespace)
    finalizers = current["metadata"].get("finalizers") or []
    if PROTECTION not in finalizers:
        current["metadata"]["finalizers"] = [*finalizers, PROTECTION]
        current = await client.update(CLAIMS, current)
    status: Obj = {"allocation": {"devices": {"results": results or [result()]}}}
    if reserved_for:
        status["reservedFor"] = reserved_for
    current["status"] = status
    return await client.update(CLAIMS, current, subresource="status")


async def bind(client: Client, name: str, node: str, namespace: str = "default") -> Obj:
    """Bind a pod to a node as the scheduler does last: POST its `pods/binding`."""
    return await client.create_subresource("pods", name, "binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}}, namespace=namespace)


def consumer(obj: Obj) -> Obj:
    """The reservedFor entry of a Pod or PodGroup object."""
    meta = obj["metadata"]
    if obj.get("kind") == "PodGroup":
        return {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": meta["name"],
                "uid": meta["uid"]}
    return {"resource": "pods", "name": meta["name"], "uid": meta["uid"]}


async def get_or_none(client: Client, resource: str, name: str,
                      namespace: str = "default") -> Obj | None:
    """The object, or None when it does not exist."""
    try:
        return await client.get(resource, name, namespace)
    except ApiError as e:
        assert e.code == 404, e
        return None


async def claims_of(client: Client, namespace: str = "default") -> dict[str, Obj]:
    """Every claim of a namespace by name."""
    return {c["metadata"]["name"]: c for c in await client.list(CLAIMS, namespace)}


def statuses(obj: Obj) -> dict[str, str | None]:
    """`status.resourceClaimStatuses` of a Pod or PodGroup as {name: claim name}."""
    return {s["name"]: s.get("resourceClaimName")
            for s in (obj.get("status") or {}).get("resourceClaimStatuses") or []}


def reserved(claim_obj: Obj) -> list[tuple[str, str]]:
    """(resource, name) of each reservedFor entry."""
    return [(r["resource"], r["name"])
            for r in (claim_obj.get("status") or {}).get("reservedFor") or []]


async def events_about(client: Client, name: str, namespace: str = "default") -> list[Obj]:
    """Events whose involvedObject has this name."""
    return [e for e in await client.list("events", namespace)
            if e["involvedObject"]["name"] == name]
