"""How Pods and PodGroups name their ResourceClaims, and whom a claim is for.

Pure functions over wire dicts, after k8s.io/dynamic-resource-allocation/resourceclaim
(`Name`, `IsForPod`, `IsReservedForPod`, `CanBeReserved`) and the PodGroup claims of
KEP-5729 (DRAWorkloadResourceClaims). The scheduler, the resource-claim controller and the
device-taint eviction controller share them, so they live in the core as a leaf module.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

Obj = dict[str, Any]

POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""Same as upstream: the pod (or PodGroup) claim a generated ResourceClaim was made for."""
DELETE_PROTECTION = "resource.kubernetes.io/delete-protection"
"""Same as upstream resourceapi.Finalizer: set while a claim is allocated."""
RESERVED_FOR_MAX = 256
"""Same as upstream ResourceClaimReservedForMaxSize."""
SCHEDULING_GROUP = "scheduling.k8s.io"
POD_GROUPS = "podgroups"
POD_GROUP_API_VERSION = "scheduling.k8s.io/v1beta1"
TERMINAL_PHASES = ("Succeeded", "Failed")


class NotCreatedYet(LookupError):
    """A template claim with no entry in the owner's status yet (upstream ErrClaimNotFound)."""


def claim_name(owner: Obj, owner_claim: Obj) -> tuple[str | None, bool]:
    """Same as upstream resourceclaim.Name, for a Pod or a PodGroup: the ResourceClaim an
    entry of `spec.resourceClaims` uses, and whether that claim must be owned by `owner`
    (a generated one). None when the status says no claim is needed. Raises NotCreatedYet
    when a template claim has no status entry yet, ValueError for an entry naming nothing."""
    if owner_claim.get("resourceClaimName"):
        return owner_claim["resourceClaimName"], False
    if owner_claim.get("resourceClaimTemplateName"):
        for status in (owner.get("status") or {}).get("resourceClaimStatuses") or []:
            if status.get("name") == owner_claim.get("name"):
                return status.get("resourceClaimName"), True
        meta = owner["metadata"]
        raise NotCreatedYet(f'pod "{meta.get("namespace", "")}/{meta["name"]}": '
                            "ResourceClaim not created yet")
    meta = owner["metadata"]
    raise ValueError(f'pod "{meta.get("namespace", "")}/{meta["name"]}", spec.resourceClaim '
                     f'"{owner_claim.get("name", "")}": none of the supported fields are set')


def known_claim_names(owner: Obj) -> Iterator[str]:
    """Every ResourceClaim name the owner's spec or status already names."""
    for owner_claim in (owner.get("spec") or {}).get("resourceClaims") or []:
        try:
            name, _ = claim_name(owner, owner_claim)
        except (NotCreatedYet, ValueError):
            continue
        if name:
            yield name


def extended_claim_name(pod: Obj) -> str:
    """The special claim of the pod's DRA-backed extended resources, which the scheduler
    made and recorded in `status.extendedResourceClaimStatus` (KEP-5004), or ""."""
    status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    return str(status.get("resourceClaimName") or "")


def claims_index(owner: Obj) -> list[str]:
    """Index values `namespace/claim` of the claims an owner names (the informer index
    `claim` on Pods, shared by the controllers that read it)."""
    ns = owner["metadata"].get("namespace", "")
    return [f"{ns}/{n}" for n in known_claim_names(owner)]


CLAIMS_INDEX = "podclaims:claim"
"""The name of that index."""


def controller_uid(obj: Obj, api_version: str, kind: str) -> str:
    """The uid of the controlling owner of that kind (upstream IsControlledBy), or ""."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("apiVersion") == api_version and \
                ref.get("kind") == kind:
            return str(ref.get("uid", ""))
    return ""


def controlled_by(claim: Obj, owner: Obj, api_version: str, kind: str) -> bool:
    """Whether `owner` is the claim's controlling owner (upstream IsForPod, for any kind)."""
    uid = owner["metadata"].get("uid")
    return bool(uid) and controller_uid(claim, api_version, kind) == uid


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """Same as upstream metav1.IsControlledBy: a controller reference with the owner's uid."""
    uid = owner["metadata"].get("uid")
    return bool(uid) and any(r.get("controller") and r.get("uid") == uid
                             for r in obj["metadata"].get("ownerReferences") or [])


def owner_refs(claim: Obj) -> Iterator[str]:
    """Uids of the claim's controlling owners (index values)."""
    for ref in claim["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("uid"):
            yield str(ref["uid"])


def consumer_ref(owner: Obj, *, group: bool) -> Obj:
    """The `status.reservedFor` entry of a Pod, or of a PodGroup when `group`."""
    meta = owner["metadata"]
    if group:
        return {"apiGroup": SCHEDULING_GROUP, "resource": POD_GROUPS, "name": meta["name"],
                "uid": meta["uid"]}
    return {"resource": "pods", "name": meta["name"], "uid": meta["uid"]}


def reserved_for(claim: Obj, uid: str) -> bool:
    """Same as upstream IsReservedForPod (by uid, for Pods and PodGroups)."""
    return any(r.get("uid") == uid for r in reservations(claim))


def reservations(claim: Obj) -> list[Obj]:
    """The claim's `status.reservedFor` entries."""
    return list((claim.get("status") or {}).get("reservedFor") or [])


def can_be_reserved(claim: Obj) -> bool:
    """Same as upstream CanBeReserved: fewer than 256 consumers."""
    return len(reservations(claim)) < RESERVED_FOR_MAX


def is_pod_ref(ref: Obj) -> bool:
    """A reservedFor entry of a Pod."""
    return not ref.get("apiGroup") and ref.get("resource") == "pods"


def is_pod_group_ref(ref: Obj) -> bool:
    """A reservedFor entry of a PodGroup."""
    return ref.get("apiGroup") == SCHEDULING_GROUP and ref.get("resource") == POD_GROUPS


def allocated(claim: Obj) -> bool:
    """Whether the claim has an allocation result."""
    return (claim.get("status") or {}).get("allocation") is not None


def pod_done(pod: Obj) -> bool:
    """Same as upstream isPodDone: terminal, or deleted before it was scheduled."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in TERMINAL_PHASES or bool(
        pod["metadata"].get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"))


def pod_group_name(pod: Obj) -> str:
    """`spec.schedulingGroup.podGroupName`, or ""."""
    return str(((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName") or "")


def matching_group_claim(pod_claim: Obj, group: Obj | None) -> Obj | None:
    """The PodGroup claim a Pod claim shares (KEP-5729): name, resourceClaimName and
    resourceClaimTemplateName all equal; None when the Pod claim is its own."""
    if group is None:
        return None
    for group_claim in (group.get("spec") or {}).get("resourceClaims") or []:
        if all(group_claim.get(f) == pod_claim.get(f)
               for f in ("name", "resourceClaimName", "resourceClaimTemplateName")):
            return group_claim
    return None


def template_names(owner: Obj) -> Iterable[str]:
    """The ResourceClaimTemplates the owner's spec names."""
    return [c["resourceClaimTemplateName"]
            for c in (owner.get("spec") or {}).get("resourceClaims") or []
            if c.get("resourceClaimTemplateName")]


def generate_name(owner_name: str, claim_name_: str) -> str:
    """Same as upstream: `<owner>-<claim>-`, both parts shortened in proportion when longer
    than 57 characters so that the random suffix still fits in 63."""
    base = f"{owner_name}-{claim_name_}-"
    limit = 57
    if len(base) > limit:
        base = (owner_name[:len(owner_name) * limit // len(base)] + "-"
                + claim_name_[:len(claim_name_) * limit // len(base)])
    return base
