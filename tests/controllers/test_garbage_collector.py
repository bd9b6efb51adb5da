"""The garbage collector on a real in-process cluster: Background, Foreground, Orphan.

The control plane runs on a virtual clock; each step waits for the work to settle.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from controllers.garbage_collector import GarbageCollector
from fakeapi.cluster import Cluster
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.errors import ApiError
from tests.support.plane import running_plane

CM = "configmaps"


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane("garbage-collector", seed=1) as p:
        yield p


@pytest.fixture
def cluster(plane: ControlPlane) -> Cluster:
    return plane.cluster


@pytest.fixture
def eventually(plane: ControlPlane) -> Callable[[Callable[[], Awaitable[bool]]],
                                                   Awaitable[None]]:
    async def settled_then(check: Callable[[], Awaitable[bool]]) -> None:
        """Let the controllers settle, then `check` must hold (no polling)."""
        await plane.settle()
        assert await check(), "condition not reached once the work settled"

    return settled_then


async def _exists(cluster: Cluster, name: str) -> bool:
    try:
        await cluster.client("test").get(CM, name, "default")
        return True
    except ApiError as e:
        assert e.code == 404
        return False


async def _make(cluster: Cluster, name: str, *owners: dict) -> dict:
    meta: dict = {"name": name, "namespace": "default"}
    if owners:
        meta["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"],
             "uid": o["metadata"]["uid"]} for o in owners]
    return await cluster.client("test").create(CM, {"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": meta})


@pytest.mark.parametrize("policy,dependent_survives", [
    ("Background", False), ("Foreground", False), ("Orphan", True)])
async def test_owner_deletion_policies(cluster: Cluster, eventually, policy: str,
                                       dependent_survives: bool) -> None:
    owner = await _make(cluster, "owner")
    await _make(cluster, "dep", owner)
    await cluster.client("test").delete(CM, "owner", "default", propagation_policy=policy)

    async def settled() -> bool:
        return not await _exists(cluster, "owner") and (
            await _exists(cluster, "dep")) == dependent_survives

    await eventually(settled)
    if dependent_survives:
        dep = await cluster.client("test").get(CM, "dep", "default")
        assert "ownerReferences" not in dep["metadata"]


async def test_foreground_keeps_owner_until_dependents_are_gone(cluster: Cluster,
                                                                eventually) -> None:
    owner = await _make(cluster, "owner")
    dep = await _make(cluster, "dep", owner)
    client = cluster.client("test")
    await client.patch(CM, "dep", {"metadata": {"finalizers": ["example.com/hold"]}},
                       namespace="default")
    await client.delete(CM, "owner", "default", propagation_policy="Foreground")
    await eventually(lambda: _marked(cluster, "dep"))
    stored = await client.get(CM, "owner", "default")
    assert stored["metadata"]["finalizers"] == ["foregroundDeletion"]
    await client.patch(CM, "dep", {"metadata": {"finalizers": None}}, namespace="default")
    await eventually(lambda: _gone(cluster, "owner"))
    assert dep["metadata"]["uid"]


async def _marked(cluster: Cluster, name: str) -> bool:
    obj = await cluster.client("test").get(CM, name, "default")
    return bool(obj["metadata"].get("deletionTimestamp"))


async def _gone(cluster: Cluster, name: str) -> bool:
    return not await _exists(cluster, name)


async def test_one_owner_left_keeps_the_dependent(cluster: Cluster, eventually) -> None:
    a = await _make(cluster, "a")
    b = await _make(cluster, "b")
    await _make(cluster, "dep", a, b)
    await cluster.client("test").delete(CM, "a", "default")

    async def dangling_dropped() -> bool:
        dep = await cluster.client("test").get(CM, "dep", "default")
        return [r["name"] for r in dep["metadata"]["ownerReferences"]] == ["b"]

    await eventually(dangling_dropped)


async def test_dependent_of_a_missing_owner_is_deleted(cluster: Cluster, eventually) -> None:
    ghost = {"metadata": {"name": "ghost", "uid": "00000000-0000-4000-8000-000000000000"}}
    await _make(cluster, "orphaned", ghost)
    await eventually(lambda: _gone(cluster, "orphaned"))


async def test_bad_propagation_policy_is_rejected(cluster: Cluster) -> None:
    await _make(cluster, "x")
    with pytest.raises(ApiError) as e:
        await cluster.client("test").delete(CM, "x", "default", propagation_policy="Sideways")
    assert e.value.code == 422
    assert await _exists(cluster, "x")


async def test_indexes_shrink_when_objects_go(plane: ControlPlane) -> None:
    gc_ = plane.components["garbage-collector"]
    assert isinstance(gc_, GarbageCollector)
    owner = {"metadata": {"name": "o", "namespace": "default", "uid": "u-owner"}}
    dep = {"metadata": {"name": "d", "namespace": "default", "uid": "u-dep",
                        "ownerReferences": [{"uid": "u-owner", "name": "o"}]}}
    before = (dict(gc_.dependents), dict(gc_.owners), dict(gc_.uids))
    assert gc_.observe(CM, "ADDED", owner) == []
    assert gc_.observe(CM, "ADDED", dep) == []
    assert gc_.dependents["u-owner"] == {(CM, "d", "default")}
    # a dependent's change concerns its owner only once the owner waits for it
    assert gc_.observe(CM, "DELETED", dep) == ["u-dep"]
    assert gc_.observe(CM, "ADDED", dep) == []
    deleting = {"metadata": {**owner["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z",
                             "finalizers": ["foregroundDeletion"]}}
    assert gc_.observe(CM, "MODIFIED", deleting) == ["u-owner"]
    assert gc_.observe(CM, "DELETED", dep) == ["u-owner", "u-dep"]
    assert gc_.observe(CM, "DELETED", deleting) == ["u-owner"]
    assert (gc_.dependents, gc_.owners, gc_.uids, gc_.deleting) == (*before, set())
