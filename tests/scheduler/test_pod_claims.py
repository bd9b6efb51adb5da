"""Which claims a pod uses and for whom they are reserved (upstream's resourceclaim helpers
and the DynamicResources PreEnqueue/PreFilter checks)."""

from __future__ import annotations

from typing import Any

import pytest
from fakeapi.kube.resourceclaim import RESERVED_FOR_MAX

from scheduler.claims import (
    FINALIZER,
    ClaimsNotReady,
    check_reservable,
    pod_claims,
    requested_classes,
    with_finalizer,
    with_reservation,
)

Obj = dict[str, Any]
POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"}}
GROUP = {"metadata": {"name": "g", "namespace": "ns", "uid": "group-uid"},
         "spec": {"resourceClaims": [{"name": "shared", "resourceClaimTemplateName": "t"}]}}


def pod(*entries: Obj, statuses: list[Obj] | None = None) -> Obj:
    return {**POD, "spec": {"resourceClaims": list(entries)},
            "status": {"resourceClaimStatuses": statuses or []}}


def claim(name: str, *, owner: Obj | None = None, deleting: bool = False,
          reserved: int = 0, allocated: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "uid": f"{name}-uid"}
    if owner is not None:
        meta["ownerReferences"] = [{"uid": owner["metadata"]["uid"], "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: Obj = {}
    if allocated:
        status["allocation"] = {"devices": {"results": []}}
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": f"o{i}", "uid": f"o{i}"}
                                 for i in range(reserved)]
    return {"metadata": meta, "spec": {}, "status": status}


def lookup(*claims: Obj) -> Any:
    by_name = {c["metadata"]["name"]: c for c in claims}
    return lambda namespace, name: by_name.get(name)


NOT_READY = [
    ("template claim not made yet", pod({"name": "gpu", "resourceClaimTemplateName": "t"}), (),
     'pod "ns/p": ResourceClaim not created yet'),
    ("missing claim", pod({"name": "gpu", "resourceClaimName": "c"}), (),
     'resourceclaim.resource.k8s.io "c" not found'),
    ("claim being deleted", pod({"name": "gpu", "resourceClaimName": "c"}),
     (claim("c", deleting=True),), 'resourceclaim "c" is being deleted'),
    ("generated claim of another pod",
     pod({"name": "gpu", "resourceClaimTemplateName": "t"},
         statuses=[{"name": "gpu", "resourceClaimName": "c"}]),
     (claim("c", owner={"metadata": {"uid": "other"}}),),
     "ResourceClaim ns/c was not created for pod ns/p (pod is not owner)"),
    ("an entry with neither field", pod({"name": "gpu"}), (),
     'pod "ns/p", spec.resourceClaim "gpu": none of the supported fields are set'),
]


@pytest.mark.parametrize(("p", "claims", "message"), [c[1:] for c in NOT_READY],
                         ids=[c[0] for c in NOT_READY])
def test_claims_not_ready(p: Obj, claims: tuple[Obj, ...], message: str) -> None:
    with pytest.raises(ClaimsNotReady) as e:
        pod_claims(p, get_claim=lookup(*claims))
    assert str(e.value) == message


def test_claims_in_spec_order_reserved_for_the_pod() -> None:
    p = pod({"name": "a", "resourceClaimName": "shared-claim"},
            {"name": "b", "resourceClaimTemplateName": "t"},
            {"name": "none", "resourceClaimTemplateName": "t"},
            statuses=[{"name": "b", "resourceClaimName": "p-b-x"}, {"name": "none"}])
    got = pod_claims(p, get_claim=lookup(claim("shared-claim"), claim("p-b-x", owner=p)))
    assert [c.pod_claim_name for c in got] == ["a", "b"]  # a status without a name: no claim
    assert all(c.consumer == {"resource": "pods", "name": "p", "uid": "pod-uid"} for c in got)


def test_a_podgroup_claim_is_reserved_for_the_group() -> None:
    p = pod({"name": "shared", "resourceClaimTemplateName": "t"},
            {"name": "own", "resourceClaimTemplateName": "t"},
            statuses=[{"name": "shared", "resourceClaimName": "g-shared"},
                      {"name": "own", "resourceClaimName": "p-own"}])
    got = pod_claims(p, get_claim=lookup(claim("g-shared", owner=GROUP),
                                         claim("p-own", owner=p)), group=GROUP)
    assert [c.consumer for c in got] == [
        {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "g",
         "uid": "group-uid"},
        {"resource": "pods", "name": "p", "uid": "pod-uid"}]


def test_a_full_reservation_list_makes_the_claim_in_use() -> None:
    p = pod({"name": "a", "resourceClaimName": "c"})
    full = pod_claims(p, get_claim=lookup(claim("c", allocated=True, reserved=RESERVED_FOR_MAX)))
    with pytest.raises(ClaimsNotReady, match="resourceclaim in use"):
        check_reservable(full)
    check_reservable(pod_claims(p, get_claim=lookup(
        claim("c", allocated=True, reserved=RESERVED_FOR_MAX - 1))))


def test_reservation_and_finalizer_bodies() -> None:
    c = claim("c", reserved=1)
    consumer = {"resource": "pods", "name": "p", "uid": "pod-uid"}
    body = with_reservation(c, consumer, {"devices": {"results": []}})
    assert body["status"]["reservedFor"][-1] == consumer
    assert len(with_reservation(body, consumer, None)["status"]["reservedFor"]) == 2
    assert c["status"]["reservedFor"] == [{"resource": "pods", "name": "o0", "uid": "o0"}]
    protected = with_finalizer(c)
    assert protected is not None and protected["metadata"]["finalizers"] == [FINALIZER]
    assert with_finalizer(protected) is None and "finalizers" not in c["metadata"]


def test_requested_classes_name_subrequests() -> None:
    c = {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}},
        {"name": "nic", "firstAvailable": [{"name": "fast", "deviceClassName": "nic-fast"},
                                           {"name": "slow", "deviceClassName": "nic"}]}]}}}
    assert requested_classes(c) == [("gpu", "gpu.example.com"), ("nic/fast", "nic-fast"),
                                    ("nic/slow", "nic")]
