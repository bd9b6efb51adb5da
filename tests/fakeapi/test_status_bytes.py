"""A failure's `Status` body is byte for byte what kube-apiserver writes: its fields in the Go
struct's order (code last), empty ones left out (no `details.name: ""`), and the newline its
JSON encoder ends with (issue 18)."""

from __future__ import annotations

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from tests.support.httpapi import CM

CASES = [
    ("GET", f"{CM}/nope", None, 404,
     b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
     b'"configmaps \\"nope\\" not found","reason":"NotFound","details":{"name":"nope",'
     b'"kind":"configmaps"},"code":404}\n'),
    ("POST", CM, b'{"metadata": {}}', 422, None),
    ("GET", "/apis/nowhere.example.com/v1/things", None, 404,
     b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
     b'"the server could not find the requested resource","reason":"NotFound","details":'
     b'{"causes":[{"reason":"UnexpectedServerResponse","message":"404 page not found"}]},'
     b'"code":404}\n'),
]


@pytest.mark.parametrize(("method", "path", "body", "code", "want"), CASES,
                         ids=["not found", "invalid", "no such path"])
async def test_a_status_is_upstreams_bytes(served: tuple[Cluster, TestClient], method: str,
                                           path: str, body: bytes | None, code: int,
                                           want: bytes | None) -> None:
    _, api = served
    resp = await api.request(method, path, data=body,
                             headers={"Content-Type": "application/json"})
    got = await resp.read()
    assert resp.status == code
    assert got.endswith(b"}\n") and got.count(b"\n") == 1
    keys = list(orjson.loads(got))
    assert keys == [k for k in ("kind", "apiVersion", "metadata", "status", "message", "reason",
                                "details", "code") if k in keys]
    assert b'"name":""' not in got
    if want is not None:
        assert got == want
