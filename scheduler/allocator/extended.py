"""Extended resources backed by DRA: the special claim for a pod's extended-resource requests
that a DeviceClass serves (its `extendedResourceName`, or the implicit
`deviceclass.resource.kubernetes.io/<class>`), built as upstream's scheduler plugin builds it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from fakeapi.machinery.quantity import parse

from .claims import EXACT_COUNT
from .inventory import DEVICE_CLASS_PREFIX, Inventory

Obj = Mapping[str, Any]

CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
"""Same as upstream's ExtendedResourceClaimAnnotation."""


@dataclasses.dataclass(frozen=True)
class ExtendedResourceRequest:
    """The special claim (a ResourceClaim wire dict without a name, to be created with its
    generateName) and the pod status' request mappings
    (`status.extendedResourceClaimStatus.requestMappings`)."""

    claim: dict[str, Any]
    mappings: list[dict[str, str]]


def is_dra_extended_resource_name(name: str) -> bool:
    """Same as upstream's IsDRAExtendedResourceName: an extended resource name (a domain
    outside kubernetes.io, not a quota `requests.` name) or the implicit class prefix."""
    if name.startswith(DEVICE_CLASS_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def extended_resource_claim(pod: Obj, inventory: Inventory, *,
                            node: Obj | None = None) -> dict[str, Any] | None:
    """The special claim for `pod`, or None when no extended resource of it is backed by a
    DeviceClass. With `node`, resources that node offers through a device plugin (a non-zero
    allocatable) are left to the device plugin, as upstream decides per node."""
    found = extended_resource_request(pod, inventory, node=node)
    return found.claim if found is not None else None


def extended_resource_request(pod: Obj, inventory: Inventory, *,
                              node: Obj | None = None) -> ExtendedResourceRequest | None:
    """The special claim and its request mappings (see extended_resource_claim)."""
    if not inventory.features.extended_resource:
        return None
    spec = pod.get("spec") or {}
    init = [c or {} for c in spec.get("initContainers") or []]
    containers = init + [c or {} for c in spec.get("containers") or []]
    allocatable = ((node or {}).get("status") or {}).get("allocatable") or {}
    wanted: list[str] = []
    for name in sorted({r for c in containers for r in _requests(c)}):
        if not is_dra_extended_resource_name(name) or inventory.extended_resource_class(
                name) is None:
            continue
        if not any(_count(c, name) for c in containers):
            continue
        if node is not None and _positive(allocatable.get(name)):
            continue  # a device plugin provides it on this node
        wanted.append(name)
    if not wanted:
        return None
    long_lived = [i for i, c in enumerate(containers)
                  if i >= len(init) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i in range(len(init)) if i not in long_lived]
    requests: list[dict[str, Any]] = []
    mappings: list[dict[str, str]] = []
    for resource in wanted:
        cls = inventory.extended_resource_class(resource)
        assert cls is not None
        long_requests: list[dict[str, Any] | None] = [None] * len(containers)
        long_maps: list[dict[str, str]] = []
        for i in long_lived:
            request, maps = _request_and_mappings(i, containers[i], resource, cls.name, [])
            long_requests[i] = request
            long_maps += maps
        largest: dict[str, Any] | None = None
        short_names: set[str] = set()
        short_maps: list[dict[str, str]] = []
        for i in short_lived:
            request, maps = _request_and_mappings(i, containers[i], resource, cls.name,
                                                  long_requests[i:])
            if request is not None:
                short_names.add(request["name"])
                if largest is None or _exact_count(largest) < _exact_count(request):
                    largest = request
            short_maps += maps
        if largest is not None and len(short_names) > 1:
            # Init containers run one after another: they all share the largest request.
            short_names.discard(largest["name"])
            for m in short_maps:
                if m["requestName"] in short_names:
                    m["requestName"] = largest["name"]
        if largest is not None:
            requests.append(largest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_maps + short_maps
    requests.sort(key=lambda r: r["name"])
    meta = pod.get("metadata") or {}
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": meta.get("namespace") or "",
            "generateName": f"{meta.get('name') or ''}-extended-resources-",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                 "name": meta.get("name") or "", "uid": meta.get("uid") or "",
                                 "controller": True}],
            "annotations": {CLAIM_ANNOTATION: "true"},
        },
        "spec": {"devices": {"requests": requests}},
    }
    return ExtendedResourceRequest(claim=claim, mappings=mappings)


def _requests(container: Obj) -> Mapping[str, Any]:
    """A container's resource requests (limits stand in for missing requests, as API
    defaulting makes them)."""
    resources = container.get("resources") or {}
    return {**(resources.get("limits") or {}), **(resources.get("requests") or {})}


def _count(container: Obj, resource: str) -> int:
    """Same as upstream: the request as an integer, 0 when absent or not integral."""
    value = _requests(container).get(resource)
    if value is None:
        return 0
    try:
        q = parse(value).value
    except ValueError:
        return 0
    return int(q) if q.denominator == 1 and q > 0 else 0


def _positive(value: Any) -> bool:
    try:
        return value is not None and parse(value).value > 0
    except ValueError:
        return False


def _exact_count(request: Obj) -> int:
    return int(request["exactly"]["count"])


def _request_and_mappings(index: int, container: Obj, resource: str, class_name: str,
                          reusable: list[dict[str, Any] | None]
                          ) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """Same as upstream's createResourceRequestAndMappings: the container's own request
    (`container-<i>-request-<j>`, j its position among the container's sorted resource
    names), after using up the `reusable` requests of later long-lived containers."""
    wanted = _count(container, resource)
    if not wanted:
        return None, []
    name = container.get("name") or ""
    mappings: list[dict[str, str]] = []
    total = 0
    for r in reusable:
        if r is None:
            continue
        total += _exact_count(r)
        mappings.append({"containerName": name, "resourceName": resource,
                         "requestName": r["name"]})
        if total >= wanted:
            return None, mappings
    position = sorted(_requests(container)).index(resource)
    request_name = f"container-{index}-request-{position}"
    request = {"name": request_name,
               "exactly": {"deviceClassName": class_name, "allocationMode": EXACT_COUNT,
                           "count": wanted - total}}
    mappings.append({"containerName": name, "resourceName": resource,
                     "requestName": request_name})
    return request, mappings
