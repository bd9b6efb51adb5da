"""What an established CustomResourceDefinition serves: one kind-table row per served
version (names, scope, subresources, printer columns, selectable fields, its schema), naming
the custom-resource strategies of `fakeapi.registry.custom`.
"""

from __future__ import annotations

from typing import Any

import orjson

from fakeapi.machinery.selectors import FieldRules, _path_getter
from fakeapi.printers.spec import AGE, NAME, Cell, Column, RowContext, TableSpec
from fakeapi.registry.custom import (
    CustomResourceScaleStrategy,
    CustomResourceStatusStrategy,
    CustomResourceStrategy,
    jsonpath_get,
)
from fakeapi.registry.rest import ALL_VERBS, Kind, SubresourceStrategy

Obj = dict[str, Any]
SUBRESOURCES: dict[str, type[SubresourceStrategy]] = {
    "status": CustomResourceStatusStrategy, "scale": CustomResourceScaleStrategy}
"""The strategy of each subresource a CRD version may serve."""


def kinds_for(crd: Obj) -> list[Kind]:
    """One kind-table row per served version of an established CRD."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group") or ""
    out = []
    for version in spec.get("versions") or []:
        if not isinstance(version, dict) or not version.get("served"):
            continue
        schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
        sub = version.get("subresources") or {}
        subresources = {name: cls for name, cls in SUBRESOURCES.items() if name in sub}
        printer = tuple(c for c in version.get("additionalPrinterColumns") or []
                        if isinstance(c, dict))
        selectable = tuple(str(f.get("jsonPath")) for f in version.get("selectableFields") or []
                           if isinstance(f, dict) and f.get("jsonPath"))
        namespaced = spec.get("scope") == "Namespaced"
        out.append(Kind(
            group=group, version=str(version.get("name")), kind=str(names.get("kind")),
            plural=str(names.get("plural")), namespaced=namespaced,
            short_names=tuple(names.get("shortNames") or ()),
            categories=tuple(names.get("categories") or ()), subresources=subresources,
            verbs=ALL_VERBS, returns_deleted=True, strategy=CustomResourceStrategy,
            columns=_columns(printer), field_selectors=_fields(namespaced, selectable),
            custom_schema=orjson.dumps({"schema": schema, "scale": sub.get("scale"),
                                        "singular": names.get("singular")}).decode()))
    return out


_TYPES = {"integer": "integer", "number": "number", "boolean": "boolean", "date": "date",
          "string": "string"}


def _cell(path: str, kind: str) -> Any:
    def cell(obj: Obj, ctx: RowContext) -> Cell:
        value = jsonpath_get(obj, path)
        if value is None:
            return None
        if kind == "date":
            return ctx.age(value)
        if isinstance(value, (dict, list)):
            return orjson.dumps(value).decode()
        return value if isinstance(value, (str, int, bool)) else str(value)

    return cell


def _columns(printer: tuple[Obj, ...]) -> TableSpec:
    """Same as upstream's CRD table convertor: Name, then the printer columns (Age when
    there are none)."""
    if not printer:
        return TableSpec((NAME, AGE))
    cols = [NAME]
    for c in printer:
        kind = _TYPES.get(str(c.get("type")), "string")
        cols.append(Column(str(c.get("name")), _cell(str(c.get("jsonPath") or ""), kind),
                           str(c.get("description") or ""), type=kind,
                           format=str(c.get("format") or ""),
                           priority=int(c.get("priority") or 0), default=None))
    return TableSpec(tuple(cols))


def _fields(namespaced: bool, selectable: tuple[str, ...]) -> FieldRules:
    getters = {"metadata.name": _path_getter("metadata.name")}
    if namespaced:
        getters["metadata.namespace"] = _path_getter("metadata.namespace")
    for path in selectable:
        label = path.lstrip(".")
        getters[label] = _selectable(path)
    allowed = ", ".join(f'"{g}"' for g in getters)
    return FieldRules(getters=getters, aliases={},
                      reject=lambda label: f'"{label}" is not a known field selector: only '
                      f"{allowed}")


def _selectable(path: str) -> Any:
    def get(obj: Obj) -> str:
        value = jsonpath_get(obj, path)
        if value is None:
            return ""
        return ("true" if value else "false") if isinstance(value, bool) else str(value)

    return get


