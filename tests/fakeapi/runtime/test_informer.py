"""Shared informers over a real in-process cluster: list+watch, handlers, indexes, relist."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from fakeapi.runtime.informer import Informer, Informers
from tests.support.models import DeviceClass
from tests.support.typed import typed_view

CM = "configmaps"
Seen = list[tuple[str, str, str | None]]


def cm(name: str, ns: str = "default", **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns}, "data": data}


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


@pytest.fixture
def cluster(clock: VirtualClock) -> Cluster:
    return Cluster(ClusterConfig(seed=3, retention=40), clock=clock)


@pytest.fixture
def informers(cluster: Cluster, clock: VirtualClock) -> Informers:
    factory = Informers(client=cluster.client("system:kube-controller-manager"))
    clock.add_probe(factory.busy)
    clock.add_probe(lambda: cluster.log.wake_pending)
    return factory


@pytest.fixture
async def running(informers: Informers) -> AsyncIterator[list[asyncio.Task[None]]]:
    tasks: list[asyncio.Task[None]] = []
    informers.start(lambda i: tasks.append(asyncio.create_task(i.run())))
    yield tasks
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def recorder(informer: Informer) -> Seen:
    """Record (type, name, data of the old version) of every delivery."""
    seen: Seen = []
    informer.add_handler(lambda t, o, old: seen.append(
        (t, o["metadata"]["name"], (old or {}).get("data", {}).get("v"))))
    return seen


async def test_lists_then_watches_and_delivers_old_versions(
        cluster: Cluster, clock: VirtualClock, informers: Informers,
        running: list[asyncio.Task[None]]) -> None:
    client = cluster.client("test")
    await client.create(CM, cm("before", v="0"))
    informer = informers.get(CM)
    seen = recorder(informer)
    await clock.run_until_settled()
    assert informer.synced and seen == [("ADDED", "before", None)]
    await client.patch(CM, "before", {"data": {"v": "1"}}, namespace="default")
    await client.create(CM, cm("after", "kube-system"))
    await client.delete(CM, "before", "default")
    await clock.run_until_settled()
    assert seen[1:] == [("MODIFIED", "before", "0"), ("ADDED", "after", None),
                        ("DELETED", "before", "1")]
    assert [o["metadata"]["name"] for o in informer.cache.list()] == ["after"]
    assert informer.cache.get("after", "kube-system") is not None
    assert informer.revision == cluster.store.revision


async def test_a_late_handler_gets_the_cache_and_one_watch_is_shared(
        cluster: Cluster, clock: VirtualClock, informers: Informers,
        running: list[asyncio.Task[None]]) -> None:
    await cluster.client("test").create(CM, cm("x"))
    first = informers.get(CM)
    await clock.run_until_settled()
    assert informers.get(CM) is first and len(running) == 1
    assert recorder(first) == [("ADDED", "x", None)]


async def test_indexes_follow_changes(cluster: Cluster, clock: VirtualClock,
                                      informers: Informers,
                                      running: list[asyncio.Task[None]]) -> None:
    informer = informers.get(CM)
    informer.cache.add_index("v", lambda o: [o.get("data", {}).get("v", "")])
    client = cluster.client("test")
    for name, v in (("a", "1"), ("b", "1"), ("c", "2")):
        await client.create(CM, cm(name, v=v))
    await clock.run_until_settled()
    names = lambda value: [o["metadata"]["name"] for o in informer.cache.by_index("v", value)]  # noqa: E731
    assert (names("1"), names("2")) == (["a", "b"], ["c"])
    await client.patch(CM, "a", {"data": {"v": "2"}}, namespace="default")
    await client.delete(CM, "c", "default")
    await clock.run_until_settled()
    assert (names("1"), names("2")) == (["b"], ["a"])
    assert [o["metadata"]["name"] for o in informer.cache.by_index("namespace", "default")] \
        == ["a", "b"]


async def test_an_expired_watch_relists_and_delivers_the_difference(
        cluster: Cluster, clock: VirtualClock, informers: Informers) -> None:
    client = cluster.client("test")
    for name in ("stays", "changes", "goes"):
        await client.create(CM, cm(name, v="0"))
    informer = informers.get(CM)
    seen = recorder(informer)
    task = asyncio.create_task(informer.run())
    await clock.run_until_settled()
    task.cancel()  # the informer falls behind: its watch stops
    await asyncio.gather(task, return_exceptions=True)
    await client.patch(CM, "changes", {"data": {"v": "1"}}, namespace="default")
    await client.delete(CM, "goes", "default")
    for i in range(60):  # more than the retained window of configmap events
        await client.create(CM, cm(f"new{i}"))
        await client.delete(CM, f"new{i}", "default")
    await client.create(CM, cm("arrives"))
    del seen[:]
    task = asyncio.create_task(informer.run())  # resumes at its revision: 410, relist
    await clock.run_until_settled()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert informer.relists == 1
    assert sorted(seen) == [("ADDED", "arrives", None), ("DELETED", "goes", "0"),
                            ("MODIFIED", "changes", "0")]
    assert [o["metadata"]["name"] for o in informer.cache.list()] == [
        "arrives", "changes", "stays"]


async def test_a_quiet_kind_is_not_relisted_while_others_fill_the_window(
        cluster: Cluster, clock: VirtualClock, informers: Informers,
        running: list[asyncio.Task[None]]) -> None:
    namespaces = informers.get("namespaces")
    seen = recorder(namespaces)
    await clock.run_until_settled()
    client = cluster.client("test")
    for i in range(200):  # five retention windows of another kind's writes
        await client.create(CM, cm(f"c{i}"))
    await client.create("namespaces", {"metadata": {"name": "late"}})
    await clock.run_until_settled()
    assert namespaces.relists == 0
    assert seen[-1] == ("ADDED", "late", None)


async def test_an_unserved_resource_is_refused(informers: Informers) -> None:
    with pytest.raises(ApiError) as e:
        informers.get("widgets.example.com")
    assert e.value.code == 404


async def test_a_broken_handler_does_not_starve_the_others(
        cluster: Cluster, clock: VirtualClock, informers: Informers,
        running: list[asyncio.Task[None]], caplog: pytest.LogCaptureFixture) -> None:
    informer = informers.get(CM)

    def broken(t: str, o: dict[str, Any], old: dict[str, Any] | None) -> None:
        raise KeyError("name")

    informer.add_handler(broken)
    seen = recorder(informer)
    await cluster.client("test").create(CM, cm("x"))
    await clock.run_until_settled()
    assert seen == [("ADDED", "x", None)]
    assert any("handler" in r.getMessage() and r.exc_info for r in caplog.records)


async def test_a_typed_view_parses_models_once_per_version(
        cluster: Cluster, clock: VirtualClock, informers: Informers,
        running: list[asyncio.Task[None]]) -> None:
    client = cluster.client("test")
    await client.create("deviceclasses.resource.k8s.io", {
        "metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {
            "expression": 'device.driver == "gpu.example.com"'}}]}})
    view = typed_view(informers.get("deviceclasses.resource.k8s.io"), DeviceClass)
    assert typed_view(informers.get("deviceclasses.resource.k8s.io"), DeviceClass) is view
    await clock.run_until_settled()
    gpu = view.get("gpu")
    assert isinstance(gpu, DeviceClass)
    assert gpu.spec and gpu.spec.selectors and gpu.spec.selectors[0].cel
    assert gpu.spec.selectors[0].cel.expression == 'device.driver == "gpu.example.com"'
    assert view.get("gpu") is gpu, "parsed once per resourceVersion"
    await client.patch("deviceclasses.resource.k8s.io", "gpu", {"metadata": {
        "labels": {"tier": "a"}}})
    await clock.run_until_settled()
    [changed] = view.list()
    assert changed is not gpu and changed.metadata
    assert changed.metadata.labels == {"tier": "a"}
    await client.delete("deviceclasses.resource.k8s.io", "gpu")
    await clock.run_until_settled()
    assert view.list() == [] and view.get("gpu") is None
