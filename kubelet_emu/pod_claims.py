"""A pod's ResourceClaims as the kubelet's DRA manager sees them (pure: no I/O).

Which claims a pod has (its own, from templates, and the special claim of its DRA-backed
extended resources), whether each is allocated and reserved for it (admission), and, once
prepared, which devices and CDI devices each container gets.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from kubelet_emu.plugin import Claim, PreparedDevice

Obj = dict[str, Any]

EXTENDED_CLAIM = ""
"""The pod claim name the kubelet gives the special claim of a pod's DRA-backed extended
resources (pod claim names are DNS labels, never empty)."""


class NotReady(Exception):
    """The pod can't start yet; the message says why (it shows in an event and the log)."""


@dataclasses.dataclass(kw_only=True)
class PreparedClaim:
    """One of the pod's claims on the node, resolved and prepared."""

    pod_claim: str
    """The pod's name for it (spec.resourceClaims[].name)."""
    claim: Claim
    devices: dict[str, tuple[PreparedDevice, ...]] = dataclasses.field(default_factory=dict)
    """Prepared devices by driver."""


def request_mappings(pod: Obj) -> tuple[Obj, ...]:
    """`status.extendedResourceClaimStatus.requestMappings`: which request of the special
    claim serves which container's extended resource."""
    status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    return tuple(m for m in status.get("requestMappings") or () if isinstance(m, dict))


def claim_refs(container: Obj, mappings: Sequence[Obj]) -> list[tuple[str, str]]:
    """(pod claim, request or "") per claim a container uses (`resources.claims`), then the
    special claim's requests mapped to it, as upstream's DRA manager resolves the claims of
    a container with extended resources."""
    refs = [(str(r.get("name") or ""), str(r.get("request") or ""))
            for r in (container.get("resources") or {}).get("claims") or []]
    refs += [(EXTENDED_CLAIM, str(m.get("requestName") or ""))
             for m in mappings if m.get("containerName") == container.get("name")]
    return refs


def claim_names(pod: Obj) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name) per pod claim; the name is None for a template
    claim whose ResourceClaim doesn't exist yet. Claims the status says aren't needed
    (a status entry without resourceClaimName) are left out. The special claim of the
    pod's extended resources (`status.extendedResourceClaimStatus`, written by the scheduler
    before it binds) comes last, as EXTENDED_CLAIM."""
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get(
        "resourceClaimStatuses") or []}
    out: list[tuple[str, str | None]] = []
    for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
        if rc.get("resourceClaimName"):
            out.append((rc["name"], rc["resourceClaimName"]))
        elif rc.get("resourceClaimTemplateName"):
            status = statuses.get(rc["name"])
            if status is None:
                out.append((rc["name"], None))
            elif status.get("resourceClaimName"):
                out.append((rc["name"], status["resourceClaimName"]))
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get(
        "resourceClaimName")
    if extended:
        out.append((EXTENDED_CLAIM, extended))
    return out


def reserved_for_pod(claim: Obj, pod: Obj) -> bool:
    """Same as upstream's kubelet check: the claim is reserved for this pod, or (workload
    claims) for the pod's PodGroup."""
    meta = pod["metadata"]
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if ref.get("resource") == "pods" and ref.get("uid") == meta["uid"]:
            return True
        if group and ref.get("resource") == "podgroups" and ref.get("name") == group:
            return True
    return False


def check_claims(pod: Obj, lookup: Callable[[str, str], Obj | None]) -> list[tuple[str, Obj]]:
    """The pod's claims (`lookup(name, namespace)` finds each), each allocated and reserved
    for it; NotReady says what is missing."""
    ns = pod["metadata"]["namespace"]
    out = []
    for pod_claim, name in claim_names(pod):
        if name is None:
            raise NotReady(f"waiting for the ResourceClaim of pod claim {pod_claim} to be "
                           "created")
        claim = lookup(name, ns)
        if claim is None:
            raise NotReady(f'failed to fetch ResourceClaim {name} referenced by pod {ns}/'
                           f'{pod["metadata"]["name"]}: resourceclaim.resource.k8s.io '
                           f'"{name}" not found')
        if not (claim.get("status") or {}).get("allocation"):
            raise NotReady(f"claim {ns}/{name} is not allocated")
        if not reserved_for_pod(claim, pod):
            raise NotReady(f"pod {pod['metadata']['name']} ({pod['metadata']['uid']}) is not "
                           f"allowed to use ResourceClaim {ns}/{name}")
        out.append((pod_claim, claim))
    return out


def claims_by_driver(claims: Sequence[PreparedClaim]) -> dict[str, list[Claim]]:
    """The prepared claims each driver has devices in (for its NRI hook)."""
    out: dict[str, list[Claim]] = {}
    for c in claims:
        for driver in c.devices:
            out.setdefault(driver, []).append(c.claim)
    return out


def devices_for(claim: PreparedClaim, request: str) -> list[tuple[str, PreparedDevice]]:
    """(driver, device) of a claim's prepared devices, or of those of one request
    (subrequests included) when `request` is given."""
    return [(driver, d) for driver, devices in claim.devices.items() for d in devices
            if not request or any(r == request or r.startswith(request + "/")
                                  for r in d.request_names)]


def container_cdi_devices(container: Obj, claims: Sequence[PreparedClaim],
                          mappings: Sequence[Obj] = ()) -> tuple[str, ...]:
    """The CDI devices of a container's claims (all of a claim's devices, or those of the
    request it names, subrequests included) and of the special claim's requests `mappings`
    give it, as the kubelet's DRA manager hands them over."""
    by_name = {c.pod_claim: c for c in claims}
    out: list[str] = []
    for name, request in claim_refs(container, mappings):
        claim = by_name.get(name)
        if claim is None:
            continue
        for _, d in devices_for(claim, request):
            out += d.cdi_device_ids
    return tuple(dict.fromkeys(out))


def used_devices(claims: Sequence[PreparedClaim]) -> set[tuple[str, str, str]]:
    """(driver, pool, device) of every prepared device of these claims."""
    return {(driver, d.pool_name, d.device_name) for c in claims
            for driver, devices in c.devices.items() for d in devices}
