"""Field sets in the wire format of `metadata.managedFields[].fieldsV1`, and their algebra.

A field set is a trie of path elements, stored exactly as upstream serializes it:

    {"f:metadata": {"f:labels": {"f:app": {}}},
     "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}}}}}

Keys are path elements: `f:<field>` (a struct field or map key), `k:<json>` (a list-map item,
by its key fields), `v:<json>` (a set-list item, by value) and `i:<n>` (an index). A node is a
*member* of the set (the path itself is owned) when it is empty or holds the `"."` key; its other
keys are its children. Canonical form: a member without children is `{}`, a member with
children holds `"."`, a non-member always has children. The root is never a member.

Functions here never mutate their arguments; results may share sub-tries with them, so treat
every set as immutable (`canonical` makes a fresh, sorted copy for storage).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from fakeapi.machinery.jsonio import dumps

FieldSet = dict[str, Any]

DOT = "."

_HTML_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                 ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


# --------------------------------------------------------------------------- path elements


def go_json(value: Any) -> str:
    """Compact JSON the way Go's encoder writes it (sorted map keys, HTML characters escaped)."""
    text = dumps(value, sort_keys=True).decode()  # (integers beyond 64 bits: the stdlib's)
    for raw, esc in _HTML_ESCAPES:
        if raw in text:
            text = text.replace(raw, esc)
    return text


def field_pe(name: str) -> str:
    """Path element of a struct field or map key."""
    return "f:" + name


def key_pe(keys: dict[str, Any]) -> str:
    """Path element of a list-map item, from its key fields (serialized sorted by name)."""
    return "k:" + go_json(keys)


def value_pe(value: Any) -> str:
    """Path element of a set-list item."""
    return "v:" + go_json(value)


def _go_value(value: Any) -> str:
    """A value as structured-merge-diff prints it in paths (Go `%q` for strings)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return "[" + ",".join(_go_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "".join(f"{k}={_go_value(v)}" for k, v in value.items())
    return str(value)


def pe_string(pe: str) -> str:
    """Human form of one path element, as in conflict messages: `.spec`, `[name="c"]`, `[="x"]`."""
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return "." + body
    if kind == "k:":
        keys = json.loads(body)
        return "[" + ",".join(f"{k}={_go_value(v)}" for k, v in sorted(keys.items())) + "]"
    if kind == "v:":
        return "[=" + _go_value(json.loads(body)) + "]"
    if kind == "i:":
        return "[" + body + "]"
    return "{{invalid path element}}"


def path_string(path: tuple[str, ...]) -> str:
    """Human form of a path: `.spec.containers[name="c"].image`."""
    return "".join(pe_string(pe) for pe in path)


def _value_rank(value: Any) -> tuple[int, Any]:
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, (int, float)):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if value is None:
        return (5, 0)
    return (3 if isinstance(value, list) else 4, go_json(value))


@functools.lru_cache(maxsize=65536)
def pe_sort_key(pe: str) -> tuple[Any, ...]:
    """Upstream's path element order: fields, then keys, then values, then indexes."""
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return (0, body)
    try:
        if kind == "k:":
            return (1, tuple((k, _value_rank(v)) for k, v in sorted(json.loads(body).items())))
        if kind == "v:":
            return (2, _value_rank(json.loads(body)))
        if kind == "i:":
            return (3, int(body))
    except ValueError:
        pass
    return (4, pe)


# --------------------------------------------------------------------------- nodes


def is_member(node: FieldSet) -> bool:
    """Whether the path of this node is itself in the set."""
    return not node or DOT in node


def children(node: FieldSet) -> FieldSet:
    """The child trie of a node (the node without its `"."` marker)."""
    if DOT not in node:
        return node
    return {k: v for k, v in node.items() if k != DOT}


def make_node(member: bool, kids: FieldSet) -> FieldSet | None:
    """A canonical node from its membership and children (None when it would be empty)."""
    if not kids:
        return {} if member else None
    if member:
        out: FieldSet = {DOT: {}}
        out.update(kids)
        return out
    return kids


# --------------------------------------------------------------------------- set algebra


def union(a: FieldSet, b: FieldSet) -> FieldSet:
    """Every path in `a` or `b`."""
    if not a:
        return b
    if not b or a is b:
        return a
    out = dict(a)
    for k, bn in b.items():
        an = out.get(k)
        if an is None:
            out[k] = bn
        elif an is not bn:
            node = make_node(is_member(an) or is_member(bn), union(children(an), children(bn)))
            out[k] = node if node is not None else {}
    return out


def difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths of `a` that are not members of `b` (children of a removed path stay);
    `a` itself when that removes nothing (so an untouched set keeps its identity)."""
    if not a or not b:
        return a
    out: FieldSet | None = None
    for k in b if len(b) < len(a) else a:  # only the shared keys change: visit the fewer
        an, bn = a.get(k), b.get(k)
        if an is None or bn is None:
            continue
        kids = children(an)
        rest = difference(kids, children(bn))
        member = is_member(an)
        if rest is kids and not (member and is_member(bn)):
            continue  # nothing of this branch is removed
        if out is None:
            out = dict(a)
        node = make_node(member and not is_member(bn), rest)
        if node is None:
            del out[k]
        else:
            out[k] = node
    return a if out is None else out


def intersection(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths that are members of both `a` and `b`."""
    if not a or not b:
        return {}
    if len(b) < len(a):
        a, b = b, a
    out: FieldSet = {}
    for k, an in a.items():
        bn = b.get(k)
        if bn is None:
            continue
        node = make_node(is_member(an) and is_member(bn),
                         intersection(children(an), children(bn)))
        if node is not None:
            out[k] = node
    return out


def recursive_difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """The paths of `a` that neither are members of `b` nor lie below one of its members."""
    if not a or not b:
        return a
    out: FieldSet = {}
    for k, an in a.items():
        bn = b.get(k)
        if bn is None:
            out[k] = an
        elif not is_member(bn):
            node = make_node(is_member(an), recursive_difference(children(an), children(bn)))
            if node is not None:
                out[k] = node
    return out


def has(fs: FieldSet, path: tuple[str, ...]) -> bool:
    """Whether `path` is a member of the set."""
    node: FieldSet | None = None
    cur = fs
    for pe in path:
        node = cur.get(pe) if pe != DOT else None
        if node is None:
            return False
        cur = node
    return node is not None and is_member(node)


def paths(fs: FieldSet, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The member paths in upstream's iteration order: a level's members, then its children."""
    ordered = sorted((k for k in fs if k != DOT), key=pe_sort_key)
    for k in ordered:
        if is_member(fs[k]):
            yield prefix + (k,)
    for k in ordered:
        kids = children(fs[k])
        if kids:
            yield from paths(kids, prefix + (k,))


def from_paths(members: Iterable[tuple[str, ...]]) -> FieldSet:
    """A set holding exactly the given member paths (each a tuple of path elements)."""
    out: FieldSet = {}
    for path in members:
        single: FieldSet = {}
        for pe in reversed(path):
            single = {pe: single}
        out = union(out, single)
    return canonical(out)


def canonical(fs: FieldSet) -> FieldSet:
    """A fresh copy in upstream's serialized order (`"."` first, then sorted path elements)."""
    out: FieldSet = {}
    if not fs:  # most nodes are leaves
        return out
    if DOT in fs:
        out[DOT] = {}
    keys = [k for k in fs if k != DOT]
    if len(keys) > 1:
        keys.sort(key=pe_sort_key)
    for k in keys:
        out[k] = canonical(fs[k])
    return out


def is_valid(fs: Any) -> bool:
    """Whether `fs` is a well-formed field set (path elements with known prefixes, all dicts)."""
    if not isinstance(fs, dict):
        return False
    for k, v in fs.items():
        if not isinstance(v, dict):
            return False
        if k == DOT:
            if v:
                return False
            continue
        if not isinstance(k, str) or k[:2] not in ("f:", "k:", "v:", "i:"):
            return False
        if v and not is_valid(v):
            return False
    return True
