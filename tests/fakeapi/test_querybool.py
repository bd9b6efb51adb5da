"""Boolean query parameters as upstream reads them: over HTTP `?watch=True` (as
kubernetes_asyncio sends it) is a watch, `?watch=0` and `?watch=FALSE` a list; and a watch's
`timeoutSeconds` is an integer, as upstream's int64 (issue 18)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster
from fakeapi.machinery.querybool import query_bool
from tests.support.httpapi import CM, JSON, cm, next_event, ok

VALUES = [("true", True), ("True", True), ("TRUE", True), ("1", True), ("t", True),
          ("yes", True), ("", True), ("false", False), ("False", False), ("FALSE", False),
          ("0", False)]


@pytest.mark.parametrize(("value", "want"), VALUES)
def test_anything_but_zero_or_false_is_true(value: str, want: bool) -> None:
    assert query_bool({"x": value}, "x") is want
    assert query_bool({}, "x") is None


@pytest.mark.parametrize(("value", "want"), VALUES)
async def test_watch_is_what_upstream_calls_a_watch(
        served: tuple[Cluster, TestClient], value: str, want: bool) -> None:
    _, api = served
    resp = await api.get(CM, params={"watch": value})
    assert resp.status == 200 and resp.headers["Content-Type"].startswith(JSON)
    if not want:
        assert (await resp.json())["kind"] == "ConfigMapList"
        return
    await ok(api, "POST", CM, cm("seen"))  # a stream of events, not a list
    event = await next_event(resp)
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "seen")
    resp.close()


@pytest.mark.parametrize("value", ["NaN", "1.5", "1e3", "Infinity", "-inf", "x"])
async def test_a_watch_timeout_that_is_no_integer_is_a_400(
        served: tuple[Cluster, TestClient], value: str) -> None:
    _, api = served
    resp = await api.get(CM, params={"watch": "true", "timeoutSeconds": value})
    assert resp.status == 400
    assert (await resp.json())["message"] == f"invalid timeoutSeconds: {value!r}"
