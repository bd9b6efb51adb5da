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
from collections.abc import Iterator
from typing import Any

from fakeapi.features import GateReader

Obj = dict[str, Any]

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
POOL_STATUS = "resourcepoolstatusrequests.resource.k8s.io"
POD_GROUPS = "podgroups.scheduling.k8s.io"
WORKLOADS = "workloads.scheduling.k8s.io"
PODS = "pods"


@dataclasses.dataclass(frozen=True)
class Rule:
    """Fields of one gate (or gate pair) in one kind, and when they count as in use."""

    gates: tuple[str, ...]
    """Every one of these must be on for the fields to be kept."""
    resource: str
    part: str
    """`spec`: create and main-resource updates; `status`: `/status` updates."""
    fields: tuple[str, ...]
    in_use: tuple[str, ...] = ()
    """Further paths whose presence in the old object also keeps the fields."""
    ratchet: bool = True
    """False where upstream drops even when the old object uses the field."""


def _claim_spec_rules(resource: str, spec: str) -> list[Rule]:
    """ResourceClaimSpec rules (claims and, one level down, templates), in upstream order."""
    req = f"{spec}.devices.requests.*"

    def rule(gate: str, *fields: str) -> Rule:
        return Rule((gate,), resource, "spec", fields)

    return [
        rule("DRAPrioritizedList", f"{req}.firstAvailable"),
        rule("DRADeviceTaints", f"{req}.exactly.tolerations",
             f"{req}.firstAvailable.*.tolerations"),
        rule("DRAAdminAccess", f"{req}.exactly.adminAccess"),
        rule("DRAConsumableCapacity", f"{spec}.devices.constraints.*.distinctAttribute",
             f"{req}.exactly.capacity", f"{req}.firstAvailable.*.capacity"),
        rule("DRADerivedAttributes", f"{req}.exactly.derivedAttributes",
             f"{req}.firstAvailable.*.derivedAttributes"),
    ]


_RESULTS = "status.allocation.devices.results.*"
_DEVICE = "spec.devices.*"
_LIST_VALUES = tuple(f"{_DEVICE}.attributes.*.{k}" for k in ("bools", "ints", "strings",
                                                              "versions"))
_CONTAINER_STATUSES = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")

RULES: tuple[Rule, ...] = (
    *_claim_spec_rules(CLAIMS, "spec"),
    Rule(("DRAResourceClaimDeviceStatus",), CLAIMS, "status", ("status.devices",)),
    Rule(("DRAAdminAccess",), CLAIMS, "status", (f"{_RESULTS}.adminAccess",),
         in_use=("spec.devices.requests.*.exactly.adminAccess",)),
    Rule(("DRAConsumableCapacity",), CLAIMS, "status",
         (f"{_RESULTS}.shareID", f"{_RESULTS}.consumedCapacity", "status.devices.*.shareID"),
         in_use=tuple(f for r in _claim_spec_rules(CLAIMS, "spec")
                      if r.gates == ("DRAConsumableCapacity",) for f in r.fields)),
    Rule(("DRADeviceBindingConditions",), CLAIMS, "status",
         (f"{_RESULTS}.bindingConditions", f"{_RESULTS}.bindingFailureConditions")),
    Rule(("DRAOptionalNodeOperations",), CLAIMS, "status", (f"{_RESULTS}.skipNodeOperations",)),
    *_claim_spec_rules(TEMPLATES, "spec.spec"),
    Rule(("DRADeviceTaints",), SLICES, "spec", (f"{_DEVICE}.taints",)),
    Rule(("DRAPartitionableDevices",), SLICES, "spec",
         ("spec.sharedCounters", "spec.perDeviceNodeSelection", f"{_DEVICE}.consumesCounters",
          f"{_DEVICE}.nodeName", f"{_DEVICE}.nodeSelector", f"{_DEVICE}.allNodes")),
    Rule(("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus"), SLICES, "spec",
         (f"{_DEVICE}.bindingConditions", f"{_DEVICE}.bindingFailureConditions",
          f"{_DEVICE}.bindsToNode")),
    Rule(("DRAConsumableCapacity",), SLICES, "spec",
         (f"{_DEVICE}.allowMultipleAllocations", f"{_DEVICE}.capacity.*.requestPolicy")),
    Rule(("DRANodeAllocatableResources",), SLICES, "spec",
         (f"{_DEVICE}.nodeAllocatableResources",)),
    Rule(("DRAListTypeAttributes",), SLICES, "spec", _LIST_VALUES),
    Rule(("DRAPartitionableDevicesType",), SLICES, "spec", ("spec.partitionTypeAttribute",)),
    Rule(("DRADeviceCompatibilityGroups",), SLICES, "spec",
         (f"{_DEVICE}.consumesCounters.*.compatibilityGroups",)),
    Rule(("DRAOptionalNodeOperations",), SLICES, "spec", ("spec.skipNodeOperations",)),
    Rule(("DRAExtendedResource",), CLASSES, "spec", ("spec.extendedResourceName",)),
    Rule(("DRAPartitionableDevicesType",), POOL_STATUS, "spec",
         ("spec.defaultPartitionTypeAttribute",)),
    Rule(("DRAWorkloadResourceClaims",), POD_GROUPS, "spec", ("spec.resourceClaims",)),
    Rule(("DRAWorkloadResourceClaims",), POD_GROUPS, "status", ("status.resourceClaimStatuses",)),
    Rule(("DRAWorkloadResourceClaims",), WORKLOADS, "spec",
         ("spec.**.podGroupTemplates.*.resourceClaims",)),
    Rule(("GenericWorkload",), PODS, "spec", ("spec.schedulingGroup",)),
    Rule(("DRAExtendedResource",), PODS, "status", ("status.extendedResourceClaimStatus",)),
    Rule(("ResourceHealthStatus",), PODS, "status",
         tuple(f"status.{s}.*.allocatedResourcesStatus" for s in _CONTAINER_STATUSES),
         ratchet=False),
)
"""Every rule, grouped by kind in upstream's order within each strategy."""

_BY_TARGET: dict[tuple[str, str], list[Rule]] = {}
for _rule in RULES:
    _BY_TARGET.setdefault((_rule.resource, _rule.part), []).append(_rule)


def drop_disabled_fields(resource: str, new: Obj, old: Obj | None, gates: GateReader,
                         subresource: str = "") -> list[str]:
    """Remove from `new` the fields of disabled gates; returns the field paths dropped.

    `resource` is the kind's resource id (`plural.group`), `old` the stored object of an
    update (None on create), `subresource` the written subresource ("" for the object).
    """
    if subresource not in ("", "status"):
        return []
    dropped: list[str] = []
    for rule in _BY_TARGET.get((resource, subresource or "spec"), ()):
        if all(gates.enabled(g) for g in rule.gates):
            continue
        if rule.ratchet and old is not None and in_use(old, rule.fields + rule.in_use):
            continue
        for path in rule.fields:
            matches = list(_locate(new, path.split(".")))
            for parent, key in matches:
                del parent[key]
            if matches:
                dropped.append(path)
    return dropped


def in_use(obj: Obj, paths: tuple[str, ...]) -> bool:
    """Whether any path is set in `obj` (an empty list counts as unset, as a nil slice)."""
    return any(parent[key] is not None and parent[key] != []
               for path in paths for parent, key in _locate(obj, path.split(".")))


def rules_for(gate: str) -> list[Rule]:
    """The rules that involve one gate."""
    return [r for r in RULES if gate in r.gates]


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        yield from node.values()
    elif isinstance(node, list):
        yield from node


def _locate(node: Any, segments: list[str]) -> Iterator[tuple[Obj, str]]:
    """(mapping, key) for every place under `node` that the path names and that exists."""
    head, rest = segments[0], segments[1:]
    if head == "**":
        yield from _locate(node, rest)
        for child in _children(node):
            yield from _locate(child, segments)
    elif head == "*":
        for child in _children(node):
            if rest:
                yield from _locate(child, rest)
    elif isinstance(node, dict) and head in node:
        if rest:
            yield from _locate(node[head], rest)
        else:
            yield node, head
