"""Server-side apply and `metadata.managedFields` bookkeeping, as pure functions over JSON data.

Semantics follow kube-apiserver 1.37 (apimachinery `managedfields` and structured-merge-diff),
re-implemented over plain dicts and the 1.37 JSON schemas:

- `apply` merges an apply configuration into the live object (struct fields and granular maps
  recursively, `x-kubernetes-list-type: map` lists by their keys, `set` lists by value, atomic
  lists/maps and scalars replaced whole), removes what this manager applied last time and no
  longer applies (unless another manager owns it), reports conflicts with the other managers'
  fields whose value would change (409 with `FieldManagerConflict` causes), or with `force`
  takes them over.
- `record_update` does the bookkeeping of a create/update/patch: fields the write added or
  changed go to the (manager, "Update", apiVersion, subresource) entry and leave every other
  entry; removed fields leave every entry.
- Same as upstream: a subresource write only tracks its part of the object (the main resource
  never tracks `status`, `/status` only tracks `status`); `apiVersion`, `kind`, `metadata.name`
  and the server-set metadata are never owned; an object that has no managedFields when first
  applied gets its existing fields attributed to "before-first-apply"; updates to an object
  without managedFields stay untracked; more than 10 Update entries are folded into
  "ancient-changes"; `kubectl` server-side apply may take over fields recorded in the
  client-side `last-applied-configuration` annotation, and keeps that annotation current.

Known approximations: managers that wrote another apiVersion are compared field-by-field in
the object's version (no conversion); a list-map item missing a key field without a schema
default uses the keys it has (upstream rejects it, except `protocol`, defaulted to "TCP");
Go's non-pointer structs are approximated by `metadata`/`spec`/`status` and required fields
(they never get a `"."` of their own when created).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Iterable
from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.decode import object_member
from fakeapi.machinery.errors import ApiError, Cause, bad_request
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.machinery.jsonio import dumps, loads
from fakeapi.schema.schemas import Schema, get_schemas, types_of

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
BEFORE_FIRST_APPLY = "before-first-apply"
ANCIENT_CHANGES = "ancient-changes"
#: Upstream `DefaultMaxUpdateManagers`.
MAX_UPDATE_MANAGERS = 10
#: Upstream `FieldManagerMaxLength`.
FIELD_MANAGER_MAX_LENGTH = 128
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: The manager whose applies upgrade client-side apply (upstream `lastAppliedManager`).
KUBECTL_SSA = "kubectl"
CONFLICT_REASON = "FieldManagerConflict"

#: Metadata the server sets: an apply never takes it from the configuration.
SERVER_OWNED_META = ("uid", "resourceVersion", "creationTimestamp", "generation", "selfLink",
                     "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields")

# Upstream `stripMetaManager`: these members never appear in a manager's set.
_STRIP_ROOT = frozenset({"f:apiVersion", "f:kind", "f:metadata"})
_STRIP_META = frozenset("f:" + f for f in ("name", "namespace", "creationTimestamp", "selfLink",
                                       "uid", "clusterName", "generation", "managedFields",
                                       "resourceVersion"))
_STRIP = fp.from_paths([(pe,) for pe in sorted(_STRIP_ROOT)]
                       + [("f:metadata", pe) for pe in sorted(_STRIP_META)])

# List-map key fields with a schema default upstream (the 1.37 JSON schemas drop defaults).
_KEY_DEFAULTS = {"protocol": "TCP"}
# Struct fields Go always serializes (non-pointer): never "added" or "removed" themselves.
_ALWAYS_PRESENT = frozenset({"metadata", "spec", "status"})

_MISSING: Any = object()


# --------------------------------------------------------------------------- schema types

_SCALAR, _STRUCT, _MAP, _LIST, _ANY = "scalar", "struct", "map", "list", "any"


class _Type:
    """One schema node compiled for merging: its shape, atomicity and children (lazily)."""

    __slots__ = ("kind", "atomic", "props", "extra", "items", "keys", "required", "nonpointer",
                 "_kids")

    def __init__(self, kind: str, *, atomic: bool = False, props: dict[str, Schema] | None = None,
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
                                    if k in _ALWAYS_PRESENT or k in self.required)
        self._kids: dict[str, _Type] = {}

    def declares(self, name: str) -> bool:
        """Whether `name` is a declared struct field (not a map key)."""
        return name in self.props

    def field(self, name: str) -> _Type:
        """Type of struct field / map entry `name`."""
        t = self._kids.get(name)
        if t is None:
            if name in self.props:
                t = _compile(self.props[name])
            elif self.extra is not None:
                t = _compile(self.extra)
            else:
                t = _ANY_TYPE
            self._kids[name] = t
        return t

    def elem(self) -> _Type:
        """Type of the items of a list."""
        t = self._kids.get("[]")
        if t is None:
            t = _compile(self.items) if self.items is not None else _ANY_TYPE
            self._kids["[]"] = t
        return t

    def granular_dict(self) -> bool:
        """Whether a dict value of this type merges key by key."""
        return self.kind in (_STRUCT, _MAP, _ANY) and not self.atomic

    def granular_list(self) -> bool:
        """Whether a list value of this type merges item by item (list-map or set)."""
        return self.kind == _LIST and not self.atomic


_ANY_TYPE = _Type(_ANY)
_SCALAR_TYPE = _Type(_SCALAR)
_TYPES: dict[int, tuple[Schema, _Type]] = {}


def _compile(raw: Schema | None) -> _Type:
    if not raw:
        return _ANY_TYPE
    node = get_schemas().resolve(raw)
    hit = _TYPES.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    t = _build(node)
    _TYPES[id(node)] = (node, t)
    return t


def _build(node: Schema) -> _Type:
    if node.get("x-kubernetes-int-or-string"):
        return _SCALAR_TYPE
    types = types_of(node)
    if "array" in types or (not types and "items" in node):
        list_type = node.get("x-kubernetes-list-type")
        keys = tuple(node.get("x-kubernetes-list-map-keys") or ())
        if list_type == "map" and keys:
            return _Type(_LIST, items=node.get("items"), keys=keys)
        if list_type == "set":
            return _Type(_LIST, items=node.get("items"))
        return _Type(_LIST, atomic=True, items=node.get("items"))
    atomic = node.get("x-kubernetes-map-type") == "atomic"
    props = node.get("properties")
    extra = node.get("additionalProperties")
    extra = extra if isinstance(extra, dict) else None
    if "object" in types or (not types and (props or extra is not None)):
        if props:
            return _Type(_STRUCT, atomic=atomic, props=props, extra=extra,
                         required=node.get("required") or ())
        if extra is not None:
            return _Type(_MAP, atomic=atomic, extra=extra)
        return _Type(_ANY, atomic=atomic)
    if types and not node.get("x-kubernetes-preserve-unknown-fields"):
        return _SCALAR_TYPE
    return _ANY_TYPE


# --------------------------------------------------------------------------- list items


class _TypedError(Exception):
    """An apply configuration that does not fit its schema (upstream: typed patch object)."""

    def __init__(self, path: tuple[str, ...], message: str) -> None:
        super().__init__(f"{fp.path_string(path)}: {message}" if path else message)


def _index(t: _Type, items: list[Any], path: tuple[str, ...] | None = None
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
                raise _TypedError(path, f"element {i}: associative list with keys may not "
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
                raise _TypedError(path, f"element {i}: associative list without keys has an "
                                        f"element that's {what}")
            out.append((fp.value_pe(item), item))
    if path is not None and len({pe for pe, _ in out}) != len(out):
        seen: set[str] = set()
        for pe, _ in out:
            if pe in seen:
                raise _TypedError(path, f"duplicate entries for key {fp.pe_string(pe)}")
            seen.add(pe)
    return out


def _granular_items(v: Any, t: _Type) -> list[tuple[str, Any]] | None:
    """The indexed items when `v` is a list merged item by item, else None (a leaf)."""
    if isinstance(v, list) and t.granular_list():
        return _index(t, v)
    return None


# --------------------------------------------------------------------------- field sets


def _to_set(v: Any, t: _Type, path: tuple[str, ...] | None = None) -> tuple[bool, FieldSet]:
    """(is the value a leaf, its children set): upstream `ToFieldSet` for one value."""
    if isinstance(v, dict) and t.granular_dict():
        out: FieldSet = {}
        for k, cv in v.items():
            pe = fp.field_pe(k)
            leaf, kids = _to_set(cv, t.field(k), None if path is None else path + (pe,))
            node = fp.make_node(leaf or not t.declares(k), kids)
            if node is not None:
                out[pe] = node
        return False, out
    if isinstance(v, list) and t.granular_list():
        idx = _index(t, v, path)
        if idx is None:
            return True, {}
        elem = t.elem()
        out = {}
        for pe, item in idx:
            if pe in out:
                continue
            _, kids = _to_set(item, elem, None if path is None else path + (pe,))
            out[pe] = fp.make_node(True, kids)
        return False, out
    if v is None:
        return t.kind == _SCALAR or t.atomic, {}
    return True, {}


def field_set(obj: dict[str, Any], schema: Schema | None) -> FieldSet:
    """Every field of `obj` as a set (upstream `ToFieldSet`), canonical wire form."""
    return fp.canonical(_to_set(obj, _compile(schema))[1])


# --------------------------------------------------------------------------- compare


def _is_container(v: Any, t: _Type) -> str:
    """'' for a leaf, 'e' for nothing/empty, 'd' for a granular dict, 'l' for a granular list."""
    if v is _MISSING or v is None:
        return "e"
    if isinstance(v, dict) and t.granular_dict():
        return "d" if v else "e"
    if isinstance(v, list) and t.granular_list():
        return "l" if v else "e"
    return ""


def _compare(o: Any, n: Any, t: _Type) -> tuple[FieldSet | None, FieldSet | None]:
    """Nodes (changed = added or modified, removed) for one path, like upstream `Compare`."""
    if o is _MISSING:  # added (the loops below never pass two missing values)
        return _added(n, t), None
    if n is not _MISSING and (o is n or o == n):
        return None, None
    ko, kn = _is_container(o, t), _is_container(n, t)
    shape = kn if ko == "e" else ko
    if not shape or shape == "e" or (kn != "e" and kn != shape):
        return _compare_leaf(o, n)
    chg: FieldSet = {}
    rem: FieldSet = {}
    if shape == "d":
        od = o if isinstance(o, dict) else {}
        nd = n if isinstance(n, dict) else {}
        for k in _keys(od, nd):
            co, cn = od.get(k, _MISSING), nd.get(k, _MISSING)
            # A Go non-pointer field is never absent: compare with its empty value.
            if co is _MISSING:  # added
                ct = t.field(k)
                if k in t.nonpointer and isinstance(cn, (dict, list)):
                    c, r = _added_from_empty(cn, ct), None
                else:
                    c, r = _added(cn, ct), None
            elif cn is _MISSING:  # removed
                if k in t.nonpointer and isinstance(co, (dict, list)):
                    cn = type(co)()
                c, r = _compare(co, cn, t.field(k))
            elif co is cn or co == cn:
                continue
            else:
                c, r = _compare(co, cn, t.field(k))
            pe = fp.field_pe(k)
            if c is not None:
                chg[pe] = c
            if r is not None:
                rem[pe] = r
    else:
        li = _index(t, o) if isinstance(o, list) else []
        ri = _index(t, n) if isinstance(n, list) else []
        if li is None or ri is None:  # items without a path element: the list is one leaf
            return _compare_leaf(o, n)
        elem = t.elem()
        oi, ni = dict(reversed(li)), dict(reversed(ri))
        for pe in _keys(oi, ni):
            c, r = _compare(oi.get(pe, _MISSING), ni.get(pe, _MISSING), elem)
            if c is not None:
                chg[pe] = c
            if r is not None:
                rem[pe] = r
    return fp.make_node(o is _MISSING, chg), fp.make_node(n is _MISSING, rem)


def _compare_leaf(o: Any, n: Any) -> tuple[FieldSet | None, FieldSet | None]:
    """A leaf that differs: added, removed or modified (never called for equal values)."""
    if n is _MISSING:
        return None, {}
    return {}, None


def _keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return list(a) + [k for k in b if k not in a]


def _scope(fs: FieldSet, subresource: str) -> FieldSet:
    """The part of a set a write through `subresource` may own (upstream reset fields)."""
    if subresource == "status":
        return {"f:status": fs["f:status"]} if "f:status" in fs else {}
    if "f:status" in fs:
        return {k: v for k, v in fs.items() if k != "f:status"}
    return fs


def _diff(old: dict[str, Any], new: dict[str, Any], t: _Type, subresource: str
          ) -> tuple[FieldSet, FieldSet]:
    """(changed, removed) between two objects, limited to what the write may own."""
    c, r = _compare(old, new, t)  # fresh sets (never shared with the objects): strip in place
    chg = _strip_meta(_scope(fp.children(c) if c else {}, subresource))
    rem = _strip_meta(_scope(fp.children(r) if r else {}, subresource))
    return chg, rem


def _added(n: Any, t: _Type) -> FieldSet:
    """The changed node of a value the write added, in canonical order: what
    `_compare(_MISSING, n, t)` returns, without building anything to subtract or sort later."""
    kids = None
    if isinstance(n, dict):
        if n and t.granular_dict():
            kids = _added_fields(n, t)
    elif isinstance(n, list) and n and t.granular_list():
        idx = _index(t, n)
        if idx is not None:
            kids = _added_items(idx, t.elem())
    return {fp.DOT: {}, **kids} if kids else {}  # a member, with its children if any


def _added_from_empty(n: Any, t: _Type) -> FieldSet | None:
    """The changed node of a Go non-pointer field set to `n` (a dict or list): what
    `_compare(type(n)(), n, t)` returns (empty → nothing; the container is never a member)."""
    if not n:
        return None
    if isinstance(n, dict):
        if t.granular_dict():
            return _added_fields(n, t) or None
    elif t.granular_list():
        idx = _index(t, n)
        if idx is not None:
            return _added_items(idx, t.elem()) or None
    return {}


def _added_fields(n: dict[str, Any], t: _Type) -> FieldSet:
    """Children of an added granular dict, sorted like `fp.canonical` (`f:` keys sort by name)."""
    out: FieldSet = {}
    for k in sorted(n):
        cn = n[k]
        if not isinstance(cn, (dict, list)):
            out["f:" + k] = {}
        elif k in t.nonpointer:
            node = _added_from_empty(cn, t.field(k))
            if node is not None:
                out["f:" + k] = node
        else:
            out["f:" + k] = _added(cn, t.field(k))
    return out


def _added_items(idx: list[tuple[str, Any]], elem: _Type) -> FieldSet:
    """Children of an added granular list (the first item of duplicate keys counts)."""
    first: dict[str, Any] = {}
    for pe, item in idx:
        first.setdefault(pe, item)
    return {pe: _added(first[pe], elem) for pe in sorted(first, key=fp.pe_sort_key)}


def _created(new: dict[str, Any], t: _Type, subresource: str) -> FieldSet:
    """What `_diff({}, new, t, subresource)` reports as changed, in canonical order (a create:
    every field is added)."""
    if not new or not t.granular_dict():
        return {}
    if subresource == "status":
        scoped = {"status": new["status"]} if "status" in new else {}
    else:
        scoped = {k: v for k, v in new.items() if k != "status"}
    return _strip_meta(_added_fields(scoped, t))


def _strip_meta(fs: FieldSet) -> FieldSet:
    """`fp.difference(fs, _STRIP)` done in place on a freshly built set: the stripped paths
    stop being members (their children, if any, stay)."""
    meta = fs.get("f:metadata")
    if meta is not None:
        _unmember(meta, _STRIP_META)
    _unmember(fs, _STRIP_ROOT)
    return fs


def _unmember(fs: FieldSet, pes: frozenset[str]) -> None:
    for pe in pes & fs.keys():
        node = fs[pe]
        node.pop(fp.DOT, None)
        if not node:
            del fs[pe]


# --------------------------------------------------------------------------- merge / prune


def _merge(lv: Any, cv: Any, t: _Type) -> Any:
    """Upstream `Merge`: `cv` (configuration) over `lv` (live); may share structure."""
    if cv is _MISSING:
        return lv
    if lv is _MISSING or lv is None:
        return cv
    if cv is None:
        # Same as upstream: null over a granular container keeps it; it clears anything else.
        return lv if _is_container(lv, t) in ("d", "l") else None
    if isinstance(lv, dict) and isinstance(cv, dict) and t.granular_dict():
        out = dict(lv)
        for k, c in cv.items():
            m = _merge(lv.get(k, _MISSING), c, t.field(k))
            if m is None:
                out.pop(k, None)
            else:
                out[k] = m
        return out
    if isinstance(lv, list) and isinstance(cv, list) and t.granular_list():
        li, ri = _index(t, lv), _index(t, cv)
        if li is not None and ri is not None:
            return _merge_list(li, ri, t.elem())
    return cv


def _merge_list(left: list[tuple[str, Any]], right: list[tuple[str, Any]], elem: _Type
                ) -> list[Any]:
    """Merge keyed items: shared items follow the configuration's order, live-only items keep
    their place relative to them, configuration-only items come where the configuration puts
    them (live-only items first at the same spot)."""
    rmap = dict(right)
    lfirst: dict[str, Any] = {}
    ldup: set[str] = set()
    for pe, item in left:
        if pe in lfirst:
            ldup.add(pe)
        else:
            lfirst[pe] = item
    shared = [pe for pe, _ in right if pe in lfirst]
    out: list[Any] = []
    emitted: set[str] = set()
    si = ri = 0

    def emit_right() -> str:
        nonlocal ri, si
        pe, item = right[ri]
        ri += 1
        live = _MISSING if pe in ldup else lfirst.get(pe, _MISSING)
        out.append(_merge(live, item, elem))
        emitted.add(pe)
        if pe in lfirst:
            si += 1
        return pe

    for pe, item in left:
        if pe not in rmap:
            out.append(item)
        elif pe not in emitted and pe == shared[si]:
            while emit_right() != pe:
                pass
    while ri < len(right):
        emit_right()
    return out


def _prune_set(last: FieldSet, keep: FieldSet) -> FieldSet:
    """What an applier's previous set loses: its paths nobody keeps, whole subtrees at a time
    (a path stays while anyone owns it or something below it)."""
    out: FieldSet = {}
    for k, ln in last.items():
        if k == fp.DOT:
            continue
        kn = keep.get(k)
        if kn is None:
            out[k] = {}
        else:
            sub = _prune_set(fp.children(ln), fp.children(kn))
            if sub:
                out[k] = sub
    return out


def _remove(v: Any, rm: FieldSet, t: _Type) -> Any:
    """`v` without the member paths of `rm`; _MISSING when a container loses everything."""
    if isinstance(v, dict) and t.granular_dict():
        out = {}
        for k, cv in v.items():
            node = rm.get(fp.field_pe(k))
            if node is None:
                out[k] = cv
            elif not fp.is_member(node):
                nv = _remove(cv, fp.children(node), t.field(k))
                if nv is not _MISSING:
                    out[k] = nv
        return out if out or not v else _MISSING
    items = _granular_items(v, t)
    if items is not None:
        elem = t.elem()
        kept = []
        for pe, item in items:
            node = rm.get(pe)
            if node is None:
                kept.append(item)
            elif not fp.is_member(node):
                ni = _remove(item, fp.children(node), elem)
                if ni is not _MISSING:
                    kept.append(ni)
        return kept if kept or not v else _MISSING
    return v


# --------------------------------------------------------------------------- managedFields


@dataclasses.dataclass
class _Entry:
    manager: str
    operation: str
    api_version: str
    subresource: str
    fields: FieldSet
    time: str | None
    stored: dict[str, Any] | None = None
    """The stored entry this one was read from: written again as it is while its fields
    are still that entry's (most writes leave the other managers' entries alone)."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Upstream manager identifier: appliers are one entry whatever their apiVersion."""
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def identifier(self) -> str:
        """The JSON identifier upstream sorts conflicting managers by."""
        d = {"manager": self.manager, "operation": self.operation}
        if self.operation != APPLY and self.api_version:
            d["apiVersion"] = self.api_version
        if self.subresource:
            d["subresource"] = self.subresource
        return json.dumps(d, separators=(",", ":"), ensure_ascii=False)

    def printed(self) -> str:
        """How conflict messages name the manager (upstream `printManager`)."""
        s = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            s += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == UPDATE:
            s += f" using {self.api_version}"
        return s

    def to_wire(self, *, canonical: bool = True) -> dict[str, Any]:
        """The `ManagedFieldsEntry` object (`canonical=False`: the fields are in wire order)."""
        stored = self.stored
        if (canonical and stored is not None and stored.get("fieldsV1") is self.fields
                and stored.get("time") == self.time):
            return stored  # stored entries are canonical already (and never mutated)
        d: dict[str, Any] = {"manager": self.manager, "operation": self.operation,
                             "apiVersion": self.api_version}
        if self.time:
            d["time"] = self.time
        d["fieldsType"] = FIELDS_V1
        d["fieldsV1"] = fp.canonical(self.fields) if canonical else self.fields
        if self.subresource:
            d["subresource"] = self.subresource
        return d


_Managed = dict[tuple[str, str, str, str], _Entry]


def _decode(entries: Any, *, check: bool = False) -> _Managed:
    """Entries of a managedFields list by manager identifier.

    With `check` (a client-supplied list) malformed entries are dropped; stored lists were
    written here and are trusted.
    """
    out: _Managed = {}
    if not isinstance(entries, list):
        return out
    for raw in entries:
        if not isinstance(raw, dict) or raw.get("fieldsType", FIELDS_V1) != FIELDS_V1:
            continue
        fields = raw.get("fieldsV1") or {}
        if not isinstance(fields, dict) or (check and not fp.is_valid(fields)):
            continue
        e = _Entry(str(raw.get("manager") or ""), str(raw.get("operation") or UPDATE),
                   str(raw.get("apiVersion") or ""), str(raw.get("subresource") or ""),
                   fields, raw.get("time"), None if check else raw)
        prev = out.get(e.key)
        if prev is not None:
            e.fields = fp.union(prev.fields, e.fields)
        out[e.key] = e
    return out


def _encode(managed: _Managed) -> list[dict[str, Any]]:
    """Wire list in upstream order: Apply before Update, then by time, manager, version."""
    entries = sorted((e for e in managed.values() if e.fields),
                     key=lambda e: (e.operation, e.time or "", e.manager, e.api_version,
                                    e.subresource))
    return [e.to_wire() for e in entries]


def _is_reset(entries: Any) -> bool:
    """Upstream `isResetManagedFields`: `[]` or `[{}]` clears managedFields."""
    return isinstance(entries, list) and (not entries or entries == [{}])


def _cap_updaters(managed: _Managed) -> None:
    """Upstream `capManagersManager`: fold the oldest Update entries into 'ancient-changes'."""
    updaters = [e for e in managed.values() if e.operation != APPLY]
    count = len(updaters)
    if count <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda e: (e.time or "", e.identifier()))
    first: dict[str, _Entry] = {}
    for e in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        version = e.api_version
        head = first.get(version)
        if head is None:
            first[version] = e
            continue
        bucket_key = (ANCIENT_CHANGES, UPDATE, version, "")
        bucket = managed.get(bucket_key)
        if bucket is None:
            del managed[head.key]
            bucket = _Entry(ANCIENT_CHANGES, UPDATE, version, "", head.fields, head.time)
            managed[bucket_key] = bucket
        bucket.fields = fp.union(bucket.fields, e.fields)
        bucket.time = e.time
        del managed[e.key]
        count -= 1


def _without_managed(obj: dict[str, Any] | None) -> dict[str, Any]:
    """A shallow view of `obj` without `metadata.managedFields` ({} for None)."""
    if not obj:
        return {}
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    out = dict(obj)
    out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _deep_copy(obj: Any) -> Any:
    try:
        return loads(dumps(obj))
    except (TypeError, ValueError):
        return copy.deepcopy(obj)


def _set_managed(obj: dict[str, Any], managed: _Managed) -> list[dict[str, Any]]:
    encoded = _encode(managed)
    meta = obj.setdefault("metadata", {})
    if encoded:
        meta["managedFields"] = encoded
    else:
        meta.pop("managedFields", None)
    return encoded


# --------------------------------------------------------------------------- public API


def manager_from_user_agent(user_agent: str) -> str:
    """Upstream default field manager: the user agent up to its first `/`, printable
    characters only, at most 128 bytes (`kubectl/v1.37.0 (linux/amd64) ...` → `kubectl`)."""
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        n = len(ch.encode())
        if size + n > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
        size += n
    return "".join(out)


def record_update(old: dict[str, Any] | None, new: dict[str, Any], *, manager: str,
                  schema: Schema | None, now: str, subresource: str = "") -> list[dict[str, Any]]:
    """managedFields bookkeeping for a create (`old` None), update or non-apply patch.

    Sets `new["metadata"]["managedFields"]` in place (removes it when nothing is tracked) and
    returns the new list. `new` may carry managedFields: a non-empty list replaces the tracked
    ones (main resource only), `[]` or `[{}]` clears them; otherwise `old`'s are kept.
    """
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        return []
    requested = meta.get("managedFields")
    old_entries = (old or {}).get("metadata", {}).get("managedFields")
    if subresource or (old_entries and requested == old_entries):  # (sent back unchanged)
        managed = _decode(old_entries)
    elif _is_reset(requested):
        managed = {}
    else:
        managed = _decode(requested, check=True) or _decode(old_entries)
    if not managed and old is not None:
        # Same as upstream: an update of an untracked object stays untracked.
        meta.pop("managedFields", None)
        return []
    api_version = str(new.get("apiVersion") or (old or {}).get("apiVersion") or "")
    if old is None and not managed:
        # A create: one walk of `new` gives the only entry, already in wire order.
        chg = _created(_without_managed(new), _compile(schema), subresource)
        if not chg:
            meta.pop("managedFields", None)
            return []
        encoded = [_Entry(manager, UPDATE, api_version, subresource, chg, now).to_wire(
            canonical=False)]
        meta["managedFields"] = encoded
        return encoded
    chg, rem = _diff(_without_managed(old), _without_managed(new), _compile(schema), subresource)
    for e in managed.values():
        e.fields = fp.difference(fp.difference(e.fields, chg), rem)
    if chg:
        e = _Entry(manager, UPDATE, api_version, subresource, chg, now)
        prev = managed.get(e.key)
        if prev is not None:
            e.fields = fp.union(prev.fields, chg)
        managed[e.key] = e
    for k in [k for k, e in managed.items() if not e.fields]:
        del managed[k]
    _cap_updaters(managed)
    return _set_managed(new, managed)


def apply(live: dict[str, Any] | None, config: dict[str, Any], *, manager: str, force: bool,
          schema: Schema | None, now: str, subresource: str = "") -> dict[str, Any]:
    """Server-side apply of `config` by `manager` to `live` (None: the object is created).

    Returns a new object (sharing nothing with the arguments) with its managedFields updated.
    Raises 409 Conflict (causes of type FieldManagerConflict) when, without `force`, another
    manager owns a field whose value the configuration changes; 400 when the configuration
    sets managedFields; 500 when it does not fit the schema (like upstream's typed-object
    errors). Server-set metadata keeps its live values; `subresource="status"` applies only
    `status`, the main resource never applies `status`.
    """
    if not isinstance(config, dict):
        raise bad_request("apply configuration must be an object")
    cmeta = config.get("metadata")
    if isinstance(cmeta, dict) and cmeta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    t = _compile(schema)
    live_obj = _without_managed(live)
    managed = _decode(((live or {}).get("metadata") or {}).get("managedFields"))
    api_version = str(config.get("apiVersion") or live_obj.get("apiVersion") or "")
    cfg = _scoped_config(config, subresource)
    try:
        new_set = fp.difference(_scope(_to_set(cfg, t, ())[1], subresource), _STRIP)
    except _TypedError as err:
        raise ApiError(500, "InternalError", "failed to create typed patch object "
                       f"({_gvknn(config, live_obj)}): {err}") from None

    if live is not None and not managed:
        # Same as upstream: fields of an object nobody tracked belong to "before-first-apply".
        chg, _ = _diff({}, live_obj, t, subresource)
        if chg:
            e = _Entry(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource, chg, now)
            managed[e.key] = e

    merged = _merge(live_obj, cfg, t)
    key = (manager, APPLY, "", subresource)
    last = managed.get(key)
    if last is not None and last.fields and last.fields != new_set:
        keep = fp.union(new_set, _STRIP)  # identity fields are never pruned
        for k, e in managed.items():
            if k != key:
                keep = fp.union(keep, e.fields)
        gone = _prune_set(last.fields, keep)
        if gone:
            merged = _remove(merged, gone, t)
            if merged is _MISSING:
                merged = {}
    merged = _keep_server_meta(merged, live_obj)

    chg, rem = _diff(live_obj, merged, t, subresource)
    conflicts = [(e, p) for k, e in managed.items() if k != key
                 for p in fp.paths(fp.intersection(e.fields, chg))]
    if conflicts and not force:
        allowed = _csa_owned(live_obj, t) if manager == KUBECTL_SSA else None
        if allowed is not None:
            conflicts = [(e, p) for e, p in conflicts if not fp.has(allowed, p)]
        if conflicts:
            raise _conflict_error(conflicts)
    for k, e in managed.items():
        if k != key:
            e.fields = fp.difference(fp.difference(e.fields, chg), rem)
    changed = merged != live_obj
    managed[key] = _Entry(manager, APPLY, api_version, subresource, new_set,
                          now if changed or last is None or not last.time else last.time)

    result = _deep_copy(merged)
    if manager == KUBECTL_SSA:
        annotations = (result.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and annotations.get(LAST_APPLIED):
            annotations[LAST_APPLIED] = _last_applied(config)
    _set_managed(result, managed)
    return result


# --------------------------------------------------------------------------- apply helpers


def _scoped_config(config: dict[str, Any], subresource: str) -> dict[str, Any]:
    if subresource == "status":
        return {k: v for k, v in config.items() if k in ("apiVersion", "kind", "status")}
    if "status" in config:
        return {k: v for k, v in config.items() if k != "status"}
    return config


def _keep_server_meta(merged: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    """Same as upstream: apply never sets uid, resourceVersion, timestamps, generation."""
    meta = merged.get("metadata")
    if not isinstance(meta, dict):
        return merged
    live_meta = object_member(live, "metadata")
    if all(meta.get(f, _MISSING) is live_meta.get(f, _MISSING) for f in SERVER_OWNED_META):
        return merged
    meta = dict(meta)
    for f in SERVER_OWNED_META:
        if f in live_meta and f != "managedFields":
            meta[f] = live_meta[f]
        else:
            meta.pop(f, None)
    out = dict(merged)
    out["metadata"] = meta
    return out


def _gvknn(config: dict[str, Any], live: dict[str, Any]) -> str:
    meta = object_member(config, "metadata")
    api_version = str(config.get("apiVersion") or live.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    kind = config.get("kind") or live.get("kind") or ""
    return (f"{meta.get('namespace', '')}/{meta.get('name', '')}; "
            f"{group}/{version}, Kind={kind}")


def _conflict_error(conflicts: list[tuple[_Entry, tuple[str, ...]]]) -> ApiError:
    """409 with upstream's message and one FieldManagerConflict cause per conflicting field."""
    by_manager: dict[str, tuple[_Entry, list[tuple[str, ...]]]] = {}
    for e, p in conflicts:
        by_manager.setdefault(e.identifier(), (e, []))[1].append(p)
    ordered = [by_manager[k] for k in sorted(by_manager)]
    causes = [Cause(field=fp.path_string(p), message=f"conflict with {e.printed()}",
                    reason=CONFLICT_REASON) for e, ps in ordered for p in ps]
    if len(conflicts) == 1:
        e, p = conflicts[0]
        message = (f"Apply failed with 1 conflict: conflict with {e.printed()}: "
                   f"{fp.path_string(p)}")
    else:
        lines = []
        for e, ps in ordered:
            lines.append(f"conflicts with {e.printed()}:")
            lines.extend(f"- {fp.path_string(p)}" for p in ps)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, causes=causes)


def _csa_owned(live: dict[str, Any], t: _Type) -> FieldSet | None:
    """Fields of the client-side `last-applied-configuration` whose values are still live:
    upstream lets `kubectl` server-side apply take these over without a conflict."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    if not raw or not isinstance(raw, str):
        return None
    try:
        last = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(last, dict) or last.get("apiVersion") != live.get("apiVersion"):
        return None
    owned = _to_set(last, t)[1]
    c, r = _compare(last, live, t)
    return fp.difference(fp.difference(owned, fp.children(c) if c else {}),
                         fp.children(r) if r else {})


def _last_applied(config: dict[str, Any]) -> str:
    """The annotation value upstream writes: the configuration without the annotation."""
    cfg = _deep_copy(config)
    annotations = (cfg.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    return fp.go_json(cfg) + "\n"
