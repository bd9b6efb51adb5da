"""Discovery (aggregated and legacy) and OpenAPI v3 documents agree with the kind table."""

from __future__ import annotations

import hashlib
import re
from typing import Any, TypeVar

import orjson
import pytest
from kubernetes.client import (
    ApiClient,
    V1APIGroupList,
    V1APIResourceList,
    V1APIVersions,
    V2APIGroupDiscoveryList,
)

from fakeapi.http import discovery, openapi
from fakeapi.registry.kinds import KindTable, served_kinds
from fakeapi.registry.pods import EvictionStrategy
from fakeapi.registry.rest import ALL_VERBS, Kind, StatusStrategy

KINDS = served_kinds()
GVS = KINDS.group_versions()
GV_IDS = [f"{g or 'core'}/{v}" for g, v in GVS]


def _doc(group: str, version: str) -> dict[str, Any]:
    body = openapi.group_version_document(KINDS, group, version)
    assert body is not None
    return orjson.loads(body)


M = TypeVar("M")


def _deserialize(data: dict[str, Any], model: type[M]) -> M:
    """`data` parsed as the official client parses a response body of `model`."""
    parsed = ApiClient().deserialize(orjson.dumps(data).decode(), model.__name__,
                                     "application/json")
    assert isinstance(parsed, model), parsed
    return parsed


# ---------------------------------------------------------------------------
# Accept negotiation and version priority

ACCEPT_CASES = [
    (discovery.AGGREGATED_ACCEPT, True),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer,"
     "application/json", True),
    ("application/json; as=APIGroupDiscoveryList; v=v2; g=apidiscovery.k8s.io", True),
    ("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
     "application/json", False),
    ("application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
     False),
    ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0", False),
    ("application/json", False),
    ("*/*", False),
    ("", False),
    (None, False),
]


@pytest.mark.parametrize(("accept", "expected"), ACCEPT_CASES)
def test_wants_aggregated(accept: str | None, expected: bool) -> None:
    assert discovery.wants_aggregated(accept) is expected


def test_content_type_is_what_client_go_parses() -> None:
    base, *params = discovery.AGGREGATED_CONTENT_TYPE.split(";")
    assert base == "application/json"
    assert dict(p.split("=") for p in params) == {
        "g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}


VERSION_ORDER = [
    # versions, sorted by priority
    (["v1alpha1", "v1beta1", "v1", "v2"], ["v2", "v1", "v1beta1", "v1alpha1"]),
    (["v1alpha3", "v1beta2", "v1beta1", "v1"], ["v1", "v1beta2", "v1beta1", "v1alpha3"]),
    (["foo", "v10", "v2beta1", "v11alpha2", "v1"], ["v10", "v1", "v2beta1", "v11alpha2", "foo"]),
]


@pytest.mark.parametrize(("versions", "expected"), VERSION_ORDER)
def test_version_priority(versions: list[str], expected: list[str]) -> None:
    assert sorted(versions, key=discovery.version_priority) == expected


PREFERRED = [
    ("resource.k8s.io", "v1", ["v1", "v1alpha3"]),
    ("scheduling.k8s.io", "v1", ["v1", "v1beta1"]),
    ("rbac.authorization.k8s.io", "v1", ["v1"]),
]


@pytest.mark.parametrize(("group", "preferred", "versions"), PREFERRED)
def test_preferred_version_is_first(group: str, preferred: str, versions: list[str]) -> None:
    assert discovery.preferred_version(KINDS, group) == preferred
    doc = discovery.api_group(KINDS, group)
    assert doc is not None
    assert doc["preferredVersion"] == {"groupVersion": f"{group}/{preferred}",
                                       "version": preferred}
    assert [v["version"] for v in doc["versions"]] == versions
    listed = {g["name"]: g for g in discovery.api_group_list(KINDS)["groups"]}
    assert listed[group] == {k: v for k, v in doc.items() if k not in ("kind", "apiVersion")}
    agg = {i["metadata"].get("name", ""): i for i in discovery.aggregated_groups(KINDS)["items"]}
    assert [v["version"] for v in agg[group]["versions"]] == versions


def test_feature_gate_off_drops_group_version() -> None:
    kinds = served_kinds({"DRAResourcePoolStatus": False})
    assert discovery.api_resource_list(kinds, "resource.k8s.io", "v1alpha3") is None
    assert "apis/resource.k8s.io/v1alpha3" not in openapi.openapi_index(kinds)["paths"]
    group = discovery.api_group(kinds, "resource.k8s.io")
    assert group is not None and group["versions"] == [
        {"groupVersion": "resource.k8s.io/v1", "version": "v1"}]


# ---------------------------------------------------------------------------
# legacy discovery

RESOURCE_ENTRIES = [
    # (group, version, name) -> expected subset of the APIResource entry
    ("", "v1", "pods", {"singularName": "pod", "namespaced": True, "kind": "Pod",
                        "shortNames": ["po"], "categories": ["all"], "verbs": list(ALL_VERBS)}),
    ("", "v1", "pods/status", {"singularName": "", "namespaced": True, "kind": "Pod",
                               "verbs": ["get", "patch", "update"]}),
    ("", "v1", "pods/binding", {"namespaced": True, "kind": "Binding", "verbs": ["create"]}),
    ("", "v1", "namespaces", {"namespaced": False, "kind": "Namespace", "shortNames": ["ns"],
                              "verbs": ["create", "delete", "get", "list", "patch", "update",
                                        "watch"]}),
    ("", "v1", "namespaces/finalize", {"namespaced": False, "kind": "Namespace",
                                       "verbs": ["update"]}),
    ("", "v1", "namespaces/status", {"kind": "Namespace", "verbs": ["get", "patch", "update"]}),
    ("resource.k8s.io", "v1", "resourceclaims", {"singularName": "resourceclaim",
                                                 "namespaced": True, "kind": "ResourceClaim"}),
    ("resource.k8s.io", "v1", "resourceclaims/status", {"kind": "ResourceClaim",
                                                        "verbs": ["get", "patch", "update"]}),
    ("resource.k8s.io", "v1", "deviceclasses", {"namespaced": False, "kind": "DeviceClass"}),
    ("resource.k8s.io", "v1alpha3", "resourcepoolstatusrequests/status",
     {"namespaced": False, "kind": "ResourcePoolStatusRequest"}),
    ("scheduling.k8s.io", "v1beta1", "podgroups/status", {"namespaced": True,
                                                          "kind": "PodGroup"}),
]


@pytest.mark.parametrize(("group", "version", "name", "expected"), RESOURCE_ENTRIES,
                         ids=[e[2] for e in RESOURCE_ENTRIES])
def test_resource_list_entries(group: str, version: str, name: str,
                               expected: dict[str, Any]) -> None:
    doc = discovery.api_resource_list(KINDS, group, version)
    assert doc is not None
    entries = {r["name"]: r for r in doc["resources"]}
    entry = entries[name]
    assert {k: entry.get(k) for k in expected} == expected
    # Same GV as the list: group/version are left out, as upstream does.
    assert "group" not in entry and "version" not in entry
    if "/" in name:
        assert entry["singularName"] == "" and "storageVersionHash" not in entry
    else:
        assert re.fullmatch(r"[A-Za-z0-9+/]{11}=", entry["storageVersionHash"])


def test_subresource_of_another_group_names_it() -> None:
    kinds = KindTable([Kind(group="", version="v1", kind="Pod", plural="pods", namespaced=True,
                            subresources={"eviction": EvictionStrategy,
                                          "status": StatusStrategy})])
    doc = discovery.api_resource_list(kinds, "", "v1")
    assert doc is not None
    eviction = next(r for r in doc["resources"] if r["name"] == "pods/eviction")
    assert (eviction["group"], eviction["version"], eviction["kind"]) == ("policy", "v1",
                                                                          "Eviction")


@pytest.mark.parametrize(("group", "version"), GVS, ids=GV_IDS)
def test_resource_list_covers_kind_table(group: str, version: str) -> None:
    doc = discovery.api_resource_list(KINDS, group, version)
    assert doc is not None
    assert doc["groupVersion"] == (f"{group}/{version}" if group else version)
    names = [r["name"] for r in doc["resources"]]
    expected = sorted(
        [k.plural for k in KINDS.in_group_version(group, version)]
        + [f"{k.plural}/{s}" for k in KINDS.in_group_version(group, version)
           for s in k.subresources])
    assert names == expected
    parsed = _deserialize(doc, V1APIResourceList)
    assert len(parsed.resources) == len(names)


@pytest.mark.parametrize(("group", "version"), [("", "v2"), ("nope.k8s.io", "v1"),
                                                ("resource.k8s.io", "v1beta2")])
def test_unserved_group_versions(group: str, version: str) -> None:
    assert discovery.api_resource_list(KINDS, group, version) is None
    assert openapi.group_version_document(KINDS, group, version) is None


def test_unserved_groups() -> None:
    assert discovery.api_group(KINDS, "") is None
    assert discovery.api_group(KINDS, "storagemigration.k8s.io") is None  # not served


def test_api_versions_and_group_list_parse_as_upstream_types() -> None:
    versions = _deserialize(discovery.api_versions("10.0.0.1:443"), V1APIVersions)
    assert versions.versions == ["v1"]
    assert versions.server_address_by_client_cidrs[0].server_address == "10.0.0.1:443"
    groups = _deserialize(discovery.api_group_list(KINDS), V1APIGroupList)
    assert "" not in [g.name for g in groups.groups]
    assert sorted(g.name for g in groups.groups) == sorted({g for g, _ in GVS if g})


def test_all_resource_lists_core_first() -> None:
    lists = discovery.all_resource_lists(KINDS)
    assert lists[0]["groupVersion"] == "v1"
    assert len(lists) == len(GVS)


# ---------------------------------------------------------------------------
# aggregated discovery agrees with legacy discovery


def _legacy_from_aggregated(group: str, version: str, res: dict[str, Any]) -> list[dict]:
    """What client-go derives from one aggregated entry, in legacy APIResource form."""

    def entry(name: str, singular: str, kind: dict[str, str], verbs: list[str]) -> dict:
        out: dict[str, Any] = {"name": name, "singularName": singular,
                               "namespaced": res["scope"] == "Namespaced"}
        if kind["group"] or kind["version"]:
            out.update(group=kind["group"], version=kind["version"])
        return {**out, "kind": kind["kind"], "verbs": verbs}

    main = entry(res["resource"], res["singularResource"], res["responseKind"], res["verbs"])
    for key in ("shortNames", "categories"):
        if key in res:
            main[key] = res[key]
    subs = [entry(f"{res['resource']}/{s['subresource']}", "", s["responseKind"], s["verbs"])
            for s in res.get("subresources", [])]
    return [main, *subs]


@pytest.mark.parametrize(("group", "version"), GVS, ids=GV_IDS)
def test_aggregated_matches_legacy(group: str, version: str) -> None:
    agg = discovery.aggregated_core(KINDS) if not group else discovery.aggregated_groups(KINDS)
    item = next(i for i in agg["items"] if i["metadata"].get("name", "") == group)
    ver = next(v for v in item["versions"] if v["version"] == version)
    assert ver["freshness"] == "Current"
    derived = [e for res in ver["resources"] for e in _legacy_from_aggregated(group, version, res)]
    legacy = discovery.api_resource_list(KINDS, group, version)
    assert legacy is not None
    expected = [{k: v for k, v in r.items() if k != "storageVersionHash"}
                for r in legacy["resources"]]
    assert sorted(derived, key=lambda r: r["name"]) == expected


def test_aggregated_lists_parse_as_upstream_types() -> None:
    core = discovery.aggregated_core(KINDS)
    assert (core["kind"], core["apiVersion"]) == ("APIGroupDiscoveryList",
                                                  "apidiscovery.k8s.io/v2")
    assert len(core["items"]) == 1 and core["items"][0]["metadata"] == {}
    parsed = _deserialize(discovery.aggregated_groups(KINDS), V2APIGroupDiscoveryList)
    names = [i.metadata.name if i.metadata else None for i in parsed.items]
    assert "resource.k8s.io" in names and "" not in names and None not in names
    claim = next(r for i in parsed.items for v in i.versions or [] for r in v.resources or []
                 if r.resource == "resourceclaims")
    assert claim.scope == "Namespaced" and claim.singular_resource == "resourceclaim"
    assert claim.response_kind and claim.response_kind.kind == "ResourceClaim"
    assert [(s.subresource, s.verbs) for s in claim.subresources or []] == [
        ("status", ["get", "patch", "update"])]


# ---------------------------------------------------------------------------
# OpenAPI: schema conversion

CONVERT_CASES = [
    ({"type": ["string", "null"]}, {"type": "string"}),
    ({"type": "array", "items": {"$ref": "#/$defs/a.B"}},
     {"type": "array", "items": {"$ref": "#/components/schemas/a.B"}}),
    ({"$ref": "#/$defs/a.B", "description": "d"},
     {"allOf": [{"$ref": "#/components/schemas/a.B"}], "description": "d"}),
    ({"$ref": "#/$defs/a.B", "description": "d", "x-kubernetes-map-type": "atomic"},
     {"allOf": [{"$ref": "#/components/schemas/a.B"}], "description": "d",
      "x-kubernetes-map-type": "atomic"}),
    ({"type": ["object", "null"], "additionalProperties": {"type": ["integer", "null"],
                                                          "format": "int64"}},
     {"type": "object", "additionalProperties": {"type": "integer", "format": "int64"}}),
    ({"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]},
     {"oneOf": [{"type": "string"}, {"type": "number"}]}),
    ({"properties": {"type": {"type": ["string", "null"]}, "$ref": {"type": "string"}},
      "required": ["type"]},
     {"properties": {"type": {"type": "string"}, "$ref": {"type": "string"}},
      "required": ["type"]}),
    ({"x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map",
      "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge",
      "type": ["array", "null"]},
     {"x-kubernetes-list-map-keys": ["type"], "x-kubernetes-list-type": "map",
      "x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge",
      "type": "array"}),
]


@pytest.mark.parametrize(("source", "expected"), CONVERT_CASES)
def test_convert_schema(source: dict[str, Any], expected: dict[str, Any]) -> None:
    assert openapi.convert_schema(source) == expected


def test_components_drop_gvk_enums_and_mark_int_or_string() -> None:
    claim = openapi.component("io.k8s.api.resource.v1.ResourceClaim")
    assert "enum" not in claim["properties"]["apiVersion"]
    assert claim["properties"]["kind"]["type"] == "string"
    assert claim["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1"}]
    assert openapi.component(openapi.INT_OR_STRING)["format"] == "int-or-string"


def _all_refs(node: Any) -> set[str]:
    refs: set[str] = set()
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            refs.add(node["$ref"])
        for v in node.values():
            refs |= _all_refs(v)
    elif isinstance(node, list):
        for v in node:
            refs |= _all_refs(v)
    return refs


def _types(node: Any) -> list[Any]:
    if isinstance(node, dict):
        found = [node["type"]] if "type" in node and not isinstance(node["type"], dict) else []
        return found + [t for k, v in node.items() if k != "properties" for t in _types(v)] + [
            t for v in node.get("properties", {}).values() for t in _types(v)]
    if isinstance(node, list):
        return [t for v in node for t in _types(v)]
    return []


@pytest.mark.parametrize(("group", "version"), GVS, ids=GV_IDS)
def test_document_is_closed_and_openapi_3_0(group: str, version: str) -> None:
    doc = _doc(group, version)
    assert doc["openapi"] == "3.0.0"
    schemas = doc["components"]["schemas"]
    refs = _all_refs(doc)
    assert refs and all(r.startswith("#/components/schemas/") for r in refs)
    assert {r.removeprefix("#/components/schemas/") for r in refs} <= set(schemas)
    assert all(isinstance(t, str) for t in _types(schemas))
    for k in KINDS.in_group_version(group, version):
        gvks = [s.get("x-kubernetes-group-version-kind", []) for s in schemas.values()]
        assert sum({"group": k.group, "version": k.version, "kind": k.kind} in g
                   for g in gvks) == 1, k.kind


def _patch_op_for(doc: dict[str, Any], kind: Kind) -> dict[str, Any] | None:
    """The first PATCH operation for a GVK, as kubectl's query-param verifier finds it."""
    want = {"group": kind.group, "version": kind.version, "kind": kind.kind}
    for item in doc["paths"].values():
        op = item.get("patch")
        if op and op.get("x-kubernetes-group-version-kind") == want:
            return op
    return None


PATCHABLE = [k for k in KINDS.kinds if "patch" in k.verbs]  # create-only reviews have no PATCH


@pytest.mark.parametrize("kind", PATCHABLE, ids=[k.resource_id for k in PATCHABLE])
def test_every_kind_supports_field_validation_and_smp(kind: Kind) -> None:
    doc = _doc(kind.group, kind.version)
    op = _patch_op_for(doc, kind)
    assert op is not None
    assert {p["name"] for p in op["parameters"] if p["in"] == "query"} >= {
        "fieldValidation", "fieldManager", "dryRun", "force"}
    assert sorted(op["requestBody"]["content"]) == sorted(openapi.PATCH_CONTENT_TYPES)
    assert op["x-kubernetes-action"] == "patch"


# verb -> (path suffix relative to the kind's collection, HTTP method)
VERB_ROUTES = {
    "list": ("", "get"), "create": ("", "post"), "deletecollection": ("", "delete"),
    "get": ("/{name}", "get"), "update": ("/{name}", "put"), "patch": ("/{name}", "patch"),
    "delete": ("/{name}", "delete"),
}
SUB_METHODS = {"get": "get", "update": "put", "patch": "patch", "create": "post"}


def _collection(kind: Kind) -> str:
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    return prefix + ("/namespaces/{namespace}" if kind.namespaced else "") + f"/{kind.plural}"


@pytest.mark.parametrize(("group", "version"), GVS, ids=GV_IDS)
def test_paths_agree_with_discovery_verbs(group: str, version: str) -> None:
    doc = _doc(group, version)
    legacy = discovery.api_resource_list(KINDS, group, version)
    assert legacy is not None
    expected: set[tuple[str, str]] = set()
    for res in legacy["resources"]:
        plural, _, sub = res["name"].partition("/")
        kind = KINDS.by_resource(group, version, plural)
        assert kind is not None
        base = _collection(kind)
        for verb in res["verbs"]:
            if sub:
                expected.add((f"{base}/{{name}}/{sub}", SUB_METHODS[verb]))
            elif verb in VERB_ROUTES:
                suffix, method = VERB_ROUTES[verb]
                expected.add((base + suffix, method))
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    extra = {f"{prefix}/"} | {f"{prefix}/{k.plural}"
                              for k in KINDS.in_group_version(group, version) if k.namespaced}
    routes = {(p, m) for p, item in doc["paths"].items() for m in item
              if m != "parameters" and p not in extra and not p.startswith(f"{prefix}/watch/")}
    assert routes == expected


PATH_CASES = [
    ("", "v1", "/api/v1/namespaces/{namespace}/pods/{name}/binding",
     {"post": ("post", {"group": "", "kind": "Binding", "version": "v1"})}),
    ("", "v1", "/api/v1/namespaces/{name}/finalize",
     {"put": ("put", {"group": "", "kind": "Namespace", "version": "v1"})}),
    ("resource.k8s.io", "v1", "/apis/resource.k8s.io/v1/resourceclaims",
     {"get": ("list", {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1"})}),
    ("resource.k8s.io", "v1", "/apis/resource.k8s.io/v1/deviceclasses",
     {m: (a, {"group": "resource.k8s.io", "kind": "DeviceClass", "version": "v1"})
      for m, a in (("get", "list"), ("post", "post"), ("delete", "deletecollection"))}),
    ("resource.k8s.io", "v1",
     "/apis/resource.k8s.io/v1/watch/namespaces/{namespace}/resourceclaims/{name}",
     {"get": ("watch", {"group": "resource.k8s.io", "kind": "ResourceClaim", "version": "v1"})}),
    ("resource.k8s.io", "v1alpha3",
     "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests/{name}/status",
     {m: (a, {"group": "resource.k8s.io", "kind": "ResourcePoolStatusRequest",
              "version": "v1alpha3"})
      for m, a in (("get", "get"), ("put", "put"), ("patch", "patch"))}),
]


@pytest.mark.parametrize(("group", "version", "path", "ops"), PATH_CASES,
                         ids=[c[2] for c in PATH_CASES])
def test_path_operations(group: str, version: str, path: str,
                         ops: dict[str, tuple[str, dict[str, str]]]) -> None:
    item = _doc(group, version)["paths"][path]
    got = {m: (op["x-kubernetes-action"], op["x-kubernetes-group-version-kind"])
           for m, op in item.items() if m != "parameters"}
    assert got == ops
    assert [p["name"] for p in item["parameters"]] == sorted(p["name"]
                                                             for p in item["parameters"])


def test_namespace_collection_has_no_deletecollection() -> None:
    item = _doc("", "v1")["paths"]["/api/v1/namespaces"]
    assert sorted(m for m in item if m != "parameters") == ["get", "post"]


def test_list_operation_parameters() -> None:
    op = _doc("resource.k8s.io", "v1")["paths"][
        "/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"]["get"]
    assert {p["name"] for p in op["parameters"]} == set(openapi.LIST_PARAMS)
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.resource.v1.ResourceClaimList"}


def test_strategic_merge_metadata_survives() -> None:
    schemas = _doc("", "v1")["components"]["schemas"]
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}


# ---------------------------------------------------------------------------
# OpenAPI: index, hashes, caching and HTTP responses


def test_index_lists_every_served_group_version_with_its_hash() -> None:
    index = openapi.openapi_index(KINDS)
    assert set(index["paths"]) == {openapi.gv_path(g, v) for g, v in GVS}
    for g, v in GVS:
        body = openapi.group_version_document(KINDS, g, v)
        assert body is not None
        digest = hashlib.sha512(body).hexdigest().upper()
        assert openapi.document_hash(KINDS, g, v) == digest
        assert index["paths"][openapi.gv_path(g, v)] == {
            "serverRelativeURL": f"/openapi/v3/{openapi.gv_path(g, v)}?hash={digest}"}


def test_documents_are_serialized_once() -> None:
    first = openapi.group_version_document(KINDS, "resource.k8s.io", "v1")
    again = openapi.group_version_document(served_kinds(), "resource.k8s.io", "v1")
    assert first is again


GV_PATHS = [
    ("api/v1", ("", "v1")),
    ("/openapi/v3/api/v1", ("", "v1")),
    ("apis/resource.k8s.io/v1alpha3", ("resource.k8s.io", "v1alpha3")),
    ("/openapi/v3/apis/scheduling.k8s.io/v1beta1/", ("scheduling.k8s.io", "v1beta1")),
    ("apis/resource.k8s.io", None),
    ("api", None),
    ("version", None),
]


@pytest.mark.parametrize(("path", "expected"), GV_PATHS)
def test_parse_gv_path(path: str, expected: tuple[str, str] | None) -> None:
    assert openapi.parse_gv_path(path) == expected


CURRENT = openapi.document_hash(KINDS, "resource.k8s.io", "v1")
SERVE_CASES = [
    # query hash, If-None-Match, status, expected headers (None = must be absent)
    (None, None, 200, {"Cache-Control": "no-cache, private", "Expires": None}),
    (CURRENT, None, 200, {"Cache-Control": "public, immutable", "Vary": "Accept",
                          "Expires": "Fri, 01 Jan 2027 00:00:00 GMT"}),
    ("ABC", None, 301, {"Location": f"/openapi/v3/apis/resource.k8s.io/v1?hash={CURRENT}"}),
    (None, f'"{CURRENT}"', 304, {"Etag": f'"{CURRENT}"'}),
    (CURRENT, f'W/"{CURRENT}", "x"', 304, {"Cache-Control": "public, immutable"}),
    (None, '"other"', 200, {"Etag": f'"{CURRENT}"'}),
]


@pytest.mark.parametrize(("query_hash", "if_none_match", "status", "headers"), SERVE_CASES)
def test_serve_document(query_hash: str | None, if_none_match: str | None, status: int,
                        headers: dict[str, str | None]) -> None:
    now = 1767225600.0  # 2026-01-01T00:00:00Z
    served = openapi.serve_document(KINDS, "/openapi/v3/apis/resource.k8s.io/v1", query_hash,
                                    if_none_match, now=now)
    assert served is not None
    assert served.status == status
    for key, value in headers.items():
        assert served.headers.get(key) == value
    body = openapi.group_version_document(KINDS, "resource.k8s.io", "v1")
    assert served.body == (body if status == 200 else b"")


CACHE_CASES = [
    (CURRENT, "public, immutable"),
    (None, "no-cache, private"),
    ("stale", "no-cache, private"),
]


@pytest.mark.parametrize(("query_hash", "cache_control"), CACHE_CASES)
def test_cache_headers(query_hash: str | None, cache_control: str) -> None:
    headers = openapi.cache_headers(query_hash, KINDS, "resource.k8s.io", "v1")
    assert headers["Cache-Control"] == cache_control
    assert headers["Etag"] == f'"{CURRENT}"'
    assert ("Expires" in headers) is (cache_control == "public, immutable")


def test_serve_unknown_and_index() -> None:
    assert openapi.serve_document(KINDS, "/openapi/v3/apis/storagemigration.k8s.io/v1beta1") is None
    assert openapi.serve_document(KINDS, "/openapi/v3/version") is None
    index = openapi.serve_index(KINDS)
    assert index.status == 200 and index.headers["Content-Type"] == "application/json"
    assert orjson.loads(index.body) == openapi.openapi_index(KINDS)
