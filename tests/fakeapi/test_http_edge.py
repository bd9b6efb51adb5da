"""The HTTP edge over a real loopback connection: hostile bodies get Go's 4xx (never a 500 or
a dropped connection), path names as upstream's key functions check them, and the watch and
list details client-go relies on (malformed resourceVersion, sendInitialEvents=false, legacy
/watch paths, PartialObjectMetadata, remainingItemCount)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import subprocess
import sys

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from fakeapi.http.warnings import warning_headers
from fakeapi.storage.log import EventLog
from fakeapi.storage.store import Store
from tests.support.httpapi import (
    CM,
    JSON,
    MERGE,
    NS,
    RC,
    Reply,
    call,
    check_status,
    claim,
    cm,
    committed,
    next_event,
    no_event,
    ok,
    open_watch,
    warnings_of,
)
from tests.support.paths import ROOT

STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
METADATA_CLIENT = (f"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;"
                   f"g=meta.k8s.io;v=v1,{PARTIAL_LIST},application/json")


def nested(depth: int, leaf: str = "1") -> str:
    """`depth` levels of arrays around `leaf`, as JSON text."""
    return "[" * depth + leaf + "]" * depth


def claim_with_params(name: str, params: str) -> bytes:
    """A ResourceClaim whose opaque parameters are the JSON text `params`."""
    body = orjson.dumps({**claim(name), "spec": {"devices": {
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}],
        "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"p": 0}}}]}}})
    return body.replace(b'{"p":0}', params.encode())


@dataclasses.dataclass(frozen=True)
class Hostile:
    """One hostile request and what upstream answers it with."""

    id: str
    method: str
    path: str
    raw: bytes
    code: int
    message: str = ""  # a regular expression the Status message must match (for 4xx)
    ctype: str = JSON


HOSTILE = [
    # valid claims with deep free-form parameters: accepted (orjson alone stops at 254)
    Hostile("deep-params-250", "POST", RC, claim_with_params("deep250",
            '{"a":' + nested(250) + "}"), 201),
    Hostile("deep-params-4000", "POST", RC, claim_with_params("deep4000",
            '{"a":' + nested(4000) + "}"), 201),
    Hostile("nested-10001", "POST", RC, claim_with_params("too-deep",
            '{"a":' + nested(10001) + "}"), 400, r"invalid character '\[' exceeded max depth"),
    Hostile("nested-objects-20000", "POST", CM, b'{"metadata":{"name":"x"},"data":'
            + b'{"a":' * 20000 + b"1" + b"}" * 20001, 400,
            r"invalid character '\{' exceeded max depth"),
    Hostile("long-integer", "POST", RC, claim_with_params("long-int", '{"n":' + "7" * 5000 + "}"),
            400, r"^json: cannot unmarshal number 7{64}\.\.\. into Go value of type float64$"),
    Hostile("float-overflow", "POST", RC, claim_with_params("inf", '{"n":1e999}'), 400,
            r"cannot unmarshal number 1e999"),
    Hostile("merge-patch-too-deep", "PATCH", f"{CM}/existing",
            b'{"data":' + nested(10001).encode() + b"}", 400, "exceeded max depth", MERGE),
    Hostile("json-patch-too-deep", "PATCH", f"{CM}/existing",
            b'[{"op":"add","path":"/data/x","value":' + nested(10001).encode() + b"}]", 400,
            "exceeded max depth", JSON_PATCH),
    Hostile("strategic-patch-too-deep", "PATCH", f"{CM}/existing",
            b'{"data":' + nested(10001).encode() + b"}", 400, "exceeded max depth", STRATEGIC),
    Hostile("json-patch-deep-into-params", "PATCH", f"{RC}/claim/status",
            b'[{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}]', 200,
            ctype=JSON_PATCH),
    Hostile("apply-yaml-infinity", "PATCH", f"{CM}/applied?fieldManager=t",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n"
            b"  annotations:\n    x: .inf\n", 400, r"json: unsupported value: \+Inf", APPLY),
    Hostile("apply-deep-json", "PATCH", f"{CM}/applied2?fieldManager=t",
            b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied2"},"data":'
            + nested(10001).encode() + b"}", 400, "exceeded max depth", APPLY),
]


async def send(api: TestClient, method: str, path: str, raw: bytes | None = None,
               ctype: str = JSON) -> Reply:
    """One request, its reply parsed by the stdlib (orjson stops at 1,024 levels)."""
    headers = {"Content-Type": ctype} if raw is not None else {}
    async with api.request(method, path, data=raw, headers=headers) as resp:
        return Reply(resp.status, json.loads(await resp.read()), resp.headers)


async def send_raw_path(api: TestClient, method: str, path: str) -> Reply:
    """A request whose path goes out byte for byte (clients resolve "." and ".." first)."""
    reader, writer = await asyncio.open_connection(api.host, api.port)
    body = b"{}" if method in ("PUT", "PATCH") else b""
    ctype = MERGE if method == "PATCH" else JSON
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    response = await reader.read()
    writer.close()
    head, _, payload = response.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return Reply(status, orjson.loads(payload), {})


@pytest.mark.parametrize("case", HOSTILE, ids=[c.id for c in HOSTILE])
async def test_hostile_bodies_get_gos_answer(seeded: tuple[Cluster, TestClient],
                                             case: Hostile) -> None:
    cluster, api = seeded
    before = committed(cluster)
    reply = await send(api, case.method, case.path, case.raw, case.ctype)
    assert reply.status == case.code, reply.body
    if case.code >= 400:
        assert reply.object["kind"] == "Status" and reply.object["code"] == case.code
        assert re.search(case.message, reply.object["message"]), reply.object["message"]
        assert committed(cluster) == before
        return
    name = reply.object["metadata"]["name"]  # stored, and read back the same
    path = f"{case.path}/{name}" if case.method == "POST" else case.path.removesuffix("/status")
    again = await send(api, "GET", path)
    assert again.status == 200 and again.object == reply.object
    if case.method == "POST":
        sent = json.loads(case.raw)["spec"]["devices"]["config"]
        assert again.object["spec"]["devices"]["config"] == sent


def closing_run(depth: int, siblings: int, leaf: str = '"leaf"') -> str:
    """Lists that all close at once, `depth` deep, `siblings` times over (orjson 3.13's
    encoder corrupts the heap on such runs of closing brackets)."""
    one = "[" * depth + leaf + "]" * depth
    return "[61," + ",".join([one] * siblings) + "]"


@pytest.mark.parametrize(("depth", "siblings"), [(231, 60), (238, 30), (245, 120), (253, 60)])
async def test_runs_of_closing_lists_in_a_refused_body_are_no_crash(
        seeded: tuple[Cluster, TestClient], depth: int, siblings: int) -> None:
    """The bodies that crashed the fuzz server (heap corruption in orjson's list encoder,
    while checking the decoded body for duplicate keys): answered as upstream answers them
    (refused, or a patch whose unknown field is dropped)."""
    _, api = seeded
    for ctype in (JSON, "application/yaml", MERGE):
        reply = await send(api, "POST" if ctype != MERGE else "PATCH",
                           CM if ctype != MERGE else f"{CM}/existing",
                           closing_run(depth, siblings, "1").encode(), ctype)
        assert reply.status in (200, 400, 422), reply.body


@pytest.mark.parametrize(("depth", "siblings"), [(231, 20), (253, 19), (24, 150), (100, 40)])
def test_runs_of_closing_lists_are_stored_and_read_back(depth: int, siblings: int) -> None:
    """Accepted (opaque parameters up to 10 KiB), stored, patched, read back and replayed
    intact: once the store holds such a value, encodings take the stdlib's encoder. The
    process remembers that for good, so this runs in a fresh one (tests.support.hazard)."""
    raw = claim_with_params("closing-run", '{"a":' + closing_run(depth, siblings) + "}")
    child = subprocess.run([sys.executable, "-m", "tests.support.hazard"], input=raw,
                           capture_output=True, cwd=ROOT, timeout=120)
    assert child.returncode == 0, child.stderr.decode()
    out = json.loads(child.stdout)
    assert not out["hazard_before"]
    status, created = out["created"]
    assert status == 201, created
    assert out["hazard_after"], "the store knows it now holds a hazard"
    sent = json.loads(raw)["spec"]["devices"]["config"]
    assert created["spec"]["devices"]["config"] == sent
    status, patched = out["patched"]
    assert status == 200 and patched["spec"] == created["spec"]
    assert out["replayed"] == patched


async def test_a_deep_object_survives_watch_list_and_replay(
        seeded: tuple[Cluster, TestClient]) -> None:
    cluster, api = seeded
    watch = await open_watch(api, RC, resourceVersion=str(cluster.store.revision))
    params = '{"a":' + nested(3000) + "}"
    created = (await send(api, "POST", RC, claim_with_params("deep", params))).object
    event = json.loads(await asyncio.wait_for(watch.content.readline(), 5))
    assert event == {"type": "ADDED", "object": created}
    listed = (await send(api, "GET", RC)).object
    assert created in listed["items"]
    watch.close()
    replayed = Store(log=EventLog(), clock=cluster.clock)  # what a restart rebuilds
    replayed.replay([e.record() for e in cluster.log])
    stored = replayed.get("resourceclaims.resource.k8s.io", "default", "deep")
    assert stored is not None and stored.object == created


@pytest.mark.parametrize(("raw", "stored"), [
    (b'"\\ud800"', "\ufffd"),
    (b'"a\\udc00b"', "a\ufffdb"),
    (b'"\\ud83d\\ude00"', "\U0001F600"),  # a valid pair stays one character
    (b'"\\\\ud800"', "\\ud800"),  # an escaped backslash, not an escape
    (b'"\\ud800\\ud800"', "\ufffd\ufffd"),
], ids=["lone-high", "lone-low", "pair", "escaped-backslash", "two-highs"])
async def test_lone_surrogates_become_the_replacement_character(
        seeded: tuple[Cluster, TestClient], raw: bytes, stored: str) -> None:
    _, api = seeded
    body = b'{"metadata":{"name":"s"},"data":{"k":' + raw + b"}}"
    reply = await call(api, "POST", CM, raw=body)
    assert reply.status == 201, reply.body
    assert reply.object["data"]["k"] == stored
    assert (await ok(api, "GET", f"{CM}/s"))["data"]["k"] == stored


@pytest.mark.parametrize(("field", "warning"), [
    ("bad\nX", r'unknown field "bad\nX"'),
    ("cr\r\nSet-Cookie: x=1", r'unknown field "cr\r\nSet-Cookie: x=1"'),
    ("nul\x00", r'unknown field "nul\x00"'),
    ('tab\tq"', r'unknown field "tab\tq\""'),
    ("\u2028sep", r'unknown field "\u2028sep"'),
], ids=["lf", "crlf-header-injection", "nul", "tab-quote", "line-separator"])
async def test_a_warning_never_breaks_the_response(seeded: tuple[Cluster, TestClient],
                                                   field: str, warning: str) -> None:
    """An unknown field whose name holds CR/LF: the write commits and its response arrives,
    with the name Go-quoted (%q) in the Warning; the connection is never dropped."""
    cluster, api = seeded
    body = orjson.dumps({"metadata": {"name": "hdr"}, field: "a"})
    reply = await call(api, "POST", CM, raw=body)
    assert reply.status == 201, reply.body
    assert cluster.store.get("configmaps", "default", "hdr") is not None
    assert warnings_of(reply) == [warning]


def test_warning_headers_follow_upstreams_recorder() -> None:
    assert warning_headers(["a", "", "a", 'q"b\\']) == ['299 - "a"', '299 - "q\\"b\\\\"']
    assert warning_headers(["ok", "bad\ntext"]) == ['299 - "ok"'], "control characters: dropped"
    many = [f"{i}-" + "w" * 500 for i in range(20)]
    cut = warning_headers(many)
    assert all(len(v) <= 256 + 8 for v in cut), "over 4096 runes: every warning cut to 256"
    assert 4096 <= sum(len(v) - 8 for v in cut) < 4096 + 256


@pytest.mark.parametrize(("name", "why"), [
    (".", r'"\.": may not be \'\.\''),
    ("..", r'"\.\.": may not be \'\.\.\''),
    ("a%25b", r'"a%b": may not contain \'%\''),
    ("a%00b", r'"a\\x00b": may not contain control characters'),
], ids=["dot", "dot-dot", "percent", "nul"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
async def test_path_names_upstream_cannot_store_are_400(seeded: tuple[Cluster, TestClient],
                                                        name: str, why: str,
                                                        method: str) -> None:
    cluster, api = seeded
    before = committed(cluster)
    reply = await send_raw_path(api, method, f"{CM}/{name}")
    check_status(reply, 400, "BadRequest", re.compile(f"Name parameter invalid: {why}"))
    assert committed(cluster) == before


async def test_a_watch_with_a_malformed_resource_version_is_400(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    for rv in ("abc", "-1", "1.5"):
        reply = await call(api, "GET", CM, params={"watch": "true", "resourceVersion": rv})
        check_status(reply, 400, "BadRequest", f"invalid resource version: {rv!r}")


async def test_send_initial_events_false_streams_no_state(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    watch = await open_watch(api, CM, sendInitialEvents="false",
                             resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true")
    await no_event(watch)
    created = await ok(api, "POST", CM, cm("fresh"))
    event = await next_event(watch)
    assert (event["type"], event["object"]) == ("ADDED", created)
    watch.close()


async def test_every_watch_path_in_the_openapi_document_is_served(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    index = await ok(api, "GET", "/openapi/v3")
    watch_paths = []
    for doc_path in index["paths"]:
        doc = await ok(api, "GET", f"/openapi/v3/{doc_path}")
        watch_paths += [p for p in doc["paths"] if "/watch/" in p]
    assert len(watch_paths) >= 12
    for path in watch_paths:
        url = path.replace("{namespace}", "default").replace("{name}", "existing")
        async with api.get(url, params={"timeoutSeconds": "0"}) as resp:
            assert resp.status == 200, (path, await resp.text())


async def test_a_legacy_watch_of_one_name_sees_only_that_object(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    watch = await open_watch(api, "/api/v1/watch/namespaces/default/configmaps/target")
    await ok(api, "POST", CM, cm("other"))
    created = await ok(api, "POST", CM, cm("target"))
    event = await next_event(watch)
    assert (event["type"], event["object"]) == ("ADDED", created)
    watch.close()
    reply = await call(api, "POST", "/api/v1/watch/namespaces/default/configmaps", cm("x"))
    check_status(reply, 405, "MethodNotAllowed",
                 "the server does not allow this method on the requested resource")


async def _get(api: TestClient, path: str, accept: str, **params: str) -> Reply:
    async with api.get(path, headers={"Accept": accept}, params=params) as resp:
        return Reply(resp.status, orjson.loads(await resp.read()), resp.headers)


async def test_partial_object_metadata_for_lists_gets_and_watches(
        seeded: tuple[Cluster, TestClient]) -> None:
    cluster, api = seeded
    full = await ok(api, "GET", f"{CM}/existing")
    got = await _get(api, f"{CM}/existing", PARTIAL)
    assert got.status == 200
    assert got.object == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                          "metadata": full["metadata"]}
    listed = await _get(api, CM, METADATA_CLIENT)
    assert listed.object["kind"] == "PartialObjectMetadataList"
    assert listed.object["apiVersion"] == "meta.k8s.io/v1"
    assert listed.object["metadata"]["resourceVersion"] == str(cluster.store.revision)
    assert [i["metadata"]["name"] for i in listed.object["items"]] == ["existing"]
    assert all(set(i) == {"kind", "apiVersion", "metadata"} for i in listed.object["items"])
    beta = await _get(api, CM, PARTIAL_LIST.replace("v=v1", "v=v1beta1"))
    assert beta.object["apiVersion"] == "meta.k8s.io/v1beta1"

    async with api.get(CM, headers={"Accept": PARTIAL}, params={
            "watch": "true", "allowWatchBookmarks": "true", "sendInitialEvents": "true",
            "resourceVersionMatch": "NotOlderThan"}) as watch:
        first = await next_event(watch)
        assert first["type"] == "ADDED"
        assert first["object"] == {"kind": "PartialObjectMetadata",
                                   "apiVersion": "meta.k8s.io/v1", "metadata": full["metadata"]}
        bookmark = await next_event(watch)
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["kind"] == "PartialObjectMetadata"
        assert bookmark["object"]["metadata"]["annotations"] == {
            "k8s.io/initial-events-end": "true"}


@pytest.mark.parametrize(("path", "accept", "message"), [
    (f"{CM}/existing", PARTIAL_LIST, "you requested PartialObjectMetadataList, but the "
     "requested object is not a list (*v1.ConfigMap)"),
    (CM, PARTIAL, "you requested PartialObjectMetadata, but the requested object is a list "
     "(*v1.ConfigMapList)"),
], ids=["list-form-of-one", "one-form-of-a-list"])
async def test_a_partial_form_that_does_not_fit_is_406(
        seeded: tuple[Cluster, TestClient], path: str, accept: str, message: str) -> None:
    _, api = seeded
    check_status(await _get(api, path, accept), 406, "NotAcceptable", message)


async def test_the_first_servable_media_range_decides(
        seeded: tuple[Cluster, TestClient]) -> None:
    _, api = seeded
    table = "application/json;as=Table;g=meta.k8s.io;v=v1"
    assert (await _get(api, CM, f"{table},{PARTIAL_LIST}")).object["kind"] == "Table"
    assert (await _get(api, CM, f"{PARTIAL_LIST},{table}")).object["kind"] == (
        "PartialObjectMetadataList")
    odd = "application/json;as=PartialObjectMetadataList;g=other.io;v=v1"
    assert (await _get(api, CM, f"{odd},application/json")).object["kind"] == "ConfigMapList"


async def test_remaining_item_count_is_set_without_selectors(
        served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    for i in range(5):
        await ok(api, "POST", CM, cm(f"cm-{i}", metadata={"name": f"cm-{i}",
                                                           "labels": {"n": str(i % 2)}}))
    page = await ok(api, "GET", CM, params={"limit": "2"})
    assert page["metadata"]["remainingItemCount"] == 3
    page = await ok(api, "GET", CM, params={"limit": "2", "continue": page["metadata"]["continue"]})
    assert page["metadata"]["remainingItemCount"] == 1
    last = await ok(api, "GET", CM, params={"limit": "2", "continue": page["metadata"]["continue"]})
    assert "remainingItemCount" not in last["metadata"] and "continue" not in last["metadata"]
    selected = await ok(api, "GET", CM, params={"limit": "1", "labelSelector": "n=0"})
    assert "continue" in selected["metadata"]
    assert "remainingItemCount" not in selected["metadata"], "not counted with a selector"
    everything = await ok(api, "GET", NS, params={"limit": "1"})
    assert everything["metadata"]["remainingItemCount"] == len(
        (await ok(api, "GET", NS))["items"]) - 1

