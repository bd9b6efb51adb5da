"""Feature gates: the 1.37 table, overrides and their checks, served kinds, dropped fields."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import RealClock
from fakeapi.machinery.features import (
    GATES,
    FeatureGateError,
    FeatureGates,
    Stage,
    parse_feature_gates,
)
from fakeapi.registry.context import RequestContext
from fakeapi.registry.generic import Registry
from fakeapi.registry.kinds import KINDS, served_kinds
from fakeapi.registry.rest import Kind
from fakeapi.schema import dropfields
from fakeapi.schema.dropfields import drop_disabled_fields
from fakeapi.storage.log import EventLog
from fakeapi.storage.store import Store

A, B, GA = Stage.ALPHA, Stage.BETA, Stage.GA

# --------------------------------------------------------------------------- the 1.37 table

DEFAULTS = [
    # name, default, stage, locked
    ("DynamicResourceAllocation", True, GA, True),
    ("DRAAdminAccess", True, GA, True),
    ("DRAPrioritizedList", True, GA, True),
    ("DRAResourceClaimDeviceStatus", True, GA, True),
    ("DRAExtendedResource", True, GA, True),
    ("DRADeviceTaints", True, GA, False),
    ("DRADeviceTaintRules", True, GA, False),
    ("DRAConsumableCapacity", True, B, False),
    ("DRAPartitionableDevices", True, B, False),
    ("DRADeviceBindingConditions", True, B, False),
    ("ResourceHealthStatus", True, B, False),
    ("DRAResourceClaimGranularStatusAuthorization", True, B, False),
    ("DRASchedulerFilterTimeout", True, B, False),
    ("DRAWorkloadResourceClaims", False, B, False),
    ("GenericWorkload", False, B, False),
    ("DRAFractionalCapacityRange", False, B, False),
    ("DRAResourcePoolStatus", False, A, False),
    ("DRAPartitionableDevicesType", False, A, False),
    ("DRAListTypeAttributes", False, A, False),
    ("DRADerivedAttributes", False, A, False),
    ("DRANodeAllocatableResources", False, A, False),
    ("DRAOptionalNodeOperations", False, A, False),
    ("DRADeviceCompatibilityGroups", False, A, False),
    ("TopologyAwareWorkloadScheduling", False, A, False),
    ("CompositePodGroup", False, A, False),
]


@pytest.mark.parametrize(("name", "default", "stage", "locked"), DEFAULTS,
                         ids=[d[0] for d in DEFAULTS])
def test_defaults(name: str, default: bool, stage: Stage, locked: bool) -> None:
    gate = GATES[name]
    assert (gate.default, gate.stage, gate.locked) == (default, stage, locked)
    assert FeatureGates().enabled(name) is default


def _stability(stage: Stage) -> int:
    return {Stage.DEPRECATED: 0, Stage.ALPHA: 1, Stage.BETA: 2, Stage.GA: 3}[stage]


@pytest.mark.parametrize("name", list(GATES))
def test_table_obeys_upstream_registration_rules(name: str) -> None:
    # same as upstream AddDependencies: known deps, no less stable dep, default-on needs
    # default-on deps, locked needs locked deps
    gate = GATES[name]
    for dep in gate.requires:
        assert dep in GATES
        assert _stability(gate.stage) <= _stability(GATES[dep].stage)
        assert not gate.default or GATES[dep].default
        assert not gate.locked or GATES[dep].locked
    if gate.locked:
        assert gate.stage is Stage.GA


def test_no_dependency_cycles() -> None:
    def walk(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, path
        for dep in GATES[name].requires:
            walk(dep, (*path, name))

    for name in GATES:
        walk(name, ())


# --------------------------------------------------------------------------- overrides

OVERRIDES = [
    # overrides, gates expected on, gates expected off
    ({}, ["DRADeviceTaints", "DRAConsumableCapacity"], ["DRAResourcePoolStatus",
                                                          "GenericWorkload"]),
    ({"DRAResourcePoolStatus": True}, ["DRAResourcePoolStatus"], ["DRAPartitionableDevicesType"]),
    ({"DRAConsumableCapacity": False}, [], ["DRAConsumableCapacity"]),
    ({"DRADeviceTaints": False, "DRADeviceTaintRules": False}, [],
     ["DRADeviceTaints", "DRADeviceTaintRules"]),
    ({"DRAPrioritizedList": True}, ["DRAPrioritizedList"], []),  # locked, set to its default
    ({"AllAlpha": True, "GenericWorkload": True}, ["DRAResourcePoolStatus",
     "DRAPartitionableDevicesType", "DRAListTypeAttributes"], ["DRAWorkloadResourceClaims"]),
    ({"AllBeta": True}, ["GenericWorkload", "DRAWorkloadResourceClaims"],
     ["DRAResourcePoolStatus"]),
    ({"AllBeta": False}, ["DRAPrioritizedList", "DRADeviceTaints"],
     ["DRAConsumableCapacity", "DRAPartitionableDevices", "ResourceHealthStatus"]),
    ({"AllAlpha": True, "AllBeta": True, "DRADerivedAttributes": False},
     ["DRAListTypeAttributes", "GenericWorkload"], ["DRADerivedAttributes"]),
]


@pytest.mark.parametrize(("overrides", "on", "off"), OVERRIDES, ids=str)
def test_overrides(overrides: dict[str, bool], on: list[str], off: list[str]) -> None:
    gates = FeatureGates(overrides)
    assert [g for g in on if not gates.enabled(g)] == []
    assert [g for g in off if gates.enabled(g)] == []


REFUSED = [
    # flag value, kube-apiserver's message
    ("Foo=true", "unrecognized feature gate: Foo"),
    ("DRAResourcePoolStatus=true,Bar=false", "unrecognized feature gate: Bar"),
    ("DynamicResourceAllocation=false",
     "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"),
    ("DRAResourceClaimDeviceStatus=false",
     "cannot set feature gate DRAResourceClaimDeviceStatus to false, feature is locked to true"),
    ("DRAAdminAccess=false,DRAExtendedResource=false",
     "[cannot set feature gate DRAAdminAccess to false, feature is locked to true, "
     "cannot set feature gate DRAExtendedResource to false, feature is locked to true]"),
    ("DRAPartitionableDevicesType=true", "DRAPartitionableDevicesType is enabled, but depends "
     "on features that are disabled: [DRAResourcePoolStatus]"),
    ("DRAPartitionableDevicesType=true,DRAPartitionableDevices=false",
     "DRAPartitionableDevicesType is enabled, but depends on features that are disabled: "
     "[DRAResourcePoolStatus DRAPartitionableDevices]"),
    ("DRAPartitionableDevicesType=true,DRAResourcePoolStatus=true,DRAPartitionableDevices=false",
     "DRAPartitionableDevicesType is enabled, but depends on features that are disabled: "
     "[DRAPartitionableDevices]"),
    ("DRADeviceTaints=false", "DRADeviceTaintRules is enabled, but depends on features that "
     "are disabled: [DRADeviceTaints]"),
    ("DRAWorkloadResourceClaims=true", "DRAWorkloadResourceClaims is enabled, but depends on "
     "features that are disabled: [GenericWorkload]"),
    ("DRADeviceCompatibilityGroups=true,DRAPartitionableDevices=false",
     "DRADeviceCompatibilityGroups is enabled, but depends on features that are disabled: "
     "[DRAPartitionableDevices]"),
    ("DRAFractionalCapacityRange=true,DRAConsumableCapacity=false",
     "DRAFractionalCapacityRange is enabled, but depends on features that are disabled: "
     "[DRAConsumableCapacity]"),
    ("CompositePodGroup=true", "CompositePodGroup is enabled, but depends on features that "
     "are disabled: [GenericWorkload TopologyAwareWorkloadScheduling]"),
    ("DRAPartitionableDevices=false,DRAConsumableCapacity=false,DRAFractionalCapacityRange=true,"
     "DRADeviceCompatibilityGroups=true",
     "[DRADeviceCompatibilityGroups is enabled, but depends on features that are disabled: "
     "[DRAPartitionableDevices], DRAFractionalCapacityRange is enabled, but depends on features "
     "that are disabled: [DRAConsumableCapacity]]"),
    ("DRAResourcePoolStatus", "missing bool value for DRAResourcePoolStatus"),
    ("DRAResourcePoolStatus=yes", 'invalid value of DRAResourcePoolStatus=yes, err: '
     'strconv.ParseBool: parsing "yes": invalid syntax'),
]


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused(text: str, message: str) -> None:
    with pytest.raises(FeatureGateError) as err:
        parse_feature_gates(text)
    assert str(err.value) == message


ACCEPTED = [
    ("", {}),
    ("DRAResourcePoolStatus=true", {"DRAResourcePoolStatus": True}),
    (" DRAResourcePoolStatus = True , GenericWorkload=1,", {"DRAResourcePoolStatus": True,
                                                            "GenericWorkload": True}),
    ("DRAConsumableCapacity=F,DRADeviceBindingConditions=0",
     {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}),
    ("DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true",
     {"DRAResourcePoolStatus": True, "DRAPartitionableDevicesType": True}),
    ("DRADeviceTaints=false,DRADeviceTaintRules=false",
     {"DRADeviceTaints": False, "DRADeviceTaintRules": False}),
    ("AllAlpha=true,AllBeta=true", {"AllAlpha": True, "AllBeta": True}),
    ("DynamicResourceAllocation=true", {"DynamicResourceAllocation": True}),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED, ids=[a[0] or "empty" for a in ACCEPTED])
def test_accepted(text: str, expected: dict[str, bool]) -> None:
    assert parse_feature_gates(text) == expected


def test_cluster_refuses_bad_gates_at_start() -> None:
    with pytest.raises(FeatureGateError, match="unrecognized feature gate: Nope"):
        Cluster(ClusterConfig(feature_gates={"Nope": True}))


def test_unchecked_gates_still_refuse_unknown_names() -> None:
    assert not FeatureGates({"DRAResourceClaimDeviceStatus": False}, check=False).enabled(
        "DRAResourceClaimDeviceStatus")
    with pytest.raises(FeatureGateError):
        FeatureGates({"Nope": True}, check=False)


def test_asking_for_an_unknown_gate_is_a_bug() -> None:
    with pytest.raises(KeyError, match="not registered"):
        FeatureGates().enabled("DRASomethingElse")


def test_metrics_lines() -> None:
    lines = FeatureGates({"DRAResourcePoolStatus": True}).metrics_text().splitlines()
    assert lines[1] == "# TYPE kubernetes_feature_enabled gauge"
    for line in ('kubernetes_feature_enabled{name="DRAResourcePoolStatus",stage="ALPHA"} 1',
                 'kubernetes_feature_enabled{name="GenericWorkload",stage="BETA"} 0',
                 'kubernetes_feature_enabled{name="DRAPrioritizedList",stage=""} 1',
                 'kubernetes_feature_enabled{name="AllAlpha",stage="ALPHA"} 0'):
        assert line in lines
    assert len(lines) == 2 + len(GATES) + 2


# --------------------------------------------------------------------------- served kinds

SERVED = [
    # overrides, kinds served, kinds not served
    ({}, ["DeviceTaintRule", "ResourceClaim"],
     ["ResourcePoolStatusRequest", "PodGroup", "Workload"]),
    ({"DRAResourcePoolStatus": True}, ["ResourcePoolStatusRequest"], ["PodGroup"]),
    ({"GenericWorkload": True}, ["PodGroup", "Workload"], ["ResourcePoolStatusRequest"]),
    ({"DRADeviceTaintRules": False}, ["ResourceSlice"], ["DeviceTaintRule"]),
    ({"AllAlpha": True, "AllBeta": True},
     ["ResourcePoolStatusRequest", "PodGroup", "Workload", "DeviceTaintRule"], []),
]


@pytest.mark.parametrize(("overrides", "served", "hidden"), SERVED, ids=str)
def test_served_kinds(overrides: dict[str, bool], served: list[str], hidden: list[str]) -> None:
    kinds = {k.kind for k in served_kinds(FeatureGates(overrides)).kinds}
    assert set(served) <= kinds
    assert not set(hidden) & kinds
    assert {k.kind for k in served_kinds(overrides).kinds} == kinds


def test_default_group_versions() -> None:
    gvs = served_kinds(FeatureGates()).group_versions()
    assert ("resource.k8s.io", "v1alpha3") not in gvs
    assert ("scheduling.k8s.io", "v1beta1") not in gvs
    assert ("resource.k8s.io", "v1") in gvs


def test_without_gates_every_row_is_served() -> None:
    kinds = {k.kind for k in served_kinds().kinds}
    assert {"ResourcePoolStatusRequest", "PodGroup", "Workload", "DeviceTaintRule"} <= kinds


# --------------------------------------------------------------------------- dropped fields

DROPS = [
    # id, resource, subresource, gates turned off, concrete field path, value, ratchets
    ("firstAvailable", "claims", "", ["DRAPrioritizedList"],
     "spec.devices.requests.0.firstAvailable", [{"name": "a", "deviceClassName": "c"}], True),
    ("tolerations", "claims", "", ["DRADeviceTaints"],
     "spec.devices.requests.0.exactly.tolerations", [{"key": "k", "operator": "Exists"}], True),
    ("subrequest-tolerations", "claims", "", ["DRADeviceTaints"],
     "spec.devices.requests.0.firstAvailable.0.tolerations", [{"operator": "Exists"}], True),
    ("adminAccess", "claims", "", ["DRAAdminAccess"],
     "spec.devices.requests.0.exactly.adminAccess", True, True),
    ("distinctAttribute", "claims", "", ["DRAConsumableCapacity"],
     "spec.devices.constraints.0.distinctAttribute", "dra.example.com/x", True),
    ("capacity-request", "claims", "", ["DRAConsumableCapacity"],
     "spec.devices.requests.0.exactly.capacity", {"requests": {"memory": "1Gi"}}, True),
    ("subrequest-capacity", "claims", "", ["DRAConsumableCapacity"],
     "spec.devices.requests.0.firstAvailable.1.capacity", {"requests": {"memory": "1Gi"}}, True),
    ("derivedAttributes", "claims", "", ["DRADerivedAttributes"],
     "spec.devices.requests.0.exactly.derivedAttributes", [{"name": "d/x", "expression": "1"}],
     True),
    ("subrequest-derivedAttributes", "claims", "", ["DRADerivedAttributes"],
     "spec.devices.requests.0.firstAvailable.0.derivedAttributes",
     [{"name": "d/x", "expression": "1"}], True),
    ("status-devices", "claims", "status", ["DRAResourceClaimDeviceStatus"],
     "status.devices", [{"driver": "d", "pool": "p", "device": "x"}], True),
    ("result-adminAccess", "claims", "status", ["DRAAdminAccess"],
     "status.allocation.devices.results.0.adminAccess", True, True),
    ("result-shareID", "claims", "status", ["DRAConsumableCapacity"],
     "status.allocation.devices.results.0.shareID", "9c2a7e1e-0000-4000-8000-000000000000", True),
    ("result-consumedCapacity", "claims", "status", ["DRAConsumableCapacity"],
     "status.allocation.devices.results.0.consumedCapacity", {"memory": "1Gi"}, True),
    ("device-status-shareID", "claims", "status", ["DRAConsumableCapacity"],
     "status.devices.0.shareID", "9c2a7e1e-0000-4000-8000-000000000000", True),
    ("result-bindingConditions", "claims", "status", ["DRADeviceBindingConditions"],
     "status.allocation.devices.results.0.bindingConditions", ["Ready"], True),
    ("result-bindingFailureConditions", "claims", "status", ["DRADeviceBindingConditions"],
     "status.allocation.devices.results.0.bindingFailureConditions", ["Failed"], True),
    ("result-skipNodeOperations", "claims", "status", ["DRAOptionalNodeOperations"],
     "status.allocation.devices.results.0.skipNodeOperations", ["Prepare"], True),
    ("device-taints", "slices", "", ["DRADeviceTaints"],
     "spec.devices.0.taints", [{"key": "k", "effect": "NoSchedule"}], True),
    ("sharedCounters", "slices", "", ["DRAPartitionableDevices"],
     "spec.sharedCounters", [{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}], True),
    ("perDeviceNodeSelection", "slices", "", ["DRAPartitionableDevices"],
     "spec.perDeviceNodeSelection", True, True),
    ("consumesCounters", "slices", "", ["DRAPartitionableDevices"],
     "spec.devices.0.consumesCounters", [{"counterSet": "gpu-0", "counters": {}}], True),
    ("device-nodeName", "slices", "", ["DRAPartitionableDevices"],
     "spec.devices.0.nodeName", "worker-1", True),
    ("device-nodeSelector", "slices", "", ["DRAPartitionableDevices"],
     "spec.devices.0.nodeSelector", {"nodeSelectorTerms": []}, True),
    ("device-allNodes", "slices", "", ["DRAPartitionableDevices"],
     "spec.devices.0.allNodes", True, True),
    ("bindingConditions", "slices", "", ["DRADeviceBindingConditions"],
     "spec.devices.0.bindingConditions", ["Ready"], True),
    ("bindingConditions-without-device-status", "slices", "", ["DRAResourceClaimDeviceStatus"],
     "spec.devices.0.bindingConditions", ["Ready"], True),
    ("bindingFailureConditions", "slices", "", ["DRADeviceBindingConditions"],
     "spec.devices.0.bindingFailureConditions", ["Failed"], True),
    ("bindsToNode", "slices", "", ["DRADeviceBindingConditions"],
     "spec.devices.0.bindsToNode", True, True),
    ("allowMultipleAllocations", "slices", "", ["DRAConsumableCapacity"],
     "spec.devices.0.allowMultipleAllocations", True, True),
    ("requestPolicy", "slices", "", ["DRAConsumableCapacity"],
     "spec.devices.0.capacity.memory.requestPolicy", {"default": "1Gi"}, True),
    ("nodeAllocatableResources", "slices", "", ["DRANodeAllocatableResources"],
     "spec.devices.0.nodeAllocatableResources", {"cpu": {}}, True),
    ("list-bools", "slices", "", ["DRAListTypeAttributes"],
     "spec.devices.0.attributes.x.bools", [True], True),
    ("list-ints", "slices", "", ["DRAListTypeAttributes"],
     "spec.devices.1.attributes.numa.ints", [0, 1], True),
    ("list-strings", "slices", "", ["DRAListTypeAttributes"],
     "spec.devices.0.attributes.models.strings", ["a", "b"], True),
    ("list-versions", "slices", "", ["DRAListTypeAttributes"],
     "spec.devices.0.attributes.fw.versions", ["1.0.0"], True),
    ("partitionTypeAttribute", "slices", "", ["DRAPartitionableDevicesType"],
     "spec.partitionTypeAttribute", "gpu.example.com/profile", True),
    ("compatibilityGroups", "slices", "", ["DRADeviceCompatibilityGroups"],
     "spec.devices.0.consumesCounters.0.compatibilityGroups", ["mig"], True),
    ("slice-skipNodeOperations", "slices", "", ["DRAOptionalNodeOperations"],
     "spec.skipNodeOperations", ["Prepare"], True),
    ("extendedResourceName", "classes", "", ["DRAExtendedResource"],
     "spec.extendedResourceName", "example.com/gpu", True),
    ("defaultPartitionTypeAttribute", "rpsr", "", ["DRAPartitionableDevicesType"],
     "spec.defaultPartitionTypeAttribute", "gpu.example.com/profile", True),
    ("podgroup-resourceClaims", "podgroups", "", ["DRAWorkloadResourceClaims"],
     "spec.resourceClaims", [{"name": "c", "resourceClaimName": "c"}], True),
    ("podgroup-resourceClaimStatuses", "podgroups", "status", ["DRAWorkloadResourceClaims"],
     "status.resourceClaimStatuses", [{"name": "c", "resourceClaimName": "c"}], True),
    ("workload-resourceClaims", "workloads", "", ["DRAWorkloadResourceClaims"],
     "spec.podGroupTemplates.0.resourceClaims", [{"name": "c", "resourceClaimName": "c"}], True),
    ("composite-resourceClaims", "workloads", "", ["DRAWorkloadResourceClaims"],
     "spec.compositePodGroupTemplates.0.compositePodGroupTemplates.0.podGroupTemplates.0"
     ".resourceClaims", [{"name": "c", "resourceClaimName": "c"}], True),
    ("pod-schedulingGroup", "pods", "", ["GenericWorkload"],
     "spec.schedulingGroup", {"podGroupName": "g"}, True),
    ("pod-extendedResourceClaimStatus", "pods", "status", ["DRAExtendedResource"],
     "status.extendedResourceClaimStatus", {"resourceClaimName": "c"}, True),
    ("allocatedResourcesStatus", "pods", "status", ["ResourceHealthStatus"],
     "status.containerStatuses.0.allocatedResourcesStatus", [{"name": "claim:c/gpu"}], False),
    ("init-allocatedResourcesStatus", "pods", "status", ["ResourceHealthStatus"],
     "status.initContainerStatuses.0.allocatedResourcesStatus", [{"name": "claim:c/gpu"}],
     False),
    ("ephemeral-allocatedResourcesStatus", "pods", "status", ["ResourceHealthStatus"],
     "status.ephemeralContainerStatuses.0.allocatedResourcesStatus", [{"name": "claim:c/gpu"}],
     False),
]
RESOURCES = {"claims": "resourceclaims.resource.k8s.io",
             "templates": "resourceclaimtemplates.resource.k8s.io",
             "slices": "resourceslices.resource.k8s.io",
             "classes": "deviceclasses.resource.k8s.io",
             "rpsr": "resourcepoolstatusrequests.resource.k8s.io",
             "podgroups": "podgroups.scheduling.k8s.io",
             "workloads": "workloads.scheduling.k8s.io", "pods": "pods"}
"""The test data's short names of the kinds whose rows drop fields."""
DROP_RULES = {k.resource_id: k.drop_fields for k in KINDS}
"""Each kind row's drop rules (what the registry applies)."""
KIND_RULES = [(rid, rule) for rid, rules in DROP_RULES.items() for rule in rules]
# A template carries a claim spec one level down: every claim spec case holds for it too.
DROPS += [(f"template-{case[0]}", "templates", "", case[3],
           case[4].replace("spec.", "spec.spec.", 1), *case[5:])
          for case in DROPS if case[1] == "claims" and case[2] == ""]


def _segments(path: str) -> list[str]:
    """A concrete path's segments (test data keeps dots out of map keys)."""
    return path.split(".")


def _build(path: str, value: Any) -> dict[str, Any]:
    """An object holding `value` at `path` (digits index lists), plus a neighbour field."""
    segs = _segments(path)
    root: dict[str, Any] = {"metadata": {"name": "x"}}
    node: Any = root
    for seg, nxt in zip(segs, segs[1:], strict=False):
        child: Any = [] if nxt.isdigit() else {}
        if seg.isdigit():
            while len(node) <= int(seg):
                node.append({"name": f"item-{len(node)}"})
            node = node[int(seg)]
        else:
            node = node.setdefault(seg, child)
    node[segs[-1]] = value
    return root


def _get(obj: Any, path: str) -> Any:
    for seg in _segments(path):
        if isinstance(obj, list):
            obj = obj[int(seg)] if int(seg) < len(obj) else None
        elif isinstance(obj, dict):
            obj = obj.get(seg)
        if obj is None:
            return None
    return obj


def _gates(names: list[str], on: bool) -> FeatureGates:
    return FeatureGates(dict.fromkeys(names, on), check=False)


@pytest.mark.parametrize(("resource", "sub", "off", "path", "value", "ratchets"),
                         [d[1:] for d in DROPS], ids=[d[0] for d in DROPS])
def test_dropped_fields(resource: str, sub: str, off: list[str], path: str, value: Any,
                        ratchets: bool) -> None:
    rules = DROP_RULES[RESOURCES[resource]]
    # create (old is None): dropped while off, kept while on
    new = _build(path, value)
    assert drop_disabled_fields(rules, new, None, _gates(off, False), sub)
    assert _get(new, path) is None
    assert new["metadata"] == {"name": "x"}
    kept = _build(path, value)
    assert drop_disabled_fields(rules, kept, None, _gates(off, True), sub) == []
    assert _get(kept, path) == value
    # update: kept when the stored object already uses the feature (unless upstream drops
    # unconditionally), dropped when it does not
    old = _build(path, value)
    new = _build(path, value)
    drop_disabled_fields(rules, new, old, _gates(off, False), sub)
    assert (_get(new, path) == value) is ratchets
    assert old == _build(path, value)
    new = _build(path, value)
    drop_disabled_fields(rules, new, {"metadata": {"name": "x"}}, _gates(off, False), sub)
    assert _get(new, path) is None
    # the other half of a write leaves the field alone (spec on /status and the reverse)
    other = _build(path, value)
    drop_disabled_fields(rules, other, None, _gates(off, False), "" if sub else "status")
    assert _get(other, path) == value


def _matches(pattern: str, path: str) -> bool:
    def match(p: list[str], s: list[str]) -> bool:
        if not p:
            return not s
        if p[0] == "**":
            return match(p[1:], s) or (bool(s) and match(p, s[1:]))
        return bool(s) and (p[0] == "*" or p[0] == s[0]) and match(p[1:], s[1:])

    return match(pattern.split("."), _segments(path))


@pytest.mark.parametrize(("resource", "rule"), KIND_RULES,
                         ids=[f"{rid}:{r.part}:{r.gates[0]}" for rid, r in KIND_RULES])
def test_every_rule_field_has_a_case(resource: str, rule: dropfields.Rule) -> None:
    for pattern in rule.fields:
        assert any(RESOURCES[d[1]] == resource and (d[2] or "spec") == rule.part
                   and set(d[3]) & set(rule.gates) and _matches(pattern, d[4])
                   for d in DROPS), pattern


def test_admin_access_in_spec_keeps_it_in_the_allocation() -> None:
    # same as upstream: adminAccess in the old spec counts as use of the status field
    old = _build("spec.devices.requests.0.exactly.adminAccess", True)
    new = copy.deepcopy(old)
    new["status"] = {"allocation": {"devices": {"results": [{"adminAccess": True}]}}}
    drop_disabled_fields(dropfields.RESOURCE_CLAIM, new, old, _gates(["DRAAdminAccess"], False),
                         "status")
    assert new["status"]["allocation"]["devices"]["results"][0] == {"adminAccess": True}


def test_list_values_go_under_qualified_attribute_names() -> None:
    device = {"name": "gpu-0", "attributes": {
        "dra.example.com/supported-models": {"strings": ["model-a", "model-b"]},
        "dra.example.com/numa": {"int": 0}}}
    slice_ = {"spec": {"devices": [device]}}
    drop_disabled_fields(dropfields.RESOURCE_SLICE, slice_, None, FeatureGates())
    assert device["attributes"] == {"dra.example.com/supported-models": {},
                                    "dra.example.com/numa": {"int": 0}}


def test_only_the_disabled_gate_fields_go() -> None:
    claim = _build("spec.devices.requests.0.exactly.adminAccess", True)
    claim["spec"]["devices"]["requests"][0]["exactly"]["derivedAttributes"] = [{"name": "a/b"}]
    dropped = drop_disabled_fields(dropfields.RESOURCE_CLAIM, claim, None, FeatureGates())
    assert dropped == ["spec.devices.requests.*.exactly.derivedAttributes"]
    assert claim["spec"]["devices"]["requests"][0]["exactly"] == {"adminAccess": True}


# --------------------------------------------------------------------------- through the registry

CTX = RequestContext(field_manager="test")
SLICE: dict[str, Any] = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "s1"},
    "spec": {"driver": "gpu.example.com", "nodeName": "worker-1",
             "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1},
             "partitionTypeAttribute": "gpu.example.com/profile",
             "devices": [{"name": "gpu-0",
                          "attributes": {"gpu.example.com/profile": {"string": "Full"}}}]}}


def _registry(store: Store, gates: FeatureGates) -> Registry:
    return Registry(store=store, kinds=served_kinds(gates), gates=gates)


def _slice_kind(registry: Registry) -> Kind:
    kind = registry.kinds.by_resource("resource.k8s.io", "v1", "resourceslices")
    assert kind is not None
    return kind


@pytest.mark.parametrize(("overrides", "kept"), [
    ({}, False),
    ({"DRAResourcePoolStatus": True, "DRAPartitionableDevicesType": True}, True),
])
def test_registry_create_drops_disabled_fields(overrides: dict[str, bool], kept: bool) -> None:
    registry = _registry(Store(log=EventLog(), clock=RealClock()), FeatureGates(overrides))
    created = registry.create(_slice_kind(registry), "", copy.deepcopy(SLICE), CTX).object
    assert ("partitionTypeAttribute" in created["spec"]) is kept


def test_registry_update_keeps_fields_already_in_use() -> None:
    store = Store(log=EventLog(), clock=RealClock())
    on = _registry(store, FeatureGates({"DRAResourcePoolStatus": True,
                                        "DRAPartitionableDevicesType": True}))
    off = _registry(store, FeatureGates())
    kind = _slice_kind(off)
    on.create(kind, "", copy.deepcopy(SLICE), CTX)
    changed = copy.deepcopy(SLICE)
    changed["metadata"]["labels"] = {"tier": "gold"}
    updated = off.update(kind, "", "s1", changed, CTX).object
    assert updated["spec"]["partitionTypeAttribute"] == "gpu.example.com/profile"
    assert updated["metadata"]["labels"] == {"tier": "gold"}
    # a slice that never used it can't start using it while the gate is off
    fresh = copy.deepcopy(SLICE)
    fresh["metadata"]["name"] = "s2"
    del fresh["spec"]["partitionTypeAttribute"]
    off.create(kind, "", copy.deepcopy(fresh), CTX)
    fresh["spec"]["partitionTypeAttribute"] = "gpu.example.com/profile"
    assert "partitionTypeAttribute" not in off.update(kind, "", "s2", fresh, CTX).object["spec"]
