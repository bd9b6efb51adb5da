"""The API machinery over HTTP: bad input, list, writes, watch and namespace deletion.

Every request goes through `create_app(Cluster(...))` with pytest-aiohttp's client. Every
rejected request is checked for its exact `Status` (HTTP code, reason, message, causes) and
for leaving the committed state alone: same revision, same stored objects, byte for byte.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from fakeapi.registry.context import RequestContext
from fakeapi.registry.listing import item_object
from tests.support.httpapi import (
    CM,
    CONTINUE_EXPIRED,
    JSON,
    MERGE,
    NS,
    RC,
    Obj,
    Reply,
    Serve,
    brief,
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
from tests.support.messages import LABEL_MSG, SUBDOMAIN_MSG

DATA = Path(__file__).resolve().parent.parent / "data" / "api"

YAML = "application/yaml"
CORE = "/api/v1"
PODS = "/api/v1/namespaces/default/pods"
DC = "/apis/resource.k8s.io/v1/deviceclasses"
START = "2026-01-01T00:00:00Z"  # the VirtualClock's default start
NAME_SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
OPTIMISTIC = ("the object has been modified; please apply your changes to the latest version "
              "and try again")
# ----- fixtures and helpers ------------------------------------------------------------------


def pod(name: str, **spec: Any) -> Obj:
    """A Pod body with one container."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def key_of(obj: Obj) -> str:
    """`namespace/name`, or the name of a cluster-scoped object."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def token(payload: Obj) -> str:
    """A continue token with an arbitrary payload."""
    return base64.urlsafe_b64encode(orjson.dumps(payload)).decode().rstrip("=")


# ----- bad input: every rejection has the upstream Status and changes nothing -----------------


@dataclasses.dataclass(frozen=True)
class Bad:
    """One rejected request and the Status it must get."""

    id: str
    method: str
    path: str
    code: int
    reason: str
    message: str | re.Pattern[str]
    body: Any = None
    raw: bytes | None = None
    ctype: str = JSON
    params: tuple[tuple[str, str], ...] = ()
    causes: list[tuple[str | None, str]] | None = None
    details: Obj | None = None


BIG = b'{"metadata":{"name":"big"},"data":{"x":"' + b"a" * (3 * 1024 * 1024) + b'"}}'
LONG = "a" * 254

BAD_INPUT = [
    # bodies that do not decode
    Bad("malformed-json", "POST", CM, 400, "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '}' looking for beginning of object "
        'key string ({"metadata": {"name": "x"},})', raw=b'{"metadata": {"name": "x"},}'),
    Bad("malformed-json-put", "PUT", f"{CM}/existing", 400, "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '{' after object key "
        '({"metadata" {}})', raw=b'{"metadata" {}}'),
    Bad("malformed-json-truncated", "POST", RC, 400, "BadRequest",
        "the object provided is unrecognized (must be of type ResourceClaim): couldn't get "
        'version/kind; json parse error: unexpected end of JSON input ({"metadata": {"name": '
        '"claim-w ...)', raw=b'{"metadata": {"name": "claim-with-a-long-name"}'),
    Bad("malformed-yaml", "POST", CM, 400, "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): yaml: line 2: did not "
        "find expected ',' or ']' (6d657461646174613a205b610a)", raw=b"metadata: [a\n",
        ctype=YAML),
    Bad("malformed-yaml-put", "PUT", f"{CM}/existing", 400, "BadRequest",
        "the object provided is unrecognized (must be of type ConfigMap): yaml: line 1: mapping "
        "values are not allowed in this context (613a20623a2063)", raw=b"a: b: c", ctype=YAML),
    Bad("wrong-api-version", "POST", RC, 400, "BadRequest",
        "the API version in the data (resource.k8s.io/v1beta2) does not match the expected API "
        "version (resource.k8s.io/v1)",
        body={**claim("c"), "apiVersion": "resource.k8s.io/v1beta2"}),
    Bad("wrong-kind", "POST", CM, 400, "BadRequest", re.compile(".*Pod.*ConfigMap.*"),
        body={**cm("x"), "kind": "Pod"}),
    Bad("wrong-kind-yaml", "POST", CM, 400, "BadRequest", re.compile(".*Secret.*ConfigMap.*"),
        raw=b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n", ctype=YAML),
    # fieldValidation=Strict
    Bad("unknown-field-strict", "POST", CM, 400, "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "spec"', body={**cm("x"), "spec": {}},
        params=(("fieldValidation", "Strict"),)),
    Bad("unknown-nested-fields-strict", "POST", RC, 400, "BadRequest",
        'ResourceClaim in version "v1" cannot be handled as a ResourceClaim: strict decoding '
        'error: unknown field "metadata.nmae", unknown field "spec.devices.requests[0].count"',
        body={"metadata": {"name": "c", "nmae": "x"}, "spec": {"devices": {"requests": [
            {"name": "r", "count": 2, "exactly": {"deviceClassName": "gpu"}}]}}},
        params=(("fieldValidation", "Strict"),)),
    Bad("unknown-field-strict-put", "PUT", f"{CM}/existing", 400, "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "metadata.labelz"',
        body={"metadata": {"name": "existing", "labelz": {"a": "b"}}},
        params=(("fieldValidation", "Strict"),)),
    Bad("unknown-field-strict-patch", "PATCH", f"{CM}/existing", 400, "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "bogus"', body={"bogus": 1}, ctype=MERGE,
        params=(("fieldValidation", "Strict"),)),
    Bad("duplicate-field-strict", "POST", CM, 400, "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "data"',
        raw=b'{"metadata": {"name": "x"}, "data": {"a": "1"}, "data": {"b": "2"}}',
        params=(("fieldValidation", "Strict"),)),
    Bad("duplicate-nested-field-strict-yaml", "POST", CM, 400, "BadRequest",
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "metadata.name"', raw=b"metadata:\n  name: x\n  name: y\n", ctype=YAML,
        params=(("fieldValidation", "Strict"),)),
    # names and labels
    Bad("name-uppercase", "POST", CM, 422, "Invalid",
        f'ConfigMap "Upper" is invalid: metadata.name: Invalid value: "Upper": {SUBDOMAIN_MSG}',
        body=cm("Upper"), causes=[("metadata.name", "FieldValueInvalid")],
        details={"name": "Upper", "kind": "ConfigMap"}),
    Bad("name-too-long", "POST", CM, 422, "Invalid",
        f'ConfigMap "{LONG}" is invalid: metadata.name: Invalid value: "{LONG}": must be no '
        "more than 253 bytes", body=cm(LONG), causes=[("metadata.name", "FieldValueInvalid")]),
    Bad("namespace-name-not-a-dns-label", "POST", NS, 422, "Invalid",
        f'Namespace "a_b" is invalid: metadata.name: Invalid value: "a_b": {LABEL_MSG}',
        body={"metadata": {"name": "a_b"}}, causes=[("metadata.name", "FieldValueInvalid")]),
    Bad("namespace-name-with-dots", "POST", NS, 422, "Invalid",
        'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots',
        body={"metadata": {"name": "a.b"}}, causes=[("metadata.name", "FieldValueInvalid")]),
    Bad("name-missing", "POST", CM, 422, "Invalid",
        'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is '
        "required", body={"metadata": {"labels": {"a": "b"}}},
        causes=[("metadata.name", "FieldValueRequired")]),
    Bad("generate-name-invalid", "POST", CM, 422, "Invalid",
        re.compile(f'ConfigMap "Bad_{NAME_SUFFIX}" is invalid: \\[metadata.generateName: '
                   f'Invalid value: "Bad_": .*, metadata.name: Invalid value: "Bad_'
                   f'{NAME_SUFFIX}": .*\\]'),
        body={"metadata": {"generateName": "Bad_"}},
        causes=[("metadata.generateName", "FieldValueInvalid"),
                ("metadata.name", "FieldValueInvalid")]),
    Bad("label-key-invalid", "POST", CM, 422, "Invalid",
        re.compile('ConfigMap "x" is invalid: metadata.labels: Invalid value: "bad key!": name '
                   "part must consist of alphanumeric characters, .*"),
        body={"metadata": {"name": "x", "labels": {"bad key!": "v"}}},
        causes=[("metadata.labels", "FieldValueInvalid")]),
    Bad("label-value-too-long", "POST", CM, 422, "Invalid",
        f'ConfigMap "x" is invalid: metadata.labels: Invalid value: "{"v" * 64}": must be no '
        "more than 63 bytes", body={"metadata": {"name": "x", "labels": {"k": "v" * 64}}},
        causes=[("metadata.labels", "FieldValueInvalid")]),
    Bad("label-invalid-on-update", "PUT", f"{CM}/existing", 422, "Invalid",
        re.compile('ConfigMap "existing" is invalid: metadata.labels: Invalid value: "-x": .*'),
        body={"metadata": {"name": "existing", "labels": {"k": "-x"}}},
        causes=[("metadata.labels", "FieldValueInvalid")]),
    # transport limits
    Bad("body-over-3MiB", "POST", CM, 413, "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728", raw=BIG),
    Bad("unsupported-content-type", "POST", CM, 415, "UnsupportedMediaType",
        re.compile("the body of the request was in an unknown format - accepted media types "
                   "include: application/json, application/yaml.*"),
        raw=b"name=x", ctype="text/plain"),
    Bad("unsupported-patch-type", "PATCH", f"{CM}/existing", 415, "UnsupportedMediaType",
        re.compile("the body of the request was in an unknown format - accepted media types "
                   "include: .*"), body={"data": {"k": "w"}}, ctype=JSON),
    # concurrency and identity
    Bad("stale-resource-version-put", "PUT", f"{CM}/existing", 409, "Conflict",
        f'Operation cannot be fulfilled on configmaps "existing": {OPTIMISTIC}',
        body={"metadata": {"name": "existing", "resourceVersion": "1"}, "data": {"k": "w"}},
        details={"name": "existing", "kind": "configmaps"}),
    Bad("stale-resource-version-patch", "PATCH", f"{CM}/existing", 409, "Conflict",
        f'Operation cannot be fulfilled on configmaps "existing": {OPTIMISTIC}',
        body={"metadata": {"resourceVersion": "1"}, "data": {"k": "w"}}, ctype=MERGE),
    Bad("stale-resource-version-status", "PUT", f"{RC}/claim/status", 409, "Conflict",
        f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "claim": {OPTIMISTIC}',
        body={**claim("claim"), "metadata": {"name": "claim", "resourceVersion": "1"}},
        details={"name": "claim", "group": "resource.k8s.io", "kind": "resourceclaims"}),
    Bad("already-exists", "POST", CM, 409, "AlreadyExists",
        'configmaps "existing" already exists', body=cm("existing"),
        details={"name": "existing", "kind": "configmaps"}),
    Bad("update-missing-object", "PUT", f"{CM}/ghost", 404, "NotFound",
        'configmaps "ghost" not found', body=cm("ghost")),
    Bad("patch-missing-object", "PATCH", f"{RC}/ghost", 404, "NotFound",
        'resourceclaims.resource.k8s.io "ghost" not found', body={}, ctype=MERGE,
        details={"name": "ghost", "group": "resource.k8s.io", "kind": "resourceclaims"}),
    Bad("delete-missing-object", "DELETE", f"{CM}/ghost", 404, "NotFound",
        'configmaps "ghost" not found'),
    Bad("name-mismatch", "PUT", f"{CM}/existing", 400, "BadRequest",
        "the name of the object (other) does not match the name on the URL (existing)",
        body=cm("other")),
    Bad("namespace-mismatch-create", "POST", CM, 400, "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
        body={"metadata": {"name": "x", "namespace": "kube-system"}}),
    Bad("namespace-mismatch-update", "PUT", f"{CM}/existing", 400, "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
        body={"metadata": {"name": "existing", "namespace": "kube-system"}}),
    Bad("missing-namespace", "POST", f"{NS}/nowhere/configmaps", 404, "NotFound",
        'namespaces "nowhere" not found', body=cm("x"),
        details={"name": "nowhere", "kind": "namespaces"}),
    Bad("missing-namespace-dra", "POST",
        "/apis/resource.k8s.io/v1/namespaces/nowhere/resourceclaims", 404, "NotFound",
        'namespaces "nowhere" not found', body=claim("c")),
    Bad("terminating-namespace", "POST", f"{NS}/doomed/configmaps", 403, "Forbidden",
        'configmaps "x" is forbidden: unable to create new content in namespace doomed because '
        "it is being terminated", body=cm("x"),
        causes=[("metadata.namespace", "NamespaceTerminating")],
        details={"name": "x", "kind": "configmaps"}),
    Bad("terminating-namespace-dra", "POST",
        "/apis/resource.k8s.io/v1/namespaces/doomed/resourceclaims", 403, "Forbidden",
        'resourceclaims.resource.k8s.io "c" is forbidden: unable to create new content in '
        "namespace doomed because it is being terminated", body=claim("c"),
        causes=[("metadata.namespace", "NamespaceTerminating")],
        details={"name": "c", "group": "resource.k8s.io", "kind": "resourceclaims"}),
    Bad("delete-uid-precondition", "DELETE", f"{CM}/existing", 409, "Conflict",
        re.compile('Operation cannot be fulfilled on configmaps "existing": Precondition failed: '
                   "UID in precondition: not-the-uid, UID in object meta: [0-9a-f-]{36}"),
        body={"kind": "DeleteOptions", "apiVersion": "v1",
              "preconditions": {"uid": "not-the-uid"}}),
    Bad("delete-resource-version-precondition", "DELETE", f"{CM}/existing", 409, "Conflict",
        re.compile('Operation cannot be fulfilled on configmaps "existing": Precondition failed: '
                   r"ResourceVersion in precondition: 1, ResourceVersion in object meta: \d+"),
        body={"preconditions": {"resourceVersion": "1"}}),
    # request options
    Bad("field-validation-bad-value-create", "POST", CM, 422, "Invalid",
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
        'supported values: "", "Ignore", "Strict", "Warn"', body=cm("x"),
        params=(("fieldValidation", "strict"),),
        causes=[("fieldValidation", "FieldValueNotSupported")],
        details={"name": None, "group": "meta.k8s.io", "kind": "CreateOptions"}),  # omitted
    Bad("field-validation-bad-value-update", "PUT", f"{CM}/existing", 422, "Invalid",
        'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": '
        'supported values: "", "Ignore", "Strict", "Warn"', body=cm("existing"),
        params=(("fieldValidation", "Loud"),),
        causes=[("fieldValidation", "FieldValueNotSupported")]),
    Bad("field-validation-bad-value-patch", "PATCH", f"{CM}/existing", 422, "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "No": '
        'supported values: "", "Ignore", "Strict", "Warn"', body={}, ctype=MERGE,
        params=(("fieldValidation", "No"),)),
    Bad("dry-run-bad-value-create", "POST", CM, 422, "Invalid",
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"true"}: '
        'supported values: "All"', body=cm("x"), params=(("dryRun", "true"),),
        causes=[("dryRun", "FieldValueNotSupported")]),
    Bad("dry-run-bad-values-and-field-validation", "POST", CM, 422, "Invalid",
        'CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: []string{"All", '
        '"Some"}: supported values: "All", fieldValidation: Unsupported value: "x": supported '
        'values: "", "Ignore", "Strict", "Warn"]', body=cm("x"),
        params=(("dryRun", "All"), ("dryRun", "Some"), ("fieldValidation", "x")),
        causes=[("dryRun", "FieldValueNotSupported"),
                ("fieldValidation", "FieldValueNotSupported")]),
    Bad("dry-run-bad-value-delete", "DELETE", f"{CM}/existing", 422, "Invalid",
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"1"}: '
        'supported values: "All"', params=(("dryRun", "1"),)),
    Bad("dry-run-bad-value-in-delete-options", "DELETE", f"{CM}/existing", 422, "Invalid",
        'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Now"}: '
        'supported values: "All"',
        body={"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["Now"]}),
    Bad("dry-run-bad-value-patch", "PATCH", f"{CM}/existing", 422, "Invalid",
        'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Yes"}: '
        'supported values: "All"', body={"data": {"k": "w"}}, ctype=MERGE,
        params=(("dryRun", "Yes"),)),
    # list and watch options
    Bad("continue-not-base64-json", "GET", CM, 400, "BadRequest",
        "invalid continue token: continue key is not valid", params=(("continue", "garbage"),)),
    Bad("continue-unknown-version", "GET", CM, 400, "BadRequest",
        "invalid continue token: continue key is not valid: server does not recognize this "
        "encoded version meta.k8s.io/v2",
        params=(("continue", token({"v": "meta.k8s.io/v2", "rv": 5, "start": "default/a"})),)),
    Bad("continue-zero-revision", "GET", CM, 400, "BadRequest",
        "invalid continue token: continue key is not valid: incorrect encoded start "
        "resourceVersion (version meta.k8s.io/v1)",
        params=(("continue", token({"v": "meta.k8s.io/v1", "rv": 0, "start": "default/a"})),)),
    Bad("continue-empty-start", "GET", CM, 400, "BadRequest",
        "invalid continue token: continue key is not valid: encoded start key empty (version "
        "meta.k8s.io/v1)",
        params=(("continue", token({"v": "meta.k8s.io/v1", "rv": 3, "start": ""})),)),
    Bad("label-selector-unclosed-set", "GET", CM, 400, "BadRequest",
        "unable to parse requirement: found '', expected: ',' or ')'",
        params=(("labelSelector", "a in (b"),)),
    Bad("label-selector-bad-value-in-watch", "GET", CM, 400, "BadRequest",
        re.compile(r'.*Invalid value: "-x": .*'),
        params=(("watch", "true"), ("labelSelector", "a=-x"))),
    Bad("field-selector-no-operator", "GET", CM, 400, "BadRequest",
        "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
        params=(("fieldSelector", "metadata.name"),)),
    Bad("field-selector-unsupported-generic", "GET", CM, 400, "BadRequest",
        '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"',
        params=(("fieldSelector", "data.k=v"),)),
    Bad("field-selector-unsupported-pods", "GET", f"{CORE}/pods", 400, "BadRequest",
        "field label not supported: spec.containers", params=(("fieldSelector",
                                                              "spec.containers=x"),)),
    Bad("field-selector-unsupported-slices", "GET", "/apis/resource.k8s.io/v1/resourceslices",
        400, "BadRequest",
        "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool",
        params=(("fieldSelector", "spec.pool=x"),)),
    Bad("field-selector-unsupported-in-watch", "GET", RC, 400, "BadRequest",
        '"spec.devices" is not a known field selector: only "metadata.name", '
        '"metadata.namespace"', params=(("watch", "1"), ("fieldSelector", "spec.devices=x"))),
    Bad("send-initial-events-on-list", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents '
        "is forbidden for list", params=(("sendInitialEvents", "true"),),
        causes=[("sendInitialEvents", "FieldValueForbidden")],
        details={"name": None, "group": "meta.k8s.io", "kind": "ListOptions"}),  # omitted
    # same as upstream ValidateListOptions: both rules report (no resourceVersion given)
    Bad("send-initial-events-false-on-list", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided, "
        "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]",
        params=(("sendInitialEvents", "false"), ("resourceVersionMatch", "NotOlderThan"))),
    Bad("rv-with-continue", "GET", CM, 400, "BadRequest",
        "specifying resource version is not allowed when using continue",
        params=(("continue", "abc"), ("resourceVersion", "5"))),
    Bad("rv-match-without-rv", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
        params=(("resourceVersionMatch", "NotOlderThan"),)),
    Bad("rv-match-exact-zero", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        params=(("resourceVersionMatch", "Exact"), ("resourceVersion", "0"))),
    Bad("rv-match-unsupported", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: '
        '"Newest": supported values: "Exact", "NotOlderThan", ""',
        params=(("resourceVersionMatch", "Newest"), ("resourceVersion", "5"))),
    Bad("rv-match-on-plain-watch", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        params=(("watch", "true"), ("resourceVersionMatch", "NotOlderThan"))),
    Bad("send-initial-events-without-not-older-than", "GET", CM, 422, "Invalid",
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        params=(("watch", "true"), ("sendInitialEvents", "true"),
                ("allowWatchBookmarks", "true")),
        causes=[("resourceVersionMatch", "FieldValueForbidden")]),
    Bad("list-resource-version-from-the-future", "GET", CM, 504, "Timeout",
        re.compile(r"Timeout: Too large resource version: 999999, current: \d+"),
        params=(("resourceVersion", "999999"),),
        causes=[(None, "ResourceVersionTooLarge")], details={"retryAfterSeconds": 1}),
    Bad("list-exact-resource-version-from-the-future", "GET", CM, 504, "Timeout",
        re.compile(r"Timeout: Too large resource version: 999999, current: \d+"),
        params=(("resourceVersion", "999999"), ("resourceVersionMatch", "Exact")),
        causes=[(None, "ResourceVersionTooLarge")], details={"retryAfterSeconds": 1}),
    Bad("get-missing-object", "GET", f"{CM}/ghost", 404, "NotFound",
        'configmaps "ghost" not found', details={"name": "ghost", "kind": "configmaps"}),
    Bad("unknown-resource", "GET", "/apis/resource.k8s.io/v1/gadgets", 404, "NotFound",
        "the server could not find the requested resource"),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c.id for c in BAD_INPUT])
async def test_bad_input_gets_its_status_and_changes_nothing(
        seeded: tuple[Cluster, TestClient], case: Bad) -> None:
    cluster, api = seeded
    before = committed(cluster)
    reply = await call(api, case.method, case.path, case.body, raw=case.raw, ctype=case.ctype,
                       params=list(case.params))
    check_status(reply, case.code, case.reason, case.message, causes=case.causes,
                 details=case.details)
    assert committed(cluster) == before


async def test_rejected_writes_leave_no_event_for_watchers(
        seeded: tuple[Cluster, TestClient]) -> None:
    """A watcher sees only the one accepted write among a burst of rejected ones."""
    cluster, api = seeded
    watch = await open_watch(api, CM, resourceVersion=str(cluster.store.revision))
    for case in BAD_INPUT:
        if case.method != "GET":
            await call(api, case.method, case.path, case.body, raw=case.raw, ctype=case.ctype,
                       params=list(case.params))
    created = await ok(api, "POST", CM, cm("after"))
    event = await next_event(watch)
    assert (event["type"], event["object"]) == ("ADDED", created)
    watch.close()


# ----- fieldValidation: Warn and Ignore store the object without unknown fields ---------------


UNKNOWN = (b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w", "bogus": 1},'
           b' "data": {"k": "1"}, "extra": true, "data": {"k": "2"}}')


@pytest.mark.parametrize(("params", "warnings"), [
    ({}, ['duplicate field "data"', 'unknown field "metadata.bogus"', 'unknown field "extra"']),
    ({"fieldValidation": "Warn"},
     ['duplicate field "data"', 'unknown field "metadata.bogus"', 'unknown field "extra"']),
    ({"fieldValidation": ""},
     ['duplicate field "data"', 'unknown field "metadata.bogus"', 'unknown field "extra"']),
    ({"fieldValidation": "Ignore"}, []),
], ids=["default-is-warn", "warn", "empty-is-warn", "ignore"])
async def test_lenient_field_validation_drops_unknown_fields(
        served: tuple[Cluster, TestClient], params: dict[str, str],
        warnings: list[str]) -> None:
    cluster, api = served
    reply = await call(api, "POST", CM, raw=UNKNOWN, params=params)
    assert reply.status == 201, reply.body
    assert warnings_of(reply) == warnings
    stored = cluster.store.get("configmaps", "default", "w")
    assert stored is not None
    assert stored.object == reply.object
    assert "bogus" not in stored.object["metadata"] and "extra" not in stored.object
    assert stored.object["data"] == {"k": "2"}  # the last duplicate wins, as in Go


async def test_warn_applies_to_updates_and_patches(served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    created = await ok(api, "POST", CM, cm("w"))
    put = await call(api, "PUT", f"{CM}/w", {**created, "data": {"a": "1"}, "junk": 1})
    assert put.status == 200 and warnings_of(put) == ['unknown field "junk"']
    patched = await call(api, "PATCH", f"{CM}/w", {"spec": {"x": 1}}, ctype=MERGE)
    assert patched.status == 200 and warnings_of(patched) == ['unknown field "spec"']
    assert "junk" not in patched.object and "spec" not in patched.object
    assert patched.object["data"] == {"a": "1"}


# ----- compaction: lists, continues and watches from before the window are 410 ----------------


async def _compacted(serve: Serve) -> tuple[Cluster, TestClient, str]:
    """A cluster that kept only the last 8 events, and a continue token from before them."""
    cluster, api = await serve(retention=8)
    for i in range(3):
        await ok(api, "POST", CM, cm(f"c{i}"))
    first = (await call(api, "GET", CM, params={"limit": "1"})).object
    for i in range(3, 20):
        await ok(api, "POST", CM, cm(f"c{i}"))
    assert cluster.store.log.oldest_revision > int(first["metadata"]["resourceVersion"])
    return cluster, api, first["metadata"]["continue"]


@pytest.mark.parametrize(("params", "code", "message"), [
    ({"resourceVersion": "2", "resourceVersionMatch": "Exact"}, 410,
     re.compile(r"too old resource version: 2 \(\d+\)")),
    ({"continue": "<token>"}, 410, CONTINUE_EXPIRED),
    ({"continue": "<token>", "limit": "3"}, 410, CONTINUE_EXPIRED),
], ids=["list-exact", "continue", "continue-with-limit"])
async def test_list_before_the_retained_window_is_expired(
        serve: Serve, params: dict[str, str], code: int, message: Any) -> None:
    cluster, api, continue_token = await _compacted(serve)
    params = {k: continue_token if v == "<token>" else v for k, v in params.items()}
    before = committed(cluster)
    check_status(await call(api, "GET", CM, params=params), code, "Expired", message)
    assert committed(cluster) == before


@pytest.mark.parametrize("params", [
    {"resourceVersion": "2"},
    {"resourceVersion": "3", "allowWatchBookmarks": "true"},
    {"resourceVersion": "2", "labelSelector": "a=b"},
], ids=["plain", "with-bookmarks", "with-selector"])
async def test_watch_from_before_the_retained_window_gets_an_expired_error(
        serve: Serve, params: dict[str, str]) -> None:
    cluster, api, _ = await _compacted(serve)
    before = committed(cluster)
    watch = await open_watch(api, CM, **params)
    assert watch.status == 200
    event = await next_event(watch)
    assert event["type"] == "ERROR"
    check_status(Reply(410, event["object"], {}), 410, "Expired",
                 re.compile(f"too old resource version: {params['resourceVersion']} \\(\\d+\\)"))
    assert await watch.content.readline() == b""  # the stream ends after the error
    assert committed(cluster) == before


async def test_continue_expires_when_the_changes_since_it_were_compacted_away(
        serve: Serve) -> None:
    """The list's own resource changed after the token, but only other kinds are retained."""
    cluster, api = await serve(retention=8)
    for i in range(3):
        await ok(api, "POST", CM, cm(f"c{i}"))
    first = (await call(api, "GET", CM, params={"limit": "1"})).object
    await ok(api, "DELETE", f"{CM}/c2")  # a change the continued list must not silently miss
    for i in range(20):
        await ok(api, "POST", f"{NS}/default/serviceaccounts", {"metadata": {"name": f"s{i}"}})
    check_status(await call(api, "GET", CM, params={"continue": first["metadata"]["continue"]}),
                 410, "Expired", CONTINUE_EXPIRED)


# ----- list: selectors, all namespaces, consistent pagination ---------------------------------


SELECTORS = yaml.safe_load((DATA / "list_selectors.yaml").read_text())


@pytest.fixture
async def populated(served: tuple[Cluster, TestClient]) -> tuple[Cluster, TestClient]:
    """The objects of list_selectors.yaml, statuses written through /status."""
    cluster, api = served
    for item in SELECTORS["objects"]:
        obj = await ok(api, "POST", item["path"], item["body"])
        if "status" in item:
            await ok(api, "PATCH", f"{item['path']}/{obj['metadata']['name']}/status",
                     {"status": item["status"]}, ctype=MERGE)
    return cluster, api


@pytest.mark.parametrize("case", SELECTORS["cases"], ids=[c["id"] for c in SELECTORS["cases"]])
async def test_list_with_selectors(populated: tuple[Cluster, TestClient], case: Obj) -> None:
    cluster, api = populated
    reply = await call(api, "GET", case["path"], params=case.get("query", {}))
    assert reply.status == 200, reply.body
    body = reply.object
    assert [key_of(i) for i in body["items"]] == case["expect"]
    assert body["metadata"] == {"resourceVersion": str(cluster.store.revision)}
    assert body["kind"].endswith("List") and body["apiVersion"] in ("v1", "resource.k8s.io/v1")


@pytest.mark.parametrize(("limit", "params", "expect"), [
    (1, {}, ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]),
    (2, {}, ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]),
    (3, {}, ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]),
    (7, {}, ["c0", "c1", "c2", "c3", "c4", "c5", "c6"]),
    (2, {"labelSelector": "parity=odd"}, ["c1", "c3", "c5"]),
    (1, {"fieldSelector": "metadata.name!=c3"}, ["c0", "c1", "c2", "c4", "c5", "c6"]),
], ids=["limit-1", "limit-2", "limit-3", "limit-all", "label-selector", "field-selector"])
async def test_pages_are_a_snapshot_at_the_first_page(
        served: tuple[Cluster, TestClient], limit: int, params: dict[str, str],
        expect: list[str]) -> None:
    """Objects created, modified or deleted between pages don't show: items are as of page 1."""
    cluster, api = served
    for i in range(7):
        await ok(api, "POST", CM, {"metadata": {
            "name": f"c{i}", "labels": {"parity": "odd" if i % 2 else "even"}},
            "data": {"v": "1"}})
    query = {**params, "limit": str(limit)}
    page = (await call(api, "GET", CM, params=query)).object
    snapshot = page["metadata"]["resourceVersion"]
    assert snapshot == str(cluster.store.revision)
    # churn between the pages: every kind of change, before and after the cursor
    await ok(api, "DELETE", f"{CM}/c0")
    await ok(api, "DELETE", f"{CM}/c5")
    await ok(api, "PATCH", f"{CM}/c4", {"data": {"v": "2"}}, ctype=MERGE)
    await ok(api, "PATCH", f"{CM}/c2", {"metadata": {"labels": {"parity": "odd"}}},
             ctype=MERGE)
    await ok(api, "POST", CM, cm("c3a", metadata={"name": "c3a", "labels": {"parity": "odd"}}))
    await ok(api, "POST", CM, cm("c9"))
    items, pages = list(page["items"]), [page]
    while page["metadata"].get("continue"):
        page = (await call(api, "GET", CM, params={
            **query, "continue": page["metadata"]["continue"]})).object
        pages.append(page)
        items += page["items"]
    assert [i["metadata"]["name"] for i in items] == expect
    assert all(i["data"] == {"v": "1"} for i in items)
    assert all(int(i["metadata"]["resourceVersion"]) <= int(snapshot) for i in items)
    assert [p["metadata"]["resourceVersion"] for p in pages] == [snapshot] * len(pages)
    assert [len(p["items"]) for p in pages[:-1]] == [limit] * (len(pages) - 1)
    assert "continue" not in pages[-1]["metadata"]
    # a new list sees the changes
    fresh = (await call(api, "GET", CM, params=params)).object
    assert int(fresh["metadata"]["resourceVersion"]) > int(snapshot)
    assert "c0" not in {i["metadata"]["name"] for i in fresh["items"]}


async def test_all_namespace_list_pages_across_namespaces(
        served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    for ns in ("kube-system", "default", "kube-public"):
        for name in ("b", "a"):
            await ok(api, "POST", f"{NS}/{ns}/configmaps", cm(name))
    keys: list[str] = []
    params = {"limit": "4"}
    while True:
        page = (await call(api, "GET", f"{CORE}/configmaps", params=params)).object
        keys += [key_of(i) for i in page["items"]]
        if not page["metadata"].get("continue"):
            break
        params["continue"] = page["metadata"]["continue"]
    assert keys == ["default/a", "default/b", "kube-public/a", "kube-public/b",
                    "kube-system/a", "kube-system/b"]


# ----- writes: metadata bookkeeping -----------------------------------------------------------


async def test_a_large_body_is_read_to_its_end(served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    value = "x" * (1024 * 1024 - 100)  # near the ConfigMap size limit: many socket reads
    created = await ok(api, "POST", CM, cm("large", data={"k": value}))
    assert created["data"]["k"] == value
    stored = cluster.store.get("configmaps", "default", "large")
    assert stored is not None and stored.object["data"]["k"] == value


async def test_requests_with_and_without_options_get_their_own_context(
        served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    await ok(api, "POST", CM, cm("a"))
    reply = await call(api, "POST", CM, cm("b"), params={"dryRun": "All"})
    assert reply.status == 201
    await ok(api, "POST", CM, cm("c"))
    assert [item_object(e)["metadata"]["name"]
            for e in cluster.store.scan("configmaps", "default")] == ["a", "c"]


async def test_create_sets_server_fields_and_generates_names(serve: Serve) -> None:
    cluster, api = await serve()
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    first = await ok(api, "POST", RC, {**claim(""), "metadata": {
        "generateName": "gpu-", "uid": "client-uid", "creationTimestamp": "2000-01-01T00:00:00Z",
        "generation": 42, "deletionTimestamp": "2000-01-01T00:00:00Z"}})
    await clock.advance(90)
    second = await ok(api, "POST", RC, {**claim(""), "metadata": {"generateName": "gpu-"}})
    for obj in (first, second):
        meta = obj["metadata"]
        assert re.fullmatch(f"gpu-{NAME_SUFFIX}", meta["name"])
        assert meta["generateName"] == "gpu-"
        assert uuid.UUID(meta["uid"]).version == 4
        assert meta["generation"] == 1
        assert "deletionTimestamp" not in meta
        stored = cluster.store.get("resourceclaims.resource.k8s.io", "default", meta["name"])
        assert stored is not None and stored.object == obj
        assert meta["resourceVersion"] == str(stored.revision)
    assert first["metadata"]["creationTimestamp"] == START
    assert second["metadata"]["creationTimestamp"] == "2026-01-01T00:01:30Z"
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert first["metadata"]["uid"] != second["metadata"]["uid"]


async def test_generated_names_are_deterministic_with_a_seed(serve: Serve) -> None:
    names = []
    for _ in range(2):
        _, api = await serve()
        obj = await ok(api, "POST", CM, {"metadata": {"generateName": "x-"}})
        names.append(obj["metadata"]["name"])
    assert names[0] == names[1]


@dataclasses.dataclass(frozen=True)
class Change:
    """One write to an existing object and what it must do to generation/resourceVersion."""

    id: str
    path: str
    method: str
    edit: Callable[[Obj], Any]
    generation: int | None
    new_revision: bool = True
    ctype: str = JSON


def _with(obj: Obj, **changes: Any) -> Obj:
    """A copy of `obj` with fields set; `a__b=v` sets obj["a"]["b"] = v."""
    new = orjson.loads(orjson.dumps(obj))
    for dotted, value in changes.items():
        target = new
        *parents, last = dotted.split("__")
        for p in parents:
            target = target.setdefault(p, {})
        target[last] = value
    return new


GENERATION = [
    Change("class-spec-put", f"{DC}/g", "PUT",
           lambda o: _with(o, spec={"selectors": [{"cel": {"expression": "true"}}]}), 2),
    Change("class-spec-merge-patch", f"{DC}/g", "PATCH", lambda o: {"spec": {"config": [
        {"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}}, 2, ctype=MERGE),
    Change("class-labels-patch", f"{DC}/g", "PATCH",
           lambda o: {"metadata": {"labels": {"tier": "gold"}}}, 1, ctype=MERGE),
    Change("pod-image-put", f"{PODS}/g", "PUT", lambda o: _with(o, spec__containers=[
        {**o["spec"]["containers"][0], "image": "busybox:2"}]), 2),
    Change("pod-status-put", f"{PODS}/g/status", "PUT",
           lambda o: _with(o, status={"phase": "Running"}), 1),
    Change("pod-status-merge-patch", f"{PODS}/g/status", "PATCH",
           lambda o: {"status": {"phase": "Running"}}, 1, ctype=MERGE),
    Change("pod-annotations-patch", f"{PODS}/g", "PATCH",
           lambda o: {"metadata": {"annotations": {"note": "x"}}}, 1, ctype=MERGE),
    Change("claim-labels-put", f"{RC}/g", "PUT",
           lambda o: _with(o, metadata__labels={"a": "b"}), 1),
    Change("claim-annotations-patch", f"{RC}/g", "PATCH",
           lambda o: {"metadata": {"annotations": {"note": "x"}}}, 1, ctype=MERGE),
    Change("claim-finalizers-patch", f"{RC}/g", "PATCH",
           lambda o: {"metadata": {"finalizers": ["example.com/keep"]}}, 1, ctype=MERGE),
    Change("claim-status-in-main-put-is-dropped", f"{RC}/g", "PUT",
           lambda o: _with(o, status={"devices": []}), 1, new_revision=False),
    Change("configmap-has-no-generation", f"{CM}/g", "PUT",
           lambda o: _with(o, data={"k": "2"}), None),
]


@pytest.mark.parametrize("change", GENERATION, ids=[c.id for c in GENERATION])
async def test_generation_moves_on_spec_changes_only(
        served: tuple[Cluster, TestClient], change: Change) -> None:
    cluster, api = served
    await ok(api, "POST", RC, claim("g"))
    await ok(api, "POST", DC, {"metadata": {"name": "g"}, "spec": {}})
    await ok(api, "POST", PODS, pod("g"))
    await ok(api, "POST", CM, cm("g", data={"k": "1"}))
    before = await ok(api, "GET", change.path.removesuffix("/status"))
    revision = cluster.store.revision
    after = await ok(api, change.method, change.path, change.edit(before), ctype=change.ctype)
    assert after["metadata"].get("generation") == change.generation
    assert (cluster.store.revision > revision) is change.new_revision
    moved = after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert moved is change.new_revision


@pytest.mark.parametrize(("path", "edit", "changed"), [
    (f"{RC}/s", lambda o: _with(o, status={"devices": []}, metadata__labels={"a": "b"}),
     {"labels"}),
    (f"{PODS}/s", lambda o: _with(o, spec__activeDeadlineSeconds=5,
                                  status={"phase": "Failed"}), {"spec"}),
    (f"{PODS}/s/status", lambda o: _with(o, spec__nodeName="n9", status={"phase": "Running"},
                                         metadata__annotations={"a": "b"}), {"status"}),
    (f"{PODS}/s/status", lambda o: _with(o, spec__containers=[], status={"phase": "Failed"},
                                         metadata__labels={"a": "b"}), {"status"}),
], ids=["claim-main-keeps-status", "pod-main-keeps-status",
        "pod-status-keeps-spec-and-annotations", "pod-status-keeps-spec-and-labels"])
async def test_status_subresource_splits_spec_and_status(
        served: tuple[Cluster, TestClient], path: str, edit: Callable[[Obj], Obj],
        changed: set[str]) -> None:
    cluster, api = served
    await ok(api, "POST", RC, claim("s"))
    await ok(api, "POST", PODS, pod("s"))
    old = await ok(api, "GET", path.removesuffix("/status"))
    sent = edit(old)
    new = await ok(api, "PUT", path, sent)
    parts = {"spec": lambda o: o.get("spec"), "status": lambda o: o.get("status"),
             "labels": lambda o: o["metadata"].get("labels"),
             "annotations": lambda o: o["metadata"].get("annotations")}
    for part, get in parts.items():
        assert get(new) == get(sent if part in changed else old), part
    assert new["metadata"]["generation"] == old["metadata"]["generation"] + (
        "spec" in changed)
    resource = "pods" if path.startswith(PODS) else "resourceclaims.resource.k8s.io"
    stored = cluster.store.get(resource, "default", "s")
    assert stored is not None and stored.object == new


async def test_finalizers_hold_deletion_until_the_last_one_is_removed(
        served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    created = await ok(api, "POST", CM, cm("f", metadata={
        "name": "f", "finalizers": ["example.com/a", "example.com/b"]}))
    watch = await open_watch(api, CM, resourceVersion=created["metadata"]["resourceVersion"])
    marked = await ok(api, "DELETE", f"{CM}/f")
    assert marked["metadata"]["deletionTimestamp"] == START
    assert marked["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]
    assert (await ok(api, "GET", f"{CM}/f")) == marked
    revision = cluster.store.revision
    assert (await ok(api, "DELETE", f"{CM}/f")) == marked  # deleting again changes nothing
    assert cluster.store.revision == revision
    # a deleting object can't get new finalizers, but can lose them
    one = await ok(api, "PATCH", f"{CM}/f", {"metadata": {"finalizers": ["example.com/b"]}},
                   ctype=MERGE)
    assert one["metadata"]["deletionTimestamp"] == START
    gone = await call(api, "PATCH", f"{CM}/f", {"metadata": {"finalizers": None}}, ctype=MERGE)
    assert gone.status == 200
    check_status(await call(api, "GET", f"{CM}/f"), 404, "NotFound", 'configmaps "f" not found')
    events = [await next_event(watch) for _ in range(3)]
    assert [e["type"] for e in events] == ["MODIFIED", "MODIFIED", "DELETED"]
    assert events[0]["object"] == marked
    assert "finalizers" not in events[2]["object"]["metadata"]
    assert int(events[2]["object"]["metadata"]["resourceVersion"]) == cluster.store.revision
    watch.close()


@pytest.mark.parametrize(("preconditions", "code"), [
    ({"uid": "<uid>"}, 200),
    ({"resourceVersion": "<rv>"}, 200),
    ({"uid": "<uid>", "resourceVersion": "<rv>"}, 200),
    ({"uid": "00000000-0000-4000-8000-000000000000"}, 409),
    ({"resourceVersion": "<rv>", "uid": "00000000-0000-4000-8000-000000000000"}, 409),
    ({"uid": "<uid>", "resourceVersion": "2"}, 409),
], ids=["uid", "rv", "both", "wrong-uid", "rv-but-wrong-uid", "uid-but-wrong-rv"])
async def test_delete_preconditions(served: tuple[Cluster, TestClient], preconditions: Obj,
                                    code: int) -> None:
    cluster, api = served
    obj = await ok(api, "POST", CM, cm("p"))
    values = {"<uid>": obj["metadata"]["uid"], "<rv>": obj["metadata"]["resourceVersion"]}
    body = {"apiVersion": "v1", "kind": "DeleteOptions",
            "preconditions": {k: values.get(v, v) for k, v in preconditions.items()}}
    before = committed(cluster)
    reply = await call(api, "DELETE", f"{CM}/p", body)
    assert reply.status == code, reply.body
    if code == 409:
        check_status(reply, 409, "Conflict", re.compile(
            'Operation cannot be fulfilled on configmaps "p": Precondition failed: .*'),
            details={"name": "p", "kind": "configmaps"})
        assert committed(cluster) == before
    else:
        assert cluster.store.get("configmaps", "default", "p") is None


@pytest.mark.parametrize(("method", "path", "body", "ctype", "params", "code", "check"), [
    ("POST", CM, cm("new", data={"a": "1"}), JSON, [("dryRun", "All")], 201,
     lambda o: o["metadata"]["name"] == "new" and "resourceVersion" not in o["metadata"]
     and uuid.UUID(o["metadata"]["uid"]).version == 4),
    ("POST", CM, {"metadata": {"generateName": "dry-"}}, JSON, [("dryRun", "All")], 201,
     lambda o: re.fullmatch(f"dry-{NAME_SUFFIX}", o["metadata"]["name"])),
    ("POST", RC, claim("dry"), YAML, [("dryRun", "All"), ("fieldValidation", "Strict")], 201,
     lambda o: o["metadata"]["generation"] == 1),
    ("PUT", f"{CM}/existing", cm("existing", data={"k": "dry"}), JSON, [("dryRun", "All")], 200,
     lambda o: o["data"] == {"k": "dry"}),
    ("PATCH", f"{CM}/existing", {"data": {"k": "dry"}}, MERGE, [("dryRun", "All")], 200,
     lambda o: o["data"] == {"k": "dry"}),
    ("PATCH", f"{CM}/existing", cm("existing", data={"k": "dry"}), "application/apply-patch+yaml",
     [("dryRun", "All"), ("fieldManager", "tester"), ("force", "true")], 200,
     lambda o: o["data"] == {"k": "dry"}),
    ("PATCH", f"{CM}/applied", {"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "applied"}},
     "application/apply-patch+yaml", [("dryRun", "All"), ("fieldManager", "tester")], 201,
     lambda o: o["metadata"]["name"] == "applied"),
    ("DELETE", f"{CM}/existing", None, JSON, [("dryRun", "All")], 200,
     lambda o: o["kind"] == "Status" and o["details"]["name"] == "existing"),
    ("DELETE", f"{CM}/existing", {"kind": "DeleteOptions", "apiVersion": "v1",
                                  "dryRun": ["All"]}, JSON, [], 200,
     lambda o: o["kind"] == "Status" and o["details"]["name"] == "existing"),
    ("DELETE", f"{CM}/held", None, JSON, [("dryRun", "All")], 200,
     lambda o: o["metadata"]["deletionTimestamp"] == START),
    ("DELETE", f"{NS}/doomed-not", None, JSON, [("dryRun", "All")], 200,
     lambda o: o["status"]["phase"] == "Terminating"),
    ("DELETE", CM, None, JSON, [("dryRun", "All"), ("labelSelector", "app=x")], 200,
     lambda o: [i["metadata"]["name"] for i in o["items"]] == ["existing", "held"]),
    ("DELETE", CM, {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]}, JSON,
     [("labelSelector", "app=x")], 200,
     lambda o: [i["metadata"]["name"] for i in o["items"]] == ["existing", "held"]),
    ("PUT", f"{RC}/claim/status", {**claim("claim"), "status": {"devices": []}}, JSON,
     [("dryRun", "All")], 200, lambda o: o["status"] == {"devices": []}),
], ids=["create", "create-generate-name", "create-yaml-strict", "update", "merge-patch",
        "apply-patch", "apply-create", "delete", "delete-options-body",
        "delete-with-finalizer", "delete-namespace", "delete-collection",
        "delete-collection-options-body", "status-update"])
async def test_dry_run_changes_nothing(
        served: tuple[Cluster, TestClient], method: str, path: str, body: Any, ctype: str,
        params: list[tuple[str, str]], code: int, check: Callable[[Obj], Any]) -> None:
    cluster, api = served
    await ok(api, "POST", CM, cm("existing", metadata={"name": "existing",
                                                       "labels": {"app": "x"}},
                                 data={"k": "v"}))
    await ok(api, "POST", CM, cm("held", metadata={"name": "held", "labels": {"app": "x"},
                                                   "finalizers": ["example.com/x"]}))
    await ok(api, "POST", RC, claim("claim"))
    await ok(api, "POST", NS, {"metadata": {"name": "doomed-not"}})
    watch = await open_watch(api, CM, resourceVersion=str(cluster.store.revision))
    before = committed(cluster)
    raw = yaml.safe_dump(body).encode() if ctype.endswith("yaml") else None
    reply = await call(api, method, path, body, raw=raw, ctype=ctype, params=params)
    assert reply.status == code, reply.body
    assert check(reply.object)
    assert committed(cluster) == before
    await ok(api, "POST", CM, cm("marker"))  # the first event the watcher sees is this one
    event = await next_event(watch)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "marker")
    watch.close()


@pytest.mark.parametrize(("selector", "field", "remaining"), [
    ("app=web", "", ["api", "db", "other-ns"]),
    ("app in (web,api)", "", ["db", "other-ns"]),
    ("app", "metadata.name!=db", ["db", "other-ns"]),
    ("tier=none", "", ["api", "db", "other-ns", "web-1", "web-2"]),
    ("", "metadata.name=web-2", ["api", "db", "other-ns", "web-1"]),
    ("", "", ["other-ns"]),
], ids=["equals", "set", "exists-and-field", "no-match", "field-only", "everything"])
async def test_delete_collection_with_selectors(
        served: tuple[Cluster, TestClient], selector: str, field: str,
        remaining: list[str]) -> None:
    cluster, api = served
    for name, app in [("web-1", "web"), ("web-2", "web"), ("api", "api"), ("db", "db")]:
        await ok(api, "POST", CM, cm(name, metadata={"name": name, "labels": {"app": app}}))
    await ok(api, "POST", f"{NS}/kube-system/configmaps", cm("other-ns", metadata={
        "name": "other-ns", "labels": {"app": "web"}}))
    everything = {key_of(o) for o in (await ok(api, "GET", f"{CORE}/configmaps"))["items"]}
    params = {k: v for k, v in (("labelSelector", selector), ("fieldSelector", field)) if v}
    reply = await call(api, "DELETE", CM, params=params)
    assert reply.status == 200, reply.body
    deleted = {key_of(o) for o in reply.object["items"]}
    left = (await ok(api, "GET", f"{CORE}/configmaps"))["items"]
    assert sorted(o["metadata"]["name"] for o in left) == remaining
    assert deleted == everything - {key_of(o) for o in left}
    assert reply.object["metadata"]["resourceVersion"] == str(cluster.store.revision)


async def test_binding_sets_the_node_once(served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    created = await ok(api, "POST", PODS, pod("b"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-1"}}
    reply = await call(api, "POST", f"{PODS}/b/binding", binding)
    assert reply.status == 201
    assert {k: reply.object.get(k) for k in ("kind", "status", "code")} == {
        "kind": "Status", "status": "Success", "code": 201}
    bound = await ok(api, "GET", f"{PODS}/b")
    assert bound["spec"]["nodeName"] == "node-1"
    assert bound["metadata"]["uid"] == created["metadata"]["uid"]
    # same as upstream's BindingREST: not a spec update (generation stays), PodScheduled set
    assert bound["metadata"]["generation"] == created["metadata"]["generation"]
    assert [(c["type"], c["status"]) for c in bound["status"]["conditions"]] == [
        ("PodScheduled", "True")]
    before = committed(cluster)
    again = await call(api, "POST", f"{PODS}/b/binding",
                       {**binding, "target": {"kind": "Node", "name": "node-2"}})
    check_status(again, 409, "Conflict", 'Operation cannot be fulfilled on pods/binding "b": '
                 'pod b is already assigned to node "node-1"',
                 details={"name": "b", "kind": "pods/binding"})
    check_status(await call(api, "POST", f"{PODS}/ghost/binding", binding), 404, "NotFound",
                 'pods "ghost" not found')
    no_target = await call(api, "POST", f"{PODS}/b/binding", {"metadata": {"name": "b"}})
    assert (no_target.status, no_target.object["reason"]) == (422, "Invalid")
    assert committed(cluster) == before


@pytest.mark.parametrize(("method", "edit", "ctype", "params"), [
    ("PUT", lambda o: o, JSON, {}),
    ("PUT", lambda o: {**o, "metadata": {k: v for k, v in o["metadata"].items()
                                         if k != "resourceVersion"}}, JSON, {}),
    ("PUT", lambda o: o, JSON, {"fieldManager": "someone-else"}),
    ("PUT", lambda o: {**o, "metadata": {**o["metadata"], "managedFields": None}}, JSON, {}),
    ("PATCH", lambda o: {}, MERGE, {}),
    ("PATCH", lambda o: {"data": {"k": "v"}, "metadata": {"labels": {"a": "b"}}}, MERGE, {}),
    ("PATCH", lambda o: [{"op": "replace", "path": "/data/k", "value": "v"}],
     "application/json-patch+json", {}),
    ("PATCH", lambda o: {"data": {"k": "v"}}, "application/strategic-merge-patch+json", {}),
    ("PUT", lambda o: {**o, "status": {"phase": "ignored"}}, JSON, {}),
], ids=["same-object", "without-resource-version", "other-field-manager",
        "without-managed-fields", "empty-merge-patch", "same-values-merge-patch",
        "same-value-json-patch", "same-value-strategic", "status-is-not-part-of-configmaps"])
async def test_no_op_writes_commit_nothing(
        served: tuple[Cluster, TestClient], method: str, edit: Callable[[Obj], Any],
        ctype: str, params: dict[str, str]) -> None:
    cluster, api = served
    obj = await ok(api, "POST", CM, cm("same", metadata={"name": "same", "labels": {"a": "b"}},
                                       data={"k": "v"}))
    watch = await open_watch(api, CM, resourceVersion=str(cluster.store.revision))
    before = committed(cluster)
    reply = await call(api, method, f"{CM}/same", edit(obj), ctype=ctype, params=params)
    assert reply.status == 200, reply.body
    assert reply.object["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    assert committed(cluster) == before
    await ok(api, "POST", CM, cm("marker"))
    event = await next_event(watch)
    assert event["object"]["metadata"]["name"] == "marker"
    watch.close()


# ----- watch ----------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"resourceVersion": "0"}, {"resourceVersion": ""}],
                         ids=["unset", "zero", "empty"])
async def test_watch_from_now_starts_with_synthetic_added(
        served: tuple[Cluster, TestClient], params: dict[str, str]) -> None:
    cluster, api = served
    b = await ok(api, "POST", CM, cm("b"))
    a = await ok(api, "POST", CM, cm("a"))
    watch = await open_watch(api, CM, **params)
    initial = [await next_event(watch) for _ in range(2)]
    assert initial == [{"type": "ADDED", "object": a}, {"type": "ADDED", "object": b}]
    await ok(api, "POST", CM, cm("c"))
    await ok(api, "PATCH", f"{CM}/a", {"data": {"x": "y"}}, ctype=MERGE)
    await ok(api, "DELETE", f"{CM}/b")
    live = [await next_event(watch) for _ in range(3)]
    assert [brief(e) for e in live] == [("ADDED", "c"), ("MODIFIED", "a"), ("DELETED", "b")]
    revisions = [int(e["object"]["metadata"]["resourceVersion"]) for e in live]
    assert revisions == sorted(revisions) and revisions[-1] == cluster.store.revision
    watch.close()


async def test_watch_from_a_revision_replays_what_came_after(
        served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    await ok(api, "POST", CM, cm("a"))
    start = str(cluster.store.revision)
    await ok(api, "POST", CM, cm("b"))
    await ok(api, "POST", f"{NS}/kube-system/configmaps", cm("elsewhere"))
    await ok(api, "PATCH", f"{CM}/a", {"data": {"x": "1"}}, ctype=MERGE)
    await ok(api, "POST", PODS, pod("not-a-configmap"))
    await ok(api, "DELETE", f"{CM}/b")
    watch = await open_watch(api, CM, resourceVersion=start)
    replay = [await next_event(watch) for _ in range(3)]
    assert [brief(e) for e in replay] == [("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    await no_event(watch)
    watch_all = await open_watch(api, f"{CORE}/configmaps", resourceVersion=start)
    replay_all = [await next_event(watch_all) for _ in range(4)]
    assert [brief(e) for e in replay_all] == [
        ("ADDED", "b"), ("ADDED", "elsewhere"), ("MODIFIED", "a"), ("DELETED", "b")]
    await ok(api, "POST", CM, cm("live"))
    assert brief(await next_event(watch)) == ("ADDED", "live")
    assert brief(await next_event(watch_all)) == ("ADDED", "live")
    watch.close()
    watch_all.close()


@pytest.mark.parametrize(("params", "initial", "bookmark"), [
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
      "allowWatchBookmarks": "true"}, ["a", "b", "c"], True),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
      "allowWatchBookmarks": "true", "resourceVersion": "0"}, ["a", "b", "c"], True),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
      "allowWatchBookmarks": "true", "resourceVersion": "<now>"}, ["a", "b", "c"], True),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
      "allowWatchBookmarks": "true", "labelSelector": "keep=yes"}, ["a", "c"], True),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
      "allowWatchBookmarks": "true", "fieldSelector": "metadata.name=b"}, ["b"], True),
    ({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"},
     ["a", "b", "c"], False),
], ids=["watch-list", "watch-list-rv-0", "watch-list-rv-now", "label-selector",
        "field-selector", "no-bookmarks-no-marker"])
async def test_watch_list_ends_initial_events_with_a_bookmark(
        served: tuple[Cluster, TestClient], params: dict[str, str], initial: list[str],
        bookmark: bool) -> None:
    cluster, api = served
    for name, keep in (("c", "yes"), ("a", "yes"), ("b", "no")):
        await ok(api, "POST", CM, cm(name, metadata={"name": name, "labels": {"keep": keep}}))
    now = str(cluster.store.revision)
    params = {k: now if v == "<now>" else v for k, v in params.items()}
    watch = await open_watch(api, CM, **params)
    events = [await next_event(watch) for _ in range(len(initial))]
    assert [brief(e) for e in events] == [("ADDED", n) for n in initial]
    if bookmark:
        mark = await next_event(watch)
        assert mark == {"type": "BOOKMARK", "object": {
            "kind": "ConfigMap", "apiVersion": "v1", "metadata": {
                "resourceVersion": now,
                "annotations": {"k8s.io/initial-events-end": "true"}}}}
    await ok(api, "POST", CM, cm("d", metadata={"name": "d", "labels": {"keep": "yes"}}))
    if "fieldSelector" not in params:
        assert brief(await next_event(watch)) == ("ADDED", "d")
    else:
        await no_event(watch)
    watch.close()


async def test_periodic_bookmarks_carry_the_current_revision(serve: Serve) -> None:
    cluster, api = await serve(bookmark_interval=0.05)
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)  # bookmarks are due on the cluster's clock
    await ok(api, "POST", CM, cm("a"))
    with_marks = await open_watch(api, CM, resourceVersion=str(cluster.store.revision),
                                  allowWatchBookmarks="true")
    without = await open_watch(api, CM, resourceVersion=str(cluster.store.revision))
    for _ in range(2):
        await clock.advance(0.05)
        mark = await next_event(with_marks, timeout=2)
        assert mark == {"type": "BOOKMARK", "object": {
            "kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"resourceVersion": str(cluster.store.revision)}}}
    await ok(api, "POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
             {"metadata": {"name": "other-kind"}})
    target = str(cluster.store.revision)
    while True:  # bookmarks move on with writes to other kinds; nothing else arrives
        await clock.advance(0.05)
        mark = await next_event(with_marks, timeout=2)
        assert mark["type"] == "BOOKMARK"
        if mark["object"]["metadata"]["resourceVersion"] == target:
            break
    await ok(api, "POST", CM, cm("b"))
    event = await next_event(without)
    assert brief(event) == ("ADDED", "b")  # no bookmarks were queued before it
    with_marks.close()
    without.close()


async def test_label_selector_transitions_are_added_and_deleted(
        served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    watch = await open_watch(api, CM, labelSelector="app=web")
    steps: list[tuple[Obj, str | None]] = [
        ({"metadata": {"labels": {"app": "db"}}}, None),         # not selected: nothing
        ({"metadata": {"labels": {"app": "web"}}}, "ADDED"),     # moves in
        ({"data": {"k": "v"}}, "MODIFIED"),                      # changes while in
        ({"metadata": {"labels": {"app": "db"}}}, "DELETED"),    # moves out
        ({"data": {"k": "w"}}, None),                            # changes while out
        ({"metadata": {"labels": {"app": "web"}}}, "ADDED"),     # back in
    ]
    await ok(api, "POST", CM, cm("t", metadata={"name": "t", "labels": {"app": "db"}}))
    for patch, expected in steps:
        obj = await ok(api, "PATCH", f"{CM}/t", patch, ctype=MERGE)
        if expected is None:
            await no_event(watch, 0.1)
        else:
            assert await next_event(watch) == {"type": expected, "object": obj}
    await ok(api, "DELETE", f"{CM}/t")
    assert brief(await next_event(watch)) == ("DELETED", "t")
    await ok(api, "POST", CM, cm("u", metadata={"name": "u", "labels": {"app": "db"}}))
    await ok(api, "DELETE", f"{CM}/u")
    await no_event(watch, 0.1)
    watch.close()


async def test_timeout_seconds_ends_the_stream(served: tuple[Cluster, TestClient]) -> None:
    cluster, api = served
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)  # timeoutSeconds runs on the cluster's clock
    watch = await open_watch(api, CM, timeoutSeconds="1", resourceVersion="1")
    await clock.advance(0.9)
    await no_event(watch, 0.1)
    await clock.advance(0.1)
    assert await asyncio.wait_for(watch.content.read(), 5) == b""
    watch.close()


@pytest.mark.parametrize(("path", "params", "seen"), [
    (CM, {}, ["default/mine"]),
    (f"{NS}/kube-system/configmaps", {}, ["kube-system/theirs"]),
    (f"{CORE}/configmaps", {}, ["default/mine", "kube-system/theirs"]),
    (f"{CORE}/configmaps", {"fieldSelector": "metadata.namespace=kube-system"},
     ["kube-system/theirs"]),
    (CM, {"fieldSelector": "metadata.name=theirs"}, []),
    (f"{NS}/kube-public/configmaps", {}, []),
], ids=["default", "kube-system", "all-namespaces", "all-with-namespace-field",
        "name-from-other-namespace", "untouched-namespace"])
async def test_namespace_scoped_watch_sees_only_its_namespace(
        served: tuple[Cluster, TestClient], path: str, params: dict[str, str],
        seen: list[str]) -> None:
    cluster, api = served
    watch = await open_watch(api, path, resourceVersion=str(cluster.store.revision), **params)
    await ok(api, "POST", CM, cm("mine"))
    await ok(api, "POST", f"{NS}/kube-system/configmaps", cm("theirs"))
    assert [key_of(e["object"]) for e in await drain(watch)] == seen
    watch.close()


async def drain(watch: ClientResponse, quiet: float = 0.2) -> list[Obj]:
    """Every event until the watch is quiet for `quiet` seconds."""
    events: list[Obj] = []
    while True:
        try:
            line = await asyncio.wait_for(watch.content.readline(), quiet)
        except TimeoutError:
            return events
        assert line
        events.append(orjson.loads(line))


async def test_a_watcher_that_falls_behind_the_window_gets_expired(serve: Serve) -> None:
    cluster, api = await serve(retention=8)
    start = cluster.store.revision
    watch = await open_watch(api, CM, resourceVersion=str(start))
    kind = cluster.kinds.by_resource("", "v1", "configmaps")
    assert kind is not None
    ctx = RequestContext(user="burst")
    for i in range(30):  # no await: the watcher can't run until the burst is committed
        cluster.registry.create(kind, "default", cm(f"burst-{i}"), ctx)
    assert cluster.store.log.oldest_revision > start
    event = await next_event(watch)
    assert event["type"] == "ERROR"
    check_status(Reply(410, event["object"], {}), 410, "Expired",
                 re.compile(rf"too old resource version: {start} \(\d+\)"))
    assert await asyncio.wait_for(watch.content.readline(), 5) == b""
    watch.close()


# ----- namespace deletion ---------------------------------------------------------------------


async def test_deleting_a_namespace_empties_it_then_removes_it(aiohttp_client: Any) -> None:
    plane = ControlPlane(ClusterConfig(seed=7), clock=VirtualClock(),
                         components="namespace-controller")
    cluster = plane.cluster
    api = await aiohttp_client(create_app(cluster))
    await ok(api, "POST", NS, {"metadata": {"name": "team"}})
    team = f"{NS}/team"
    await ok(api, "POST", f"{team}/configmaps", cm("settings"))
    await ok(api, "POST", f"{team}/pods", pod("worker"))
    await ok(api, "POST", "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims",
             claim("gpu"))
    await ok(api, "POST", f"{team}/configmaps", cm("held", metadata={
        "name": "held", "finalizers": ["example.com/cleanup"]}))
    await ok(api, "POST", CM, cm("bystander"))
    ns_watch = await open_watch(api, NS, fieldSelector="metadata.name=team")
    assert brief(await next_event(ns_watch)) == ("ADDED", "team")
    content_watch = await open_watch(api, f"{team}/configmaps")
    assert {brief(await next_event(content_watch)) for _ in range(2)} == {
        ("ADDED", "settings"), ("ADDED", "held")}
    await plane.start()
    try:
        terminating = await ok(api, "DELETE", team)
        assert terminating["status"]["phase"] == "Terminating"
        assert terminating["metadata"]["deletionTimestamp"] == START
        assert terminating["spec"]["finalizers"] == ["kubernetes"]
        assert brief(await next_event(ns_watch)) == ("MODIFIED", "team")
        check_status(await call(api, "POST", f"{team}/configmaps", cm("late")), 403,
                     "Forbidden", 'configmaps "late" is forbidden: unable to create new content '
                     "in namespace team because it is being terminated")
        # the controller deletes what it can; `held` waits for its finalizer
        seen = {brief(await next_event(content_watch)) for _ in range(2)}
        assert seen == {("DELETED", "settings"), ("MODIFIED", "held")}
        await plane.settle()
        for path in (f"{team}/pods/worker",
                     "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/gpu"):
            assert (await call(api, "GET", path)).status == 404
        assert (await ok(api, "GET", team))["status"]["phase"] == "Terminating"
        await ok(api, "PATCH", f"{team}/configmaps/held", {"metadata": {"finalizers": None}},
                 ctype=MERGE)
        assert brief(await next_event(content_watch)) == ("DELETED", "held")
        await plane.settle()
        assert (await call(api, "GET", team)).status == 404
        final = await next_event(ns_watch)
        while final["type"] == "MODIFIED":
            final = await next_event(ns_watch)
        assert brief(final) == ("DELETED", "team")
        assert "finalizers" not in final["object"]["spec"] or not final["object"]["spec"][
            "finalizers"]
        assert (await ok(api, "GET", f"{CM}/bystander"))["metadata"]["name"] == "bystander"
        for resource in ("configmaps", "pods", "resourceclaims.resource.k8s.io"):
            assert cluster.store.count(resource, "team") == 0
    finally:
        ns_watch.close()
        content_watch.close()
        await plane.stop()


@pytest.mark.parametrize("watches", [1, 3])
async def test_server_shutdown_ends_open_watches_promptly(serve: Serve, watches: int) -> None:
    """Shutdown wakes every watcher and cancels it in the same breath: none may survive it."""
    cluster, api = await serve()
    opened = [await open_watch(api, CM, resourceVersion=str(cluster.store.revision),
                               allowWatchBookmarks="true") for _ in range(watches)]
    await ok(api, "POST", CM, cm("a"))
    for watch in opened:
        assert brief(await next_event(watch)) == ("ADDED", "a")
    await asyncio.wait_for(api.server.close(), 5)
    for watch in opened:
        assert await asyncio.wait_for(watch.content.read(), 5) == b""


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_the_immortal_namespaces_may_not_be_deleted(
        served: tuple[Cluster, TestClient], name: str) -> None:
    cluster, api = served
    await call(api, "POST", NS, {"metadata": {"name": name}})  # (there already, or now)
    before = committed(cluster)
    check_status(await call(api, "DELETE", f"{NS}/{name}"), 403, "Forbidden",
                 f'namespaces "{name}" is forbidden: this namespace may not be deleted')
    assert committed(cluster) == before  # nothing written
    assert (await ok(api, "GET", f"{NS}/{name}"))["status"]["phase"] == "Active"
