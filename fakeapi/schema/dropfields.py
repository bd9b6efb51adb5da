"""Dropping the fields of disabled feature gates on write, as upstream's dropDisabledFields do.

A field guarded by a gate that is off is removed from a new object, and from an update
unless the stored object already uses a field of that gate ("ratcheting", so turning a gate
off never breaks unrelated updates of objects written while it was on). Spec fields are
dropped on create and on main-resource updates, status fields on `/status` updates, each
under the same rule as the upstream strategy of that kind.

Rules are data: a field path is dotted JSON names where `*` stands for every list item or
map value and `**` for any depth (for nested composite pod-group templates).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Sequence
from typing import Any

from fakeapi.machinery.features import GateReader

Obj = dict[str, Any]

@dataclasses.dataclass(frozen=True)
class Rule:
    """Fields of one gate (or gate pair) in a kind, and when they count as in use."""

    gates: tuple[str, ...]
    """Every one of these must be on for the fields to be kept."""
    part: str
    """`spec`: create and main-resource updates; `status`: `/status` updates."""
    fields: tuple[str, ...]
    in_use: tuple[str, ...] = ()
    """Further paths whose presence in the old object also keeps the fields."""
    ratchet: bool = True
    """False where upstream drops even when the old object uses the field."""


def _claim_spec_rules(spec: str) -> tuple[Rule, ...]:
    """ResourceClaimSpec rules (claims and, one level down, templates), in upstream order."""
    req = f"{spec}.devices.requests.*"

    def rule(gate: str, *fields: str) -> Rule:
        return Rule((gate,), "spec", fields)

    return (
        rule("DRAPrioritizedList", f"{req}.firstAvailable"),
        rule("DRADeviceTaints", f"{req}.exactly.tolerations",
             f"{req}.firstAvailable.*.tolerations"),
        rule("DRAAdminAccess", f"{req}.exactly.adminAccess"),
        rule("DRAConsumableCapacity", f"{spec}.devices.constraints.*.distinctAttribute",
             f"{req}.exactly.capacity", f"{req}.firstAvailable.*.capacity"),
        rule("DRADerivedAttributes", f"{req}.exactly.derivedAttributes",
             f"{req}.firstAvailable.*.derivedAttributes"),
    )


_RESULTS = "status.allocation.devices.results.*"
_DEVICE = "spec.devices.*"
_LIST_VALUES = tuple(f"{_DEVICE}.attributes.*.{k}" for k in ("bools", "ints", "strings",
                                                              "versions"))
_CONTAINER_STATUSES = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")

RESOURCE_CLAIM: tuple[Rule, ...] = (
    *_claim_spec_rules("spec"),
    Rule(("DRAResourceClaimDeviceStatus",), "status", ("status.devices",)),
    Rule(("DRAAdminAccess",), "status", (f"{_RESULTS}.adminAccess",),
         in_use=("spec.devices.requests.*.exactly.adminAccess",)),
    Rule(("DRAConsumableCapacity",), "status",
         (f"{_RESULTS}.shareID", f"{_RESULTS}.consumedCapacity", "status.devices.*.shareID"),
         in_use=tuple(f for r in _claim_spec_rules("spec")
                      if r.gates == ("DRAConsumableCapacity",) for f in r.fields)),
    Rule(("DRADeviceBindingConditions",), "status",
         (f"{_RESULTS}.bindingConditions", f"{_RESULTS}.bindingFailureConditions")),
    Rule(("DRAOptionalNodeOperations",), "status", (f"{_RESULTS}.skipNodeOperations",)),
)
RESOURCE_CLAIM_TEMPLATE = _claim_spec_rules("spec.spec")
RESOURCE_SLICE: tuple[Rule, ...] = (
    Rule(("DRADeviceTaints",), "spec", (f"{_DEVICE}.taints",)),
    Rule(("DRAPartitionableDevices",), "spec",
         ("spec.sharedCounters", "spec.perDeviceNodeSelection", f"{_DEVICE}.consumesCounters",
          f"{_DEVICE}.nodeName", f"{_DEVICE}.nodeSelector", f"{_DEVICE}.allNodes")),
    Rule(("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"), "spec",
         (f"{_DEVICE}.bindingConditions", f"{_DEVICE}.bindingFailureConditions",
          f"{_DEVICE}.bindsToNode")),
    Rule(("DRAConsumableCapacity",), "spec",
         (f"{_DEVICE}.allowMultipleAllocations", f"{_DEVICE}.capacity.*.requestPolicy")),
    Rule(("DRANodeAllocatableResources",), "spec", (f"{_DEVICE}.nodeAllocatableResources",)),
    Rule(("DRAListTypeAttributes",), "spec", _LIST_VALUES),
    Rule(("DRAPartitionableDevicesType",), "spec", ("spec.partitionTypeAttribute",)),
    Rule(("DRADeviceCompatibilityGroups",), "spec",
         (f"{_DEVICE}.consumesCounters.*.compatibilityGroups",)),
    Rule(("DRAOptionalNodeOperations",), "spec", ("spec.skipNodeOperations",)),
)
DEVICE_CLASS = (Rule(("DRAExtendedResource",), "spec", ("spec.extendedResourceName",)),)
RESOURCE_POOL_STATUS_REQUEST = (
    Rule(("DRAPartitionableDevicesType",), "spec", ("spec.defaultPartitionTypeAttribute",)),)
POD_GROUP = (
    Rule(("DRAWorkloadResourceClaims",), "spec", ("spec.resourceClaims",)),
    Rule(("DRAWorkloadResourceClaims",), "status", ("status.resourceClaimStatuses",)),
)
WORKLOAD = (Rule(("DRAWorkloadResourceClaims",), "spec",
                 ("spec.**.podGroupTemplates.*.resourceClaims",)),)
POD = (
    Rule(("GenericWorkload",), "spec", ("spec.schedulingGroup",)),
    Rule(("DRAExtendedResource",), "status", ("status.extendedResourceClaimStatus",)),
    Rule(("ResourceHealthStatus",), "status",
         tuple(f"status.{s}.*.allocatedResourcesStatus" for s in _CONTAINER_STATUSES),
         ratchet=False),
)
"""The rules of each kind that has some, in upstream's order within its strategy (each kind
row names its tuple)."""


def drop_disabled_fields(rules: Sequence[Rule], new: Obj, old: Obj | None, gates: GateReader,
                         subresource: str = "") -> list[str]:
    """Remove from `new` the fields of disabled gates; returns the field paths dropped.

    `rules` are the kind's (its row's `drop_fields`), `old` the stored object of an update
    (None on create), `subresource` the written subresource ("" for the object).
    """
    if not rules or subresource not in ("", "status"):
        return []
    part = subresource or "spec"
    dropped: list[str] = []
    for rule in rules:
        if rule.part != part or all(map(gates.enabled, rule.gates)):
            continue
        if rule.ratchet and old is not None and in_use(old, rule.fields + rule.in_use):
            continue
        for path in rule.fields:
            matches = _locate(new, path)
            for parent, key in matches:
                del parent[key]
            if matches:
                dropped.append(path)
    return dropped


def in_use(obj: Obj, paths: tuple[str, ...]) -> bool:
    """Whether any path is set in `obj` (an empty list counts as unset, as a nil slice)."""
    return any(parent[key] is not None and parent[key] != []
               for path in paths for parent, key in _locate(obj, path))


def _children(node: Any) -> Iterable[Any]:
    if isinstance(node, dict):
        return node.values()
    if isinstance(node, list):
        return node
    return ()


@functools.cache
def _segments(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _locate(node: Any, path: str) -> list[tuple[Obj, str]]:
    """(mapping, key) for every place under `node` that the path names and that exists."""
    out: list[tuple[Obj, str]] = []
    _find(node, _segments(path), 0, out)
    return out


def _find(node: Any, segments: tuple[str, ...], i: int, out: list[tuple[Obj, str]]) -> None:
    """Append what `segments[i:]` names under `node` to `out` (field names followed in a loop,
    wildcards by recursion)."""
    while True:
        head = segments[i]
        i += 1
        if head == "**":
            _find(node, segments, i, out)
            for child in _children(node):
                _find(child, segments, i - 1, out)
            return
        if head == "*":
            if i < len(segments):
                for child in _children(node):
                    _find(child, segments, i, out)
            return
        if not isinstance(node, dict) or head not in node:
            return
        if i == len(segments):
            out.append((node, head))
            return
        node = node[head]
