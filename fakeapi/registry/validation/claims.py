"""Validation and defaults of ResourceClaims and ResourceClaimTemplates, after upstream's
pkg/apis/resource/validation: the claim spec (requests, subrequests, selectors, derived
attributes, constraints, configs, tolerations), admin access, and the claim status written by
the scheduler and drivers.

Pure functions over JSON objects: each takes the object (and the stored one for updates) plus
`enabled(gate)`, and returns `Cause`s with upstream field paths and message shapes. Limits are
the 1.37 constants of `k8s.io/api/resource/v1`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from fakeapi import cel
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    Raw,
    child,
    forbidden,
    immutable,
    internal,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from fakeapi.registry.validation import common
from fakeapi.registry.validation.common import (
    Enabled,
    Obj,
    dns_label,
    dns_subdomain,
    driver_name,
    fully_qualified_name,
    label_name,
    label_value,
    name_key,
    node_selector,
    pool_name,
    qualified_name,
    raw_json_object,
    same_key,
    validate_map,
    validate_set,
    validate_slice,
)
from fakeapi.registry.validation.slices import (
    QUALIFIED_NAME_MAX,
    TAINT_EFFECTS,
    binding_parameters,
    device_name,
)

# Limits, same as upstream k8s.io/api/resource/v1 (1.37).
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
DERIVED_TOTAL_COST_MAX = cel.MAX_COST  # combined cost of a claim's derived attributes

ADMIN_NAMESPACE_LABEL = "resource.kubernetes.io/admin-access"
ADMIN_ACCESS_MESSAGE = (f"admin access to devices requires the `{ADMIN_NAMESPACE_LABEL}: true` "
                        "label on the containing namespace")
TOLERATION_OPERATORS = ("Equal", "Exists")
ALLOCATION_MODES = ("All", "ExactCount")
CONFIG_SOURCES = ("FromClaim", "FromClass")


def _cel_features(enabled: Enabled) -> cel.Features:
    return cel.Features(list_attributes=enabled("DRAListTypeAttributes"),
                        consumable_capacity=enabled("DRAConsumableCapacity"))


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


def default_resource_claim(obj: Obj) -> None:
    """Same as upstream's decode-time SetDefaults of a ResourceClaim: its spec's requests."""
    default_claim_spec(obj.get("spec"))


def default_resource_claim_template(obj: Obj) -> None:
    """Same as upstream's decode-time SetDefaults of a ResourceClaimTemplate: the requests of
    the claim spec it holds."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        default_claim_spec(spec.get("spec"))


def _default_exact(req: Obj) -> None:
    if not req.get("allocationMode"):
        req["allocationMode"] = "ExactCount"
    if req["allocationMode"] == "ExactCount" and not req.get("count"):
        req["count"] = 1
    for tol in req.get("tolerations") or []:
        if isinstance(tol, dict) and not tol.get("operator"):
            tol["operator"] = "Equal"


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
                                 lambda s, p: device_selector(s or {}, p, ctx.enabled, ctx.stored),
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


def device_selector(sel: Obj, path: str, enabled: Enabled, stored: bool) -> list[Cause]:
    """A device selector: its CEL expression (not re-checked once `stored`)."""
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
    return causes + opaque_config(c, path, ctx.stored)


def opaque_config(c: Obj, path: str, stored: bool) -> list[Cause]:
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
    causes += device_name(r.get("device"), child(path, "device"))
    causes += binding_parameters(r, path)
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
    return causes + opaque_config(c, path, False)


def _device_status(d: Obj, path: str, allocated: set[str]) -> list[Cause]:
    """Same as upstream validateDeviceStatus."""
    causes = driver_name(d.get("driver"), child(path, "driver"))
    causes += pool_name(d.get("pool"), child(path, "pool"))
    causes += device_name(d.get("device"), child(path, "device"))
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
