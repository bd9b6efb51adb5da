"""The field sets of objects: every field a value has, and what a write changed and removed.

Upstream structured-merge-diff's `ToFieldSet` (`to_set`, `field_set`) and `Compare` (`compare`,
`diff`) over plain JSON data walked with its `MergeType`, giving sets in the `fieldsV1` format
of `fakeapi.machinery.fieldpath`. A write owns only part of an object, same as upstream: the
main resource never `status`, `/status` only `status` (`scope`); `apiVersion`, `kind`,
`metadata.name` and the server-set metadata are never owned (`STRIP`).

`diff` is on every write's path (managedFields bookkeeping), so a create walks the new object
once (`created`) and the compare takes added subtrees the same way, without building anything
to subtract or sort later; tests/fakeapi/test_apply_create.py checks both against the plain
three-way compare.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.patching.mergetypes import (
    MISSING,
    SCALAR,
    MergeType,
    compile_type,
    index_items,
    shape_of,
)
from fakeapi.schema.schemas import Schema

# Upstream `stripMetaManager`: these members never appear in a manager's set.
_STRIP_ROOT = frozenset({"f:apiVersion", "f:kind", "f:metadata"})
_STRIP_META = frozenset("f:" + f for f in ("name", "namespace", "creationTimestamp", "selfLink",
                                       "uid", "clusterName", "generation", "managedFields",
                                       "resourceVersion"))
#: The paths no manager owns (upstream `stripMetaManager`).
STRIP = fp.from_paths([(pe,) for pe in sorted(_STRIP_ROOT)]
                      + [("f:metadata", pe) for pe in sorted(_STRIP_META)])


# --------------------------------------------------------------------------- field sets


def to_set(v: Any, t: MergeType, path: tuple[str, ...] | None = None) -> tuple[bool, FieldSet]:
    """(is the value a leaf, its children set): upstream `ToFieldSet` for one value.

    With `path` (a configuration being applied) list items that have no path element or
    repeat one raise `TypedError`.
    """
    if isinstance(v, dict) and t.granular_dict():
        out: FieldSet = {}
        for k, cv in v.items():
            pe = fp.field_pe(k)
            leaf, kids = to_set(cv, t.field(k), None if path is None else path + (pe,))
            node = fp.make_node(leaf or not t.declares(k), kids)
            if node is not None:
                out[pe] = node
        return False, out
    if isinstance(v, list) and t.granular_list():
        idx = index_items(t, v, path)
        if idx is None:
            return True, {}
        elem = t.elem()
        out = {}
        for pe, item in idx:
            if pe in out:
                continue
            _, kids = to_set(item, elem, None if path is None else path + (pe,))
            out[pe] = fp.make_node(True, kids)
        return False, out
    if v is None:
        return t.kind == SCALAR or t.atomic, {}
    return True, {}


def field_set(obj: dict[str, Any], schema: Schema | None) -> FieldSet:
    """Every field of `obj` as a set (upstream `ToFieldSet`), canonical wire form."""
    return fp.canonical(to_set(obj, compile_type(schema))[1])


# --------------------------------------------------------------------------- compare


def compare(o: Any, n: Any, t: MergeType) -> tuple[FieldSet | None, FieldSet | None]:
    """Nodes (changed = added or modified, removed) for one path, like upstream `Compare`."""
    if o is MISSING:  # added (the loops below never pass two missing values)
        return _added(n, t), None
    if n is not MISSING and (o is n or o == n):
        return None, None
    ko, kn = shape_of(o, t), shape_of(n, t)
    shape = kn if ko == "e" else ko
    if not shape or shape == "e" or (kn != "e" and kn != shape):
        return _compare_leaf(o, n)
    chg: FieldSet = {}
    rem: FieldSet = {}
    if shape == "d":
        od = o if isinstance(o, dict) else {}
        nd = n if isinstance(n, dict) else {}
        for k in union_keys(od, nd):
            co, cn = od.get(k, MISSING), nd.get(k, MISSING)
            # A Go non-pointer field is never absent: compare with its empty value.
            if co is MISSING:  # added
                ct = t.field(k)
                if k in t.nonpointer and isinstance(cn, (dict, list)):
                    c, r = _added_from_empty(cn, ct), None
                else:
                    c, r = _added(cn, ct), None
            elif cn is MISSING:  # removed
                if k in t.nonpointer and isinstance(co, (dict, list)):
                    cn = type(co)()
                c, r = compare(co, cn, t.field(k))
            elif co is cn or co == cn:
                continue
            else:
                c, r = compare(co, cn, t.field(k))
            pe = fp.field_pe(k)
            if c is not None:
                chg[pe] = c
            if r is not None:
                rem[pe] = r
    else:
        li = index_items(t, o) if isinstance(o, list) else []
        ri = index_items(t, n) if isinstance(n, list) else []
        if li is None or ri is None:  # items without a path element: the list is one leaf
            return _compare_leaf(o, n)
        elem = t.elem()
        oi, ni = dict(reversed(li)), dict(reversed(ri))
        for pe in union_keys(oi, ni):
            c, r = compare(oi.get(pe, MISSING), ni.get(pe, MISSING), elem)
            if c is not None:
                chg[pe] = c
            if r is not None:
                rem[pe] = r
    return fp.make_node(o is MISSING, chg), fp.make_node(n is MISSING, rem)


def _compare_leaf(o: Any, n: Any) -> tuple[FieldSet | None, FieldSet | None]:
    """A leaf that differs: added, removed or modified (never called for equal values)."""
    if n is MISSING:
        return None, {}
    return {}, None


def union_keys(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys of `a`, then those only `b` has: the order a three-way compare visits them."""
    return list(a) + [k for k in b if k not in a]


def scope(d: dict[str, Any], subresource: str, status: str = "f:status") -> dict[str, Any]:
    """The part of a field set (or, with `status="status"`, of an object) a write through
    `subresource` may own (upstream reset fields): `/status` only `status`, the main resource
    everything else. `d` itself when nothing is left out."""
    if subresource == "status":
        return {status: d[status]} if status in d else {}
    if status in d:
        return {k: v for k, v in d.items() if k != status}
    return d


def diff(old: dict[str, Any], new: dict[str, Any], t: MergeType, subresource: str
         ) -> tuple[FieldSet, FieldSet]:
    """(changed, removed) between two objects, limited to what the write may own."""
    c, r = compare(old, new, t)  # fresh sets (never shared with the objects): strip in place
    chg = _strip_meta(scope(fp.children(c) if c else {}, subresource))
    rem = _strip_meta(scope(fp.children(r) if r else {}, subresource))
    return chg, rem


def _added(n: Any, t: MergeType) -> FieldSet:
    """The changed node of a value the write added, in canonical order: what
    `compare(MISSING, n, t)` returns, without building anything to subtract or sort later."""
    kids = None
    if isinstance(n, dict):
        if n and t.granular_dict():
            kids = _added_fields(n, t)
    elif isinstance(n, list) and n and t.granular_list():
        idx = index_items(t, n)
        if idx is not None:
            kids = _added_items(idx, t.elem())
    return {fp.DOT: {}, **kids} if kids else {}  # a member, with its children if any


def _added_from_empty(n: Any, t: MergeType) -> FieldSet | None:
    """The changed node of a Go non-pointer field set to `n` (a dict or list): what
    `compare(type(n)(), n, t)` returns (empty → nothing; the container is never a member)."""
    if not n:
        return None
    if isinstance(n, dict):
        if t.granular_dict():
            return _added_fields(n, t) or None
    elif t.granular_list():
        idx = index_items(t, n)
        if idx is not None:
            return _added_items(idx, t.elem()) or None
    return {}


def _added_fields(n: dict[str, Any], t: MergeType) -> FieldSet:
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


def _added_items(idx: list[tuple[str, Any]], elem: MergeType) -> FieldSet:
    """Children of an added granular list (the first item of duplicate keys counts)."""
    first: dict[str, Any] = {}
    for pe, item in idx:
        first.setdefault(pe, item)
    return {pe: _added(first[pe], elem) for pe in sorted(first, key=fp.pe_sort_key)}


def created(new: dict[str, Any], t: MergeType, subresource: str) -> FieldSet:
    """What `diff({}, new, t, subresource)` reports as changed, in canonical order (a create:
    every field is added)."""
    if not new or not t.granular_dict():
        return {}
    return _strip_meta(_added_fields(scope(new, subresource, "status"), t))


def _strip_meta(fs: FieldSet) -> FieldSet:
    """`fp.difference(fs, STRIP)` done in place on a freshly built set: the stripped paths
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
