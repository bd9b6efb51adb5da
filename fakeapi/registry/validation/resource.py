"""Validation of the resource.k8s.io kinds, after upstream's pkg/apis/resource/validation.

Pure functions over JSON objects: each takes the object (and the stored one for updates) plus
`enabled(gate)`, and returns `Cause`s with upstream field paths and message shapes. Limits are
the 1.37 constants of `k8s.io/api/resource/v1`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from fakeapi import cel
from fakeapi.kube.resourcelimits import (
    COUNTER_SETS_MAX,
    SLICE_MAX_DEVICES,
    SLICE_MAX_DEVICES_ADVANCED,
)
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    Raw,
    child,
    duplicate,
    forbidden,
    immutable,
    immutable_forbidden,
    index,
    internal,
    invalid,
    key,
    not_supported,
    required,
    too_long,
    too_many,
)
from fakeapi.machinery.quantity import parse_quantity
from fakeapi.registry.validation import common
from fakeapi.registry.validation.common import (
    Obj,
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    label_name,
    label_value,
    name_key,
    node_name,
    node_selector,
    pool_name,
    qualified_name,
    raw_json_object,
    same_key,
    validate_map,
    validate_set,
    validate_slice,
)

Enabled = Callable[[str], bool]

# Limits, same as upstream k8s.io/api/resource/v1 (1.37).
MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_ATTRIBUTE_VALUES = 48
ATTRIBUTE_VALUE_MAX_LENGTH = 64
QUALIFIED_NAME_MAX = common.DOMAIN_MAX + 1 + common.C_IDENTIFIER_MAX
TAINTS_MAX = 16
COUNTERS_PER_SET_MAX = 32
CONSUMES_COUNTERS_MAX = 2
COUNTERS_PER_CONSUMPTION_MAX = 32
BINDING_CONDITIONS_MAX = 4
BINDING_FAILURE_CONDITIONS_MAX = 4
REQUESTS_MAX = 32
SUBREQUESTS_MAX = 8
SELECTORS_MAX = 32
CONSTRAINTS_MAX = 32
CONFIGS_MAX = 32
TOLERATIONS_MAX = 16
DERIVED_ATTRIBUTES_MAX = 32
OPAQUE_PARAMETERS_MAX = 10 * 1024
RESERVED_FOR_MAX = 256
RESULTS_MAX = 32
DEVICE_STATUS_CONDITIONS_MAX = 8
DEVICE_STATUS_DATA_MAX = 10 * 1024
INTERFACE_NAME_MAX = 256
HARDWARE_ADDRESS_MAX = 128
IPS_MAX = 16
REQUEST_POLICY_OPTIONS_MAX = 10
TAINT_RULE_CONDITIONS_MAX = 8
DERIVED_TOTAL_COST_MAX = cel.MAX_COST  # combined cost of a claim's derived attributes
RPSR_LIMIT_DEFAULT = 100
RPSR_LIMIT_MAX = 1000
RPSR_POOLS_MAX = 1000
RPSR_CONDITIONS_MAX = 10
RPSR_PARTITION_SUMMARY_MAX = 32
RPSR_VALIDATION_ERROR_MAX = 256

ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_MESSAGE = (f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` "
                        "label on the containing namespace")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
TOLERATION_OPERATORS = ("Equal", "Exists")
ALLOCATION_MODES = ("All", "ExactCount")
CONFIG_SOURCES = ("FromClaim", "FromClass")


def _cel_features(enabled: Enabled) -> cel.Features:
    return cel.Features(list_attributes=enabled("DRAListTypeAttributes"),
                        consumable_capacity=enabled("DRAConsumableCapacity"))


# ===== defaulting (same as upstream SetDefaults_* of resource.k8s.io/v1) ====================

def default_claim_spec(spec: Any) -> None:
    """allocationMode ExactCount and count 1 for requests/subrequests; toleration operator Equal."""
    if not isinstance(spec, dict):
        return
    for request in (spec.get("devices") or {}).get("requests") or []:
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _default_exact(request["exactly"])
        for sub in request.get("firstAvailable") or []:
            if isinstance(sub, dict):
                _default_exact(sub)


def _default_exact(req: Obj) -> None:
    if not req.get("allocationMode"):
        req["allocationMode"] = "ExactCount"
    if req["allocationMode"] == "ExactCount" and not req.get("count"):
        req["count"] = 1
    for tol in req.get("tolerations") or []:
        if isinstance(tol, dict) and not tol.get("operator"):
            tol["operator"] = "Equal"


def default_slice_taints(spec: Any, now: str) -> None:
    """Same as upstream SetDefaults_DeviceTaint: a taint without `timeAdded` gets `now`."""
    if not isinstance(spec, dict):
        return
    for device in spec.get("devices") or []:
        for t in (device or {}).get("taints") or [] if isinstance(device, dict) else []:
            if isinstance(t, dict) and not t.get("timeAdded"):
                t["timeAdded"] = now


def default_rule_taint(spec: Any, old_spec: Any, now: str) -> None:
    """SetDefaults_DeviceTaint for a DeviceTaintRule, plus upstream's update rule: a changed
    effect with an unchanged `timeAdded` restarts the clock (so it tracks the effect)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("taint"), dict):
        return
    t = spec["taint"]
    if not t.get("timeAdded"):
        t["timeAdded"] = now
    old = (old_spec or {}).get("taint") if isinstance(old_spec, dict) else None
    if isinstance(old, dict) and old.get("effect") != t.get("effect") and \
            old.get("timeAdded") == t.get("timeAdded"):
        t["timeAdded"] = now


def default_rpsr_spec(spec: Any) -> None:
    """Same as upstream: `limit` defaults to 100."""
    if isinstance(spec, dict) and spec.get("limit") is None:
        spec["limit"] = RPSR_LIMIT_DEFAULT


# ===== ResourceClaim / ResourceClaimTemplate spec ========================================

@dataclasses.dataclass
class _ClaimCtx:
    enabled: Enabled
    stored: bool
    request_names: dict[str, set[str] | None]
    constraint_attrs: dict[str, set[str]]
    derived_cost: list[int] = dataclasses.field(default_factory=lambda: [0])


def validate_claim_spec(spec: Any, path: str, enabled: Enabled, *,
                        stored: bool = False) -> list[Cause]:
    """Same as upstream validateResourceClaimSpec (the DeviceClaim under `devices`)."""
    devices = (spec or {}).get("devices") or {}
    dpath = child(path, "devices")
    ctx = _ClaimCtx(enabled, stored, request_names(devices),
                    _constraint_attributes(devices.get("constraints") or []))
    causes = validate_set(devices.get("requests"), REQUESTS_MAX,
                          lambda r, p: _request(r or {}, p, ctx), name_key,
                          child(dpath, "requests"))
    # Optional lists are only walked when present (an empty one has nothing to report).
    if devices.get("constraints"):
        causes += validate_slice(devices["constraints"], CONSTRAINTS_MAX,
                                 lambda c, p: _constraint(c or {}, p, ctx),
                                 child(dpath, "constraints"))
    if devices.get("config"):
        causes += validate_slice(devices["config"], CONFIGS_MAX,
                                 lambda c, p: _claim_config(c or {}, p, ctx),
                                 child(dpath, "config"))
    if ctx.derived_cost[0] > DERIVED_TOTAL_COST_MAX:
        causes.append(forbidden(dpath, "too complex, total cost of derived attribute CEL "
                                "expressions in the claim exceeds cost limit"))
    return causes


def request_names(devices: Obj) -> dict[str, set[str] | None]:
    """Request names, each with its subrequest names (None without firstAvailable)."""
    out: dict[str, set[str] | None] = {}
    for req in devices.get("requests") or []:
        req = req or {}
        subs = req.get("firstAvailable") or []
        out[req.get("name", "")] = {(s or {}).get("name", "") for s in subs} if subs else None
    return out


def _has_request(names_: Mapping[str, set[str] | None], ref: str) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in names_:
        return False
    if len(parts) == 1:
        return True
    subs = names_[parts[0]]
    return subs is not None and parts[1] in subs


def _constraint_attributes(constraints: list[Any]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for c in constraints:
        c = c or {}
        attr = c.get("matchAttribute") or c.get("distinctAttribute")
        if not attr:
            continue
        for ref in c.get("requests") or [""]:
            out.setdefault(ref, set()).add(attr)
    return out


def _request(req: Obj, path: str, ctx: _ClaimCtx) -> list[Cause]:
    causes = _request_name(req.get("name"), child(path, "name"))
    first = req.get("firstAvailable") or []
    exactly = req.get("exactly")
    if first and exactly is not None:
        causes.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is "
                              "required, but multiple fields are set"))
    elif first:
        causes += validate_set(first, SUBREQUESTS_MAX,
                               lambda s, p: _exact(s or {}, p, ctx, f"{req.get('name') or ''}/"
                                                   f"{(s or {}).get('name') or ''}", sub=True),
                               name_key, child(path, "firstAvailable"))
    elif exactly is not None:
        # a null name is an empty one (as Go decodes it), never a reference to fail on
        causes += _exact(exactly or {}, child(path, "exactly"), ctx, req.get("name") or "")
    else:
        causes.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    return causes


def _request_name(name: Any, path: str) -> list[Cause]:
    if not name:
        return [required(path)]
    return dns_label(name, path)


def _exact(req: Obj, path: str, ctx: _ClaimCtx, ref: str, *, sub: bool = False) -> list[Cause]:
    """An `exactly` request, or a `firstAvailable` subrequest (which also has a name)."""
    causes: list[Cause] = []
    if sub:
        causes += _request_name(req.get("name"), child(path, "name"))
    causes += _device_class_ref(req.get("deviceClassName"), child(path, "deviceClassName"))
    # Optional lists are only walked when present (an empty one has nothing to report).
    if req.get("selectors"):
        causes += validate_slice(req["selectors"], SELECTORS_MAX,
                                 lambda s, p: _selector(s or {}, p, ctx.enabled, ctx.stored),
                                 child(path, "selectors"))
    if req.get("derivedAttributes"):
        causes += validate_set(req["derivedAttributes"], DERIVED_ATTRIBUTES_MAX,
                               lambda d, p: _derived_attribute(d or {}, p, ctx, ref), name_key,
                               child(path, "derivedAttributes"))
    causes += _allocation_mode(req.get("allocationMode") or "", req.get("count") or 0, path)
    if req.get("tolerations"):
        causes += validate_slice(req["tolerations"], TOLERATIONS_MAX, _toleration,
                                 child(path, "tolerations"))
    capacity = (req.get("capacity") or {}).get("requests")
    if capacity:
        causes += validate_map(capacity, -1, QUALIFIED_NAME_MAX, qualified_name, None,
                               child(path, "capacity", "requests"))
    return causes


def _device_class_ref(name: Any, path: str) -> list[Cause]:
    if not name:
        return [required(path)]
    return dns_subdomain(name, path)


def _allocation_mode(mode: str, count: int, path: str) -> list[Cause]:
    """`allocationMode` and `count` of the request at `path`."""
    if mode == "All":
        if count:
            return [invalid(child(path, "count"), count, "must not be specified when "
                            "allocationMode is 'All'")]
    elif mode == "ExactCount":
        if count <= 0:
            return [invalid(child(path, "count"), count, "must be greater than zero")]
    else:
        return [not_supported(child(path, "allocationMode"), mode, ALLOCATION_MODES)]
    return []


def _selector(sel: Obj, path: str, enabled: Enabled, stored: bool) -> list[Cause]:
    expr = sel.get("cel")
    if expr is None:
        return [required(child(path, "cel"))]
    return cel_expression((expr or {}).get("expression") or "", child(path, "cel", "expression"),
                          enabled, stored=stored)


def cel_expression(expression: str, path: str, enabled: Enabled, *, stored: bool = False,
                   purpose: str = cel.SELECTOR, costs: list[int] | None = None) -> list[Cause]:
    """Same as upstream validateCELExpression: length, compile, estimated cost."""
    if stored:
        return []  # stored expressions were valid when stored (same as upstream)
    if not expression:
        return [required(path)]
    if len(expression) > cel.MAX_EXPRESSION_LENGTH:
        return [too_long(path, cel.MAX_EXPRESSION_LENGTH)]
    result = cel.compile(expression, purpose=purpose, features=_cel_features(enabled))
    if isinstance(result, list):
        return [invalid(path, expression, e.detail) if e.kind == "invalid"
                else internal(path, e.detail) for e in result]
    if costs is not None:
        costs[0] += result.cost
    limit = min(cel.MAX_COST, DERIVED_TOTAL_COST_MAX) if purpose == cel.DERIVED else cel.MAX_COST
    if result.cost > limit:
        return [forbidden(path, "too complex, exceeds cost limit")]
    return []


def _derived_attribute(attr: Obj, path: str, ctx: _ClaimCtx, ref: str) -> list[Cause]:
    causes: list[Cause] = []
    name = attr.get("name") or ""
    if not name:
        causes.append(required(child(path, "name")))
    else:
        causes += fully_qualified_name(name, child(path, "name"))
        if not _used_by_constraint(name, ref, ctx.constraint_attrs):
            causes.append(invalid(child(path, "name"), name, "must be referenced by at least "
                                  "one matchAttribute or distinctAttribute constraint targeting "
                                  "this request"))
    expression = attr.get("expression") or ""
    if not expression:
        causes.append(required(child(path, "expression")))
    else:
        causes += cel_expression(expression, child(path, "expression"), ctx.enabled,
                                 stored=ctx.stored, purpose=cel.DERIVED, costs=ctx.derived_cost)
    return causes


def _used_by_constraint(attr: str, ref: str, attrs: Mapping[str, set[str]]) -> bool:
    """Same as upstream isAttributeUsedByConstraint: global, the request, or its parent."""
    if attr in attrs.get("", set()) or attr in attrs.get(ref, set()):
        return True
    parent, sep, _ = ref.partition("/")
    return bool(sep) and attr in attrs.get(parent, set())


def _constraint(c: Obj, path: str, ctx: _ClaimCtx) -> list[Cause]:
    causes = validate_set(c.get("requests"), REQUESTS_MAX,
                          lambda r, p: _request_ref(r, p, ctx.request_names), same_key,
                          child(path, "requests"))
    match, distinct = c.get("matchAttribute"), c.get("distinctAttribute")
    if match is not None and distinct is not None:
        causes.append(invalid(path, Raw("{matchAttribute, distinctAttribute}"),
                              "must specify exactly one of: `matchAttribute`, "
                              "`distinctAttribute`"))
    elif match is not None:
        causes += fully_qualified_name(match, child(path, "matchAttribute"))
    elif distinct is not None:
        causes += fully_qualified_name(distinct, child(path, "distinctAttribute"))
    elif ctx.enabled("DRAConsumableCapacity"):
        # same as upstream, including its wording
        causes.append(required(path, 'exactly one of "matchAttribute" or "distinctAttribute" '
                               "is required, but multiple fields are set"))
    else:
        causes.append(required(child(path, "matchAttribute")))
    return causes


_REF_MESSAGE = ("must be the name of a request in the claim or the name of a request and a "
                "subrequest separated by '/'")


def _request_ref(ref: Any, path: str, names_: Mapping[str, set[str] | None]) -> list[Cause]:
    """Same as upstream validateRequestNameRef."""
    ref = str(ref or "")
    parts = ref.split("/")
    if len(parts) > 2:
        return [invalid(path, ref, _REF_MESSAGE)]
    causes: list[Cause] = []
    for part in parts:
        causes += dns_label(part, path)
    if not _has_request(names_, ref):
        causes.append(invalid(path, ref, _REF_MESSAGE))
    return causes


def _claim_config(c: Obj, path: str, ctx: _ClaimCtx) -> list[Cause]:
    causes = validate_set(c.get("requests"), REQUESTS_MAX,
                          lambda r, p: _request_ref(r, p, ctx.request_names), same_key,
                          child(path, "requests"))
    return causes + _opaque_config(c, path, ctx.stored)


def _opaque_config(c: Obj, path: str, stored: bool) -> list[Cause]:
    """Same as upstream validateDeviceConfiguration: `opaque` with a driver and JSON object."""
    opaque = c.get("opaque")
    if opaque is None:
        return [required(child(path, "opaque"))]
    opath = child(path, "opaque")
    opaque = opaque or {}
    return (driver_name(opaque.get("driver"), child(opath, "driver"))
            + raw_json_object(opaque.get("parameters"), child(opath, "parameters"),
                              OPAQUE_PARAMETERS_MAX, stored))


def _toleration(tol: Any, path: str) -> list[Cause]:
    """Same as upstream validateDeviceToleration."""
    tol = tol or {}
    causes: list[Cause] = []
    if tol.get("key"):
        causes += label_name(tol["key"], child(path, "key"))
    op = tol.get("operator") or ""
    if op == "Exists":
        if tol.get("value"):
            causes.append(invalid(child(path, "value"), tol["value"],
                                  "must be empty for operator `Exists`"))
    elif op == "Equal":
        causes += label_value(tol.get("value") or "", child(path, "value"))
    elif not op:
        causes.append(required(child(path, "operator")))
    else:
        causes.append(not_supported(child(path, "operator"), op, TOLERATION_OPERATORS))
    effect = tol.get("effect") or ""
    if effect and effect not in TAINT_EFFECTS:
        causes.append(not_supported(child(path, "effect"), effect, TAINT_EFFECTS))
    return causes


def admin_access_causes(spec: Any, namespace: str,
                        lookup: Callable[[str, str, str], Obj | None]) -> list[Cause]:
    """Same as upstream AuthorizedForAdmin: adminAccess needs the namespace label.

    The label value must be exactly "true" (case-sensitive). The path is upstream's, which
    names the request rather than its `exactly` field.
    """
    requests = ((spec or {}).get("devices") or {}).get("requests") or []
    for i, req in enumerate(requests):
        exactly = (req or {}).get("exactly") or {}
        if exactly.get("adminAccess") is True:
            return _admin_namespace_check(f"spec.devices.requests[{i}].adminAccess", namespace,
                                          lookup)
    return []


def _admin_namespace_check(path: str, namespace: str,
                           lookup: Callable[[str, str, str], Obj | None]) -> list[Cause]:
    ns = lookup("namespaces", "", namespace)
    if ns is None:
        return [internal(path, "could not retrieve namespace to verify admin access: "
                         f'namespaces "{namespace}" not found')]
    labels = (ns.get("metadata") or {}).get("labels") or {}
    if labels.get(ADMIN_NAMESPACE_LABEL) != "true":
        return [forbidden(path, ADMIN_ACCESS_MESSAGE)]
    return []


def admin_access_status_causes(new_status: Obj, old_status: Obj, namespace: str,
                               lookup: Callable[[str, str, str], Obj | None]) -> list[Cause]:
    """Same as upstream AuthorizedForAdminStatus: a new adminAccess result needs the label."""
    def first_admin(status: Obj) -> int | None:
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        for i, r in enumerate(results):
            if (r or {}).get("adminAccess") is True:
                return i
        return None

    if first_admin(old_status) is not None:
        return []
    i = first_admin(new_status)
    if i is None:
        return []
    return _admin_namespace_check(f"status.allocation.devices.results[{i}].adminAccess",
                                  namespace, lookup)


# ===== ResourceClaim status ===================================================================

def device_id(entry: Obj) -> str:
    """Upstream's SharedDeviceID string: `driver/pool/device[/shareID]`."""
    text = f"{entry.get('driver', '')}/{entry.get('pool', '')}/{entry.get('device', '')}"
    return text + (f"/{entry['shareID']}" if entry.get("shareID") else "")


def allocated_ids(status: Obj) -> set[str]:
    """Shared device ids of the allocation's results."""
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    return {device_id(r or {}) for r in results}


def validate_claim_status_update(claim: Obj, old: Obj) -> list[Cause]:
    """Same as upstream ValidateResourceClaimStatusUpdate."""
    status = claim.get("status") or {}
    old_status = old.get("status") or {}
    path = "status"
    names_ = request_names((claim.get("spec") or {}).get("devices") or {})
    causes = validate_set(status.get("reservedFor"), RESERVED_FOR_MAX, _consumer_ref,
                          lambda r: (r or {}).get("uid", ""), child(path, "reservedFor"))
    allocated = allocated_ids(status)
    causes += validate_set(status.get("devices"), -1,
                           lambda d, p: _device_status(d or {}, p, allocated),
                           lambda d: Raw(device_id(d or {})), child(path, "devices"))
    if status.get("reservedFor"):
        if status.get("allocation") is None:
            causes.append(forbidden(child(path, "reservedFor"),
                                    "may not be specified when `allocated` is not set"))
        elif (claim.get("metadata") or {}).get("deletionTimestamp"):
            old_refs = {_ref_key(r) for r in old_status.get("reservedFor") or []}
            if any(_ref_key(r) not in old_refs for r in status["reservedFor"]):
                causes.append(forbidden(child(path, "reservedFor"), "new entries may not be "
                                        "added while `deallocationRequested` or "
                                        "`deletionTimestamp` are set"))
    new_alloc, old_alloc = status.get("allocation"), old_status.get("allocation")
    if old_alloc is not None and new_alloc is not None:
        if new_alloc != old_alloc:
            causes.append(immutable(child(path, "allocation"), new_alloc))
    elif new_alloc is not None:
        causes += _allocation_result(new_alloc, child(path, "allocation"), names_)
    return causes


def _ref_key(ref: Any) -> tuple[str, ...]:
    ref = ref or {}
    return tuple(str(ref.get(k, "")) for k in ("apiGroup", "resource", "name", "uid"))


def _consumer_ref(ref: Any, path: str) -> list[Cause]:
    ref = ref or {}
    return [required(child(path, f)) for f in ("resource", "name", "uid") if not ref.get(f)]


def _allocation_result(alloc: Obj, path: str, names_: Mapping[str, set[str] | None]) -> list[Cause]:
    devices = alloc.get("devices") or {}
    dpath = child(path, "devices")
    causes = validate_slice(devices.get("results"), RESULTS_MAX,
                            lambda r, p: _result(r or {}, p, names_), child(dpath, "results"))
    causes += validate_slice(devices.get("config"), 2 * CONFIGS_MAX,
                             lambda c, p: _allocation_config(c or {}, p, names_),
                             child(dpath, "config"))
    if alloc.get("nodeSelector") is not None:
        causes += node_selector(alloc["nodeSelector"], child(path, "nodeSelector"))
    return causes


def _result(r: Obj, path: str, names_: Mapping[str, set[str] | None]) -> list[Cause]:
    causes = _request_ref(r.get("request"), child(path, "request"), names_)
    causes += driver_name(r.get("driver"), child(path, "driver"))
    causes += pool_name(r.get("pool"), child(path, "pool"))
    causes += _device_name(r.get("device"), child(path, "device"))
    causes += _binding_parameters(r, path)
    causes += validate_slice(r.get("tolerations"), -1, _toleration, child(path, "tolerations"))
    if r.get("shareID") is not None:
        causes += common.uid(r["shareID"], child(path, "shareID"))
    return causes


def _allocation_config(c: Obj, path: str, names_: Mapping[str, set[str] | None]) -> list[Cause]:
    source = c.get("source") or ""
    causes: list[Cause] = []
    if not source:
        causes.append(required(child(path, "source")))
    elif source not in CONFIG_SOURCES:
        causes.append(not_supported(child(path, "source"), source, CONFIG_SOURCES))
    causes += validate_set(c.get("requests"), REQUESTS_MAX,
                           lambda r, p: _request_ref(r, p, names_), same_key,
                           child(path, "requests"))
    return causes + _opaque_config(c, path, False)


def _device_status(d: Obj, path: str, allocated: set[str]) -> list[Cause]:
    """Same as upstream validateDeviceStatus."""
    causes = driver_name(d.get("driver"), child(path, "driver"))
    causes += pool_name(d.get("pool"), child(path, "pool"))
    causes += _device_name(d.get("device"), child(path, "device"))
    if d.get("shareID") is not None:
        causes += common.uid(d["shareID"], child(path, "shareID"))
    if device_id(d) not in allocated:
        causes.append(invalid(path, Raw(device_id(d)), "must be an allocated device in the "
                              "claim"))
    conds = d.get("conditions") or []
    if len(conds) > DEVICE_STATUS_CONDITIONS_MAX:
        causes.append(too_many(child(path, "conditions"), len(conds),
                               DEVICE_STATUS_CONDITIONS_MAX))
    causes += common.conditions(conds, child(path, "conditions"))
    if d.get("data") is not None:
        causes += raw_json_object(d["data"], child(path, "data"), DEVICE_STATUS_DATA_MAX)
    net = d.get("networkData")
    if net:
        npath = child(path, "networkData")
        if len(net.get("interfaceName") or "") > INTERFACE_NAME_MAX:
            causes.append(too_long(child(npath, "interfaceName"), INTERFACE_NAME_MAX))
        if len(net.get("hardwareAddress") or "") > HARDWARE_ADDRESS_MAX:
            causes.append(too_long(child(npath, "hardwareAddress"), HARDWARE_ADDRESS_MAX))
        causes += validate_set(net.get("ips"), IPS_MAX, common.interface_address, same_key,
                               child(npath, "ips"))
    return causes


def drop_deallocated_devices(claim: Obj, old: Obj) -> None:
    """Same as upstream dropDeallocatedStatusDevices: entries of deallocated devices go away."""
    status = claim.get("status")
    if not isinstance(status, dict) or not status.get("devices"):
        return

    def ids(s: Obj) -> set[tuple[str, str, str]]:
        results = ((s.get("allocation") or {}).get("devices") or {}).get("results") or []
        return {(r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
                for r in results if isinstance(r, dict)}

    gone = ids(old.get("status") or {}) - ids(status)
    if not gone:
        return
    kept = [d for d in status["devices"] if not isinstance(d, dict)
            or (d.get("driver", ""), d.get("pool", ""), d.get("device", "")) not in gone]
    if kept:
        status["devices"] = kept
    else:
        status.pop("devices", None)


# ===== DeviceClass ==========================================================================

def validate_device_class_spec(spec: Any, old_spec: Any, enabled: Enabled) -> list[Cause]:
    """Same as upstream validateDeviceClassSpec (unchanged selectors count as stored)."""
    spec = spec or {}
    path = "spec"
    stored = old_spec is not None and (old_spec or {}).get("selectors") == spec.get("selectors")
    causes = validate_slice(spec.get("selectors"), SELECTORS_MAX,
                            lambda s, p: _selector(s or {}, p, enabled, stored),
                            child(path, "selectors"))
    stored_config = old_spec is not None and (old_spec or {}).get("config") == spec.get("config")
    causes += validate_slice(spec.get("config"), CONFIGS_MAX,
                             lambda c, p: _opaque_config(c or {}, p, stored_config),
                             child(path, "config"))
    name = spec.get("extendedResourceName")
    if name is not None and not is_extended_resource_name(name):
        causes.append(invalid(child(path, "extendedResourceName"), name,
                              "must be a valid extended resource name"))
    return causes


def is_extended_resource_name(name: str) -> bool:
    """Same as upstream IsExtendedResourceName: domain-prefixed, not kubernetes.io, quotable."""
    from fakeapi.machinery import names

    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    if domain == "kubernetes.io" or domain.endswith(".kubernetes.io"):
        return False
    return not names.label_key_errors("requests." + name)


# ===== ResourceSlice ========================================================================

def validate_slice_spec(spec: Any, old_spec: Any, enabled: Enabled) -> list[Cause]:
    """Same as upstream validateResourceSliceSpec (with immutability on update)."""
    spec = spec or {}
    path = "spec"
    causes = driver_name(spec.get("driver"), child(path, "driver"))
    pool = spec.get("pool") or {}
    ppath = child(path, "pool")
    causes += pool_name(pool.get("name"), child(ppath, "name"))
    if (pool.get("resourceSliceCount") or 0) <= 0:
        causes.append(invalid(child(ppath, "resourceSliceCount"),
                              pool.get("resourceSliceCount") or 0, "must be greater than zero"))
    if (pool.get("generation") or 0) < 0:
        causes.append(invalid(child(ppath, "generation"), pool["generation"],
                              "must be greater than or equal to zero"))
    if old_spec is not None:
        old_spec = old_spec or {}
        if pool.get("name") != (old_spec.get("pool") or {}).get("name"):
            causes.append(immutable(child(ppath, "name"), pool.get("name")))
        if spec.get("driver") != old_spec.get("driver"):
            causes.append(immutable(child(path, "driver"), spec.get("driver")))
        if spec.get("nodeName") != old_spec.get("nodeName"):
            causes.append(immutable(child(path, "nodeName"), spec.get("nodeName")))
    causes += _node_selection(spec, path)
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        causes.append(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
    devices = spec.get("devices") or []
    advanced = any((d or {}).get("taints") or (d or {}).get("consumesCounters")
                   or _has_list_attributes(d or {}) for d in devices)
    max_devices = SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES
    per_device = spec.get("perDeviceNodeSelection") is True
    old_devices = {(d or {}).get("name"): d or {} for d in (old_spec or {}).get("devices") or []}
    causes += validate_set(devices, max_devices,
                           lambda d, p: _device(d or {}, old_devices.get((d or {}).get("name")),
                                                p, per_device),
                           name_key, child(path, "devices"))
    causes += validate_set(spec.get("sharedCounters"), COUNTER_SETS_MAX, _counter_set, name_key,
                           child(path, "sharedCounters"))
    if spec.get("partitionTypeAttribute") is not None:
        causes += _partition_type_attribute(spec, path)
    return causes


def _node_selection(spec: Obj, path: str) -> list[Cause]:
    """Exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection."""
    causes: list[Cause] = []
    chosen: list[str] = []
    if spec.get("nodeName") is not None:
        if spec["nodeName"]:
            chosen.append("`nodeName`")
            causes += node_name(spec["nodeName"], child(path, "nodeName"))
        else:
            causes.append(invalid(child(path, "nodeName"), "",
                                  "must be either unset or set to a non-empty string"))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        causes += node_selector(spec["nodeSelector"], child(path, "nodeSelector"))
        terms = (spec["nodeSelector"] or {}).get("nodeSelectorTerms") or []
        if len(terms) != 1:
            causes.append(invalid(child(path, "nodeSelector", "nodeSelectorTerms"), terms,
                                  "must have exactly one node selector term"))
    for field_name in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(field_name) is not None:
            if spec[field_name] is True:
                chosen.append(f"`{field_name}`")
            else:
                causes.append(invalid(child(path, field_name), spec[field_name],
                                      "must be either unset or set to true"))
    what = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` " \
           "is required"
    if not chosen:
        causes.append(required(path, what))
    elif len(chosen) > 1:
        causes.append(invalid(path, "{" + ", ".join(chosen) + "}",
                              what + ", but multiple fields are set"))
    return causes


def _has_list_attributes(device: Obj) -> bool:
    return any(isinstance(a, dict) and any(k in a for k in ("bools", "ints", "strings",
                                                               "versions"))
               for a in (device.get("attributes") or {}).values())


def _device_name(name: Any, path: str) -> list[Cause]:
    if not name:
        return [required(path)]
    return dns_label(name, path)


def _device(d: Obj, old: Obj | None, path: str, per_device: bool) -> list[Cause]:
    """Same as upstream validateDevice."""
    causes = _device_name(d.get("name"), child(path, "name"))
    attributes = d.get("attributes") or {}
    capacity = d.get("capacity") or {}
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        causes.append(invalid(path, total, "the total number of attributes and capacities must "
                              f"not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"))
    values = sum(_attribute_values(a) for a in attributes.values())
    if values > MAX_ATTRIBUTE_VALUES:
        causes.append(invalid(path, values, "the total number of attribute values must not "
                              f"exceed {MAX_ATTRIBUTE_VALUES}"))
    causes += validate_map(attributes, -1, QUALIFIED_NAME_MAX, qualified_name, _attribute,
                           child(path, "attributes"))
    multi = d.get("allowMultipleAllocations") is True
    if old is None or old.get("capacity") != d.get("capacity"):
        causes += validate_map(capacity, -1, QUALIFIED_NAME_MAX, qualified_name,
                               lambda c, p: _capacity(c or {}, p, multi),
                               child(path, "capacity"))
    if old is None or old.get("taints") != d.get("taints"):
        causes += validate_slice(d.get("taints"), TAINTS_MAX, taint, child(path, "taints"))
    causes += validate_set(d.get("consumesCounters"), CONSUMES_COUNTERS_MAX, _consumption,
                           lambda c: (c or {}).get("counterSet", ""),
                           child(path, "consumesCounters"))
    causes += _device_node_selection(d, path, per_device)
    causes += _binding_parameters(d, path)
    return causes


def _attribute_values(attr: Any) -> int:
    if not isinstance(attr, dict):
        return 1
    n = sum(len(attr.get(k) or []) for k in ("bools", "ints", "strings", "versions"))
    return n or 1


_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")


def _attribute(attr: Any, path: str) -> list[Cause]:
    """Same as upstream validateDeviceAttribute: exactly one (scalar or list) value."""
    attr = attr or {}
    causes: list[Cause] = []
    present = [k for k in ("bool", "int", "string", "version", "bools", "ints", "strings",
                           "versions") if attr.get(k) is not None]
    if "string" in present:
        causes += _string_value(attr["string"], child(path, "string"))
    if "version" in present:
        causes += _version_value(attr["version"], child(path, "version"))
    for k in ("bools", "ints", "strings", "versions"):
        if k in present:
            if not attr[k]:
                causes.append(invalid(child(path, k), attr[k], "must not be empty if specified"))
            for i, item in enumerate(attr[k]):
                if k == "strings":
                    causes += _string_value(item, index(child(path, k), i))
                elif k == "versions":
                    causes += _version_value(item, index(child(path, k), i))
    if not present:
        causes.append(invalid(path, "", "exactly one value must be specified"))
    elif len(present) > 1:
        causes.append(invalid(path, attr, "exactly one value must be specified"))
    return causes


def _string_value(value: Any, path: str) -> list[Cause]:
    if len(str(value)) > ATTRIBUTE_VALUE_MAX_LENGTH:
        return [too_long(path, ATTRIBUTE_VALUE_MAX_LENGTH)]
    return []


def _version_value(value: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    if _SEMVER_RE.match(str(value)) is None:
        causes.append(invalid(path, value, "must be a string compatible with semver.org spec "
                              "2.0.0"))
    if len(str(value)) > ATTRIBUTE_VALUE_MAX_LENGTH:
        causes.append(too_long(path, ATTRIBUTE_VALUE_MAX_LENGTH))
    return causes


def _q(value: Any) -> Fraction | None:
    try:
        return parse_quantity(str(value))
    except ValueError:
        return None


def _capacity(cap: Obj, path: str, multi: bool) -> list[Cause]:
    """Same as upstream: requestPolicy only on multi-allocatable devices, and then consistent."""
    policy = cap.get("requestPolicy")
    if policy is None:
        return []
    ppath = child(path, "requestPolicy")
    if not multi:
        return [forbidden(ppath, "allowMultipleAllocations must be true")]
    policy = policy or {}
    value = _q(cap.get("value"))
    valid_values, valid_range = policy.get("validValues") or [], policy.get("validRange")
    if valid_values and valid_range is not None:
        return [forbidden(ppath, 'exactly one policy can be specified, cannot specify '
                          '"validValues" and "validRange" at the same time')]
    default = policy.get("default")
    causes: list[Cause] = []
    if valid_values:
        if default is None:
            return [required(child(ppath, "default"), "required when validValues is defined")]
        vpath = child(ppath, "validValues")
        parsed = [_q(v) for v in valid_values]
        for i in range(len(parsed) - 1):
            a, b = parsed[i], parsed[i + 1]
            if a is not None and b is not None and a > b:
                causes.append(invalid(index(vpath, i + 1), valid_values[i + 1],
                                      "values must be sorted in ascending order"))
        if len(valid_values) > REQUEST_POLICY_OPTIONS_MAX:
            return causes + [too_many(vpath, len(valid_values), REQUEST_POLICY_OPTIONS_MAX)]
        seen: set[Fraction] = set()
        for i, (text, v) in enumerate(zip(valid_values, parsed, strict=True)):
            if v is None:
                continue
            if value is not None and v > value:
                causes.append(invalid(index(vpath, i), text, "option is larger than capacity "
                                      f"value: {cap.get('value')}"))
            if v in seen:
                causes.append(duplicate(index(vpath, i), text))
            seen.add(v)
        if _q(default) not in seen:
            causes.append(invalid(vpath, default, "default value is not valid according to the "
                                  "requestPolicy"))
    elif valid_range is not None:
        if default is None:
            return [required(child(ppath, "default"), "required when validRange is defined")]
        causes += _request_range(_q(default), default, valid_range or {}, value,
                                 str(cap.get("value")), child(ppath, "validRange"))
    return causes


def _request_range(default: Fraction | None, default_text: Any, rng: Obj,
                   value: Fraction | None, value_text: str, path: str) -> list[Cause]:
    mn, mx, step = _q(rng.get("min")), _q(rng.get("max")), _q(rng.get("step"))
    if rng.get("min") is None or mn is None:
        return [required(child(path, "min"), "required when validRange is defined")]
    causes: list[Cause] = []
    if value is not None and mn > value:
        causes.append(invalid(child(path, "min"), rng["min"],
                              f"min is larger than capacity value: {value_text}"))
    if default is not None and default < mn:
        causes.append(invalid(child(path, "default"), default_text,
                              f"default is less than min: {rng['min']}"))
    if mx is not None:
        if mn > mx:
            causes.append(invalid(child(path, "max"), rng["min"],
                                  f"min is larger than max: {rng['max']}"))
        if value is not None and mx > value:
            causes.append(invalid(child(path, "max"), rng["max"],
                                  f"max is larger than capacity value: {value_text}"))
        if default is not None and default > mx:
            causes.append(invalid(child(path, "default"), default_text,
                                  f"default is more than max: {rng['max']}"))
    if rng.get("step") is not None and step is not None:
        if step <= 0:
            causes.append(invalid(child(path, "step"), rng["step"], "must be greater than zero"))
        else:
            if value is not None and mn + step > value:
                causes.append(invalid(child(path, "step"), rng["step"],
                                      f"one step {mn + step} is larger than capacity value: "
                                      f"{value_text}"))
            for v, text in ((default, default_text), (mx, rng.get("max"))):
                if v is not None and (v - mn) % step != 0:
                    causes.append(invalid(child(path, "step"), text, "value is not a multiple of "
                                          f"a given step ({rng['step']}) from ({rng['min']})"))
    return causes


def taint(t: Any, path: str, old: Obj | None = None) -> list[Cause]:
    """Same as upstream validateDeviceTaint."""
    t = t or {}
    causes = label_name(t.get("key") or "", child(path, "key"))
    if t.get("value"):
        causes += label_value(t["value"], child(path, "value"))
    effect = t.get("effect") or ""
    if old is None or old.get("effect") != effect:
        if not effect:
            causes.append(required(child(path, "effect")))
        elif effect not in TAINT_EFFECTS:
            causes.append(not_supported(child(path, "effect"), effect, TAINT_EFFECTS))
    return causes


def _counter_set(cs: Any, path: str) -> list[Cause]:
    cs = cs or {}
    causes: list[Cause] = []
    if not cs.get("name"):
        causes.append(required(child(path, "name")))
    else:
        causes += dns_label(cs["name"], child(path, "name"))
    if not cs.get("counters"):
        causes.append(required(child(path, "counters")))
    else:
        causes += validate_map(cs["counters"], COUNTERS_PER_SET_MAX, 63, dns_label, None,
                               child(path, "counters"))
    return causes


def _consumption(c: Any, path: str) -> list[Cause]:
    c = c or {}
    causes: list[Cause] = []
    if not c.get("counterSet"):
        causes.append(required(child(path, "counterSet")))
    else:
        causes += dns_label(c["counterSet"], child(path, "counterSet"))
    if not c.get("counters"):
        causes.append(required(child(path, "counters")))
    else:
        causes += validate_map(c["counters"], COUNTERS_PER_CONSUMPTION_MAX, 63, dns_label, None,
                               child(path, "counters"))
    return causes


def _device_node_selection(d: Obj, path: str, per_device: bool) -> list[Cause]:
    fields = [f for f in ("nodeName", "nodeSelector", "allNodes") if d.get(f) is not None]
    if not per_device:
        if fields:
            return [invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be "
                            "set if `perDeviceNodeSelection` is set to true in the ResourceSlice "
                            "spec")]
        return []
    causes: list[Cause] = []
    chosen: list[str] = []
    if d.get("nodeName") is not None:
        if d["nodeName"]:
            chosen.append("`nodeName`")
            causes += node_name(d["nodeName"], child(path, "nodeName"))
        else:
            causes.append(invalid(child(path, "nodeName"), "", "must not be empty"))
    if d.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        causes += node_selector(d["nodeSelector"], child(path, "nodeSelector"))
    if d.get("allNodes") is not None:
        if d["allNodes"] is True:
            chosen.append("`allNodes`")
        else:
            causes.append(invalid(child(path, "allNodes"), d["allNodes"],
                                  "must be either unset or set to true"))
    what = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    if not chosen:
        causes.append(required(path, what))
    elif len(chosen) > 1:
        causes.append(invalid(path, "{" + ", ".join(chosen) + "}", what))
    return causes


def _binding_parameters(obj: Obj, path: str) -> list[Cause]:
    """Same as upstream validateDeviceBindingParameters."""
    conds = obj.get("bindingConditions") or []
    fails = obj.get("bindingFailureConditions") or []
    cpath, fpath = child(path, "bindingConditions"), child(path, "bindingFailureConditions")
    causes = validate_slice(conds, BINDING_CONDITIONS_MAX, label_name, cpath)
    causes += validate_slice(fails, BINDING_FAILURE_CONDITIONS_MAX, label_name, fpath)
    seen: set[str] = set()
    for i, c in enumerate(conds):
        if c in seen:
            causes.append(duplicate(index(cpath, i), c))
        seen.add(c)
    seen_f: set[str] = set()
    for i, c in enumerate(fails):
        if c in seen_f:
            causes.append(duplicate(index(fpath, i), c))
        seen_f.add(c)
        if c in seen:
            causes.append(invalid(index(fpath, i), c, "bindingFailureConditions must not "
                                  "overlap with bindingConditions"))
    if not conds and fails:
        causes.append(invalid(cpath, conds, "bindingConditions are required to use "
                              "bindingFailureConditions"))
    if not fails and conds:
        causes.append(invalid(fpath, fails, "bindingFailureConditions are required to use "
                              "bindingConditions"))
    return causes


def _partition_type_attribute(spec: Obj, path: str) -> list[Cause]:
    """The slice-level rules for `partitionTypeAttribute` (KEP-5677, 1.37).

    Rejected on a slice that can't take part in counter accounting (no devices); every device
    that consumes counters must carry the named attribute as a string.
    """
    name = spec["partitionTypeAttribute"]
    apath = child(path, "partitionTypeAttribute")
    causes = fully_qualified_name(name, apath)
    if causes:
        return causes
    devices = spec.get("devices") or []
    if not devices:
        return [invalid(apath, name, "may only be set on a slice which declares devices")]
    bare = name.removeprefix(f"{spec.get('driver', '')}/") if name.startswith(
        f"{spec.get('driver', '')}/") else ""
    for i, d in enumerate(devices):
        d = d or {}
        if not d.get("consumesCounters"):
            continue
        attrs = d.get("attributes") or {}
        attr = attrs.get(name) if name in attrs else attrs.get(bare) if bare else None
        attr_path = key(child(index(child(path, "devices"), i), "attributes"), name)
        if attr is None:
            causes.append(required(attr_path, "device consumes counters and "
                                   "`partitionTypeAttribute` names this attribute, so it must "
                                   "be set"))
        elif (attr or {}).get("string") is None:
            causes.append(invalid(attr_path, attr, "must be a string value because "
                                  "`partitionTypeAttribute` names this attribute"))
    return causes


# ===== DeviceTaintRule ========================================================================

def validate_taint_rule_spec(spec: Any, old_spec: Any) -> list[Cause]:
    """Same as upstream validateDeviceTaintRuleSpec."""
    spec = spec or {}
    path = "spec"
    causes: list[Cause] = []
    sel = spec.get("deviceSelector")
    if sel:
        spath = child(path, "deviceSelector")
        if sel.get("driver") is not None:
            causes += driver_name(sel["driver"], child(spath, "driver"))
        if sel.get("pool") is not None:
            causes += pool_name(sel["pool"], child(spath, "pool"))
        if sel.get("device") is not None:
            causes += _device_name(sel["device"], child(spath, "device"))
    old_taint = (old_spec or {}).get("taint") if old_spec is not None else None
    causes += taint(spec.get("taint"), child(path, "taint"), old_taint)
    return causes


def validate_taint_rule_status(status: Any) -> list[Cause]:
    """Same as upstream ValidateDeviceTaintRuleStatusUpdate."""
    conds = (status or {}).get("conditions") or []
    causes = common.conditions(conds, "status.conditions")
    if len(conds) > TAINT_RULE_CONDITIONS_MAX:
        causes.append(too_many("status.conditions", len(conds), TAINT_RULE_CONDITIONS_MAX))
    return causes


# ===== ResourcePoolStatusRequest ==============================================================

def validate_rpsr_spec(spec: Any) -> list[Cause]:
    """Same as upstream's 1.37 ResourcePoolStatusRequest spec rules.

    Deliberate deviation: `driver` may also be `domain/name` (every segment a DNS subdomain),
    because the documented example (`driver: example.com/gpu`) must be accepted.
    """
    spec = spec or {}
    path = "spec"
    causes: list[Cause] = []
    driver = spec.get("driver") or ""
    if not driver:
        causes.append(required(child(path, "driver")))
    else:
        for part in driver.split("/", 1):
            causes += driver_name(part, child(path, "driver"))
    if spec.get("poolName") is not None:
        causes += pool_name(spec["poolName"], child(path, "poolName"))
    limit = spec.get("limit")
    if limit is not None:
        if limit < 1:
            causes.append(invalid(child(path, "limit"), limit,
                                  "must be greater than or equal to 1"))
        elif limit > RPSR_LIMIT_MAX:
            causes.append(invalid(child(path, "limit"), limit,
                                  f"must be less than or equal to {RPSR_LIMIT_MAX}"))
    if spec.get("defaultPartitionTypeAttribute") is not None:
        causes += fully_qualified_name(spec["defaultPartitionTypeAttribute"],
                                       child(path, "defaultPartitionTypeAttribute"))
    return causes


def validate_rpsr_update(obj: Obj, old: Obj) -> list[Cause]:
    """The spec never changes; nothing changes once status is set (KEP-5677)."""
    causes: list[Cause] = []
    if obj.get("spec") != old.get("spec"):
        causes.append(immutable_forbidden("spec"))
    if old.get("status"):  # set (an empty struct is unset)
        meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
        for f in ("labels", "annotations", "ownerReferences"):
            if (meta.get(f) or None) != (old_meta.get(f) or None):
                causes.append(forbidden(child("metadata", f), "may not be changed once status "
                                        "is set: the request is complete and immutable"))
        if set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or []):
            causes.append(forbidden("metadata.finalizers", "may not be added once status is "
                                    "set: the request is complete and immutable"))
    return causes


def validate_rpsr_status_update(status: Any, old_status: Any) -> list[Cause]:
    """Status is written once (by the controller), then frozen."""
    if old_status:  # set (an empty struct is unset)
        if status != old_status:
            return [immutable_forbidden("status")]
        return []
    if not status:
        return []
    path = "status"
    causes: list[Cause] = []
    if status.get("poolCount") is None:
        causes.append(required(child(path, "poolCount")))
    elif status["poolCount"] < 0:
        causes.append(invalid(child(path, "poolCount"), status["poolCount"],
                              "must be greater than or equal to 0"))
    causes += validate_slice(status.get("pools"), RPSR_POOLS_MAX, _pool_status,
                             child(path, "pools"))
    conds = status.get("conditions") or []
    if len(conds) > RPSR_CONDITIONS_MAX:
        causes.append(too_many(child(path, "conditions"), len(conds), RPSR_CONDITIONS_MAX))
    causes += common.conditions(conds, child(path, "conditions"))
    return causes


def _pool_status(pool: Any, path: str) -> list[Cause]:
    pool = pool or {}
    causes = driver_name(pool.get("driver"), child(path, "driver")) if pool.get("driver") else [
        required(child(path, "driver"))]
    causes += pool_name(pool.get("poolName"), child(path, "poolName"))
    if pool.get("nodeName"):
        causes += node_name(pool["nodeName"], child(path, "nodeName"))
    for f in ("generation", "totalDevices", "allocatedDevices", "availableDevices",
              "unavailableDevices"):
        if (pool.get(f) or 0) < 0:
            causes.append(invalid(child(path, f), pool[f], "must be greater than or equal to 0"))
    if pool.get("resourceSliceCount") is not None and pool["resourceSliceCount"] < 1:
        causes.append(invalid(child(path, "resourceSliceCount"), pool["resourceSliceCount"],
                              "must be greater than or equal to 1"))
    if len((pool.get("validationError") or "").encode()) > RPSR_VALIDATION_ERROR_MAX:
        causes.append(too_long(child(path, "validationError"), RPSR_VALIDATION_ERROR_MAX))
    causes += validate_slice(pool.get("partitionSummary"), RPSR_PARTITION_SUMMARY_MAX, None,
                             child(path, "partitionSummary"))
    return causes

