"""The 1.37 JSON schemas compiled for structured merge, and the items of keyed lists.

Server-side apply and managedFields bookkeeping walk an object together with its schema, the
way structured-merge-diff walks a typed value: each schema node becomes a `MergeType` (struct,
map, list or scalar; atomic or granular; a list-map's key fields), compiled once per schema
node and its children lazily. `index_items` gives each item of a list-map or set list its path
element (`k:{...}` by its key fields, `v:...` by value), and `shape_of` says how a value of a
type merges (a leaf, nothing, a granular dict or a granular list).

Known approximations: a list-map item missing a key field without a schema default uses the
keys it has (upstream rejects it, except `protocol`, defaulted to "TCP"); Go's non-pointer
structs are approximated by `metadata`/`spec`/`status` and required fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.schema.schemas import Schema, get_schemas, types_of

#: A member a value does not have (distinct from an explicit null).
MISSING: Any = object()

#: The shapes of a `MergeType` (`ANY`: a schema that does not say).
SCALAR, STRUCT, MAP, LIST, ANY = "scalar", "struct", "map", "list", "any"

# List-map key fields with a schema default upstream (the 1.37 JSON schemas drop defaults).
_KEY_DEFAULTS = {"protocol": "TCP"}
ALWAYS_PRESENT = frozenset({"metadata", "spec", "status"})
"""Struct fields Go always serializes (non-pointer): never "added" or "removed" themselves."""


class MergeType:
    """One schema node compiled for merging: its shape, atomicity and children (lazily)."""

    __slots__ = ("kind", "atomic", "props", "extra", "items", "keys", "required", "nonpointer",
                 "_kids")

    def __init__(self, *, kind: str, atomic: bool = False, props: dict[str, Schema] | None = None,
                 extra: Schema | None = None, items: Schema | None = None,
                 keys: tuple[str, ...] = (), required: Iterable[str] = ()) -> None:
        self.kind = kind
        self.atomic = atomic
        self.props = props or {}
        self.extra = extra
        self.items = items
        self.keys = keys
        self.required = frozenset(required)
        # Go non-pointer struct fields: never absent, so never "added" or "removed" themselves.
        self.nonpointer = frozenset(k for k in self.props
                                    if k in ALWAYS_PRESENT or k in self.required)
        self._kids: dict[str, MergeType] = {}

    def declares(self, name: str) -> bool:
        """Whether `name` is a declared struct field (not a map key)."""
        return name in self.props

    def field(self, name: str) -> MergeType:
        """Type of struct field / map entry `name`."""
        t = self._kids.get(name)
        if t is None:
            if name in self.props:
                t = compile_type(self.props[name])
            elif self.extra is not None:
                t = compile_type(self.extra)
            else:
                t = _ANY_TYPE
            self._kids[name] = t
        return t

    def elem(self) -> MergeType:
        """Type of the items of a list."""
        t = self._kids.get("[]")
        if t is None:
            t = compile_type(self.items) if self.items is not None else _ANY_TYPE
            self._kids["[]"] = t
        return t

    def granular_dict(self) -> bool:
        """Whether a dict value of this type merges key by key."""
        return self.kind in (STRUCT, MAP, ANY) and not self.atomic

    def granular_list(self) -> bool:
        """Whether a list value of this type merges item by item (list-map or set)."""
        return self.kind == LIST and not self.atomic


_ANY_TYPE = MergeType(kind=ANY)
_SCALAR_TYPE = MergeType(kind=SCALAR)
_TYPES: dict[int, tuple[Schema, MergeType]] = {}


def compile_type(raw: Schema | None) -> MergeType:
    """The merge type of a schema node (any value for None), compiled once per node."""
    if not raw:
        return _ANY_TYPE
    node = get_schemas().resolve(raw)
    hit = _TYPES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    t = _build(node)
    _TYPES[id(node)] = (node, t)
    return t


def _build(node: Schema) -> MergeType:
    if node.get("x-kubernetes-int-or-string"):
        return _SCALAR_TYPE
    types = types_of(node)
    if "array" in types or (not types and "items" in node):
        list_type = node.get("x-kubernetes-list-type")
        keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
        if list_type == "map" and keys:
            return MergeType(kind=LIST, items=node.get("items"), keys=keys)
        if list_type == "set":
            return MergeType(kind=LIST, items=node.get("items"))
        return MergeType(kind=LIST, atomic=True, items=node.get("items"))
    atomic = node.get("x-kubernetes-map-type") == "atomic"
    props = node.get("properties")
    extra = node.get("additionalProperties")
    extra = extra if isinstance(extra, dict) else None
    if "object" in types or (not types and (props or extra is not None)):
        if props:
            return MergeType(kind=STRUCT, atomic=atomic, props=props, extra=extra,
                             required=node.get("required") or ())
        if extra is not None:
            return MergeType(kind=MAP, atomic=atomic, extra=extra)
        return MergeType(kind=ANY, atomic=atomic)
    if types and not node.get("x-kubernetes-preserve-unknown-fields"):
        return _SCALAR_TYPE
    return _ANY_TYPE


def shape_of(v: Any, t: MergeType) -> str:
    """'' for a leaf, 'e' for nothing/empty, 'd' for a granular dict, 'l' for a granular list."""
    if v is MISSING or v is None:
        return "e"
    if isinstance(v, dict) and t.granular_dict():
        return "d" if v else "e"
    if isinstance(v, list) and t.granular_list():
        return "l" if v else "e"
    return ""


# --------------------------------------------------------------------------- list items


class TypedError(Exception):
    """An apply configuration that does not fit its schema (upstream: typed patch object)."""

    def __init__(self, path: tuple[str, ...], message: str) -> None:
        super().__init__(f"{fp.path_string(path)}: {message}" if path else message)


def index_items(t: MergeType, items: list[Any], path: tuple[str, ...] | None = None
                ) -> list[tuple[str, Any]] | None:
    """(path element, item) for each item of a list-map or set, None if some item has none.

    With `path` (a configuration being applied) bad items and duplicates raise instead.
    """
    out: list[tuple[str, Any]] = []
    for i, item in enumerate(items):
        if t.keys:
            if not isinstance(item, dict):
                if path is None:
                    return None
                what = "a null element" if item is None else "non-map elements"
                raise TypedError(path, f"element {i}: associative list with keys may not "
                                       f"have {what}")
            key = {}
            for k in t.keys:
                if k in item:
                    key[k] = item[k]
                elif k in _KEY_DEFAULTS:
                    key[k] = _KEY_DEFAULTS[k]
            out.append((fp.key_pe(key), item))
        else:
            if item is None or isinstance(item, (dict, list)):
                if path is None:
                    return None
                what = ("an explicit null" if item is None
                        else "a map type" if isinstance(item, dict) else "a list")
                raise TypedError(path, f"element {i}: associative list without keys has an "
                                       f"element that's {what}")
            out.append((fp.value_pe(item), item))
    if path is not None and len({pe for pe, _ in out}) != len(out):
        seen: set[str] = set()
        for pe, _ in out:
            if pe in seen:
                raise TypedError(path, f"duplicate entries for key {fp.pe_string(pe)}")
            seen.add(pe)
    return out
