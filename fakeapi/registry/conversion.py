"""Conversion between the served versions of a stored kind (upstream's scheme conversion
through the internal version, written from its rules in pkg/apis/*/v*/conversion.go).

A kind is stored once, at its stored row's version; a row serving another version
(`Kind.storage_version`) converts each body it takes to the stored version and each object
it answers with (reads, lists, watch events, write responses) back. In 1.37 the versions
served this way have the fields of their stored version, one for one (resource.k8s.io
v1beta2 and v1; scheduling.k8s.io v1alpha3 and v1beta1: the generated conversions copy
every field, and no version has a field the other lacks), so a conversion sets
`apiVersion` and round trips are lossless. A pair that differs gets its field rules here.
"""

from __future__ import annotations

from typing import Any

import orjson

from fakeapi.machinery.jsonio import dumps
from fakeapi.registry.rest import Kind

Obj = dict[str, Any]


def storage_api_version(kind: Kind) -> str:
    """The apiVersion objects of the row's kind are stored at."""
    version = kind.storage_version or kind.version
    return f"{kind.group}/{version}" if kind.group else version


def to_storage(obj: Obj, kind: Kind) -> Obj:
    """A body decoded at the row's version, as the stored version holds it (in place)."""
    if kind.storage_version and obj.get("apiVersion") == kind.api_version:
        obj["apiVersion"] = storage_api_version(kind)
    return obj


def to_served(obj: Obj, kind: Kind) -> Obj:
    """A stored object at the row's version (a new top-level dict; deeper values shared)."""
    if not kind.storage_version:
        return obj
    return {**obj, "apiVersion": kind.api_version}


def raw_to_served(raw: bytes, kind: Kind) -> bytes:
    """A stored object's JSON at the row's version (the same bytes for the stored row)."""
    if not kind.storage_version:
        return raw
    return dumps(to_served(orjson.loads(raw), kind))
