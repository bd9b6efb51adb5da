"""Validation of ResourceSlices, after upstream's pkg/apis/resource/validation: the pool,
node selection, devices (attributes, capacity and its request policies, taints, counters,
binding conditions) and shared counter sets.

Pure functions over JSON objects, as the other DRA modules here: the spec (and the stored one
on update) plus `enabled(gate)`, returning `Cause`s with upstream field paths and message
shapes. The device-level rules claims and taint rules share (`device_name`, `taint`,
`binding_parameters`) live here too.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from fakeapi.kube.resourcelimits import (
    COUNTER_SETS_MAX,
    SLICE_MAX_DEVICES,
    SLICE_MAX_DEVICES_ADVANCED,
)
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    child,
    duplicate,
    forbidden,
    immutable,
    index,
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
    Enabled,
    Obj,
    dns_label,
    driver_name,
    fully_qualified_name,
    label_name,
    label_value,
    name_key,
    node_name,
    node_selector,
    pool_name,
    qualified_name,
    validate_map,
    validate_set,
    validate_slice,
)

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
REQUEST_POLICY_OPTIONS_MAX = 10

TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")


def default_slice_taints(spec: Any, now: str) -> None:
    """Same as upstream SetDefaults_DeviceTaint: a taint without `timeAdded` gets `now`."""
    if not isinstance(spec, dict):
        return
    for device in spec.get("devices") or []:
        for t in (device or {}).get("taints") or [] if isinstance(device, dict) else []:
            if isinstance(t, dict) and not t.get("timeAdded"):
                t["timeAdded"] = now


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


def device_name(name: Any, path: str) -> list[Cause]:
    """A device's name: required, a DNS label."""
    if not name:
        return [required(path)]
    return dns_label(name, path)


def _device(d: Obj, old: Obj | None, path: str, per_device: bool) -> list[Cause]:
    """Same as upstream validateDevice."""
    causes = device_name(d.get("name"), child(path, "name"))
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
    causes += binding_parameters(d, path)
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
    """A shared counter set: its name and counters."""
    return _counters(cs, path, "name", COUNTERS_PER_SET_MAX)


def _consumption(c: Any, path: str) -> list[Cause]:
    """What a device consumes of a counter set: the set's name and the counters."""
    return _counters(c, path, "counterSet", COUNTERS_PER_CONSUMPTION_MAX)


def _counters(item: Any, path: str, name_field: str, max_counters: int) -> list[Cause]:
    """A named map of counters: the name (a DNS label) and the counters, both required."""
    item = item or {}
    causes: list[Cause] = []
    if not item.get(name_field):
        causes.append(required(child(path, name_field)))
    else:
        causes += dns_label(item[name_field], child(path, name_field))
    if not item.get("counters"):
        causes.append(required(child(path, "counters")))
    else:
        causes += validate_map(item["counters"], max_counters, 63, dns_label, None,
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


def binding_parameters(obj: Obj, path: str) -> list[Cause]:
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
