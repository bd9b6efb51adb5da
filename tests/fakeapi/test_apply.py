"""Server-side apply and managedFields bookkeeping (fakeapi.patching.apply,
fakeapi.patching.managedfields, fakeapi.patching.fieldsets, fakeapi.machinery.fieldpath)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from fakeapi.machinery import fieldpath as fp
from fakeapi.machinery.errors import ApiError
from fakeapi.patching.apply import apply
from fakeapi.patching.fieldsets import field_set
from fakeapi.patching.managedfields import manager_from_user_agent, record_update
from fakeapi.schema.schemas import get_schemas

T0, T1, T2, T3 = ("2030-01-01T00:00:00Z", "2030-01-01T00:00:01Z", "2030-01-01T00:00:02Z",
                  "2030-01-01T00:00:03Z")

GVK = {
    "Pod": ("", "v1"),
    "ConfigMap": ("", "v1"),
    "Deployment": ("apps", "v1"),
    "ResourceClaim": ("resource.k8s.io", "v1"),
}


def schema(kind: str) -> dict[str, Any]:
    group, version = GVK[kind]
    found = get_schemas().for_gvk(group, version, kind)
    assert found is not None
    return found


def obj(kind: str, name: str = "x", **body: Any) -> dict[str, Any]:
    group, version = GVK[kind]
    meta = body.pop("metadata", {})
    return {"apiVersion": f"{group}/{version}" if group else version, "kind": kind,
            "metadata": {"name": name, **meta}, **body}


def pod(*containers: object, **meta: Any) -> dict[str, Any]:
    """A Pod configuration with these entries in spec.containers (any value: the bad-input
    cases give one that is not an object)."""
    return obj("Pod", metadata=meta, spec={"containers": list(containers)})


def deployment(replicas: int | None = None, image: str = "nginx", **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": "x"}},
                            "template": {"metadata": {"labels": {"app": "x"}},
                                         "spec": {"containers": [{"name": "c", "image": image}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    return obj("Deployment", metadata=meta, spec=spec)


def claim(*requests: str) -> dict[str, Any]:
    reqs = [{"name": r, "exactly": {"deviceClassName": "gpu"}} for r in requests]
    return obj("ResourceClaim", spec={"devices": {"requests": reqs}})


def entries(o: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """managedFields by (manager, operation)."""
    return {(e["manager"], e["operation"]): e for e in o["metadata"].get("managedFields", [])}


def owned(o: dict[str, Any], manager: str, operation: str = "Apply") -> list[str]:
    """The member paths of one manager, in human form."""
    e = entries(o).get((manager, operation))
    return [] if e is None else [fp.path_string(p) for p in fp.paths(e["fieldsV1"])]


def without_managed(o: dict[str, Any]) -> dict[str, Any]:
    o = copy.deepcopy(o)
    o["metadata"].pop("managedFields", None)
    return o


def stored(o: dict[str, Any], uid: str = "u1") -> dict[str, Any]:
    """What the registry would store: the object with server metadata."""
    o = copy.deepcopy(o)
    o["metadata"].setdefault("uid", uid)
    o["metadata"].setdefault("resourceVersion", "1")
    return o


# --------------------------------------------------------------------------- field sets

FIELD_SET_CASES = [
    pytest.param(
        "Pod", pod({"name": "c", "image": "nginx"}, labels={"app": "x"}),
        {"f:apiVersion": {}, "f:kind": {},
         "f:metadata": {"f:labels": {"f:app": {}}, "f:name": {}},
         "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}}},
        id="list-map-by-name"),
    pytest.param(
        "Pod", pod({"name": "c", "ports": [{"containerPort": 80}, {"containerPort": 53,
                                                                   "protocol": "UDP"}]}),
        {"f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
         "f:spec": {"f:containers": {'k:{"name":"c"}': {
             ".": {}, "f:name": {},
             "f:ports": {'k:{"containerPort":53,"protocol":"UDP"}': {
                 ".": {}, "f:containerPort": {}, "f:protocol": {}},
                 'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}}}},
        id="multi-key-with-protocol-default"),
    pytest.param(
        "ConfigMap", obj("ConfigMap", metadata={"finalizers": ["b", "a"]}, data={"k": "v"}),
        {"f:apiVersion": {}, "f:data": {"f:k": {}}, "f:kind": {},
         "f:metadata": {"f:finalizers": {'v:"a"': {}, 'v:"b"': {}}, "f:name": {}}},
        id="set-list-by-value"),
    pytest.param(
        "ResourceClaim", claim("gpu"),
        {"f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
         "f:spec": {"f:devices": {"f:requests": {}}}},
        id="atomic-list-owned-whole"),
    pytest.param(
        "Deployment", deployment(2),
        {"f:apiVersion": {}, "f:kind": {}, "f:metadata": {"f:name": {}},
         "f:spec": {"f:replicas": {}, "f:selector": {},
                    "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                                   "f:spec": {"f:containers": {'k:{"name":"c"}': {
                                       ".": {}, "f:image": {}, "f:name": {}}}}}}},
        id="atomic-struct-selector"),
]


@pytest.mark.parametrize("kind,o,expected", FIELD_SET_CASES)
def test_field_set_wire_format(kind: str, o: dict[str, Any], expected: dict[str, Any]) -> None:
    got = field_set(o, schema(kind))
    assert got == expected
    assert json.dumps(got) == json.dumps(expected)  # upstream key order too


SET_ALGEBRA_CASES = [
    # (a, b, union, difference a-b, intersection)
    ([(".a",), (".b", ".c")], [(".b", ".c"), (".d",)],
     [(".a",), (".d",), (".b", ".c")], [(".a",)], [(".b", ".c")]),
    ([(".s",), (".s", ".x")], [(".s", ".x")],
     [(".s",), (".s", ".x")], [(".s",)], [(".s", ".x")]),
    ([(".s", ".x"), (".s", ".y")], [(".s",)],
     [(".s",), (".s", ".x"), (".s", ".y")], [(".s", ".x"), (".s", ".y")], []),
]


def _set(paths: list[tuple[str, ...]]) -> fp.FieldSet:
    return fp.from_paths([tuple("f:" + pe[1:] for pe in p) for p in paths])


def _members(fs: fp.FieldSet) -> list[str]:
    return sorted(fp.path_string(p) for p in fp.paths(fs))


@pytest.mark.parametrize("a,b,union,diff,inter", SET_ALGEBRA_CASES)
def test_set_algebra(a: Any, b: Any, union: Any, diff: Any, inter: Any) -> None:
    sa, sb = _set(a), _set(b)
    assert _members(fp.union(sa, sb)) == sorted("".join(p) for p in union)
    assert _members(fp.difference(sa, sb)) == sorted("".join(p) for p in diff)
    assert _members(fp.intersection(sa, sb)) == sorted("".join(p) for p in inter)
    assert fp.difference(sa, sa) == {}
    # removing nothing gives the set back itself (untouched managedFields entries are
    # written again as stored)
    kept = fp.difference(sa, sb)
    assert (kept is sa) == (_members(kept) == _members(sa))


def test_untouched_managed_fields_entries_are_the_stored_ones() -> None:
    schema = get_schemas().for_gvk("", "v1", "ConfigMap")
    stored: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "c"}, "data": {"a": "1"}}
    record_update(None, stored, manager="creator", schema=schema, now="2026-01-01T00:00:00Z")
    new = copy.deepcopy(stored)
    new["data"]["b"] = "2"
    entries = record_update(stored, new, manager="other", schema=schema,
                            now="2026-01-01T00:00:01Z")
    assert [e["manager"] for e in entries] == ["creator", "other"]
    assert entries[0] is stored["metadata"]["managedFields"][0]
    assert entries[1]["fieldsV1"] == {"f:data": {"f:b": {}}}
    # a write that takes a field over rewrites the entry it took it from
    newer = copy.deepcopy(new)
    newer["data"]["a"] = "3"
    entries = record_update(new, newer, manager="other", schema=schema,
                            now="2026-01-01T00:00:02Z")
    assert [e["manager"] for e in entries] == ["creator", "other"]
    assert entries[0] is not new["metadata"]["managedFields"][0]
    assert "f:a" not in entries[0]["fieldsV1"]["f:data"]


@pytest.mark.parametrize("pe,text", [
    ("f:spec", ".spec"),
    ('k:{"name":"c"}', '[name="c"]'),
    ('k:{"containerPort":80,"protocol":"TCP"}', '[containerPort=80,protocol="TCP"]'),
    ('v:"example.com/x"', '[="example.com/x"]'),
    ("i:3", "[3]"),
])
def test_path_element_strings(pe: str, text: str) -> None:
    assert fp.pe_string(pe) == text


# --------------------------------------------------------------------------- apply: basics


def test_create_by_apply_records_apply_entry() -> None:
    cfg = pod({"name": "c", "image": "nginx"}, labels={"app": "x"})
    out = apply(None, cfg, manager="kubectl", force=False, schema=schema("Pod"), now=T1)
    assert without_managed(out) == cfg
    assert out["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}},
                     "f:spec": {"f:containers": {'k:{"name":"c"}': {
                         ".": {}, "f:image": {}, "f:name": {}}}}}}]
    assert "managedFields" not in cfg["metadata"]  # inputs untouched


REAPPLY_CASES = [
    pytest.param(
        "Pod", pod({"name": "c", "image": "a"}, labels={"app": "x", "tier": "web"}),
        pod({"name": "c", "image": "a"}, labels={"app": "x"}),
        pod({"name": "c", "image": "a"}, labels={"app": "x"}), id="drop-label"),
    pytest.param(
        "Pod", pod({"name": "c", "image": "a"}, labels={"app": "x"}),
        pod({"name": "c", "image": "a"}),
        pod({"name": "c", "image": "a"}), id="drop-last-label-removes-map"),
    pytest.param(
        "Pod", pod({"name": "a", "image": "a"}, {"name": "b", "image": "b"}),
        pod({"name": "b", "image": "b"}),
        pod({"name": "b", "image": "b"}), id="drop-list-map-item"),
    pytest.param(
        "Pod", pod({"name": "c", "image": "a", "args": ["x"]}),
        pod({"name": "c", "image": "a"}),
        pod({"name": "c", "image": "a"}), id="drop-atomic-list"),
    pytest.param(
        "ConfigMap", obj("ConfigMap", metadata={"finalizers": ["a", "b"]}),
        obj("ConfigMap", metadata={"finalizers": ["b"]}),
        obj("ConfigMap", metadata={"finalizers": ["b"]}), id="drop-set-item"),
    pytest.param(
        "ConfigMap", obj("ConfigMap", data={"k": "v"}), obj("ConfigMap"),
        obj("ConfigMap"), id="drop-whole-map"),
    pytest.param(
        "Deployment", deployment(3), deployment(None), deployment(None), id="drop-scalar"),
]


@pytest.mark.parametrize("kind,first,second,expected", REAPPLY_CASES)
def test_reapply_removes_fields_no_longer_applied(kind: str, first: dict[str, Any],
                                                  second: dict[str, Any],
                                                  expected: dict[str, Any]) -> None:
    s = schema(kind)
    live = stored(apply(None, first, manager="m", force=False, schema=s, now=T1))
    out = apply(live, second, manager="m", force=False, schema=s, now=T2)
    assert without_managed(out) == {**expected, "metadata": {**expected["metadata"],
                                                             "uid": "u1",
                                                             "resourceVersion": "1"}}
    assert owned(out, "m") == [fp.path_string(p) for p in fp.paths(field_set(second, s))
                               if p[0] not in ("f:apiVersion", "f:kind")
                               and p != ("f:metadata", "f:name")]


def test_shared_field_survives_when_one_applier_drops_it() -> None:
    s = schema("ConfigMap")
    a = obj("ConfigMap", data={"shared": "1", "a": "1"})
    b = obj("ConfigMap", data={"shared": "1", "b": "1"})
    live = stored(apply(None, a, manager="a", force=False, schema=s, now=T1))
    live = apply(live, b, manager="b", force=False, schema=s, now=T2)
    assert live["data"] == {"shared": "1", "a": "1", "b": "1"}
    assert owned(live, "a") == [".data.a", ".data.shared"]
    assert owned(live, "b") == [".data.b", ".data.shared"]
    live = apply(live, obj("ConfigMap", data={"a": "1"}), manager="a", force=False, schema=s,
                 now=T3)
    assert live["data"] == {"shared": "1", "a": "1", "b": "1"}
    assert owned(live, "a") == [".data.a"]
    live = apply(live, obj("ConfigMap", data={"b": "1"}), manager="b", force=False, schema=s,
                 now=T3)
    assert live["data"] == {"a": "1", "b": "1"}


def test_noop_apply_returns_same_object_and_keeps_time() -> None:
    s = schema("Deployment")
    live = stored(apply(None, deployment(2), manager="m", force=False, schema=s, now=T1))
    again = apply(live, deployment(2), manager="m", force=False, schema=s, now=T2)
    assert again == live


# --------------------------------------------------------------------------- conflicts

CONFLICT_CASES = [
    pytest.param(
        [("Update", "kubectl-client-side-apply", deployment(1))], deployment(2),
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1:'
        " .spec.replicas",
        [("conflict with \"kubectl-client-side-apply\" using apps/v1", ".spec.replicas")],
        id="one-update-manager"),
    pytest.param(
        [("Apply", "other", deployment(1))], deployment(2),
        'Apply failed with 1 conflict: conflict with "other": .spec.replicas',
        [('conflict with "other"', ".spec.replicas")], id="one-applier"),
    pytest.param(
        [("Apply", "other", deployment(1, image="a"))], deployment(2, image="b"),
        'Apply failed with 2 conflicts: conflicts with "other":\n- .spec.replicas\n'
        '- .spec.template.spec.containers[name="c"].image',
        [('conflict with "other"', ".spec.replicas"),
         ('conflict with "other"', '.spec.template.spec.containers[name="c"].image')],
        id="two-fields-one-manager"),
    pytest.param(
        [("Apply", "zeta", deployment(1)), ("Update", "alpha", deployment(1, image="a"))],
        deployment(2, image="b"),
        'Apply failed with 2 conflicts: conflicts with "alpha" using apps/v1:\n'
        '- .spec.template.spec.containers[name="c"].image\nconflicts with "zeta":\n'
        "- .spec.replicas",
        [('conflict with "alpha" using apps/v1', '.spec.template.spec.containers[name="c"].image'),
         ('conflict with "zeta"', ".spec.replicas")],
        id="two-managers-sorted"),
]


def _history(kind: str, steps: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """An object built by a sequence of (operation, manager, object) writes."""
    s = schema(kind)
    live: dict[str, Any] | None = None
    for i, (op, manager, o) in enumerate(steps):
        now = f"2030-01-01T00:00:1{i}Z"
        if op == "Apply":
            live = stored(apply(live, o, manager=manager, force=True, schema=s, now=now))
        else:
            new = stored(o)
            if live is not None:
                new["metadata"]["managedFields"] = live["metadata"].get("managedFields", [])
            record_update(live, new, manager=manager, schema=s, now=now)
            live = new
    assert live is not None
    return live


@pytest.mark.parametrize("steps,config,message,causes", CONFLICT_CASES)
def test_conflict_without_force(steps: Any, config: dict[str, Any], message: str,
                                causes: list[tuple[str, str]]) -> None:
    live = _history("Deployment", steps)
    with pytest.raises(ApiError) as info:
        apply(live, config, manager="kubectl", force=False, schema=schema("Deployment"), now=T3)
    err = info.value
    assert (err.code, err.reason, err.message) == (409, "Conflict", message)
    assert err.to_status()["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": m, "field": f} for m, f in causes]


@pytest.mark.parametrize("steps,config,message,causes", CONFLICT_CASES)
def test_force_moves_ownership(steps: Any, config: dict[str, Any], message: str,
                               causes: list[tuple[str, str]]) -> None:
    live = _history("Deployment", steps)
    out = apply(live, config, manager="kubectl", force=True, schema=schema("Deployment"), now=T3)
    assert out["spec"]["replicas"] == 2
    taken = {f for _, f in causes}
    for (manager, op), _ in entries(out).items():
        if manager != "kubectl":
            assert not taken & set(owned(out, manager, op))
    assert taken <= set(owned(out, "kubectl"))


def test_same_value_is_shared_not_a_conflict() -> None:
    live = _history("Deployment", [("Update", "kubectl-create", deployment(2))])
    out = apply(live, deployment(2), manager="kubectl", force=False,
                schema=schema("Deployment"), now=T3)
    assert ".spec.replicas" in owned(out, "kubectl")
    assert ".spec.replicas" in owned(out, "kubectl-create", "Update")


def test_dropping_a_field_another_manager_changed_keeps_it() -> None:
    s = schema("Deployment")
    live = _history("Deployment", [("Apply", "m", deployment(2)),
                                   ("Update", "kubectl-scale", deployment(5))])
    out = apply(live, deployment(None), manager="m", force=False, schema=s, now=T3)
    assert out["spec"]["replicas"] == 5
    assert owned(out, "kubectl-scale", "Update") == [".spec.replicas"]


# --------------------------------------------------------------------------- list semantics

LIST_MERGE_CASES = [
    pytest.param(["a", "b", "c"], ["c", "a"], ["b", "c", "a"], id="reorder-shared"),
    pytest.param(["a", "x"], ["a", "b"], ["a", "x", "b"], id="live-only-before-new"),
    pytest.param(["x", "a"], ["b", "a"], ["x", "b", "a"], id="new-before-shared"),
    pytest.param([], ["a", "b"], ["a", "b"], id="empty-live"),
]


@pytest.mark.parametrize("live_names,applied,expected", LIST_MERGE_CASES)
def test_list_map_merges_by_key(live_names: list[str], applied: list[str],
                                expected: list[str]) -> None:
    s = schema("Pod")
    live = _history("Pod", [("Update", "kubectl-create",
                             pod(*({"name": n, "image": "old"} for n in live_names)))])
    out = apply(live, pod(*({"name": n, "image": "new"} for n in applied)), manager="m",
                force=True, schema=s, now=T3)
    assert [c["name"] for c in out["spec"]["containers"]] == expected
    images = {c["name"]: c["image"] for c in out["spec"]["containers"]}
    assert all(images[n] == "new" for n in applied)
    assert all(images[n] == "old" for n in live_names if n not in applied)


def test_list_map_items_owned_by_different_appliers() -> None:
    s = schema("Pod")
    live = stored(apply(None, pod({"name": "a", "image": "a"}), manager="ma", force=False,
                        schema=s, now=T1))
    live = apply(live, pod({"name": "b", "image": "b"}), manager="mb", force=False, schema=s,
                 now=T2)
    assert [c["name"] for c in live["spec"]["containers"]] == ["a", "b"]
    assert owned(live, "mb") == ['.spec.containers[name="b"]',
                                 '.spec.containers[name="b"].image',
                                 '.spec.containers[name="b"].name']
    live = apply(live, pod({"name": "b2", "image": "x"}), manager="mb", force=False, schema=s,
                 now=T3)
    assert [c["name"] for c in live["spec"]["containers"]] == ["a", "b2"]


def test_set_list_merges_by_value() -> None:
    s = schema("ConfigMap")
    live = stored(apply(None, obj("ConfigMap", metadata={"finalizers": ["a", "b"]}),
                        manager="m1", force=False, schema=s, now=T1))
    live = apply(live, obj("ConfigMap", metadata={"finalizers": ["c", "b"]}), manager="m2",
                 force=False, schema=s, now=T2)
    assert live["metadata"]["finalizers"] == ["a", "c", "b"]
    assert owned(live, "m2") == ['.metadata.finalizers[="b"]', '.metadata.finalizers[="c"]']
    live = apply(live, obj("ConfigMap"), manager="m1", force=False, schema=s, now=T3)
    assert live["metadata"]["finalizers"] == ["c", "b"]


def test_atomic_list_conflicts_and_is_replaced_whole() -> None:
    s = schema("ResourceClaim")
    live = stored(apply(None, claim("a", "b"), manager="m1", force=False, schema=s, now=T1))
    with pytest.raises(ApiError) as info:
        apply(live, claim("c"), manager="m2", force=False, schema=s, now=T2)
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "m1": '
                                  ".spec.devices.requests")
    out = apply(live, claim("c"), manager="m2", force=True, schema=s, now=T2)
    assert [r["name"] for r in out["spec"]["devices"]["requests"]] == ["c"]
    assert owned(out, "m1") == []
    assert entries(out).keys() == {("m2", "Apply")}


# --------------------------------------------------------------------------- record_update


def test_create_is_tracked_as_update() -> None:
    o = stored(deployment(2))
    got = record_update(None, o, manager="kubectl-create", schema=schema("Deployment"), now=T1)
    assert got == o["metadata"]["managedFields"]
    assert got == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"c"}': {
                ".": {}, "f:image": {}, "f:name": {}}}}}}}}]


def test_update_after_apply_moves_ownership() -> None:
    s = schema("Deployment")
    live = stored(apply(None, deployment(2), manager="kubectl", force=False, schema=s, now=T1))
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 7
    record_update(live, new, manager="kubectl-scale", schema=s, now=T2)
    assert owned(new, "kubectl-scale", "Update") == [".spec.replicas"]
    assert ".spec.replicas" not in owned(new, "kubectl")
    with pytest.raises(ApiError) as info:
        apply(new, deployment(2), manager="kubectl", force=False, schema=s, now=T3)
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-scale" '
                                  "using apps/v1: .spec.replicas")


UPDATE_CASES = [
    pytest.param(
        {"data": {"a": "1"}}, {"data": {"a": "2"}}, "m2",
        {("m1", "Update"): [".data"], ("m2", "Update"): [".data.a"]}, id="modified-moves"),
    pytest.param(
        {"data": {"a": "1", "b": "1"}}, {"data": {"b": "1"}}, "m2",
        {("m1", "Update"): [".data", ".data.b"]}, id="removed-leaves-everyone"),
    pytest.param(
        {"data": {"a": "1"}}, {"data": {"a": "1"}}, "m2",
        {("m1", "Update"): [".data", ".data.a"]}, id="noop-creates-nothing"),
    pytest.param(
        {"data": {"a": "1"}}, {"data": {"a": "1", "b": "2"}}, "m1",
        {("m1", "Update"): [".data", ".data.a", ".data.b"]}, id="same-manager-merges"),
    pytest.param(
        {"data": {"a": "1"}}, {"data": {"a": "1"}, "metadata": {"labels": {"x": "y"}}}, "m2",
        {("m1", "Update"): [".data", ".data.a"],
         ("m2", "Update"): [".metadata.labels", ".metadata.labels.x"]}, id="new-map"),
]


@pytest.mark.parametrize("before,after,manager,expected", UPDATE_CASES)
def test_record_update(before: dict[str, Any], after: dict[str, Any], manager: str,
                       expected: dict[tuple[str, str], list[str]]) -> None:
    s = schema("ConfigMap")
    old = stored(obj("ConfigMap", **copy.deepcopy(before)))
    record_update(None, old, manager="m1", schema=s, now=T1)
    new = stored(obj("ConfigMap", **copy.deepcopy(after)))
    new["metadata"]["managedFields"] = old["metadata"]["managedFields"]
    record_update(old, new, manager=manager, schema=s, now=T2)
    assert {k: owned(new, *k) for k in entries(new)} == expected
    times = {k: e["time"] for k, e in entries(new).items()}
    if ("m1", "Update") in times and manager != "m1":
        assert times[("m1", "Update")] == T1


@pytest.mark.parametrize("requested,expected", [
    pytest.param([], None, id="empty-list-resets"),
    pytest.param([{}], None, id="one-empty-entry-resets"),
    pytest.param([{"manager": "someone", "operation": "Update", "apiVersion": "v1",
                   "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}}],
                 {("someone", "Update"): [".data.a"], ("m2", "Update"): [".data.b"]},
                 id="client-supplied-replaces"),
])
def test_client_managed_fields(requested: list[dict[str, Any]],
                               expected: dict[tuple[str, str], list[str]] | None) -> None:
    s = schema("ConfigMap")
    old = stored(obj("ConfigMap", data={"a": "1"}))
    record_update(None, old, manager="m1", schema=s, now=T1)
    new = stored(obj("ConfigMap", data={"a": "1", "b": "2"}))
    new["metadata"]["managedFields"] = requested
    record_update(old, new, manager="m2", schema=s, now=T2)
    if expected is None:
        assert "managedFields" not in new["metadata"]
    else:
        assert {k: owned(new, *k) for k in entries(new)} == expected


@pytest.mark.parametrize("subresource,expected", [
    pytest.param("", {("kcm", "Update", ""): [".spec.replicas"]}, id="main-ignores-status"),
    pytest.param("status", {("m1", "Update", ""): [".spec.replicas"],
                            ("kcm", "Update", "status"): [".status.replicas"]}, id="status-only"),
])
def test_record_update_subresource_scope(subresource: str,
                                         expected: dict[tuple[str, str, str], list[str]]) -> None:
    s = schema("Deployment")
    old = stored(obj("Deployment", spec={"replicas": 1}))
    record_update(None, old, manager="m1", schema=s, now=T1)
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 2
    new["status"] = {"replicas": 2}
    record_update(old, new, manager="kcm", schema=s, now=T2, subresource=subresource)
    got = {(e["manager"], e["operation"], e.get("subresource", "")):
           [fp.path_string(p) for p in fp.paths(e["fieldsV1"])]
           for e in new["metadata"]["managedFields"]}
    assert got == expected


def test_untracked_object_stays_untracked_on_update() -> None:
    s = schema("ConfigMap")
    old = stored(obj("ConfigMap", data={"a": "1"}))
    new = stored(obj("ConfigMap", data={"a": "2"}))
    assert record_update(old, new, manager="m", schema=s, now=T1) == []
    assert "managedFields" not in new["metadata"]


def test_too_many_update_managers_fold_into_ancient_changes() -> None:
    s = schema("ConfigMap")
    live = stored(obj("ConfigMap", data={}))
    record_update(None, live, manager="m00", schema=s, now=T0)
    for i in range(1, 13):
        new = copy.deepcopy(live)
        new["data"] = {**(live.get("data") or {}), f"k{i:02}": "v"}
        record_update(live, new, manager=f"m{i:02}", schema=s, now=f"2030-01-01T00:00:{i:02}Z")
        live = new
    managers = [e["manager"] for e in live["metadata"]["managedFields"]]
    assert len(managers) == 10
    assert managers[0] == "ancient-changes"
    assert owned(live, "ancient-changes", "Update") == [".data", ".data.k01", ".data.k02",
                                                       ".data.k03"]


# --------------------------------------------------------------------------- scopes and metadata


def test_before_first_apply_owns_existing_fields() -> None:
    live = stored(deployment(1))
    out = apply(live, deployment(1, image="b"), manager="m", force=True,
                schema=schema("Deployment"), now=T1)
    assert ".spec.replicas" in owned(out, "before-first-apply", "Update")
    with pytest.raises(ApiError) as info:
        apply(live, deployment(3), manager="m", force=False, schema=schema("Deployment"),
              now=T1)
    assert '"before-first-apply" using apps/v1' in info.value.message


@pytest.mark.parametrize("subresource,expect_status,expect_replicas", [
    pytest.param("", {"phase": "Old"}, 5, id="main-ignores-status"),
    pytest.param("status", {"phase": "New"}, 1, id="status-ignores-spec"),
])
def test_subresource_scope(subresource: str, expect_status: dict[str, Any],
                           expect_replicas: int) -> None:
    s = schema("Deployment")
    live = stored({**deployment(1), "status": {"phase": "Old"}})
    record_update(None, live, manager="creator", schema=s, now=T0)
    cfg = {**deployment(5), "status": {"phase": "New"}}
    out = apply(live, cfg, manager="m", force=True, schema=s, now=T1, subresource=subresource)
    assert out["status"] == expect_status
    assert out["spec"]["replicas"] == expect_replicas
    paths = owned(out, "m")
    if subresource:
        assert paths == [".status.phase"]
        assert entries(out)[("m", "Apply")]["subresource"] == "status"
    else:
        assert not any(p.startswith(".status") for p in paths)


def test_server_metadata_is_never_taken() -> None:
    s = schema("ConfigMap")
    live = stored(obj("ConfigMap", data={"a": "1"}, metadata={"generation": 3}))
    record_update(None, live, manager="c", schema=s, now=T0)
    cfg = obj("ConfigMap", data={"a": "1"},
              metadata={"uid": "evil", "resourceVersion": "99", "generation": 9,
                        "creationTimestamp": "1999-01-01T00:00:00Z"})
    out = apply(live, cfg, manager="m", force=False, schema=s, now=T1)
    assert {k: out["metadata"].get(k) for k in ("uid", "resourceVersion", "generation",
                                                "creationTimestamp")} == {
        "uid": "u1", "resourceVersion": "1", "generation": 3, "creationTimestamp": None}
    assert owned(out, "m") == [".data.a"]


def test_kubectl_upgrades_client_side_apply_without_conflict() -> None:
    s = schema("Deployment")
    last = json.dumps(deployment(1))
    csa = deployment(1)
    csa["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": last}
    live = _history("Deployment", [("Update", "kubectl-client-side-apply", csa)])
    out = apply(live, deployment(2), manager="kubectl", force=False, schema=s, now=T3)
    assert out["spec"]["replicas"] == 2
    annotation = out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation) == deployment(2)
    with pytest.raises(ApiError):  # any other manager name still conflicts
        apply(live, deployment(2), manager="helm", force=False, schema=s, now=T3)


def test_kubectl_still_conflicts_on_fields_changed_since_last_apply() -> None:
    s = schema("Deployment")
    csa = deployment(1)
    csa["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(deployment(1))}
    scaled = copy.deepcopy(csa)
    scaled["spec"]["replicas"] = 4
    live = _history("Deployment", [("Update", "kubectl-client-side-apply", csa),
                                   ("Update", "kubectl-scale", scaled)])
    with pytest.raises(ApiError) as info:
        apply(live, deployment(2, image="new"), manager="kubectl", force=False, schema=s, now=T3)
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-scale" '
                                  "using apps/v1: .spec.replicas")


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("config,code,fragment", [
    pytest.param({**pod({"name": "c"}), "metadata": {"name": "x", "managedFields": []}}, 400,
                 "metadata.managedFields must be nil", id="managed-fields-in-config"),
    pytest.param(pod({"name": "c"}, {"name": "c"}), 500,
                 'failed to create typed patch object (/x; /v1, Kind=Pod): .spec.containers: '
                 'duplicate entries for key [name="c"]', id="duplicate-keys"),
    pytest.param(pod("oops"), 500,
                 ".spec.containers: element 0: associative list with keys may not have "
                 "non-map elements", id="non-map-item"),
])
def test_invalid_configuration(config: dict[str, Any], code: int, fragment: str) -> None:
    with pytest.raises(ApiError) as info:
        apply(None, config, manager="m", force=False, schema=schema("Pod"), now=T1)
    assert info.value.code == code
    assert fragment in info.value.message


@pytest.mark.parametrize("agent,manager", [
    ("kubectl/v1.37.0 (linux/amd64) kubernetes/abcdef", "kubectl"),
    ("OpenAPI-Generator/33.1.0/python", "OpenAPI-Generator"),
    ("kube-controller-manager/v1.37.0 (linux/amd64)", "kube-controller-manager"),
    ("bad\x00agent\n", "badagent"),
    ("x" * 200, "x" * 128),
    ("", ""),
])
def test_manager_from_user_agent(agent: str, manager: str) -> None:
    assert manager_from_user_agent(agent) == manager
