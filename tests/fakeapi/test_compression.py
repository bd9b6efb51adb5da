"""Compressed answers and request bodies as kube-apiserver's: gzip exactly when Accept-Encoding
names it and the body is above upstream's 128 KiB threshold, labelled so; a request body's
Content-Encoding is not undone, so a gzipped or corrupt gzipped body is a 400."""

from __future__ import annotations

import gzip

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from fakeapi.http.compression import GZIP_THRESHOLD
from tests.support.httpapi import CM, Reply, check_status, cm, ok

# (id, Accept-Encoding, a big list) -> compressed
CASES = [
    ("gzip-big", "gzip", True, True),
    ("list-of-codings", "deflate, gzip, br", True, True),
    ("no-header", None, True, False),
    ("other-coding", "br", True, False),
    ("gzip-with-params", "gzip;q=1", True, False),  # upstream matches the bare token only
    ("gzip-small", "gzip", False, False),
]


@pytest.mark.parametrize(("accept_encoding", "big", "compressed"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
async def test_answers_are_gzipped_exactly_when_asked_above_the_threshold(
        served: tuple[Cluster, TestClient], accept_encoding: str | None, big: bool,
        compressed: bool) -> None:
    _, api = served
    if big:
        await ok(api, "POST", CM, cm("big", data={f"k{i}": "x" * 1024 for i in range(140)}))
    else:
        await ok(api, "POST", CM, cm("small"))
    async with api.get(CM, auto_decompress=False, skip_auto_headers=["Accept-Encoding"]
                       ) as plain:
        want = await plain.read()
    assert (len(want) > GZIP_THRESHOLD) is big
    headers = {"Accept-Encoding": accept_encoding} if accept_encoding else {}
    async with api.get(CM, headers=headers, auto_decompress=False,
                       skip_auto_headers=["Accept-Encoding"]) as resp:
        body = await resp.read()
        assert resp.status == 200
        if compressed:
            assert resp.headers["Content-Encoding"] == "gzip"
            assert resp.headers["Vary"] == "Accept-Encoding"
            assert gzip.decompress(body) == want
            assert len(body) < len(want)
        else:
            assert "Content-Encoding" not in resp.headers
            assert body == want


@pytest.mark.parametrize("body", [
    b"\x1f\x8b\x08\x00garbage",
    gzip.compress(orjson.dumps(cm("zipped")), mtime=0),
], ids=["corrupt", "well-formed"])
async def test_a_gzipped_request_body_is_read_as_sent(
        served: tuple[Cluster, TestClient], body: bytes) -> None:
    _, api = served
    async with api.post(CM, data=body, headers={"Content-Type": "application/json",
                                                "Content-Encoding": "gzip"}) as resp:
        reply = Reply(resp.status, orjson.loads(await resp.read()), resp.headers)
    check_status(reply, 400, "BadRequest", (
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
        "version/kind; json parse error: invalid character '\\x1f' looking for beginning of "
        f"value ({body[:30].hex()}{' ...' if len(body) > 30 else ''})"))
