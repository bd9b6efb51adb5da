"""The log and the materialized view: revisions, snapshots, compaction, replay."""

from __future__ import annotations

import pytest

from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.storage.log import CompactedError, Event, EventLog
from fakeapi.storage.store import Store


def _obj(name: str, ns: str = "default", **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, **extra}


def _store(retention: int = 1000) -> Store:
    return Store(log=EventLog(retention=retention), clock=VirtualClock())


def _current(store: Store, resource: str, namespace: str | None = None) -> list[Event]:
    """A scan at the current revision: every item is the object's latest Event."""
    items = list(store.scan(resource, namespace))
    assert all(isinstance(item, Event) for item in items)
    return [item for item in items if isinstance(item, Event)]


def test_every_commit_is_one_event_with_the_next_revision() -> None:
    store = _store()
    revs = [store.commit(ADDED, "configmaps", _obj(f"c{i}"), actor="t").revision
            for i in range(5)]
    assert revs == [1, 2, 3, 4, 5]
    third = store.get("configmaps", "default", "c3")
    assert third is not None and third.object["metadata"]["resourceVersion"] == "4"
    assert [e.actor for e in store.log] == ["t"] * 5


def test_scan_orders_by_namespace_then_name_and_filters_namespace() -> None:
    store = _store()
    for ns, name in [("b", "x"), ("a", "z"), ("a", "y"), ("a-b", "q")]:
        store.commit(ADDED, "configmaps", _obj(name, ns), actor="t")
    keys = [e.key for e in _current(store, "configmaps")]
    assert keys == ["a-b/q", "a/y", "a/z", "b/x"]
    assert [e.name for e in _current(store, "configmaps", "a")] == ["y", "z"]


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
    assert ([e.raw for e in _current(again, "configmaps")]
            == [e.raw for e in _current(store, "configmaps")])
    assert [e.actor for e in again.log] == ["t", "u", "t", "t"]


def _flood(store: Store, count: int) -> None:
    """Commit `count` ConfigMaps: writes of another resource than the namespaces watched."""
    for i in range(count):
        store.commit(ADDED, "configmaps", _obj(f"flood-{store.revision}-{i}"), actor="t")


def _ns(name: str, **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, **extra}


# Namespaces a and b exist at revision 2; then each step is a namespace change ("modify a")
# or a flood of 3 windows of ConfigMaps; then the namespaces are read as of revision 2.
@pytest.mark.parametrize(("steps", "expired"), [
    (["flood"], False),
    (["flood", "modify a"], False),
    (["flood", "modify a", "flood"], True),
    (["modify a", "flood"], True),
    (["flood", "modify a", "modify a"], False),
], ids=["quiet", "changed-after-the-window-moved", "that-change-compacted",
        "changed-then-compacted", "two-retained-changes"])
def test_a_snapshot_expires_only_when_its_own_resources_changes_are_gone(
        steps: list[str], expired: bool) -> None:
    store = _store(retention=4)
    store.commit(ADDED, "namespaces", _ns("a"), actor="t")
    store.commit(ADDED, "namespaces", _ns("b"), actor="t")
    at = store.revision
    for step in steps:
        if step == "flood":
            _flood(store, 12)
        else:
            store.commit(MODIFIED, "namespaces", _ns("a", metadata={
                "name": "a", "labels": {"rev": str(store.revision + 1)}}), actor="t")
    assert store.log.oldest_revision > at
    if expired:
        with pytest.raises(CompactedError, match=rf"too old resource version: {at} \(\d+\)"):
            list(store.scan("namespaces", at_revision=at))
        with pytest.raises(CompactedError):
            store.log.resource_since("namespaces", at)
        return
    old = [o if isinstance(o, dict) else o.object for o in
           store.scan("namespaces", at_revision=at)]
    assert old == [_ns("a", metadata={"name": "a", "resourceVersion": "1"}),
                   _ns("b", metadata={"name": "b", "resourceVersion": "2"})]


def test_a_cursor_at_the_newest_compacted_change_missed_nothing() -> None:
    store = _store(retention=4)
    store.commit(ADDED, "namespaces", _ns("a"), actor="t")
    at = store.revision
    _flood(store, 12)
    assert store.log.last_change("namespaces") == at  # compacted, remembered
    store.log.ensure_retained("namespaces", at)
    assert store.log.resource_since("namespaces", at) == []
    with pytest.raises(CompactedError):
        store.log.ensure_retained("namespaces", at - 1)
    store.log.ensure_retained("never-written", 0)
