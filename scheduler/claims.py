"""A pod's ResourceClaims as the scheduler sees them (pure): which claims, reserved for whom.

Mirrors upstream's `resourceclaim` helpers (Name, IsForPod, IsReservedForPod, CanBeReserved)
and the DynamicResources plugin's PreFilter checks, plus DRAWorkloadResourceClaims: a pod
claim that matches one of its PodGroup's claims (same name, resourceClaimName and
resourceClaimTemplateName) is reserved for the PodGroup instead of the pod.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

Obj = dict[str, Any]
RESERVED_FOR_MAX = 256  # same as upstream ResourceClaimReservedForMaxSize
FINALIZER = "resource.kubernetes.io/delete-protection"
SCHEDULING_GROUP = "scheduling.k8s.io"
PODGROUPS = "podgroups"


class ClaimsNotReady(Exception):
    """The pod can't be scheduled yet: a claim is missing, being deleted, in use, in flight,
    or names a class that doesn't exist (upstream PreFilter's Unschedulable message)."""


@dataclasses.dataclass(frozen=True)
class PodClaim:
    """One claim the pod uses, and the consumer its reservation names."""

    pod_claim_name: str
    claim: Obj
    consumer: Obj
    """The `reservedFor` entry: the pod, or its PodGroup."""

    @property
    def uid(self) -> str:
        """The claim's uid."""
        return str(self.claim["metadata"].get("uid", ""))

    @property
    def allocated(self) -> bool:
        """Whether the claim has an allocation."""
        return bool((self.claim.get("status") or {}).get("allocation"))

    @property
    def reserved(self) -> bool:
        """Whether the consumer is already in `reservedFor`."""
        return is_reserved_for(self.claim, self.consumer)


def pod_reference(pod: Obj) -> Obj:
    """The `reservedFor` entry of a pod."""
    meta = pod["metadata"]
    return {"resource": "pods", "name": meta["name"], "uid": meta.get("uid", "")}


def podgroup_reference(group: Obj) -> Obj:
    """The `reservedFor` entry of a PodGroup."""
    meta = group["metadata"]
    return {"apiGroup": SCHEDULING_GROUP, "resource": PODGROUPS, "name": meta["name"],
            "uid": meta.get("uid", "")}


def is_reserved_for(claim: Obj, consumer: Obj) -> bool:
    """Whether `consumer` (matched by uid) is in the claim's `reservedFor`."""
    uid = consumer.get("uid")
    return any(r.get("uid") == uid and r.get("resource") == consumer.get("resource")
               for r in (claim.get("status") or {}).get("reservedFor") or ())


def can_be_reserved(claim: Obj) -> bool:
    """Same as upstream CanBeReserved: room for one more `reservedFor` entry."""
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX


def _controlled_by(claim: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid
               for r in claim["metadata"].get("ownerReferences") or ())


def _key(name: str, namespace: str) -> str:
    return f"{namespace}/{name}"


def _group_claim(entry: Obj, group: Obj | None) -> bool:
    """Whether the pod's claim entry matches one of its PodGroup's claims exactly."""
    if group is None:
        return False
    want = (entry.get("name"), entry.get("resourceClaimName"),
            entry.get("resourceClaimTemplateName"))
    return any((c.get("name"), c.get("resourceClaimName"), c.get("resourceClaimTemplateName"))
               == want for c in (group.get("spec") or {}).get("resourceClaims") or ())


def claim_name(pod: Obj, entry: Obj, statuses: Mapping[str, str | None]) -> tuple[str | None, bool]:
    """Same as upstream resourceclaim.Name: the claim's name (None: validly no claim) and
    whether its owner must be checked; ClaimsNotReady while a template's claim isn't made."""
    meta = pod["metadata"]
    if entry.get("resourceClaimName"):
        return entry["resourceClaimName"], False
    if entry.get("resourceClaimTemplateName"):
        if entry.get("name") in statuses:
            return statuses[entry["name"]], True
        raise ClaimsNotReady(f'pod "{meta.get("namespace", "")}/{meta["name"]}": '
                             "ResourceClaim not created yet")
    raise ClaimsNotReady(f'pod "{meta.get("namespace", "")}/{meta["name"]}", spec.resourceClaim '
                         f'"{entry.get("name", "")}": none of the supported fields are set')


def pod_claims(pod: Obj, *, get_claim: Callable[[str, str], Obj | None],
               group: Obj | None = None) -> list[PodClaim]:
    """Every claim of the pod, in spec order, with its consumer (upstream's
    foreachPodResourceClaim). `group` is the pod's PodGroup when claims may be reserved for it
    (DRAWorkloadResourceClaims on). Raises ClaimsNotReady with upstream's message."""
    meta = pod["metadata"]
    namespace = meta.get("namespace", "")
    statuses = {s.get("name"): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()}
    found: list[PodClaim] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        name, check_owner = claim_name(pod, entry, statuses)
        if name is None:
            continue
        claim = get_claim(namespace, name)
        if claim is None:
            raise ClaimsNotReady(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim["metadata"].get("deletionTimestamp"):
            raise ClaimsNotReady(f'resourceclaim "{name}" is being deleted')
        for_group = _group_claim(entry, group)
        if check_owner and not (_controlled_by(claim, group) if for_group and group
                                else _controlled_by(claim, pod)):
            raise ClaimsNotReady(f"ResourceClaim {namespace}/{name} was not created for pod "
                                 f"{namespace}/{meta['name']} (pod is not owner)")
        consumer = podgroup_reference(group) if for_group and group else pod_reference(pod)
        found.append(PodClaim(pod_claim_name=entry.get("name", ""), claim=claim,
                              consumer=consumer))
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get(
        "resourceClaimName")
    if extended:  # the special claim an earlier attempt created (DRAExtendedResource)
        claim = get_claim(namespace, extended)
        if claim is not None and not claim["metadata"].get("deletionTimestamp"):
            found.append(PodClaim(pod_claim_name="", claim=claim, consumer=pod_reference(pod)))
    return found


def check_reservable(claims: list[PodClaim]) -> None:
    """PreFilter's 'resourceclaim in use': an allocated claim with a full `reservedFor` that
    doesn't already name the consumer."""
    for c in claims:
        if c.allocated and not c.reserved and not can_be_reserved(c.claim):
            raise ClaimsNotReady("resourceclaim in use")


def requested_classes(claim: Obj) -> list[tuple[str, str]]:
    """(request name, class name) of every request and subrequest (`req/sub`), in order."""
    out: list[tuple[str, str]] = []
    for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        name = req.get("name", "")
        if req.get("firstAvailable"):
            for sub in req["firstAvailable"]:
                out.append((f"{name}/{sub.get('name', '')}", sub.get("deviceClassName", "")))
        else:
            out.append((name, (req.get("exactly") or {}).get("deviceClassName", "")))
    return out


def with_reservation(claim: Obj, consumer: Obj, allocation: Obj | None) -> Obj:
    """A copy of `claim` whose status has `allocation` (when given) and `consumer` reserved:
    the body of PreBind's status update."""
    status = dict(claim.get("status") or {})
    if allocation is not None:
        status["allocation"] = allocation
    reserved = list(status.get("reservedFor") or [])
    if not any(r.get("uid") == consumer.get("uid") for r in reserved):
        reserved.append(consumer)
    status["reservedFor"] = reserved
    return {**claim, "status": status}


def with_finalizer(claim: Obj) -> Obj | None:
    """A copy of `claim` with the delete-protection finalizer, or None when it has it."""
    finalizers = list(claim["metadata"].get("finalizers") or [])
    if FINALIZER in finalizers:
        return None
    return {**claim, "metadata": {**claim["metadata"], "finalizers": [*finalizers, FINALIZER]}}


def claim_key(claim: Obj) -> str:
    """`namespace/name` of a claim."""
    return _key(claim["metadata"]["name"], claim["metadata"].get("namespace", ""))
