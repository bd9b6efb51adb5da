"""The shared informers over `RemoteClient` (HTTPS to a served cluster in this test's loop):
the same `Informer` lists, watches and relists on 410 as it does in process, watches carry
bookmarks, an impersonating client writes as its own identity, and discovery limits the kinds
to those the server serves."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakeapi.auth.authn import service_account_groups, service_account_username
from fakeapi.client import ApiClient
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.serving import listen
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.watchtypes import BOOKMARK, ERROR
from fakeapi.registry.kinds import CONFIG_MAPS, RESOURCE_CLAIMS
from fakeapi.remote_client import RemoteClient
from fakeapi.runtime.informer import Informer
from tests.support.waiting import poll_async

CM = CONFIG_MAPS.resource_id
Obj = dict[str, Any]
SCHEDULER = service_account_username("kube-system", "kube-scheduler")


def cm(name: str, v: str = "1") -> Obj:
    return {"metadata": {"name": name, "namespace": "default"}, "data": {"v": v}}


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Cluster, RemoteClient]]:
    """A cluster with a short log window, served over HTTPS, and a remote admin client."""
    cluster = Cluster(ClusterConfig(seed=2, retention=30))
    listener = await listen(cluster, host="127.0.0.1", port=0, pki_dir=tmp_path / "pki",
                            kubeconfig=tmp_path / "kubeconfig")
    remote = RemoteClient.from_kubeconfig(listener.kubeconfig)
    yield cluster, remote
    await remote.close()
    await listener.close()
    await cluster.close()


async def test_an_informer_over_https_lists_watches_and_relists_after_410(
        served: tuple[Cluster, RemoteClient]) -> None:
    cluster, remote = served
    local = cluster.client("admin")
    client: ApiClient = remote  # the one seam both clients satisfy
    for name in ("a", "b", "gone"):
        await local.create(CM, cm(name))
    informer = Informer(client=client, resource=CM)
    seen: list[tuple[str, str]] = []
    informer.add_handler(lambda t, o, old: seen.append((t, o["metadata"]["name"])))
    task = asyncio.create_task(informer.run())
    await poll_async(lambda: informer.synced, what="the first list")
    await local.create(CM, cm("c"))
    await local.update(CM, {**(await local.get(CM, "a", "default")), "data": {"v": "2"}})
    await poll_async(lambda: ("MODIFIED", "a") in seen, what="the watch's events")
    assert sorted(n for t, n in seen if t == "ADDED") == ["a", "b", "c", "gone"]

    task.cancel()  # stopped while the window moves past its revision
    await asyncio.gather(task, return_exceptions=True)
    await local.delete(CM, "gone", "default")
    for i in range(40):
        await local.update(CM, {**(await local.get(CM, "b", "default")), "data": {"v": str(i)}})
    seen.clear()
    task = asyncio.create_task(informer.run())  # resumes its watch: 410, then a relist
    await poll_async(lambda: informer.relists == 1 and informer.synced, what="the relist")
    assert ("DELETED", "gone") in seen and ("MODIFIED", "b") in seen
    assert informer.cache.get("b", "default")["data"] == {"v": "39"}  # type: ignore[index]
    assert informer.cache.get("gone", "default") is None
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_watches_carry_bookmarks_and_expired_revisions_are_410_events(
        served: tuple[Cluster, RemoteClient]) -> None:
    cluster, remote = served
    local = cluster.client("admin")
    made = await local.create(CM, cm("x"))
    revision = made["metadata"]["resourceVersion"]
    events = [e async for e in remote.watch(CM, resource_version=revision, timeout=3)]
    assert [t for t, _ in events] == [BOOKMARK]  # 2 s before the deadline, as upstream
    assert int(events[0][1]["metadata"]["resourceVersion"]) >= int(revision)
    for i in range(40):
        await local.update(CM, {**(await local.get(CM, "x", "default")), "data": {"v": str(i)}})
    expired = [e async for e in remote.watch(CM, resource_version=revision, timeout=3)]
    assert [(t, o.get("code")) for t, o in expired] == [(ERROR, 410)]


async def test_an_impersonating_client_writes_as_its_identity_over_shared_connections(
        served: tuple[Cluster, RemoteClient]) -> None:
    cluster, remote = served
    scheduler = remote.impersonating(SCHEDULER, service_account_groups("kube-system"))
    await cluster.client("admin").create(CM, cm("seen"))
    with pytest.raises(ApiError) as refused:  # the scheduler's role has no configmap writes
        await scheduler.create(CM, cm("nope"))
    assert refused.value.code == 403 and SCHEDULER in refused.value.message
    made = await remote.impersonating("someone", ("system:masters",)).create(CM, cm("ok"))
    revision = int(made["metadata"]["resourceVersion"])
    assert [e.actor for e in cluster.log.since(revision - 1)] == ["someone"]
    assert [c["metadata"]["name"] for c in await remote.list(CM, "default")] == ["ok", "seen"]


async def test_discovery_limits_the_kinds_to_what_the_server_serves(
        served: tuple[Cluster, RemoteClient]) -> None:
    _, remote = served
    before = {k.resource_id for k in remote.resources()}
    served_kinds = {k.resource_id for k in await remote.discover()}
    assert CM in served_kinds and RESOURCE_CLAIMS.resource_id in served_kinds
    assert served_kinds < before  # off-by-default versions are not served
    gone = (before - served_kinds).pop()
    with pytest.raises(ApiError) as missing:
        remote.kind(gone)
    assert missing.value.code == 404
