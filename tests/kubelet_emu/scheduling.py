"""The scheduler's and the claim controller's side, played through the API by an admin
client until those components exist: create a pod's claim from its template (with the
claim controller's naming, annotation and owner), write an allocation of named devices and
the reservation for the pod (tests bind pods by creating them with spec.nodeName). Each
write is one the real component makes, with the same fields; nothing touches the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fakeapi.client import Client

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
Obj = dict[str, Any]
Pick = tuple[str, str, str]
"""(request, driver, device) of one allocation result; the pool is the node."""


async def claim_from_template(client: Client, pod: Obj, pod_claim: str) -> Obj:
    """What the resource claim controller does for one template claim of a pod: create the
    claim `<pod>-<claim>-<suffix>` owned by the pod, and record it in the pod's
    status.resourceClaimStatuses."""
    meta = pod["metadata"]
    ref = next(c for c in pod["spec"]["resourceClaims"] if c["name"] == pod_claim)
    template = await client.get(TEMPLATES, ref["resourceClaimTemplateName"], meta["namespace"])
    claim = await client.create(CLAIMS, {
        "metadata": {"generateName": f"{meta['name']}-{pod_claim}-",
                     "namespace": meta["namespace"],
                     "annotations": {POD_CLAIM_ANNOTATION: pod_claim,
                                     **(template["spec"].get("metadata", {}).get(
                                         "annotations") or {})},
                     "labels": template["spec"].get("metadata", {}).get("labels") or {},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                          "name": meta["name"], "uid": meta["uid"],
                                          "controller": True, "blockOwnerDeletion": True}]},
        "spec": template["spec"]["spec"]})
    current = await client.get("pods", meta["name"], meta["namespace"])
    statuses = [s for s in current.get("status", {}).get("resourceClaimStatuses") or []
                if s.get("name") != pod_claim]
    statuses.append({"name": pod_claim, "resourceClaimName": claim["metadata"]["name"]})
    await client.patch("pods", meta["name"], {"status": {"resourceClaimStatuses": statuses}},
                       namespace=meta["namespace"], subresource="status")
    return claim


async def allocate(client: Client, claim: Obj, node: str, picks: Sequence[Pick], *,
                   consumed: dict[str, dict[str, str]] | None = None,
                   share_ids: dict[str, str] | None = None,
                   admin_access: bool = False) -> Obj:
    """Write the claim's allocation as the scheduler would: the picked devices (with
    consumed capacity and share ids when given, keyed by device), the class and claim
    configs of each request, the node selector; then nothing else."""
    claim = await client.get(CLAIMS, claim["metadata"]["name"], claim["metadata"]["namespace"])
    requests = {r["name"]: r for r in claim["spec"]["devices"]["requests"]}
    configs: list[Obj] = []
    for request in dict.fromkeys(p[0] for p in picks):
        # the class of the request (or subrequest) that was satisfied, by its full name
        top, _, sub = request.partition("/")
        req = requests[top]
        cls_name = (req["exactly"]["deviceClassName"] if not sub else next(
            s["deviceClassName"] for s in req["firstAvailable"] if s["name"] == sub))
        cls = await client.get(CLASSES, cls_name)
        for cfg in cls["spec"].get("config") or []:
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
    claim.setdefault("status", {})["allocation"] = {
        "devices": devices,
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}
    return await client.update(CLAIMS, claim, subresource="status")


async def reserve(client: Client, claim: Obj, pod: Obj) -> Obj:
    """Add the pod to the claim's status.reservedFor (the scheduler's reserve step)."""
    claim = await client.get(CLAIMS, claim["metadata"]["name"], claim["metadata"]["namespace"])
    status = claim.setdefault("status", {})
    refs = [r for r in status.get("reservedFor") or [] if r.get("uid") != pod["metadata"]["uid"]]
    refs.append({"resource": "pods", "name": pod["metadata"]["name"],
                 "uid": pod["metadata"]["uid"]})
    status["reservedFor"] = refs
    return await client.update(CLAIMS, claim, subresource="status")

