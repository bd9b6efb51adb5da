"""The fast paths of managedFields bookkeeping equal the general three-way compare.

A create walks the new object once (`fieldsets.created`), and the compare of an update
takes added subtrees the same way. Both must give exactly what the plain
three-way compare gives: `_reference_compare` below is that compare as it was before the fast
paths, kept here as the oracle. Checked on every object under tests/data and on many seeded
random mutations of them (byte-identical fieldsV1 after `fp.canonical`). `fp.difference`, which
now visits the smaller of its two sets, is checked against its plain version the same way.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from fakeapi.machinery import fieldpath as fp
from fakeapi.patching import fieldsets as fs
from fakeapi.patching import managedfields as mf
from fakeapi.patching import mergetypes as mt
from fakeapi.schema.schemas import get_schemas

FieldSet = dict[str, Any]
MISSING = mt.MISSING


def _reference_compare(o: Any, n: Any, t: Any) -> tuple[FieldSet | None, FieldSet | None]:
    """Upstream `Compare` for one path, without fast paths: (changed, removed) nodes."""
    if o is not MISSING and n is not MISSING and (o is n or o == n):
        return None, None
    ko, kn = mt.shape_of(o, t), mt.shape_of(n, t)
    shape = kn if ko == "e" else ko
    if not shape or shape == "e" or (kn != "e" and kn != shape):
        return (None, {}) if n is MISSING else ({}, None)
    chg: FieldSet = {}
    rem: FieldSet = {}
    if shape == "d":
        od = o if isinstance(o, dict) else {}
        nd = n if isinstance(n, dict) else {}
        for k in fs.union_keys(od, nd):
            co, cn = od.get(k, MISSING), nd.get(k, MISSING)
            if co is not MISSING and cn is not MISSING and (co is cn or co == cn):
                continue
            if (co is MISSING or cn is MISSING) and t.declares(k) and (
                    k in mt.ALWAYS_PRESENT or k in t.required):
                other = cn if co is MISSING else co
                if isinstance(other, (dict, list)):
                    if co is MISSING:
                        co = type(other)()
                    else:
                        cn = type(other)()
            c, r = _reference_compare(co, cn, t.field(k))
            if c is not None:
                chg["f:" + k] = c
            if r is not None:
                rem["f:" + k] = r
    else:
        li = mt.index_items(t, o) if isinstance(o, list) else []
        ri = mt.index_items(t, n) if isinstance(n, list) else []
        if li is None or ri is None:
            return (None, {}) if n is MISSING else ({}, None)
        oi, ni = dict(reversed(li)), dict(reversed(ri))
        for pe in fs.union_keys(oi, ni):
            c, r = _reference_compare(oi.get(pe, MISSING), ni.get(pe, MISSING), t.elem())
            if c is not None:
                chg[pe] = c
            if r is not None:
                rem[pe] = r
    return fp.make_node(o is MISSING, chg), fp.make_node(n is MISSING, rem)


def _reference_diff(old: dict[str, Any], new: dict[str, Any], schema: dict[str, Any] | None,
                    subresource: str) -> tuple[FieldSet, FieldSet]:
    """`fieldsets.diff` over the oracle, in canonical form."""
    c, r = _reference_compare(mf.without_managed(old), mf.without_managed(new),
                              mt.compile_type(schema))
    def scoped(x: FieldSet | None) -> FieldSet:
        return fp.canonical(fp.difference(fs.scope(fp.children(x) if x else {}, subresource),
                                          fs.STRIP))

    return scoped(c), scoped(r)


DATA = Path(__file__).resolve().parents[1] / "data"


def _objects() -> list[tuple[str, dict[str, Any]]]:
    """Every Kubernetes object (apiVersion + kind) in the YAML files under tests/data."""
    out = []
    for path in sorted(DATA.rglob("*.yaml")):
        if path.relative_to(DATA).parts[0] == "dra-example-driver":
            continue  # upstream's files, some at versions served only with --runtime-config
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and "apiVersion" in doc and "kind" in doc:
                out.append((f"{path.relative_to(DATA)}#{i}", doc))
    return out


def _pod() -> dict[str, Any]:
    """A Pod with list-maps (containers, ports with the defaulted `protocol` key), sets and
    required fields."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "1"}, "finalizers": ["x", "y"],
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n",
                                              "uid": "u"}]},
            "spec": {"containers": [
                {"name": "c", "image": "nginx",
                 "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
                 "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}],
                 "resources": {"limits": {"cpu": "1"}}},
                {"name": "d", "image": "busybox", "command": ["sh", "-c"]}],
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "securityContext": {}},
            "status": {"phase": "Pending", "conditions": [{"type": "Ready", "status": "False"}]}}


OBJECTS = _objects() + [("pod", _pod())]


def _schema(o: dict[str, Any]) -> dict[str, Any] | None:
    group, _, version = str(o["apiVersion"]).rpartition("/")
    return get_schemas().for_gvk(group, version, str(o["kind"]))


def _assert_same(o: dict[str, Any], schema: dict[str, Any] | None) -> None:
    """The create fast path against the oracle, and the public function's result."""
    for subresource in ("", "status"):
        want = _reference_diff({}, o, schema, subresource)[0]
        got = fs.created(mf.without_managed(o), mt.compile_type(schema), subresource)
        assert orjson.dumps(got) == orjson.dumps(want), (subresource, o)
    new = copy.deepcopy(o)
    new.get("metadata", {}).pop("managedFields", None)
    out = mf.record_update(None, new, manager="m", schema=schema, now="2030-01-01T00:00:00Z")
    want = _reference_diff({}, o, schema, "")[0]
    if not want:
        assert out == [] and "managedFields" not in new["metadata"]
    else:
        assert orjson.dumps(out) == orjson.dumps([{
            "manager": "m", "operation": "Update", "apiVersion": str(o.get("apiVersion") or ""),
            "time": "2030-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": want}])
        assert new["metadata"]["managedFields"] is out


def _assert_same_diff(old: dict[str, Any], new: dict[str, Any],
                      schema: dict[str, Any] | None) -> None:
    """The compare of an update (which takes added subtrees the fast way) against the oracle."""
    t = mt.compile_type(schema)
    for subresource in ("", "status"):
        want = _reference_diff(old, new, schema, subresource)
        chg, rem = fs.diff(mf.without_managed(old), mf.without_managed(new), t, subresource)
        got = (fp.canonical(chg), fp.canonical(rem))
        assert orjson.dumps(got) == orjson.dumps(want), (subresource, old, new)


def _mutate(v: Any, rng: random.Random, depth: int = 0) -> Any:
    """A randomly damaged copy: keys dropped, values nulled, emptied, retyped or duplicated."""
    roll = rng.random()
    if depth and roll < 0.04:
        return None
    if depth and roll < 0.08:
        return rng.choice([{}, [], "", 0, {"x": {"y": 1}}, [1, 1], [{"name": "a"}]])
    if depth and roll < 0.15 and not isinstance(v, (dict, list)):
        return f"{v}-changed"
    if isinstance(v, dict):
        out = {}
        for k, cv in v.items():
            if depth and rng.random() < 0.1:
                continue
            out[k] = _mutate(cv, rng, depth + 1)
        if rng.random() < 0.05:
            out["unknownField"] = {"a": [1, {"b": None}]}
        return out
    if isinstance(v, list):
        out_list = [_mutate(item, rng, depth + 1) for item in v]
        if out_list and rng.random() < 0.15:
            out_list.append(copy.deepcopy(rng.choice(out_list)))  # a duplicate key or value
        if out_list and rng.random() < 0.05:
            out_list.append(None)
        return out_list
    return v


@pytest.mark.parametrize(("label", "o"), OBJECTS, ids=[label for label, _ in OBJECTS])
def test_create_fast_path_matches_reference(label: str, o: dict[str, Any]) -> None:
    assert _schema(o) is not None or label.startswith("invalid/"), label
    _assert_same(o, _schema(o))
    _assert_same(o, None)


def _mutant(o: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    m = _mutate(o, rng)
    if not isinstance(m.get("metadata"), dict):
        m["metadata"] = {}
    return m


@pytest.mark.parametrize("seed", range(8))
def test_create_fast_path_matches_reference_on_mutations(seed: int) -> None:
    rng = random.Random(seed)
    for _, o in OBJECTS:
        schema = _schema(o)
        for _ in range(6):
            _assert_same(_mutant(o, rng), schema)


@pytest.mark.parametrize("seed", range(8))
def test_update_compare_matches_reference_on_mutations(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _, o in OBJECTS:
        schema = _schema(o)
        _assert_same_diff({}, o, schema)
        _assert_same_diff(o, {"metadata": {}}, schema)
        for _ in range(4):
            a, b = _mutant(o, rng), _mutant(o, rng)
            _assert_same_diff(o, a, schema)
            _assert_same_diff(a, o, schema)
            _assert_same_diff(a, b, schema)
            _assert_same_diff(a, b, None)


def test_create_without_fields_left_is_untracked() -> None:
    o = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert mf.record_update(None, o, manager="m", schema=_schema(o), now="t") == []
    assert "managedFields" not in o["metadata"]


def _reference_difference(a: FieldSet, b: FieldSet) -> FieldSet:
    """`fp.difference` as it was: a walk over every key of `a`."""
    if not a or not b:
        return a
    out: FieldSet = {}
    for k, an in a.items():
        bn = b.get(k)
        if bn is None:
            out[k] = an
            continue
        node = fp.make_node(fp.is_member(an) and not fp.is_member(bn),
                            _reference_difference(fp.children(an), fp.children(bn)))
        if node is not None:
            out[k] = node
    return out


@pytest.mark.parametrize("seed", range(4))
def test_difference_matches_reference(seed: int) -> None:
    rng = random.Random(200 + seed)
    for _, o in OBJECTS:
        t = mt.compile_type(_schema(o))
        sets = [fs.to_set(o, t)[1]] + [fs.to_set(_mutant(o, rng), t)[1] for _ in range(3)]
        sets += [fs.diff(o, _mutant(o, rng), t, "")[0] for _ in range(3)]
        for a in sets:
            for b in sets:
                want = _reference_difference(a, b)
                assert orjson.dumps(fp.difference(a, b)) == orjson.dumps(want)
