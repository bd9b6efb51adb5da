"""The kind table is the single source of per-kind facts: every row names a strategy class, a
status (or other subresource) strategy class, table columns, field selectors, drop rules and
subresources that exist and fit together, every strategy class is named by a row, every
handler a row names is reachable over HTTP, every defaulter defaults once, and a Registry
built on its own applies every rule of a row."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http import discovery
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import RealClock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.features import GATES, FeatureGates
from fakeapi.machinery.selectors import DEFAULT_FIELDS, parse_field_selector
from fakeapi.printers.columns import DEFAULT_SPEC
from fakeapi.registry import custom_kinds
from fakeapi.registry.context import RequestContext
from fakeapi.registry.custom import CustomResourceStrategy
from fakeapi.registry.generic import Registry
from fakeapi.registry.kinds import KINDS, RESOURCE_CLAIMS, SECRETS, KindTable
from fakeapi.registry.rest import (
    ActionStrategy,
    ConnectStrategy,
    CreateSubresourceStrategy,
    Kind,
    PostsTo,
    Review,
    StatusStrategy,
    Stored,
    Strategy,
    no_defaults,
)
from fakeapi.schema import dropfields
from fakeapi.schema.schemas import get_schemas
from fakeapi.storage.log import EventLog
from fakeapi.storage.store import Store

STORED = [k for k in KINDS if "get" in k.verbs]
"""Rows of objects that are stored and read back (create-only reviews are not)."""
IDS = [k.resource_id for k in KINDS]
SUBRESOURCE_BASES = (StatusStrategy, CreateSubresourceStrategy, ConnectStrategy)
"""What a subresource's strategy may be (`rest.SubresourceStrategy`)."""


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_row_names_strategy_classes(kind: Kind) -> None:
    assert issubclass(kind.strategy, Strategy)
    for name, strategy in kind.subresources.items():
        assert issubclass(strategy, SUBRESOURCE_BASES), (name, strategy)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_subresource_strategies_fit_how_discovery_serves_them(kind: Kind) -> None:
    for name, cls in kind.subresources.items():
        assert name in discovery.SUBRESOURCES, name  # no silent "like status" fallback
        verbs = discovery.SUBRESOURCES[name].verbs
        if issubclass(cls, (CreateSubresourceStrategy, ActionStrategy)):
            assert verbs == ("create",) and cls.body_kind, name
        elif issubclass(cls, ConnectStrategy):
            assert verbs == cls.verbs, name
        else:
            assert issubclass(cls, StatusStrategy) and "update" in verbs, name


def _project_subclasses(base: type) -> set[type]:
    """Every class of the project below `base` (tests may subclass too; those don't count)."""
    found: set[type] = set()
    todo: list[type] = [base]
    while todo:
        subclasses: list[type] = todo.pop().__subclasses__()
        for sub in subclasses:
            if sub not in found and sub.__module__.startswith("fakeapi."):
                found.add(sub)
                todo.append(sub)
    return found


def test_every_strategy_class_is_named_by_a_row() -> None:
    """A strategy no row names (built-in, or the rows CRDs make) is dead code."""
    named = ({k.strategy for k in KINDS} | {s for k in KINDS for s in k.subresources.values()}
             | {CustomResourceStrategy, *custom_kinds.SUBRESOURCES.values()})
    classes = {c for base in (Strategy, *SUBRESOURCE_BASES)
               for c in {base, *_project_subclasses(base)}}
    leaves = {c for c in classes if not _project_subclasses(c)}
    assert leaves - named == set()
    assert named <= classes


@pytest.mark.parametrize("kind", STORED, ids=[k.resource_id for k in STORED])
def test_every_stored_row_has_columns_and_a_schema(kind: Kind) -> None:
    assert kind.columns is not DEFAULT_SPEC
    schema = get_schemas().for_gvk(kind.group, kind.version, kind.kind)
    assert schema is not None
    if "status" in kind.subresources:
        assert "status" in (schema.get("properties") or {})


@pytest.mark.parametrize("kind", STORED, ids=[k.resource_id for k in STORED])
def test_every_row_selects_by_name_and_namespace(kind: Kind) -> None:
    obj = {"metadata": {"name": "a", "namespace": "ns" if kind.namespaced else ""}}
    rules = kind.field_selectors
    assert parse_field_selector("metadata.name=a", rules).matches(obj)
    assert not parse_field_selector("metadata.name=b", rules).matches(obj)
    if kind.namespaced or rules is DEFAULT_FIELDS:
        assert parse_field_selector("metadata.namespace=ns", rules).matches(obj) is (
            kind.namespaced)
    else:  # upstream's core cluster-scoped kinds refuse the label
        with pytest.raises(ApiError) as e:
            parse_field_selector("metadata.namespace=ns", rules)
        assert e.value.code == 400


@pytest.mark.parametrize("kind", [k for k in KINDS if k.drop_fields],
                         ids=[k.resource_id for k in KINDS if k.drop_fields])
def test_drop_rules_name_known_gates_and_a_part_the_row_writes(kind: Kind) -> None:
    for rule in kind.drop_fields:
        assert set(rule.gates) <= set(GATES), rule
        assert rule.part in ("spec", "status"), rule
        if rule.part == "status":
            assert "status" in kind.subresources, rule
        assert rule.fields and all(f.split(".")[0] in ("spec", "status") for f in rule.fields)


@pytest.mark.parametrize("kind", [k for k in KINDS if k.feature_gate],
                         ids=[k.resource_id for k in KINDS if k.feature_gate])
def test_a_gated_row_names_a_known_gate(kind: Kind) -> None:
    assert kind.feature_gate in GATES


def test_rows_are_unique() -> None:
    assert len({k.resource_id for k in KINDS}) == len(KINDS)
    assert len({(k.group, k.version, k.kind) for k in KINDS}) == len(KINDS)
    shorts = [s for k in KINDS for s in k.short_names]
    assert len(shorts) == len(set(shorts))


HANDLED = [k for k in KINDS if not isinstance(k.handler, Stored)]
"""Rows HTTP serves by a handler of their own (reviews, bindings), not the generic store."""
CONNECTED = [(k, s) for k in KINDS for s, cls in k.subresources.items()
             if issubclass(cls, ConnectStrategy)]
"""Streamed and connected subresources (log, exec, attach, portforward)."""


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_every_row_names_a_handler_that_fits_its_verbs(kind: Kind) -> None:
    assert isinstance(kind.handler, (Stored, Review, PostsTo))
    if isinstance(kind.handler, Stored):
        return
    assert kind.verbs == ("create",) and not kind.subresources
    if isinstance(kind.handler, PostsTo):
        target = kind.handler.target
        assert target in KINDS and target.namespaced == kind.namespaced
        assert issubclass(target.subresources[kind.handler.subresource],
                          CreateSubresourceStrategy)


def _collection(kind: Kind) -> str:
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    return prefix + ("/namespaces/default/" if kind.namespaced else "/") + kind.plural


async def test_every_handler_type_is_reachable_over_http(aiohttp_client: Any) -> None:
    """A review is answered and never stored, a POST to another object's subresource reaches
    that object (404 for a pod that isn't there), and a streamed or connected subresource
    reaches the registry; none is the generic store's, nor an unrouted path's 404 or 405."""
    cluster = Cluster(ClusterConfig())
    api = await aiohttp_client(create_app(cluster))
    body = {"metadata": {"name": "x"}, "target": {"name": "n1"}}  # a Binding's too
    for kind in HANDLED:
        resp = await api.post(_collection(kind), json=body)
        answer = await resp.json()
        if isinstance(kind.handler, PostsTo):
            target = kind.handler.target
            assert (resp.status, answer["message"]) == (404, f'{target.plural} "x" not found')
        else:
            assert resp.status in (201, 422), (kind.resource_id, answer)
            assert cluster.store.get(kind.resource_id, "default", "x") is None
            assert cluster.store.get(kind.resource_id, "", "x") is None
    for kind, sub in CONNECTED:
        resp = await api.get(f"{_collection(kind)}/nope/{sub}")
        answer = await resp.json()
        assert (resp.status, answer["message"]) == (404, f'{kind.plural} "nope" not found'), sub


DEFAULTED = [k for k in KINDS if k.defaulter is not no_defaults]
_CONTAINERS = [{"name": "c", "image": "example.com/app"}]
_REQUESTS = [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]
EVERY_SPEC: dict[str, Any] = {
    "containers": _CONTAINERS, "template": {"spec": {"containers": _CONTAINERS}},
    "jobTemplate": {"spec": {"template": {"spec": {"containers": _CONTAINERS}}}},
    "ports": [{"port": 80}], "devices": {"requests": _REQUESTS},
    "spec": {"devices": {"requests": _REQUESTS}}}
"""A spec with a part every defaulter of the table fills in (pods, templates, job templates,
ports, claim requests, a template's claim spec); a PodTemplate's template is top-level."""


@pytest.mark.parametrize("kind", DEFAULTED, ids=[k.resource_id for k in DEFAULTED])
def test_a_rows_defaulter_defaults_once_and_leaves_metadata(kind: Kind) -> None:
    """The store may default a body twice (decoding, then a DRA strategy's prepare): the
    second pass changes nothing; metadata is never defaulted."""
    body = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": {"name": "x"},
            "spec": copy.deepcopy(EVERY_SPEC), "template": copy.deepcopy(EVERY_SPEC["template"])}
    once = copy.deepcopy(body)
    kind.defaulter(once)
    assert once != body and once["metadata"] == body["metadata"]
    twice = copy.deepcopy(once)
    kind.defaulter(twice)
    assert twice == once


# ----- the rules of a row hold in a Registry built on its own ---------------------------------

ALICE = RequestContext(user="alice", groups=("system:authenticated",), verb="update",
                       field_manager="test")
ROOT = RequestContext(user="root", groups=("system:masters",), field_manager="test")


def _bare_registry() -> tuple[Registry, KindTable]:
    kinds = KindTable(KINDS)
    store = Store(log=EventLog(), clock=RealClock())
    registry = Registry(store=store, kinds=kinds, gates=FeatureGates())
    ns = kinds.by_id("namespaces")
    assert ns is not None
    registry.create(ns, "", {"metadata": {"name": "team"}}, ROOT)
    return registry, kinds


def _kind(kinds: KindTable, resource: str) -> Kind:
    kind = kinds.by_id(resource)
    assert kind is not None
    return kind


def test_a_bare_registry_checks_claim_status_permissions() -> None:
    registry, kinds = _bare_registry()
    claims = _kind(kinds, "resourceclaims.resource.k8s.io")
    claim: dict[str, Any] = {"metadata": {"name": "c", "namespace": "team"}, "spec": {
        "devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    registry.create(claims, "team", claim, ROOT)
    stored = registry.get(claims, "team", "c").object
    status = {**stored, "status": {"allocation": {"devices": {"results": [
        {"request": "r", "driver": "gpu.example.com", "pool": "p", "device": "d"}]}}}}
    with pytest.raises(ApiError) as e:
        registry.update(claims, "team", "c", status, ALICE, subresource="status")
    assert (e.value.code, e.value.reason) == (422, "Invalid")
    assert [c.field for c in e.value.causes] == ["status"]
    assert 'cannot update resource "resourceclaims/binding"' in e.value.causes[0].message
    registry.update(claims, "team", "c", status, ROOT, subresource="status")


def test_a_bare_registry_prevents_rbac_escalation() -> None:
    registry, kinds = _bare_registry()
    roles = _kind(kinds, "roles.rbac.authorization.k8s.io")
    role = {"metadata": {"name": "r", "namespace": "team"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    with pytest.raises(ApiError) as e:
        registry.create(roles, "team", role, ALICE)
    assert (e.value.code, e.value.reason) == (403, "Forbidden")
    assert "attempting to grant RBAC permissions not currently held" in e.value.message


def test_the_drop_rules_of_a_row_apply_to_its_writes() -> None:
    registry, kinds = _bare_registry()
    gated = Registry(store=registry.store, kinds=kinds,
                     gates=FeatureGates({"DRADeviceTaints": False}, check=False))
    slices = _kind(kinds, "resourceslices.resource.k8s.io")
    body = {"metadata": {"name": "s"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n1",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "taints": [{"key": "k", "effect": "NoSchedule"}]}]}}
    created = gated.create(slices, "", body, ROOT).object
    assert "taints" not in created["spec"]["devices"][0]
    assert any(r.gates == ("DRADeviceTaints",) for r in dropfields.RESOURCE_SLICE)


def test_a_bare_registry_applies_the_rows_defaulter() -> None:
    registry, kinds = _bare_registry()
    claim = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
        {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    stored = registry.create(_kind(kinds, RESOURCE_CLAIMS.resource_id), "team", claim,
                             ROOT).object
    assert stored["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}
    secret = registry.create(_kind(kinds, SECRETS.resource_id), "team",
                             {"metadata": {"name": "s"}}, ROOT).object
    assert secret["type"] == "Opaque"
