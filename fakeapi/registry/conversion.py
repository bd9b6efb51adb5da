"""Conversion between the served versions of a stored kind (upstream's scheme conversion
through the internal version, written from its rules in pkg/apis/*/v*/conversion.go).

A kind is stored once, at its stored row's version; a row serving another version
(`Kind.storage_version`) converts each body it takes to the stored version and each object
it answers with (reads, lists, watch events, write responses) back. Most versions served
this way have the fields of their stored version, one for one (resource.k8s.io v1beta2 and
v1; scheduling.k8s.io v1alpha3 and v1beta1: the generated conversions copy every field), so
their conversion sets `apiVersion`. resource.k8s.io/v1beta1 differs in two places, each a
rule of `_RULES` (pkg/apis/resource/v1beta1/conversion.go): a claim's request holds the
fields v1 nests under `exactly` at its top, and a slice's device holds under `basic` what
v1 holds at its top (and the slice's `nodeName` and `allNodes` are values, not pointers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import orjson

from fakeapi.machinery.jsonio import dumps
from fakeapi.registry import hpa_conversion
from fakeapi.registry.rest import Kind
from fakeapi.schema.schemas import get_schemas

Obj = dict[str, Any]
Rewrite = Callable[[Obj], Obj]
"""One value at a rule's path, as the other version holds it (a new dict)."""


def storage_api_version(kind: Kind) -> str:
    """The apiVersion objects of the row's kind are stored at."""
    version = kind.storage_version or kind.version
    return f"{kind.group}/{version}" if kind.group else version


def to_storage(obj: Obj, kind: Kind) -> Obj:
    """A body decoded at the row's version, as the stored version holds it (in place at the
    top; a rule's values are replaced by new ones)."""
    if kind.storage_version and obj.get("apiVersion") == kind.api_version:
        obj["apiVersion"] = storage_api_version(kind)
        for path, inward, _ in _rules(kind):
            obj = inward(obj) if not path else _rewrite_in(obj, path, inward)
    return obj


def to_served(obj: Obj, kind: Kind) -> Obj:
    """A stored object at the row's version (a new top-level dict; what no rule changes is
    shared with the stored object, which is never modified)."""
    if not kind.storage_version:
        return obj
    out = {**obj, "apiVersion": kind.api_version}
    for path, _, outward in _rules(kind):
        out = outward(out) if not path else _rewrite_in(out, path, outward)
    return out


def raw_to_served(raw: bytes, kind: Kind) -> bytes:
    """A stored object's JSON at the row's version (the same bytes for the stored row)."""
    if not kind.storage_version:
        return raw
    return dumps(to_served(orjson.loads(raw), kind))


def _rewrite_in(obj: Obj, path: tuple[str, ...], rewrite: Rewrite) -> Obj:
    """Replace the value at `path` (a list: each of its objects) by its rewrite, copying the
    dicts on the way down so that nothing `obj` shares is changed; `obj`."""
    head, rest = path[0], path[1:]
    value = obj.get(head)
    if rest:
        if isinstance(value, dict):
            value = obj[head] = dict(value)
            _rewrite_in(value, rest, rewrite)
    elif isinstance(value, list):
        obj[head] = [rewrite(v) if isinstance(v, dict) else v for v in value]
    elif isinstance(value, dict):
        obj[head] = rewrite(value)
    return obj


# ----- resource.k8s.io/v1beta1 (pkg/apis/resource/v1beta1/conversion.go) --------------------


@functools.cache
def _exact_fields() -> frozenset[str]:
    """The fields of v1's ExactDeviceRequest, which v1beta1's DeviceRequest holds itself."""
    schema = get_schemas().definitions["io.k8s.api.resource.v1.ExactDeviceRequest"]
    return frozenset(schema["properties"])


def _is_set(value: Any) -> bool:
    """Go's test of a request field against its zero value (an empty list is set)."""
    if value is None or value == "":
        return False
    return value != 0 if type(value) is int else True  # adminAccess false is set (a pointer)


def _request_to_v1(request: Obj) -> Obj:
    """Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest: any of the main request's
    fields set makes an `exactly` of them (validation judges it)."""
    fields = _exact_fields()
    out = {k: v for k, v in request.items() if k not in fields}
    main = {k: v for k, v in request.items() if k in fields and v is not None}
    if any(_is_set(v) for v in main.values()):
        out["exactly"] = main
    return out


def _hoist(value: Obj, key: str) -> Obj:
    """`value` without its field `key`, that field's own fields at its top instead."""
    out = {k: v for k, v in value.items() if k != key}
    inner = value.get(key)
    if isinstance(inner, dict):
        out.update(inner)
    return out


def _request_to_v1beta1(request: Obj) -> Obj:
    """Convert_resource_DeviceRequest_To_v1beta1_DeviceRequest: `exactly`'s fields at the
    request's top."""
    return _hoist(request, "exactly")


def _device_to_v1(device: Obj) -> Obj:
    """Convert_v1beta1_Device_To_resource_Device: `basic`'s fields at the device's top."""
    return _hoist(device, "basic")


def _device_to_v1beta1(device: Obj) -> Obj:
    """Convert_resource_Device_To_v1beta1_Device: every field but the name under `basic`,
    which is always there."""
    return {**({"name": device["name"]} if "name" in device else {}),
            "basic": {k: v for k, v in device.items() if k != "name"}}


def _slice_spec(spec: Obj) -> Obj:
    """Convert_*_ResourceSliceSpec_*: v1beta1's nodeName and allNodes are values whose zero
    is left out, v1's are pointers that are unset then (both ways the same rule)."""
    return {k: v for k, v in spec.items()
            if not ((k == "nodeName" and v == "") or (k == "allNodes" and v is False))}


_REQUESTS = (_request_to_v1, _request_to_v1beta1)
_RULES: dict[tuple[str, str, str], tuple[tuple[tuple[str, ...], Rewrite, Rewrite], ...]] = {
    ("resource.k8s.io", "v1beta1", "ResourceClaim"): (
        (("spec", "devices", "requests"), *_REQUESTS),),
    ("resource.k8s.io", "v1beta1", "ResourceClaimTemplate"): (
        (("spec", "spec", "devices", "requests"), *_REQUESTS),),
    ("resource.k8s.io", "v1beta1", "ResourceSlice"): (
        (("spec",), _slice_spec, _slice_spec),
        (("spec", "devices"), _device_to_v1, _device_to_v1beta1)),
    ("autoscaling", "v1", "HorizontalPodAutoscaler"): (
        ((), hpa_conversion.to_v2, hpa_conversion.to_v1),),
}
"""Per served (group, version, kind): each path whose value differs from the stored
version's, with its rewrite to the stored version and back (a list: each item; the empty
path: the whole object)."""


def _rules(kind: Kind) -> tuple[tuple[tuple[str, ...], Rewrite, Rewrite], ...]:
    return _RULES.get((kind.group, kind.version, kind.kind), ())
