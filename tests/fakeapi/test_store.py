"""The log and the materialized view: revisions, snapshots, compaction, replay."""

from __future__ import annotations

import pytest

from fakeapi.clock import VirtualClock
from fakeapi.log import ADDED, DELETED, MODIFIED, CompactedError, EventLog
from fakeapi.store import Store


def _obj(name: str, ns: str = "default", **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, **extra}


def _store(retention: int = 1000) -> Store:
    return Store(log=EventLog(retention=retention), clock=VirtualClock())


def test_every_commit_is_one_event_with_the_next_revision() -> None:
    store = _store()
    revs = [store.commit(ADDED, "configmaps", _obj(f"c{i}"), actor="t").revision
            for i in range(5)]
    assert revs == [1, 2, 3, 4, 5]
    assert store.get("configmaps", "default", "c3").object["metadata"]["resourceVersion"] == "4"
    assert [e.actor for e in store.log] == ["t"] * 5


def test_scan_orders_by_namespace_then_name_and_filters_namespace() -> None:
    store = _store()
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("a-b", "q")]:
        store.commit(ADDED, "configmaps", _obj(name, ns), actor="t")
    keys = [e.key for e in store.scan("configmaps")]
    assert keys == ["a-b/q", "a/y", "a/z", "b/x"]
    assert [e.name for e in store.scan("configmaps", "a")] == ["y", "z"]


def test_snapshot_at_an_older_revision_sees_old_versions() -> None:
    store = _store()
    store.commit(ADDED, "configmaps", _obj("a", data={"v": "1"}), actor="t")
    store.commit(ADDED, "configmaps", _obj("b"), actor="t")
    at = store.revision
    store.commit(MODIFIED, "configmaps", _obj("a", data={"v": "2"}), actor="t")
    store.commit(DELETED, "configmaps", _obj("b"), actor="t")
    store.commit(ADDED, "configmaps", _obj("c"), actor="t")
    old = list(store.scan("configmaps", at_revision=at))
    names = [o["metadata"]["name"] if isinstance(o, dict) else o.name for o in old]
    assert names == ["a", "b"]
    first = old[0] if isinstance(old[0], dict) else old[0].object
    assert first["data"] == {"v": "1"}


def test_compaction_expires_old_revisions() -> None:
    store = _store(retention=4)
    for i in range(10):
        store.commit(ADDED, "configmaps", _obj(f"c{i}"), actor="t")
    assert store.log.oldest_revision > 0
    with pytest.raises(CompactedError):
        store.log.since(0)
    with pytest.raises(CompactedError):
        list(store.scan("configmaps", at_revision=1))
    assert len(list(store.scan("configmaps"))) == 10


def test_replay_rebuilds_the_same_view() -> None:
    store = _store()
    store.commit(ADDED, "configmaps", _obj("a"), actor="t")
    store.commit(MODIFIED, "configmaps", _obj("a", data={"k": "v"}), actor="u")
    store.commit(ADDED, "configmaps", _obj("b"), actor="t")
    store.commit(DELETED, "configmaps", _obj("b"), actor="t")
    records = [e.record() for e in store.log]
    again = _store()
    again.replay(records)
    assert again.revision == store.revision
    assert [e.raw for e in again.scan("configmaps")] == [e.raw for e in store.scan("configmaps")]
    assert [e.actor for e in again.log] == ["t", "u", "t", "t"]
