"""A pod's ResourceClaims as the scheduler sees them (pure): which claims, reserved for whom.

The DynamicResources plugin's PreEnqueue/PreFilter checks on top of `fakeapi.kube.resourceclaim`
(upstream's resourceclaim helpers, shared with the claim controllers), plus
DRAWorkloadResourceClaims: a pod claim that matches one of its PodGroup's claims (same name,
resourceClaimName and resourceClaimTemplateName) is reserved for the PodGroup instead.
`SpecialClaim` is the claim the scheduler makes for a pod's DRA-backed extended resources.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import fakeapi.kube.resourceclaim as rc

Obj = dict[str, Any]
FINALIZER = rc.DELETE_PROTECTION


class ClaimsNotReady(Exception):
    """The pod can't be scheduled yet: a claim is missing, being deleted, in use, in flight,
    or names a class that doesn't exist (upstream PreFilter's Unschedulable message)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
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
        return rc.reserved_for(self.claim, self.consumer.get("uid", ""))


@dataclasses.dataclass(kw_only=True)
class SpecialClaim:
    """The special claim of one pod (DRAExtendedResource): its body, the request mappings for
    the pod's status, and its allocation once the node is chosen."""

    claim: PodClaim
    mappings: list[Obj]
    allocation: Obj | None = None


def pod_reference(pod: Obj) -> Obj:
    """The `reservedFor` entry of a pod."""
    return rc.consumer_ref(pod, group=False)


def pod_claims(pod: Obj, *, get_claim: Callable[[str, str], Obj | None],
               group: Obj | None = None) -> list[PodClaim]:
    """Every claim of the pod, in spec order, with its consumer (upstream's
    foreachPodResourceClaim). `group` is the pod's PodGroup when claims may be reserved for it
    (DRAWorkloadResourceClaims on). Raises ClaimsNotReady with upstream's message."""
    meta = pod["metadata"]
    namespace = meta.get("namespace", "")
    found: list[PodClaim] = []
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        try:
            name, check_owner = rc.claim_name(pod, entry)
        except (rc.NotCreatedYet, ValueError) as e:
            raise ClaimsNotReady(str(e)) from None
        if name is None:
            continue
        claim = get_claim(namespace, name)
        if claim is None:
            raise ClaimsNotReady(f'resourceclaim.resource.k8s.io "{name}" not found')
        if claim["metadata"].get("deletionTimestamp"):
            raise ClaimsNotReady(f'resourceclaim "{name}" is being deleted')
        for_group = group is not None and rc.matching_group_claim(entry, group) is not None
        owner = group if for_group and group is not None else pod
        if check_owner and not rc.is_controlled_by(claim, owner):
            raise ClaimsNotReady(f"ResourceClaim {namespace}/{name} was not created for pod "
                                 f"{namespace}/{meta['name']} (pod is not owner)")
        found.append(PodClaim(pod_claim_name=entry.get("name", ""), claim=claim,
                              consumer=rc.consumer_ref(owner, group=for_group)))
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get(
        "resourceClaimName")
    if extended:  # the special claim an earlier attempt created (DRAExtendedResource)
        claim = get_claim(namespace, extended)
        if claim is not None and not claim["metadata"].get("deletionTimestamp"):
            found.append(PodClaim(pod_claim_name="", claim=claim,
                                  consumer=pod_reference(pod)))
    return found


def check_reservable(claims: list[PodClaim]) -> None:
    """PreFilter's 'resourceclaim in use': an allocated claim with a full `reservedFor` that
    doesn't already name the consumer."""
    for c in claims:
        if c.allocated and not c.reserved and not rc.can_be_reserved(c.claim):
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
    meta = claim["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"
