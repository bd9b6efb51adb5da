"""Header bytes that are not UTF-8, as Go's net/http and the impersonation filter take them:
the request goes on with the bytes it has, and every answer is a JSON Status in which they
read as U+FFFD (Go's JSON encoder), never a plain-text 500."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster

# (id, raw header lines) -> (code, the user the 403 names)
CASES = [
    ("user", b"Impersonate-User: \xff\xfe\r\n", 403, "\ufffd\ufffd"),
    ("user-partly", b"Impersonate-User: bob\xc3\r\n", 403, "bob\ufffd"),
    ("group", b"Impersonate-User: bob\r\nImpersonate-Group: \xc3\x28\r\n", 403, "bob"),
    ("uid", b"Impersonate-User: bob\r\nImpersonate-Uid: \xff\r\n", 403, "bob"),
    ("extra-value", b"Impersonate-User: bob\r\nImpersonate-Extra-scopes: \xfe\r\n", 403, "bob"),
]


async def _raw_get(api: TestClient, headers: bytes) -> tuple[int, bytes]:
    reader, writer = await asyncio.open_connection(api.host, api.port)
    writer.write(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n" + headers
                 + b"Connection: close\r\n\r\n")
    await writer.drain()
    raw = await reader.read()
    writer.close()
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


@pytest.mark.parametrize(("headers", "code", "user"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
async def test_impersonation_headers_that_are_not_utf8(
        served: tuple[Cluster, TestClient], headers: bytes, code: int, user: str) -> None:
    _, api = served
    status, body = await _raw_get(api, headers)
    answer = orjson.loads(body)
    assert (status, answer["kind"], answer["code"], answer["reason"]) == (
        code, "Status", code, "Forbidden")
    assert answer["message"].startswith(f'namespaces is forbidden: User "{user}" cannot list')
