"""Quiet kinds over HTTP: a watch, an exact-revision list and a continue token of namespaces
outlive a retention window of ConfigMap writes; they get 410 only when a namespace change
they would have needed was compacted away."""

from __future__ import annotations

import re
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from fakeapi.registry.context import RequestContext
from tests.support.httpapi import (
    CM,
    CONTINUE_EXPIRED,
    NS,
    Reply,
    brief,
    call,
    check_status,
    cm,
    next_event,
    ok,
    open_watch,
)

RETENTION = 8


async def _cluster(aiohttp_client: Any) -> tuple[Cluster, TestClient]:
    cluster = Cluster(ClusterConfig(seed=7, retention=RETENTION), clock=VirtualClock())
    return cluster, await aiohttp_client(create_app(cluster))


def _flood(cluster: Cluster) -> None:
    """Three retention windows of ConfigMap creates, committed without yielding."""
    kind = cluster.kinds.by_resource("", "v1", "configmaps")
    assert kind is not None
    ctx = RequestContext(user="flood")
    for i in range(3 * RETENTION):
        cluster.registry.create(kind, "default", cm(f"flood-{cluster.store.revision}-{i}"), ctx)


def _names(reply: Reply) -> list[str]:
    assert reply.status == 200, reply.body
    return [item["metadata"]["name"] for item in reply.object["items"]]


@pytest.mark.parametrize("missed", [False, True], ids=["quiet", "missed-its-own-event"])
async def test_a_namespace_watch_outlives_configmap_writes(aiohttp_client: Any,
                                                           missed: bool) -> None:
    cluster, api = await _cluster(aiohttp_client)
    await ok(api, "POST", NS, {"metadata": {"name": "first"}})
    start = cluster.store.revision
    watch = await open_watch(api, NS, resourceVersion=str(start))
    if missed:
        namespaces = cluster.kinds.by_id("namespaces")
        assert namespaces is not None
        cluster.registry.create(namespaces, "", {"metadata": {"name": "missed"}},
                                RequestContext(user="t"))
    _flood(cluster)
    assert cluster.store.log.oldest_revision > start
    await ok(api, "POST", NS, {"metadata": {"name": "later"}})
    event = await next_event(watch)
    if missed:
        assert event["type"] == "ERROR"
        # the oldest revision as the watch saw it: the POST's own writes (the namespace's
        # service account...) may have moved it on before or after the watch woke
        expired = re.compile(rf"too old resource version: {start} \((\d+)\)")
        check_status(Reply(410, event["object"], {}), 410, "Expired", expired)
        seen = expired.fullmatch(event["object"]["message"])
        assert seen is not None and start < int(seen[1]) <= cluster.store.log.oldest_revision
    else:
        assert brief(event) == ("ADDED", "later")
    watch.close()


@pytest.mark.parametrize("missed", [False, True], ids=["quiet", "missed-its-own-change"])
@pytest.mark.parametrize("read", ["exact", "continue"])
async def test_a_namespace_list_at_an_old_revision_outlives_configmap_writes(
        aiohttp_client: Any, missed: bool, read: str) -> None:
    cluster, api = await _cluster(aiohttp_client)
    await ok(api, "POST", NS, {"metadata": {"name": "zz-old-news"}})  # sorts last, deletable
    before = _names(await call(api, "GET", NS))
    first = (await call(api, "GET", NS, params={"limit": "1"})).object
    at = first["metadata"]["resourceVersion"]
    if missed:  # a change the old list must not silently miss, compacted by the flood
        await ok(api, "DELETE", f"{NS}/zz-old-news")
    _flood(cluster)
    await ok(api, "POST", CM, cm("after-the-flood"))
    assert cluster.store.log.oldest_revision > int(at)
    if read == "exact":
        reply = await call(api, "GET", NS, params={"resourceVersion": at,
                                                   "resourceVersionMatch": "Exact"})
        expected = before
        message = f"too old resource version: {at} ({cluster.store.log.oldest_revision})"
    else:
        reply = await call(api, "GET", NS, params={"continue": first["metadata"]["continue"]})
        expected = before[1:]
        message = CONTINUE_EXPIRED
    if missed:
        check_status(reply, 410, "Expired", message)
    else:
        assert _names(reply) == expected
