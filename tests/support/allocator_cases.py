"""The allocator conformance cases (`tests/data/allocator/*.yaml`), loaded into API objects.

Each case lists the objects of one scheduling attempt (node, DeviceClasses, ResourceSlices,
DeviceTaintRules, ResourceClaims, devices already in use, optionally a pod whose extended
resources become the special claim) and what upstream's allocator gives for them: results,
"unsatisfiable" (no result, no error) or an error. The YAML uses a few shorthands, expanded
here into the wire objects kubectl would apply; `load_cases()` returns them expanded, so the
end-to-end test can create exactly these objects, pin a pod to `case.node`, and compare
`status.allocation` (or the pod's condition) with `check_results()`.

Shorthands (everything else is wire format):
- node: `node-N` is upstream's fixture node (labels region=region-N, planet=earth); a
  mapping gives `name`, `labels` and `allocatable` (the node's status).
- classes: `class-x` selects `device.driver == "driver-x"`; a mapping may give `driver`
  (that selector), `selectors` (CEL strings), `config`, `extendedResourceName`.
- slices: `node` is a node name, `all`, `per-device`, `none` or a NodeSelector; `pool` a name
  (generation 1, one slice) or a mapping; devices may be bare names; capacities and counters
  may be bare quantities; a device's `node` works like the slice's.
- claims: requests take `class`, `count` (default 1), `all: true`, `mode` (verbatim),
  `selectors` (CEL strings; null for an empty selector), `capacity` (requests), and pass
  `adminAccess`, `tolerations`, `derivedAttributes`, `firstAvailable` through.
- allocated: `driver/pool/device` (dedicated) or a mapping with `device`, `shareID`,
  `consumedCapacity`, `adminAccess`.
- steps: how often the search step runs, as upstream's test table counts it.
- expect: one result per claim; a device result is `<request> <driver>/<pool>/<device>` or
  a mapping with `device: driver/pool/device`; `nodeSelector: local` pins to the case's node.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from fakeapi.machinery.quantity import parse_quantity
from scheduler.allocator import (
    AllocatedState,
    AllocationError,
    AllocatorFeatures,
    ClaimUnschedulable,
    Diagnostics,
    Inventory,
    NodeUnschedulable,
    allocate,
    extended_resource_claim,
)
from tests.support import paths

DATA = paths.DATA / "allocator"
NAMESPACE = "default"
FIXED_SHARE_ID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
"""Share IDs are random; as upstream's tests do, results are compared with this one instead."""

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Case:
    """One conformance case with its objects expanded to wire dicts."""

    name: str
    source: str
    e2e: bool
    features: AllocatorFeatures
    node: Obj
    classes: list[Obj]
    slices: list[Obj]
    taint_rules: list[Obj]
    claims: list[Obj]
    pod: Obj | None
    allocated: list[Obj]
    """AllocationResults of other claims (one per entry), devices already in use."""
    expect: list[Obj] | None
    """One AllocationResult per claim; None when the claims can't be allocated here."""
    error: str | None
    """A substring of the message when `allocate` raises."""
    error_type: str
    diagnostics: list[Obj] | None
    steps: int | None
    """How often the search step runs (upstream's expectNumAllocateOneInvocations)."""

    @property
    def id(self) -> str:
        """`file:name`, for test ids."""
        return f"{self.source}:{self.name}"


def load_cases(directory: Path = DATA) -> list[Case]:
    """Every case of every `*.yaml` file under `directory`, in file and list order."""
    cases: list[Case] = []
    for path in sorted(directory.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for raw in doc.get("cases") or []:
            cases.append(_case(raw, path.stem))
    return cases


def e2e_cases(directory: Path = DATA) -> list[Case]:
    """The cases that also run end to end (features at their defaults, API-valid objects)."""
    return [c for c in load_cases(directory) if c.e2e]


# ----- expanding the shorthands ---------------------------------------------------------------

def _case(raw: Mapping[str, Any], source: str) -> Case:
    name = raw["name"]
    known = {"name", "upstream", "e2e", "features", "node", "classes", "slices", "taintRules",
             "claims", "pod", "allocated", "expect", "unsatisfiable", "error", "errorType",
             "diagnostics", "steps", "note"}
    unknown = set(raw) - known
    if unknown:
        raise ValueError(f"{source}:{name}: unknown keys {sorted(unknown)}")
    outcomes = [k for k in ("expect", "unsatisfiable", "error") if k in raw]
    if len(outcomes) != 1:
        raise ValueError(f"{source}:{name}: give exactly one of expect, unsatisfiable, error")
    features = AllocatorFeatures(**(raw.get("features") or {}))
    if raw.get("e2e") and raw.get("features"):
        raise ValueError(f"{source}:{name}: e2e cases run with the default features")
    node = _node(raw.get("node", "node-1"))
    node_name = node["metadata"]["name"]
    return Case(
        name=name, source=source, e2e=bool(raw.get("e2e")), features=features, node=node,
        classes=[_class(c) for c in raw.get("classes") or []],
        slices=[_slice(s) for s in raw.get("slices") or []],
        taint_rules=[_rule(r) for r in raw.get("taintRules") or []],
        claims=[_claim(c) for c in raw.get("claims") or []],
        pod=_pod(raw["pod"]) if raw.get("pod") else None,
        allocated=[_allocated(a) for a in raw.get("allocated") or []],
        expect=([_result(r, node_name) for r in raw["expect"]] if "expect" in raw else None),
        error=raw.get("error"),
        error_type=raw.get("errorType", "AllocationError"),
        diagnostics=raw.get("diagnostics"),
        steps=raw.get("steps"),
    )


def _meta(name: str, namespaced: bool = False) -> Obj:
    return {"name": name, "namespace": NAMESPACE} if namespaced else {"name": name}


def _node(raw: Any) -> Obj:
    if isinstance(raw, str):
        region = raw.rsplit("-", 1)[-1]
        raw = {"name": raw, "labels": {"region": f"region-{region}", "planet": "earth"}}
    node: Obj = {"apiVersion": "v1", "kind": "Node",
                 "metadata": {"name": raw["name"], "labels": dict(raw.get("labels") or {})}}
    if raw.get("allocatable"):
        node["status"] = {"allocatable": {k: str(v) for k, v in raw["allocatable"].items()}}
    return node


def _cel(expressions: Iterable[str | None]) -> list[Obj]:
    return [{"cel": {"expression": e}} if e is not None else {} for e in expressions]


def _class(raw: Any) -> Obj:
    if isinstance(raw, str):
        raw = {"name": raw, "driver": "driver-" + raw.rsplit("-", 1)[-1]}
    spec: Obj = {}
    selectors = ([f'device.driver == "{raw["driver"]}"'] if raw.get("driver") else [])
    selectors += raw.get("selectors") or []
    if selectors:
        spec["selectors"] = _cel(selectors)
    if raw.get("config"):
        spec["config"] = copy.deepcopy(raw["config"])
    if raw.get("extendedResourceName"):
        spec["extendedResourceName"] = raw["extendedResourceName"]
    meta = _meta(raw["name"])
    if raw.get("creationTimestamp"):
        meta["creationTimestamp"] = raw["creationTimestamp"]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": meta,
            "spec": spec}


def _node_selection(value: Any) -> Obj:
    if isinstance(value, Mapping):
        return {"nodeSelector": copy.deepcopy(dict(value))}
    if value == "none":
        return {}
    if value == "all":
        return {"allNodes": True}
    if value == "per-device":
        return {"perDeviceNodeSelection": True}
    return {"nodeName": value}


def _quantities(values: Mapping[str, Any], key: str = "value") -> Obj:
    return {name: (copy.deepcopy(v) if isinstance(v, Mapping) else {key: str(v)})
            for name, v in values.items()}


def _device(raw: Any) -> Obj:
    if isinstance(raw, str):
        return {"name": raw}
    device = copy.deepcopy({k: v for k, v in raw.items() if k != "node"})
    if "capacity" in device:
        device["capacity"] = _quantities(device["capacity"])
    if "consumesCounters" in device:
        device["consumesCounters"] = [
            {"counterSet": c["counterSet"], "counters": _quantities(c.get("counters") or {})}
            for c in device["consumesCounters"]]
    if "node" in raw:
        device.update(_node_selection(raw["node"]))
    return device


def _slice(raw: Mapping[str, Any]) -> Obj:
    pool = raw["pool"]
    pool = {"name": pool} if isinstance(pool, str) else dict(pool)
    pool.setdefault("generation", 1)
    pool.setdefault("resourceSliceCount", 1)
    spec: Obj = {"driver": raw["driver"], "pool": pool, **_node_selection(raw["node"])}
    if "devices" in raw:
        spec["devices"] = [_device(d) for d in raw["devices"] or []]
    if "sharedCounters" in raw:
        spec["sharedCounters"] = [{"name": c["name"],
                                   "counters": _quantities(c.get("counters") or {})}
                                  for c in raw["sharedCounters"]]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": _meta(raw["name"]), "spec": spec}


def _rule(raw: Mapping[str, Any]) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
            "metadata": _meta(raw["name"]), "spec": copy.deepcopy(dict(raw["spec"]))}


_PASSED = ("adminAccess", "tolerations", "derivedAttributes")


def _exact(raw: Mapping[str, Any]) -> Obj:
    if "exactly" in raw:
        return copy.deepcopy(dict(raw["exactly"]))
    out: Obj = {"deviceClassName": raw.get("class", "")}
    if raw.get("all"):
        out["allocationMode"] = "All"
    elif "mode" in raw:
        out["allocationMode"] = raw["mode"]
        if raw.get("count") is not None:
            out["count"] = raw["count"]
    else:
        out["allocationMode"] = "ExactCount"
        out["count"] = raw.get("count", 1)
    if "selectors" in raw:
        out["selectors"] = _cel(raw["selectors"])
    if "capacity" in raw:
        out["capacity"] = {"requests": {n: str(q) for n, q in (raw["capacity"] or {}).items()}}
    for key in _PASSED:
        if key in raw:
            out[key] = copy.deepcopy(raw[key])
    for tol in out.get("tolerations") or []:
        tol.setdefault("operator", "Equal")  # what API defaulting stores
    return out


def _request(raw: Mapping[str, Any]) -> Obj:
    if "firstAvailable" in raw:
        return {"name": raw["name"],
                "firstAvailable": [{"name": s["name"], **_exact(s)}
                                   for s in raw["firstAvailable"]]}
    return {"name": raw["name"], "exactly": _exact(raw)}


def _claim(raw: Mapping[str, Any]) -> Obj:
    devices: Obj = {"requests": [_request(r) for r in raw.get("requests") or []]}
    if "constraints" in raw:
        devices["constraints"] = copy.deepcopy(raw["constraints"])
    if "config" in raw:
        devices["config"] = copy.deepcopy(raw["config"])
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": _meta(raw["name"], namespaced=True), "spec": {"devices": devices}}


def _pod(raw: Mapping[str, Any]) -> Obj:
    spec = copy.deepcopy(dict(raw.get("spec") or {}))
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            c.setdefault("image", "registry.k8s.io/pause:3.10")
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {**_meta(raw["name"], namespaced=True),
                         "uid": raw.get("uid", "00000000-0000-0000-0000-000000000001")},
            "spec": spec}


def _split_device(text: str) -> Obj:
    driver, pool, device = text.split("/")
    return {"driver": driver, "pool": pool, "device": device}


def _allocated(raw: Any) -> Obj:
    if isinstance(raw, str):
        raw = {"device": raw}
    result = {"request": "other", **_split_device(raw["device"])}
    for key in ("shareID", "adminAccess"):
        if key in raw:
            result[key] = raw[key]
    if "consumedCapacity" in raw:
        result["consumedCapacity"] = {n: str(q) for n, q in raw["consumedCapacity"].items()}
    return {"devices": {"results": [result]}}


def _device_result(raw: Any) -> Obj:
    if isinstance(raw, str):
        request, device = raw.split()
        return {"request": request, **_split_device(device)}
    out = {k: copy.deepcopy(v) for k, v in raw.items() if k != "device"}
    out.update(_split_device(raw["device"]))
    if "consumedCapacity" in out:
        out["consumedCapacity"] = {n: str(q) for n, q in out["consumedCapacity"].items()}
    return out


def _local(node_name: str) -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def _result(raw: Mapping[str, Any], node_name: str) -> Obj:
    devices: Obj = {"results": [_device_result(d) for d in raw.get("devices") or []]}
    if "config" in raw:
        devices["config"] = copy.deepcopy(raw["config"])
    out: Obj = {"devices": devices}
    selector = raw.get("nodeSelector")
    if selector == "local":
        out["nodeSelector"] = _local(node_name)
    elif selector is not None:
        out["nodeSelector"] = copy.deepcopy(selector)
    return out


# ----- comparing results as upstream's tests do ----------------------------------------------

def _quantity(text: Any) -> str:
    value: Fraction = parse_quantity(str(text))
    return str(value)


def _normal_device(result: Mapping[str, Any]) -> Obj:
    out = copy.deepcopy(dict(result))
    if "shareID" in out:
        out["shareID"] = FIXED_SHARE_ID
    if "consumedCapacity" in out:
        out["consumedCapacity"] = {n: _quantity(q) for n, q in out["consumedCapacity"].items()}
    return out


def _normal_selector(selector: Mapping[str, Any] | None) -> Any:
    if selector is None:
        return None
    terms = []
    for term in selector.get("nodeSelectorTerms") or []:
        terms.append({key: sorted((r["key"], r["operator"], sorted(r.get("values") or []))
                                  for r in term.get(key) or [])
                      for key in ("matchExpressions", "matchFields")})
    return sorted(terms, key=json.dumps)


def normalize(result: Mapping[str, Any], *, ordered: bool) -> Obj:
    """A result in comparable form: share IDs fixed, quantities by value, node selector terms,
    requirements and values unordered, device results unordered unless `ordered`; the
    allocationTimestamp (which the scheduler adds) is left out."""
    devices = result.get("devices") or {}
    results = [_normal_device(r) for r in devices.get("results") or []]
    if not ordered:
        results.sort(key=lambda r: json.dumps(r, sort_keys=True))
    return {"results": results, "config": devices.get("config") or None,
            "nodeSelector": _normal_selector(result.get("nodeSelector"))}


def check_results(actual: list[Obj] | None, expected: list[Obj] | None) -> None:
    """Assert that `actual` matches `expected` as upstream's allocator tests compare them:
    device results in any order, except when configs are expected (then exactly)."""
    if expected is None:
        assert actual is None, f"expected no allocation, got {json.dumps(actual, indent=1)}"
        return
    assert actual is not None, "expected an allocation, got none"
    assert len(actual) == len(expected), f"{len(actual)} results for {len(expected)} claims"
    for got, want in zip(actual, expected, strict=True):
        ordered = bool((want.get("devices") or {}).get("config"))
        assert normalize(got, ordered=ordered) == normalize(want, ordered=ordered)


ERRORS: dict[str, type[Exception]] = {"AllocationError": AllocationError,
                                      "NodeUnschedulable": NodeUnschedulable,
                                      "ClaimUnschedulable": ClaimUnschedulable}


def inventory_for(case: Case) -> Inventory:
    """An Inventory fed with the case's objects, as informer events would feed it."""
    inv = Inventory(features=case.features)
    for c in case.classes:
        inv.set_class(c)
    for s in case.slices:
        inv.set_slice(s)
    for r in case.taint_rules:
        inv.set_taint_rule(r)
    return inv


def state_for(case: Case) -> AllocatedState:
    """The devices in use, one allocated claim per entry."""
    state = AllocatedState()
    for i, allocation in enumerate(case.allocated):
        state.add(f"allocated-{i}", allocation)
    return state


def claims_for(case: Case, inv: Inventory) -> list[dict[str, Any]]:
    """The claims to allocate: the case's, then the pod's extended-resource claim (last, as
    upstream orders it)."""
    claims = list(case.claims)
    if case.pod is not None:
        special = extended_resource_claim(case.pod, inv, node=case.node)
        if special is not None:
            claims.append(special)
    return claims


def run(case: Case, inv: Inventory, state: AllocatedState, claims: list[dict[str, Any]],
        diagnostics: Diagnostics | None = None) -> list[dict[str, Any]] | None:
    """One allocate call; the share IDs it draws are the fixed one, as upstream's tests use."""
    return allocate(claims=claims, node=case.node, inventory=inv, allocated=state,
                    new_share_id=lambda: FIXED_SHARE_ID, diagnostics=diagnostics)
