"""The scheduler's and the claim controller's side, played through the API by an admin
until those components exist: create a pod's claim from its template (with the claim
controller's naming, annotation and owner), write an allocation of named devices and the
reservation for the pod. Tests bind pods by creating them with spec.nodeName, or through
pods/binding. Each write is one the real component makes, with the same fields; the pure
builders here are shared by the in-process helpers and the kubectl-driven e2e tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fakeapi.client import Client

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
Obj = dict[str, Any]
Pick = tuple[str, str, str]
"""(request, driver, device) of one allocation result; the pool is the node."""


def claim_for_template(pod: Obj, pod_claim: str, template: Obj) -> Obj:
    """The claim the resource claim controller makes for one template claim of a pod:
    `<pod>-<claim>-<suffix>`, annotated with the pod's claim name, owned by the pod."""
    meta = pod["metadata"]
    tmeta = template["spec"].get("metadata") or {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
        "generateName": f"{meta['name']}-{pod_claim}-", "namespace": meta["namespace"],
        "annotations": {POD_CLAIM_ANNOTATION: pod_claim, **(tmeta.get("annotations") or {})},
        "labels": tmeta.get("labels") or {},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                             "uid": meta["uid"], "controller": True,
                             "blockOwnerDeletion": True}]},
        "spec": template["spec"]["spec"]}


def claim_statuses(pod: Obj, pod_claim: str, claim_name: str) -> list[Obj]:
    """The pod's status.resourceClaimStatuses with `pod_claim` → `claim_name` recorded."""
    statuses = [s for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
                if s.get("name") != pod_claim]
    return statuses + [{"name": pod_claim, "resourceClaimName": claim_name}]


def allocation(claim: Obj, node: str, picks: Sequence[Pick], class_of: Callable[[str], Obj], *,
               consumed: dict[str, dict[str, str]] | None = None,
               share_ids: dict[str, str] | None = None, admin_access: bool = False) -> Obj:
    """status.allocation as the scheduler writes it: the picked devices (consumed capacity
    and share ids keyed by device), the class configs of each satisfied request (by its full
    name) then the claim's configs, and the node selector."""
    requests = {r["name"]: r for r in claim["spec"]["devices"]["requests"]}
    configs: list[Obj] = []
    for request in dict.fromkeys(p[0] for p in picks):
        top, _, sub = request.partition("/")
        req = requests[top]
        name = (req["exactly"]["deviceClassName"] if not sub else next(
            s["deviceClassName"] for s in req["firstAvailable"] if s["name"] == sub))
        for cfg in class_of(name)["spec"].get("config") or []:
            configs.append({"source": "FromClass", "requests": [request], **cfg})
    for cfg in claim["spec"]["devices"].get("config") or []:
        configs.append({"source": "FromClaim", **cfg})
    results = []
    for request, driver, device in picks:
        result: Obj = {"request": request, "driver": driver, "pool": node, "device": device}
        if admin_access:
            result["adminAccess"] = True
        if consumed and device in consumed:
            result["consumedCapacity"] = consumed[device]
        if share_ids and device in share_ids:
            result["shareID"] = share_ids[device]
        results.append(result)
    devices: Obj = {"results": results}
    if configs:
        devices["config"] = configs
    return {"devices": devices, "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}


def pod_reference(pod: Obj) -> Obj:
    """A status.reservedFor entry for the pod."""
    return {"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}


# ----- in-process helpers (an admin Client) ---------------------------------------------------


async def claim_from_template(client: Client, pod: Obj, pod_claim: str) -> Obj:
    """Create the claim of one template claim of a pod and record it in the pod's status."""
    meta = pod["metadata"]
    ref = next(c for c in pod["spec"]["resourceClaims"] if c["name"] == pod_claim)
    template = await client.get(TEMPLATES, ref["resourceClaimTemplateName"], meta["namespace"])
    claim = await client.create(CLAIMS, claim_for_template(pod, pod_claim, template))
    current = await client.get("pods", meta["name"], meta["namespace"])
    await client.patch("pods", meta["name"], {"status": {"resourceClaimStatuses": claim_statuses(
        current, pod_claim, claim["metadata"]["name"])}}, namespace=meta["namespace"],
        subresource="status")
    return claim


async def allocate(client: Client, claim: Obj, node: str, picks: Sequence[Pick],
                   **kw: Any) -> Obj:
    """Write the claim's allocation (see `allocation`)."""
    claim = await client.get(CLAIMS, claim["metadata"]["name"], claim["metadata"]["namespace"])
    classes = {name: await client.get(CLASSES, name) for name in _class_names(claim)}
    claim.setdefault("status", {})["allocation"] = allocation(claim, node, picks,
                                                              classes.__getitem__, **kw)
    return await client.update(CLAIMS, claim, subresource="status")


def _class_names(claim: Obj) -> list[str]:
    names = []
    for req in claim["spec"]["devices"]["requests"]:
        if req.get("exactly"):
            names.append(req["exactly"]["deviceClassName"])
        names += [s["deviceClassName"] for s in req.get("firstAvailable") or []]
    return list(dict.fromkeys(names))


async def reserve(client: Client, claim: Obj, pod: Obj) -> Obj:
    """Add the pod to the claim's status.reservedFor (the scheduler's reserve step)."""
    claim = await client.get(CLAIMS, claim["metadata"]["name"], claim["metadata"]["namespace"])
    status = claim.setdefault("status", {})
    refs = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod["metadata"]["uid"]]
    status["reservedFor"] = refs + [pod_reference(pod)]
    return await client.update(CLAIMS, claim, subresource="status")
