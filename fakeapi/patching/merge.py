"""The apply merge: a configuration over the live object, and the removal of what an applier
no longer applies.

Upstream structured-merge-diff's `Merge` and `RemoveItems` over plain JSON data walked with
its `MergeType`: struct fields and granular maps merge recursively, list-maps by their keys and
set lists by value, atomic lists/maps and scalars are replaced whole. `prune_set` works out
which of an applier's previous fields go (those nobody keeps), `remove` takes them out.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.fieldpath import FieldSet
from fakeapi.patching.mergetypes import MISSING, MergeType, index_items, shape_of


def merge(lv: Any, cv: Any, t: MergeType) -> Any:
    """Upstream `Merge`: `cv` (configuration) over `lv` (live); may share structure."""
    if cv is MISSING:
        return lv
    if lv is MISSING or lv is None:
        return cv
    if cv is None:
        # Same as upstream: null over a granular container keeps it; it clears anything else.
        return lv if shape_of(lv, t) in ("d", "l") else None
    if isinstance(lv, dict) and isinstance(cv, dict) and t.granular_dict():
        out = dict(lv)
        for k, c in cv.items():
            m = merge(lv.get(k, MISSING), c, t.field(k))
            if m is None:
                out.pop(k, None)
            else:
                out[k] = m
        return out
    if isinstance(lv, list) and isinstance(cv, list) and t.granular_list():
        li, ri = index_items(t, lv), index_items(t, cv)
        if li is not None and ri is not None:
            return _merge_list(li, ri, t.elem())
    return cv


def _merge_list(left: list[tuple[str, Any]], right: list[tuple[str, Any]], elem: MergeType
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
        live = MISSING if pe in ldup else lfirst.get(pe, MISSING)
        out.append(merge(live, item, elem))
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


def prune_set(last: FieldSet, keep: FieldSet) -> FieldSet:
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
            sub = prune_set(fp.children(ln), fp.children(kn))
            if sub:
                out[k] = sub
    return out


def remove(v: Any, rm: FieldSet, t: MergeType) -> Any:
    """`v` without the member paths of `rm`; MISSING when a container loses everything."""
    if isinstance(v, dict) and t.granular_dict():
        out = {}
        for k, cv in v.items():
            node = rm.get(fp.field_pe(k))
            if node is None:
                out[k] = cv
            elif not fp.is_member(node):
                nv = remove(cv, fp.children(node), t.field(k))
                if nv is not MISSING:
                    out[k] = nv
        return out if out or not v else MISSING
    items = _granular_items(v, t)
    if items is not None:
        elem = t.elem()
        kept = []
        for pe, item in items:
            node = rm.get(pe)
            if node is None:
                kept.append(item)
            elif not fp.is_member(node):
                ni = remove(item, fp.children(node), elem)
                if ni is not MISSING:
                    kept.append(ni)
        return kept if kept or not v else MISSING
    return v


def _granular_items(v: Any, t: MergeType) -> list[tuple[str, Any]] | None:
    """The indexed items when `v` is a list merged item by item, else None (a leaf)."""
    if isinstance(v, list) and t.granular_list():
        return index_items(t, v)
    return None
