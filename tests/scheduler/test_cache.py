"""The scheduler cache's rule for reusing a verdict: each event named in `scheduler.cache`'s
docstring drops exactly the verdicts it can change, and the keyed memos recompute on any
change of their key."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fakeapi.storage.log import ADDED, DELETED, MODIFIED
from scheduler.allocator import AllocatorFeatures
from scheduler.cache import KeyedMemo, SchedulerCache
from scheduler.equivalence import Verdict

Obj = dict[str, Any]
NODES = ("n1", "n2", "n3")


def node(name: str, version: str = "1") -> Obj:
    return {"metadata": {"name": name, "resourceVersion": version},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def pod(name: str, node_name: str = "") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": spec}


def claim(name: str, allocation: Obj | None = None) -> Obj:
    body: Obj = {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                 "spec": {"devices": {"requests": []}}}
    if allocation is not None:
        body["status"] = {"allocation": allocation}
    return body


def on_node(node_name: str) -> Obj:
    """An allocation of one device local to `node_name`."""
    return {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                     "pool": node_name, "device": "gpu-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}


@pytest.fixture
def cache() -> SchedulerCache:
    """A cache that knows three nodes and holds a verdict for each, for one shape."""
    c = SchedulerCache(features=AllocatorFeatures(), node_allocatable=False)
    for name in NODES:
        c.node_changed(ADDED, node(name), None)
    c.equivalence.use(b"shape")
    for name in NODES:
        c.equivalence.put(name, Verdict(rejection=None, results=[], score=50.0))
    return c


def kept(cache: SchedulerCache) -> list[str]:
    """The nodes whose verdict is still there."""
    verdicts = cache.equivalence.use(b"shape")
    return [n for n in NODES if n in verdicts]


def test_the_nodes_are_kept_in_name_order(cache: SchedulerCache) -> None:
    cache.node_changed(ADDED, node("n0"), None)
    assert cache.node_names == ["n0", "n1", "n2", "n3"]
    assert cache.capacity("n0")["cpu"] == 4
    cache.node_changed(DELETED, node("n0"), None)
    assert cache.node_names == ["n1", "n2", "n3"] and cache.capacity("n0") == {}


def test_a_node_event_drops_that_nodes_verdict(cache: SchedulerCache) -> None:
    cache.node_changed(MODIFIED, node("n2", version="2"), node("n2"))
    assert kept(cache) == ["n1", "n3"]


def test_a_pod_counting_on_a_node_drops_its_verdict(cache: SchedulerCache) -> None:
    assert cache.pod_changed(ADDED, pod("p", "n1")) is False
    assert kept(cache) == ["n2", "n3"] and cache.assumed("default/p")
    cache.equivalence.put("n1", Verdict(rejection=None, results=[], score=1.0))
    assert cache.pod_changed(DELETED, pod("p", "n1")) is True  # room for others
    assert kept(cache) == ["n2", "n3"]


def test_assuming_and_forgetting_a_pod_drops_its_nodes_verdict(cache: SchedulerCache) -> None:
    cache.assume("default/p", "n3", pod("p"), [])
    assert kept(cache) == ["n1", "n2"] and cache.usage.pods("n3") == 1
    cache.equivalence.put("n3", Verdict(rejection=None, results=[], score=1.0))
    cache.forget_pod("default/p")
    assert kept(cache) == ["n1", "n2"] and cache.usage.pods("n3") == 0


def test_a_claim_allocated_on_a_node_drops_that_nodes_verdict(cache: SchedulerCache) -> None:
    cache.claim_changed(ADDED, claim("c", on_node("n1")))
    assert kept(cache) == ["n2", "n3"]
    cache.equivalence.put("n1", Verdict(rejection=None, results=[], score=1.0))
    cache.claim_changed(MODIFIED, claim("c"))  # deallocated: its device is free again
    assert kept(cache) == ["n2", "n3"]


def test_a_claim_not_local_to_a_node_drops_every_verdict(cache: SchedulerCache) -> None:
    cache.claim_changed(ADDED, claim("c", {"devices": {"results": []}}))
    assert kept(cache) == []


def test_an_unallocated_claim_drops_nothing(cache: SchedulerCache) -> None:
    cache.claim_changed(ADDED, claim("c"))
    assert kept(cache) == list(NODES)


def test_a_claim_in_flight_keeps_its_devices_until_prebind_ends(
        cache: SchedulerCache) -> None:
    cache.reserve_claim("uid-c", on_node("n2"))
    assert cache.claim_in_flight("uid-c") and kept(cache) == ["n1", "n3"]
    cache.claim_changed(MODIFIED, claim("c"))  # the informer hasn't seen PreBind's write
    assert "uid-c" in cache.allocated
    cache.end_in_flight("uid-c")
    assert not cache.claim_in_flight("uid-c") and "uid-c" in cache.allocated
    cache.unreserve_claim("uid-c")
    assert "uid-c" not in cache.allocated


def test_an_allocator_input_drops_every_verdict_and_changes_the_dra_key(
        cache: SchedulerCache) -> None:
    before = cache.dra_key(node("n1"), [])
    cache.class_changed(ADDED, {"metadata": {"name": "gpu.example.com"}, "spec": {}})
    assert kept(cache) == [] and cache.dra_key(node("n1"), []) != before


def test_a_new_shape_drops_every_verdict(cache: SchedulerCache) -> None:
    assert cache.equivalence.use(b"another shape") == {}


def test_a_keyed_memo_computes_again_when_its_key_changes() -> None:
    memo: KeyedMemo[int] = KeyedMemo()
    calls: list[str] = []

    def compute(value: int) -> Callable[[], int]:
        def run() -> int:
            calls.append("computed")
            return value
        return run

    assert memo.get("n1", ("rv1", b"a"), compute(1)) == 1
    assert memo.get("n1", ("rv1", b"a"), compute(2)) == 1  # same key: reused
    assert memo.get("n1", ("rv2", b"a"), compute(3)) == 3  # the node changed
    memo.drop("n1")
    assert memo.get("n1", ("rv2", b"a"), compute(4)) == 4
    assert calls == ["computed"] * 3
