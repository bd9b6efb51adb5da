"""The allocator's small parts: quantities, node selectors, extended resources, diagnostics."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from fakeapi.machinery.quantity import BINARY_SI, Quantity, parse
from scheduler.allocator import (
    CAUSES,
    AllocatedState,
    AllocationTimeout,
    AllocatorFeatures,
    Diagnostics,
    Inventory,
    NodeSelector,
    NodeSelectorError,
    allocate,
    extended_resource_claim,
    extended_resource_request,
    is_dra_extended_resource_name,
)

Obj = dict[str, Any]


@pytest.mark.parametrize(("text", "canonical"), [
    ("0", "0"), ("1", "1"), ("1024Mi", "1Gi"), ("1.5Gi", "1536Mi"), ("1000m", "1"),
    ("0.5", "500m"), ("1500", "1500"), ("1000", "1k"), ("2000k", "2M"), ("100Ki", "100Ki"),
    ("1023", "1023"), ("1e3", "1e3"), ("1.5e3", "1500"), ("-1Gi", "-1Gi"), ("512", "512"),
    ("1536", "1536"), ("0.1Gi", "107374182400m"), ("12e-3", "12e-3"),
])
def test_quantities_in_upstreams_canonical_form(text: str, canonical: str) -> None:
    """Same spelling as resource.Quantity.String() of the parsed value."""
    assert str(parse(text)) == canonical


def test_binary_rounding_values() -> None:
    assert str(Quantity(Fraction(4), BINARY_SI)) == "4"
    assert str(Quantity(Fraction(6 * 2**30), BINARY_SI)) == "6Gi"
    assert parse("3").int_value() == 3 and parse("2500m").int_value() == 3


def test_node_selectors_match_like_node_affinity() -> None:
    sel = NodeSelector({"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpus", "operator": "Gt", "values": ["2"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]})
    assert sel.matches("n1", {"gpus": "4"})
    assert not sel.matches("n1", {"gpus": "x"}), "a label that is not a number never matches"
    assert sel.matches("n2", {})
    assert not NodeSelector({"nodeSelectorTerms": [{}]}).matches("n1", {}), \
        "an empty term selects nothing"


@pytest.mark.parametrize(("requirement", "field", "message"), [
    ({"key": "a", "operator": "Near", "values": ["x"]}, False, "not a valid label selector"),
    ({"key": "a", "operator": "In"}, False, "must be specified when `operator` is 'In'"),
    ({"key": "a", "operator": "Exists", "values": ["x"]}, False, "may not be specified"),
    ({"key": "a", "operator": "Gt", "values": ["x"]}, False, "must be an integer"),
    ({"key": "metadata.uid", "operator": "In", "values": ["x"]}, True, "field selector key"),
    ({"key": "metadata.name", "operator": "Exists"}, True, "not a valid field selector"),
])
def test_malformed_node_selectors(requirement: Obj, field: bool, message: str) -> None:
    term = {"matchFields" if field else "matchExpressions": [requirement]}
    with pytest.raises(NodeSelectorError, match=message):
        NodeSelector({"nodeSelectorTerms": [term]})


@pytest.mark.parametrize(("name", "dra"), [
    ("example.com/gpu", True), ("deviceclass.resource.kubernetes.io/gpu", True),
    ("nvidia.com/gpu", True), ("cpu", False), ("memory", False),
    ("kubernetes.io/batch", False), ("requests.example.com/gpu", False),
])
def test_dra_extended_resource_names(name: str, dra: bool) -> None:
    assert is_dra_extended_resource_name(name) is dra


def gpu_inventory(features: AllocatorFeatures | None = None) -> Inventory:
    inv = Inventory(features=features)
    inv.set_class({"metadata": {"name": "gpu"}, "spec": {
        "extendedResourceName": "example.com/gpu",
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    return inv


def pod(init: list[Obj], containers: list[Obj]) -> Obj:
    return {"metadata": {"name": "pod-0", "namespace": "ns", "uid": "pod-uid"},
            "spec": {"initContainers": init, "containers": containers}}


def gpus(name: str, count: int, **extra: Any) -> Obj:
    return {"name": name, "resources": {"limits": {"example.com/gpu": str(count)}}, **extra}


def test_extended_resource_claim_shape() -> None:
    """The claim upstream's PreBind creates: generateName, pod owner, the annotation."""
    claim = extended_resource_claim(pod([], [gpus("app", 2)]), gpu_inventory())
    assert claim == {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": "ns", "generateName": "pod-0-extended-resources-",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "pod-0",
                                          "uid": "pod-uid", "controller": True}],
                     "annotations": {"resource.kubernetes.io/extended-resource-claim":
                                     "true"}},
        "spec": {"devices": {"requests": [{"name": "container-0-request-0", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}]}}}


def test_extended_resource_request_mappings() -> None:
    """Init containers reuse the requests of long-lived containers after them (sidecars
    count as long-lived) and request only the rest; the mappings say which request serves
    which container (the pod status' requestMappings)."""
    found = extended_resource_request(pod(
        [gpus("init-a", 1), gpus("sidecar", 1, restartPolicy="Always"), gpus("init-b", 3)],
        [gpus("app", 1)]), gpu_inventory())
    assert found is not None
    assert [(r["name"], r["exactly"]["count"]) for r in found.claim["spec"]["devices"][
        "requests"]] == [("container-1-request-0", 1), ("container-2-request-0", 2),
                         ("container-3-request-0", 1)]
    assert found.mappings == [
        {"containerName": "sidecar", "resourceName": "example.com/gpu",
         "requestName": "container-1-request-0"},
        {"containerName": "app", "resourceName": "example.com/gpu",
         "requestName": "container-3-request-0"},
        {"containerName": "init-a", "resourceName": "example.com/gpu",
         "requestName": "container-1-request-0"},
        {"containerName": "init-b", "resourceName": "example.com/gpu",
         "requestName": "container-3-request-0"},
        {"containerName": "init-b", "resourceName": "example.com/gpu",
         "requestName": "container-2-request-0"},
    ]


def test_no_extended_resource_claim() -> None:
    inv = gpu_inventory()
    assert extended_resource_claim(pod([], [{"name": "app"}]), inv) is None
    assert extended_resource_claim(pod([], [gpus("app", 0)]), inv) is None
    node = {"metadata": {"name": "n"}, "status": {"allocatable": {"example.com/gpu": "8"}}}
    assert extended_resource_claim(pod([], [gpus("app", 1)]), inv, node=node) is None
    off = gpu_inventory(AllocatorFeatures(extended_resource=False))
    assert extended_resource_claim(pod([], [gpus("app", 1)]), off) is None


def test_diagnostics_per_claim_and_request() -> None:
    """Counts per cause, most fundamental cause per device, causes in CAUSES order."""
    inv = Inventory()
    inv.set_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    inv.set_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n",
        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "a", "attributes": {"big": {"bool": False}}},
                    {"name": "b", "attributes": {"big": {"bool": True}}},
                    {"name": "c", "attributes": {"big": {"bool": True}},
                     "taints": [{"key": "t", "effect": "NoSchedule"}]}]}})
    state = AllocatedState()
    state.add("other", {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "a"},
        {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "b"}]}})
    claim = {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {"requests": [
        {"name": "big", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                    "count": 1, "selectors": [
                                        {"cel": {"expression":
                                                 'device.attributes["gpu.example.com"].big'}}]}}]}}}
    node = {"metadata": {"name": "n"}}
    # Warm the selector cache so that "a", skipped as in use, is known not to match.
    allocate(claims=[claim], node=node, inventory=inv, allocated=AllocatedState(),
             new_share_id=str)
    diag = Diagnostics()
    assert allocate(claims=[claim], node=node, inventory=inv, allocated=state,
                    new_share_id=str, diagnostics=diag) is None
    assert diag.as_dict() == [{"claim": "ns/c", "request": "big", "causes": {
        "request selector false": 1, "tainted": 1, "in use": 1}}]
    assert list(diag.requests()[0].counts()) == [c for c in CAUSES if c in (
        "request selector false", "tainted", "in use")]


def test_search_deadline() -> None:
    """upstream's filterTimeout: an expired deadline aborts with its message; one that has
    not expired changes nothing. The search asks now and then, not at every step."""
    inv = Inventory()
    inv.set_class({"metadata": {"name": "gpu"}, "spec": {}})
    inv.set_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n",
        "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": f"d{i}"} for i in range(12)]}})
    claim = {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {"requests": [
        {"name": "all", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                    "count": 13}}]}}}
    node = {"metadata": {"name": "n"}}
    asked = []

    def expired() -> bool:
        asked.append(1)
        return len(asked) > 3

    with pytest.raises(AllocationTimeout, match="^timed out trying to allocate devices$"):
        allocate(claims=[claim], node=node, inventory=inv, allocated=AllocatedState(),
                 new_share_id=str, expired=expired)
    assert len(asked) == 4
    diag = Diagnostics()
    assert allocate(claims=[claim], node=node, inventory=inv, allocated=AllocatedState(),
                    new_share_id=str, expired=lambda: False, diagnostics=diag) is None
    assert diag.steps == 2**12, "every subset of the 12 devices is tried once"


def test_many_claims_of_many_devices() -> None:
    """A pod with twelve claims of 32 devices each: the search nests deeper than Python's
    default recursion limit allows, and still finds the 384 devices."""
    inv = Inventory()
    inv.set_class({"metadata": {"name": "gpu"}, "spec": {}})
    for k in range(3):
        inv.set_slice({"metadata": {"name": f"s{k}"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "n",
            "pool": {"name": f"p{k}", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"d{i}"} for i in range(128)]}})
    claims = [{"metadata": {"name": f"c{j}", "namespace": "ns", "uid": f"u{j}"},
               "spec": {"devices": {"requests": [{"name": "r", "exactly": {
                   "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 32}}]}}}
              for j in range(12)]
    results = allocate(claims=claims, node={"metadata": {"name": "n"}}, inventory=inv,
                       allocated=AllocatedState(), new_share_id=str)
    assert results is not None
    devices = {(r["pool"], r["device"]) for result in results
               for r in result["devices"]["results"]}
    assert len(devices) == 384
