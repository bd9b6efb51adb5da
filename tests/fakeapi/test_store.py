"""The log and the materialized view: revisions, snapshots, compaction, replay."""

from __future__ import annotations

import pytest

from fakeapi.machinery import jsonio
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.storage.log import CompactedError, Event, EventLog
from fakeapi.storage.store import ReplayError, Store


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


def _history(store: Store) -> None:
    """Creates, updates and deletes of two resources, a key deleted and made again, more
    events than a small replay batch."""
    for i in range(6):
        store.commit(ADDED, "configmaps", _obj(f"c{i}", "b" if i % 2 else "a"), actor="t")
    store.commit(ADDED, "namespaces", _ns("a"), actor="t")
    for round_ in range(3):
        for i in range(0, 6, 2):
            store.commit(MODIFIED, "configmaps", _obj(f"c{i}", "a", data={"r": str(round_)}),
                         actor="u")
        store.commit(DELETED, "configmaps", _obj("c1", "b"), actor="t")
        store.commit(ADDED, "configmaps", _obj("c1", "b", data={"r": str(round_)}), actor="t")
    store.commit(DELETED, "configmaps", _obj("c3", "b"), actor="t")
    store.commit(MODIFIED, "namespaces", _ns("a", metadata={"name": "a", "labels": {"x": "1"}}),
                 actor="t")


def _state(store: Store) -> tuple[object, ...]:
    """What a replay must rebuild: each resource's objects in key order and newest change."""
    return (
        {r: [(e.key, e.raw) for e in _current(store, r)] for r in ("configmaps", "namespaces")},
        store.count("configmaps", "a"),
        [store.log.last_change(r) for r in ("configmaps", "namespaces")])


def _window(store: Store) -> list[tuple[int, bytes | None, str]]:
    return [(e.revision, e.prev_raw, e.actor) for e in store.log]


@pytest.mark.parametrize("batch", [1, 4, 7, 4096])
@pytest.mark.parametrize("retention", [1000, 8])
def test_a_batched_replay_rebuilds_what_was_committed(
        monkeypatch: pytest.MonkeyPatch, batch: int, retention: int) -> None:
    monkeypatch.setattr("fakeapi.storage.store.REPLAY_BATCH", batch)
    store = _store()
    _history(store)
    records = [e.record() for e in store.log]
    again = _store(retention)
    again.replay(records)
    assert _state(again) == _state(store) and again.revision == store.revision
    window = _window(again)  # the newest events, within the bounds, as committed
    assert window == _window(store)[-len(window):]
    assert min(retention, len(records)) <= len(window) <= retention + retention // 4
    assert again.log.oldest_revision == store.revision - len(window)
    assert again.log.retained_bytes == sum(len(e.raw) for e in again.log)
    for event in again.log:  # the view holds each live key's newest event itself
        live = again.get(event.resource, event.namespace, event.name)
        newest = [e for e in again.log if e.key == event.key and e.resource == event.resource]
        assert (live is event) == (event is newest[-1] and event.type != DELETED)


def _bad(record: bytes, how: str) -> bytes:
    head, _, raw = record.partition(b"\n")
    return {
        "revision": head.replace(b'{"r":10,', b'{"r":11,'),
        "bool revision": head.replace(b'{"r":10,', b'{"r":true,'),
        "type": head.replace(b'"t":"MODIFIED"', b'"t":"BOGUS"'),
        "head": b"{not json",
        "missing key": head.replace(b',"a":"u"', b""),
        "object": head + b"\n" + raw[:-1] + b"]",
    }[how] + (b"" if how == "object" else b"\n" + raw)


@pytest.mark.parametrize(("how", "why"), [
    ("revision", "it holds revision 11 where 10 was due"),
    ("bool revision", "not an event record (bad revision, type or object)"),
    ("type", "not an event record (bad revision, type or object)"),
    ("head", "not an event record (JSONDecodeError"),
    ("missing key", "not an event record (KeyError: 'a')"),
    ("object", "not an event record (bad revision, type or object)"),
])
def test_a_bad_record_is_refused_by_number_and_the_good_ones_before_it_stay(
        monkeypatch: pytest.MonkeyPatch, how: str, why: str) -> None:
    monkeypatch.setattr("fakeapi.storage.store.REPLAY_BATCH", 4)  # record 10: a batch's 2nd
    store = _store()
    _history(store)
    records = [e.record() for e in store.log]
    assert b'"r":10,' in records[9] and b'"t":"MODIFIED"' in records[9]
    records[9] = _bad(records[9], how)
    again = _store()
    with pytest.raises(ReplayError) as refused:
        again.replay(records)
    assert refused.value.record == 10 and why in refused.value.why
    assert again.revision == 9 and [e.revision for e in again.log] == list(range(1, 10))
    upto = _store()
    upto.replay(records[:9])
    assert _state(again) == _state(upto) and _window(again) == _window(upto)


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


@pytest.mark.parametrize(("data", "hazard"), [
    ({"deep": [[[[[[[[[[[[[[[[[[[[[[[[["x"]]]]]]]]]]]]]]]]]]]]]]]]]}, True),
    ({"flat": [["x"], ["y"]] * 20}, False),
], ids=["25-lists-deep", "shallow"])
def test_a_replay_notes_a_stored_hazard(monkeypatch: pytest.MonkeyPatch, data: dict,
                                        hazard: bool) -> None:
    """A replayed object with a run of closing lists makes this process's encodings take the
    stdlib, as committing it does (`machinery.jsonio`)."""
    monkeypatch.setattr(jsonio, "_stored_hazard", False)  # restored to what it was after
    store = _store()
    for i in range(5):
        store.commit(ADDED, "configmaps", _obj(f"c{i}", data={"k": "v"}), actor="t")
    store.commit(ADDED, "configmaps", _obj("odd", data=data), actor="t")
    jsonio._stored_hazard = False  # what committing it noted: the replay must note it again
    _store().replay([e.record() for e in store.log])
    assert jsonio.hazard() is hazard
