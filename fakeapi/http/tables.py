"""Server-side `kubectl get` output: `meta.k8s.io` Tables of a kind's column spec.

kubectl asks for `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` and prints the cells
it gets back, hiding columns with priority > 0 unless `-o wide`. As upstream's apiserver does,
every row carries all cells (wide included); the client does the filtering. Which columns a
kind has is its row's `columns` (`fakeapi.printers.columns`); time only enters through the `now`
argument (the injected clock), never from the system clock.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from fakeapi.printers.spec import Cell, Obj, RowContext
from fakeapi.registry.rest import Kind

META_GROUP = "meta.k8s.io"
TABLE_VERSIONS = ("v1", "v1beta1")
INCLUDE_OBJECT_VALUES = ("None", "Metadata", "Object")


def column_definitions(kind: Kind) -> list[dict[str, Any]]:
    """`columnDefinitions` of a kind's Table."""
    return [c.definition() for c in kind.columns.columns]


def cells(kind: Kind, obj: Obj, *, now: datetime) -> list[Cell]:
    """All cells (wide ones included) of one object's row."""
    ctx = RowContext(now)
    return [c.cell(obj, ctx) for c in kind.columns.columns]


def table(
    kind: Kind,
    objects: Iterable[Obj],
    *,
    now: datetime,
    include_object: str | None = "Metadata",
    with_headers: bool = True,
    resource_version: str | None = None,
    continue_token: str | None = None,
    remaining_item_count: int | None = None,
    table_version: str = "v1",
) -> dict[str, Any]:
    """Build a `meta.k8s.io` Table of `objects` (wire dicts of one kind), one row each.

    include_object: "Metadata" (or "", or None: the query value unset) puts a
    PartialObjectMetadata in each row, "Object" the full object (apiVersion/kind filled in from
    `kind` when missing), "None" nothing; other values raise ValueError (the server answers
    400).
    with_headers=False drops columnDefinitions, as for every watch event after the first.
    table_version is the negotiated Table version (see `table_version_from_accept`).
    """
    include = parse_include_object(include_object)
    if table_version not in TABLE_VERSIONS:
        raise ValueError(f"unsupported Table version {table_version!r}")
    api_version = f"{META_GROUP}/{table_version}"
    spec = kind.columns
    rows = []
    for obj in objects:
        ctx = RowContext(now)
        row: dict[str, Any] = {"cells": [c.cell(obj, ctx) for c in spec.columns]}
        conditions = spec.row_conditions(obj) if spec.row_conditions else None
        if conditions:
            row["conditions"] = conditions
        if include == "Object":
            # Upstream converts to the request's version, which always sets apiVersion/kind;
            # kubectl (e.g. --sort-by) cannot decode a row object without them.
            row["object"] = obj if "kind" in obj and "apiVersion" in obj else {
                "apiVersion": kind.api_version, "kind": kind.kind, **obj}
        elif include == "Metadata":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": api_version,
                "metadata": dict(obj.get("metadata") or {}),
            }
        rows.append(row)

    metadata: dict[str, Any] = {}
    if resource_version:
        metadata["resourceVersion"] = resource_version
    if continue_token:
        metadata["continue"] = continue_token
    if remaining_item_count is not None:
        metadata["remainingItemCount"] = remaining_item_count
    result: dict[str, Any] = {"kind": "Table", "apiVersion": api_version, "metadata": metadata}
    if with_headers:
        result["columnDefinitions"] = [c.definition() for c in spec.columns]
    result["rows"] = rows
    return result


# --- request negotiation ----------------------------------------------------------------------


def parse_include_object(value: str | None) -> str:
    """Normalize the `includeObject` query value: unset or "" → "Metadata".

    Raises ValueError for values other than None / Metadata / Object; the server should answer
    400 BadRequest with the message, as upstream does for an unrecognized includeObject.
    """
    if not value:
        return "Metadata"
    if value not in INCLUDE_OBJECT_VALUES:
        raise ValueError(f'unrecognized includeObject value: "{value}"')
    return value


def media_ranges(accept: str) -> list[tuple[str, dict[str, str]]]:
    """(type/subtype, params) of each media range with q > 0, highest q first, stable."""
    ranges = []
    for clause in accept.split(","):
        media, *raw_params = (p.strip() for p in clause.split(";"))
        params: dict[str, str] = {}
        for raw in raw_params:
            key, _, value = raw.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 0.0
        if media and q > 0:
            ranges.append((q, media.lower(), params))
    ranges.sort(key=lambda r: -r[0])
    return [(media, params) for _, media, params in ranges]


_JSON_RANGES = ("application/json", "application/*", "*/*")


def first_servable(accept: str | None, forms: Mapping[str, tuple[str, ...]]
                   ) -> tuple[str, str] | None:
    """(`as` kind, version) of the first JSON media range of `accept` (by q, then order) that
    asks for the object itself, ("", ""), or for one of the meta.k8s.io `forms` (as kind →
    served versions); None when no range can be served."""
    for media, params in media_ranges(accept or ""):
        if media not in _JSON_RANGES:
            continue
        as_kind = params.get("as")
        if as_kind is None:
            return "", ""
        version = params.get("v", "")
        if params.get("g") == META_GROUP and version in forms.get(as_kind, ()):
            return as_kind, version
    return None


@functools.lru_cache(maxsize=256)  # clients send the same few Accept headers
def table_version_from_accept(accept: str | None) -> str | None:
    """The `meta.k8s.io` Table version ("v1" or "v1beta1") an Accept header asks for, if any.

    Media ranges are tried by preference (q, then order); the first one we can serve decides.
    `application/json;as=Table;g=meta.k8s.io;v=v1|v1beta1` → that version; a JSON range without
    `as=` → None, meaning "send the object or list itself". Ranges for another `as=` kind, an
    unsupported Table version or a non-JSON type are skipped. kubectl get sends
    `as=Table;v=v1`, then `as=Table;v=v1beta1`, then `application/json`.
    The `includeObject` query parameter is the caller's (see `parse_include_object`).
    """
    found = first_servable(accept, {"Table": TABLE_VERSIONS})
    return found[1] if found is not None and found[0] == "Table" else None


def wants_table(accept: str | None) -> bool:
    """Whether an Accept header asks for a `meta.k8s.io` Table (any supported version)."""
    return table_version_from_accept(accept) is not None
