"""Content negotiation as upstream's `NegotiateOutputMediaType`: the media type and form an
Accept header gets (JSON, YAML, protobuf; Table, PartialObjectMetadata), and 406 NotAcceptable
with upstream's Status text for what can't be served (a CR or an unknown `as=` kind)."""

from __future__ import annotations

import orjson
import pytest
import yaml
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from fakeapi.http import partial
from fakeapi.http.protobuf import CONTENT_TYPE as PROTOBUF
from fakeapi.http.protobuf import MAGIC, decode_protobuf
from fakeapi.machinery import protowire as pw
from fakeapi.machinery.errors import ApiError
from tests.support.datadirs import WIDGET_CRD
from tests.support.httpapi import CM, RC, Reply, check_status, ok

TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
NOT_ACCEPTABLE = ("only the following media types are accepted: application/json, "
                  "application/yaml, application/vnd.kubernetes.protobuf")
NOT_STREAMABLE = "only the following media types are accepted: application/json;stream=watch"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"

# (id, Accept, the kind has a protobuf table, watch) -> (media, as kind) or None: 406
CASES: list[tuple[str, str | None, bool, bool, tuple[str, str] | None]] = [
    ("none", None, True, False, ("application/json", "")),
    ("json", "application/json", True, False, ("application/json", "")),
    ("yaml-only", "application/yaml", True, False, ("application/yaml", "")),
    ("protobuf-only", PROTOBUF, True, False, (PROTOBUF, "")),
    ("protobuf-only-no-table", PROTOBUF, False, False, None),
    ("protobuf-then-json", f"{PROTOBUF},application/json", True, False,
     ("application/json", "")),
    ("kubectl-typed", f"{PROTOBUF}, */*", True, False, ("application/json", "")),
    ("wildcard", "*/*", True, False, ("application/json", "")),
    ("application-star", "application/*", False, False, ("application/json", "")),
    ("xml", "application/xml", True, False, None),
    ("unknown-as", "application/json;as=Foo;g=meta.k8s.io;v=v1", True, False, None),
    ("unknown-as-then-json", "application/json;as=Foo;g=meta.k8s.io;v=v1,application/json",
     True, False, ("application/json", "")),
    ("table-wrong-group", "application/json;as=Table;g=example.com;v=v1", True, False, None),
    ("table-yaml", "application/yaml;as=Table;g=meta.k8s.io;v=v1", True, False,
     ("application/yaml", "Table")),
    ("table-protobuf", f"{PROTOBUF};as=Table;g=meta.k8s.io;v=v1", True, False, None),
    ("partial-protobuf", f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", False,
     False, (PROTOBUF, "PartialObjectMetadataList")),
    ("q-prefers-yaml", "application/json;q=0.5,application/yaml", True, False,
     ("application/yaml", "")),
    ("watch-yaml", "application/yaml", True, True, None),
    ("watch-table", TABLE, True, True, ("application/json", "Table")),
]


@pytest.mark.parametrize(("accept", "protobuf", "watch", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_negotiate(accept: str | None, protobuf: bool, watch: bool,
                   expected: tuple[str, str] | None) -> None:
    if expected is None:
        with pytest.raises(ApiError) as refused:
            partial.negotiate(accept, protobuf=protobuf, watch=watch)
        assert (refused.value.code, refused.value.reason) == (406, "NotAcceptable")
        assert refused.value.message == (NOT_STREAMABLE if watch else NOT_ACCEPTABLE)
        return
    form = partial.negotiate(accept, protobuf=protobuf, watch=watch)
    assert (form.media, form.as_kind) == expected


async def _get(api: TestClient, path: str, accept: str, **params: str) -> tuple[int, str, bytes]:
    async with api.get(path, headers={"Accept": accept}, params=params) as resp:
        return resp.status, resp.content_type, await resp.read()


def _refusal(status: int, body: bytes, message: str) -> None:
    check_status(Reply(status, orjson.loads(body), {}), 406, "NotAcceptable", message)


def _envelope(raw: bytes) -> tuple[str, str, list[tuple[int, bytes]]]:
    """(apiVersion, kind, fields of raw) of a protobuf answer."""
    assert raw.startswith(MAGIC)
    fields = dict((n, v) for n, _, v in pw.read_fields(raw[len(MAGIC):], "Unknown"))
    meta = dict((n, bytes(v).decode()) for n, _, v in pw.read_fields(fields[1], "TypeMeta"))
    return meta[1], meta[2], [(n, bytes(v)) for n, _, v in pw.read_fields(fields[2], "List")]


async def test_yaml_answers_are_the_json_objects(seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    for path in (f"{CM}/existing", CM, f"{RC}/claim", RC):
        want = await ok(api, "GET", path)
        status, ctype, body = await _get(api, path, "application/yaml")
        assert (status, ctype) == (200, "application/yaml")
        assert yaml.safe_load(body) == want
        assert body.startswith(b"apiVersion: ")  # keys sorted, as sigs.k8s.io/yaml writes
    status, ctype, body = await _get(api, CM, "application/yaml;as=Table;g=meta.k8s.io;v=v1")
    assert (status, ctype, yaml.safe_load(body)["kind"]) == (200, "application/yaml", "Table")


async def test_protobuf_answers_decode_to_the_json_objects(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    want = await ok(api, "GET", f"{CM}/existing")
    status, ctype, body = await _get(api, f"{CM}/existing", PROTOBUF)
    assert (status, ctype) == (200, PROTOBUF)
    assert decode_protobuf(body) == want
    listed = await ok(api, "GET", CM)
    status, ctype, body = await _get(api, CM, PROTOBUF)
    assert (status, ctype) == (200, PROTOBUF)
    api_version, kind, fields = _envelope(body)
    assert (api_version, kind) == ("v1", "ConfigMapList")
    items = [decode_protobuf(_envelope_of("v1", "ConfigMap", v)) for n, v in fields if n == 2]
    assert items == [{"apiVersion": "v1", "kind": "ConfigMap", **{
        k: v for k, v in item.items() if k not in ("apiVersion", "kind")}}
        for item in listed["items"]]
    meta = dict((n, bytes(v).decode()) for n, _, v in pw.read_fields(dict(fields)[1], "Meta"))
    assert meta[2] == listed["metadata"]["resourceVersion"]


def _envelope_of(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = pw.delimited(1, api_version.encode()) + pw.delimited(2, kind.encode())
    return MAGIC + pw.delimited(1, type_meta) + pw.delimited(2, raw)


async def test_protobuf_partial_metadata(seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    want = await ok(api, "GET", RC, params=None)
    accept = f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    status, ctype, body = await _get(api, RC, accept)
    assert (status, ctype) == (200, PROTOBUF)
    api_version, kind, fields = _envelope(body)
    assert (api_version, kind) == ("meta.k8s.io/v1", "PartialObjectMetadataList")
    names = [decode_protobuf(_envelope_of("v1", "ConfigMap", v))["metadata"]["name"]
             for n, v in fields if n == 2]
    assert names == [i["metadata"]["name"] for i in want["items"]]


@pytest.mark.parametrize(("path", "accept", "message"), [
    (f"{RC}/claim", PROTOBUF, NOT_ACCEPTABLE),
    (f"{CM}/existing", "application/json;as=Foo;g=meta.k8s.io;v=v1", NOT_ACCEPTABLE),
    (f"{CM}/missing", "text/html", NOT_ACCEPTABLE),
    (f"{WIDGETS}/w", PROTOBUF, NOT_ACCEPTABLE),
    (WIDGETS, PROTOBUF, NOT_ACCEPTABLE),
], ids=["no-table-kind", "unknown-as", "before-not-found", "custom-resource", "custom-list"])
async def test_what_cannot_be_served_is_406(seeded: tuple[Cluster, TestClient], path: str,
                                            accept: str, message: str) -> None:
    _, api = seeded
    await ok(api, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             WIDGET_CRD)
    await ok(api, "POST", WIDGETS, {"apiVersion": "example.com/v1", "kind": "Widget",
                                    "metadata": {"name": "w"}})
    status, _, body = await _get(api, path, accept)
    _refusal(status, body, message)


async def test_a_yaml_watch_is_406(seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    status, _, body = await _get(api, CM, "application/yaml", watch="true")
    _refusal(status, body, NOT_STREAMABLE)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
       "spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sleep", "1"],
                                "resources": {"requests": {"cpu": "100m"}},
                                "ports": [{"containerPort": 80}]}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/namespaces/default/pods", POD), ("/api/v1/nodes", NODE),
], ids=["pod", "node"])
async def test_defaulted_objects_round_trip_through_protobuf(
        served: tuple[Cluster, TestClient], path: str, body: dict) -> None:
    _, api = served
    created = await ok(api, "POST", path, body)
    name = created["metadata"]["name"]
    status, ctype, raw = await _get(api, f"{path}/{name}", PROTOBUF)
    assert (status, ctype) == (200, PROTOBUF), raw
    assert decode_protobuf(raw) == created
