"""The in-process Client."""

from __future__ import annotations

from typing import Any

import orjson

from fakeapi.cluster import Cluster, ClusterConfig

CM = "configmaps"


async def test_list_without_copy_returns_the_stored_objects() -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    client = cluster.client("test")
    for ns in ("default", "kube-system"):
        for name, app in (("a", "x"), ("b", "y"), ("c", "x")):
            await client.create(CM, {"metadata": {"name": name, "namespace": ns,
                                                  "labels": {"app": app}},
                                     "data": {"k": f"{ns}/{name}"}})
    await client.delete(CM, "b", "default")
    for namespace, selector in (("default", ""), (None, ""), (None, "app=x"),
                                ("kube-system", "app=y"), ("kube-public", "")):
        copied = await client.list(CM, namespace, label_selector=selector)
        shared = await client.list(CM, namespace, label_selector=selector, copy=False)
        assert shared == copied
        kind = client.kind(CM)
        for obj, copy in zip(shared, copied, strict=True):
            meta = obj["metadata"]
            stored = cluster.registry.get(kind, meta["namespace"], meta["name"]).object
            assert obj is stored
            assert copy is not stored
    assert len(await client.list(CM, None, copy=False)) == 5


async def test_writes_without_copy_return_the_stored_objects() -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    client = cluster.client("test")
    kind = client.kind(CM)

    def stored(obj: dict[str, Any]) -> dict[str, Any]:
        return cluster.registry.get(kind, "default", obj["metadata"]["name"]).object

    writes = [
        lambda copy: client.create(CM, {"metadata": {"name": f"new-{str(copy).lower()}",
                                                     "namespace": "default"}}, copy=copy),
        lambda copy: client.update(CM, {"metadata": {"name": "new-true",
                                                     "namespace": "default"},
                                        "data": {"k": str(copy)}}, copy=copy),
        lambda copy: client.patch(CM, "new-true", {"data": {"p": str(copy)}}, namespace="default",
                                  copy=copy),
    ]
    for write in writes:
        shared = await write(False)
        assert shared is stored(shared)
        copied = await write(True)
        assert copied == stored(copied) and copied is not stored(copied)
    copied["data"]["k"] = "changed by the caller"  # a copy is the caller's own
    assert stored(copied)["data"]["k"] == "True"


async def test_binding_leaves_the_stored_pod_it_replaces_alone() -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    client = cluster.client("test")
    before = await client.create("pods", {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}, copy=False)
    frozen = orjson.dumps(before)
    bound = await client.create_subresource("pods", "p", "binding", {
        "metadata": {"name": "p", "annotations": {"a": "b"}},
        "target": {"kind": "Node", "name": "n1"}}, namespace="default", copy=False)
    assert bound["spec"]["nodeName"] == "n1" and bound["metadata"]["annotations"] == {"a": "b"}
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    assert orjson.dumps(before) == frozen  # the version a watcher may still hold
