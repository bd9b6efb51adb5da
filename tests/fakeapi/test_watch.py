"""fakeapi.storage.watch in process: quiet watchers never expire for other kinds' writes, and
timeouts and bookmarks run on the virtual clock (no real waiting)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import RealClock, VirtualClock
from fakeapi.machinery.watchtypes import ADDED, MODIFIED
from fakeapi.registry.kinds import served_kinds
from fakeapi.registry.rest import Kind
from fakeapi.storage.log import Event, EventLog
from fakeapi.storage.store import Store
from fakeapi.storage.watch import MAX_BATCH_BYTES, WatchSpec, notices

RETENTION = 8
KINDS = served_kinds()


def _kind(resource_id: str) -> Kind:
    kind = KINDS.by_id(resource_id)
    assert kind is not None
    return kind


NAMESPACES = _kind("namespaces")


@dataclasses.dataclass
class Watcher:
    """One watch run as a task; what it saw, as (type, name or revision, clock time)."""

    clock: VirtualClock
    seen: list[tuple[str, str, float]] = dataclasses.field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def start(self, store: Store, spec: WatchSpec) -> Watcher:
        """Run the watch until it ends."""
        self.task = asyncio.create_task(self._run(store, spec))
        return self

    async def _run(self, store: Store, spec: WatchSpec) -> None:
        async for batch in notices(store, spec):
            for type_, item in batch:
                self.seen.append((type_, _brief(type_, item), self.clock.monotonic()))

    @property
    def ended(self) -> bool:
        """The watch stream is over (timeout or ERROR)."""
        assert self.task is not None
        return self.task.done()

    def stop(self) -> None:
        """Cancel the watch task."""
        assert self.task is not None
        self.task.cancel()


def _brief(type_: str, item: Event | dict[str, Any]) -> str:
    if isinstance(item, Event):
        return item.name
    if type_ == "ERROR":
        return str(item["code"])
    return item["metadata"]["resourceVersion"]


def _setup() -> tuple[Store, VirtualClock]:
    clock = VirtualClock()
    store = Store(log=EventLog(retention=RETENTION, clock=clock), clock=clock)
    clock.add_probe(lambda: store.log.wake_pending)
    return store, clock


def _commit(store: Store, resource: str, name: str, type_: str = ADDED) -> Event:
    kind = _kind(resource)
    meta: dict[str, Any] = {"name": name}
    if kind.namespaced:
        meta["namespace"] = "default"
    return store.commit(type_, resource, {"apiVersion": kind.api_version, "kind": kind.kind,
                                          "metadata": meta}, actor="test")


def _flood(store: Store, windows: int = 3) -> None:
    """Fill more than `windows` retention windows with ConfigMap writes (no await between)."""
    for i in range(windows * RETENTION + 1):
        _commit(store, "configmaps", f"flood-{store.revision}-{i}")


@pytest.mark.parametrize("started", ["before-the-flood", "after-the-flood"])
@pytest.mark.parametrize(("missed", "expected"), [
    (False, [("ADDED", "later")]),
    (True, [("ERROR", "410")]),
], ids=["quiet", "missed-its-own-event"])
async def test_a_quiet_watcher_sits_through_other_kinds_writes(
        started: str, missed: bool, expected: list[tuple[str, str]]) -> None:
    store, clock = _setup()
    _commit(store, "namespaces", "first")
    cursor = store.revision
    spec = WatchSpec(kind=NAMESPACES, resource_version=str(cursor))
    watcher = Watcher(clock)
    if started == "before-the-flood":
        watcher.start(store, spec)
        await clock.run_until_settled()
    if missed:  # a namespace event after the cursor that the flood compacts away
        _commit(store, "namespaces", "missed")
    _flood(store)
    assert store.log.oldest_revision > cursor + RETENTION
    if started == "after-the-flood":
        watcher.start(store, spec)
    _commit(store, "namespaces", "later")
    await clock.run_until_settled()
    assert [(t, name) for t, name, _ in watcher.seen] == expected
    assert watcher.ended == missed  # 410 ends the stream; the quiet watcher watches on
    watcher.stop()


async def test_a_quiet_watcher_follows_its_kind_across_many_windows() -> None:
    store, clock = _setup()
    watcher = Watcher(clock).start(store, WatchSpec(kind=NAMESPACES))
    await clock.run_until_settled()
    names = []
    for i in range(5):
        _flood(store)
        names.append(_commit(store, "namespaces", f"ns-{i}").name)
        if i % 2:
            _commit(store, "namespaces", f"ns-{i}", MODIFIED)
            names.append(f"ns-{i}")
        await clock.run_until_settled()
    assert [name for _, name, _ in watcher.seen] == names
    assert not watcher.ended
    watcher.stop()


@pytest.mark.parametrize("events_at", [[], [10.0, 29.5]], ids=["idle", "with-events"])
async def test_timeout_ends_the_watch_on_the_virtual_clock(events_at: list[float]) -> None:
    store, clock = _setup()
    watcher = Watcher(clock).start(store, WatchSpec(kind=NAMESPACES, timeout=30))
    await clock.run_until_settled()
    for at in events_at:  # events don't push the deadline back
        await clock.advance(at - clock.monotonic())
        _commit(store, "namespaces", f"at-{at}")
    await clock.advance(30 - 0.001 - clock.monotonic())
    assert not watcher.ended
    await clock.advance(0.001)
    assert watcher.ended
    assert [(t, at) for t, _, at in watcher.seen] == [("ADDED", at) for at in events_at]
    assert clock.next_deadline() is None  # nothing left behind on the clock


async def test_bookmarks_come_every_interval_with_the_current_revision() -> None:
    store, clock = _setup()
    _commit(store, "namespaces", "first")
    spec = WatchSpec(kind=NAMESPACES, resource_version=str(store.revision),
                     allow_bookmarks=True, bookmark_interval=60, timeout=1800)
    watcher = Watcher(clock).start(store, spec)
    await clock.advance(59.999)
    assert watcher.seen == []
    await clock.advance(0.001)
    _commit(store, "configmaps", "other-kind")  # moves the revision, not this watch
    await clock.advance(60)
    _commit(store, "namespaces", "second")
    await clock.advance(60)
    assert watcher.seen == [("BOOKMARK", "1", 60.0), ("BOOKMARK", "2", 120.0),
                            ("ADDED", "second", 120.0), ("BOOKMARK", "3", 180.0)]
    watcher.stop()


async def test_without_bookmarks_only_the_timeout_is_on_the_clock() -> None:
    store, clock = _setup()
    watcher = Watcher(clock).start(store, WatchSpec(kind=NAMESPACES, bookmark_interval=1,
                                                    timeout=100))
    await clock.run_until_settled()
    assert clock.next_deadline() == 100
    await clock.advance(99)
    assert watcher.seen == []
    watcher.stop()


async def test_on_the_real_clock_the_timeout_is_real_time() -> None:
    """What `fakeapi serve` runs on: a Cluster without a clock gets the real one."""
    assert isinstance(Cluster(ClusterConfig()).clock, RealClock)
    store = Store(log=EventLog(), clock=RealClock())
    loop = asyncio.get_running_loop()
    started = loop.time()
    batches = [batch async for batch in notices(store, WatchSpec(kind=NAMESPACES, timeout=0.05))]
    assert batches == []
    assert 0.04 <= loop.time() - started < 2


@pytest.mark.parametrize(("timeout", "expected"), [
    (30, [28.0]),  # well inside the first interval: only the pre-timeout bookmark
    (100, [60.0, 98.0]),  # the periodic one, then 2 s before the deadline
    (1.5, []),  # the pre-timeout moment has passed before the watch began
], ids=["short", "long", "too-short"])
async def test_a_bookmark_comes_two_seconds_before_the_deadline(
        timeout: float, expected: list[float]) -> None:
    """Upstream's cacheWatcher.nextBookmarkTime: informers resume from a fresh revision."""
    store, clock = _setup()
    _commit(store, "namespaces", "first")
    spec = WatchSpec(kind=NAMESPACES, resource_version=str(store.revision),
                     allow_bookmarks=True, bookmark_interval=60, timeout=timeout)
    watcher = Watcher(clock).start(store, spec)
    await clock.advance(timeout)
    assert watcher.ended
    assert [(t, at) for t, _, at in watcher.seen] == [("BOOKMARK", at) for at in expected]


@pytest.mark.parametrize(("initial", "rv", "expected"), [
    (None, "", ["a", "b", "later"]),  # legacy: rv unset sends the state first
    (False, "", ["later"]),  # sendInitialEvents=false: from now, no state
    (False, "0", ["later"]),
    (True, "", ["a", "b", "later"]),
], ids=["unset", "false", "false-rv-0", "true"])
async def test_send_initial_events_decides_whether_the_state_comes_first(
        initial: bool | None, rv: str, expected: list[str]) -> None:
    store, clock = _setup()
    _commit(store, "namespaces", "a")
    _commit(store, "namespaces", "b")
    watcher = Watcher(clock).start(store, WatchSpec(kind=NAMESPACES, resource_version=rv,
                                                    send_initial_events=initial))
    await clock.run_until_settled()
    _commit(store, "namespaces", "later")
    await clock.run_until_settled()
    assert [name for t, name, _ in watcher.seen if t != "BOOKMARK"] == expected
    watcher.stop()


async def test_batches_are_bounded_by_bytes() -> None:
    """A watcher far behind gets its backlog a chunk at a time, never as one huge chunk."""
    store, clock = _setup()
    kind = _kind("configmaps")
    big = "x" * 300_000
    for i in range(10):
        store.commit(ADDED, "configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": f"big-{i}", "namespace": "default"}, "data": {"d": big}}, actor="test")
    sizes = []
    async for batch in notices(store, WatchSpec(kind=kind, timeout=0)):
        sizes.append(sum(len(e.raw) for _, e in batch if isinstance(e, Event)))
    assert len(sizes) == 3 and sum(sizes) > 10 * 300_000  # 4 + 4 + 2 objects
    assert max(sizes) < MAX_BATCH_BYTES + 300_200
