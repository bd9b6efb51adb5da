"""Durable before visible, in process, with a real WAL file: no reader (GET, LIST, watch,
informer) sees a write before its fsync returned; a group commit becomes visible at once; an
I/O error discards the unsynced writes, refuses writes until the file takes them again, and
never leaves a half-applied state; retention is bounded by bytes."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.context import RequestContext
from fakeapi.storage.log import RESUME_INTERVAL, Event
from fakeapi.storage.watch import WatchSpec, notices
from tests.support.faults import DiskFaults

CM = "configmaps"


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[DiskFaults]:
    """Faults of the WAL file of `durable_cluster(tmp_path)`."""
    faults = DiskFaults(monkeypatch, tmp_path / "events.log")
    yield faults
    faults.release()


def cm(name: str, value: str = "v") -> dict[str, Any]:
    """A ConfigMap in `default`."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, "data": {"k": value}}


def group_commit_clock() -> VirtualClock:
    """Virtual time with the log's real group commit: the sync thread, writers waiting for
    the fsync that covers them (a deterministic clock syncs each write inline instead)."""
    return VirtualClock(deterministic=False)


def durable_cluster(path: Path, clock: VirtualClock | None = None) -> Cluster:
    """A cluster whose log is in `path`, on a group-commit clock of its own unless given one."""
    return Cluster(ClusterConfig(data_dir=path, seed=3), clock=clock or group_commit_clock())


async def watched(client: Client, since: str, timeout: float, seen: list[tuple[str, str]],
                  arrived: asyncio.Event | None = None) -> None:
    """Watch ConfigMaps of `default` from `since` for `timeout` seconds of the client's
    clock, noting (type, name) of each event in `seen` and setting `arrived`."""
    async for type_, obj in client.watch(CM, "default", resource_version=since,
                                         timeout=timeout):
        seen.append((type_, obj["metadata"]["name"]))
        if arrived is not None:
            arrived.set()


def visible_names(cluster: Cluster) -> list[str]:
    kind = cluster.kinds.by_id(CM)
    assert kind is not None
    page = cluster.registry.list(kind, "default")
    return [i.name if isinstance(i, Event) else i["metadata"]["name"] for i in page.items]


async def test_no_reader_sees_a_write_before_its_fsync_returns(tmp_path: Path,
                                                               disk: DiskFaults) -> None:
    clock = group_commit_clock()
    cluster = durable_cluster(tmp_path, clock)
    client = cluster.client("tester")
    await client.create(CM, cm("before"))
    since = str(cluster.log.visible)
    seen: list[tuple[str, str]] = []
    arrived = asyncio.Event()
    watcher = asyncio.create_task(watched(client, since, 3600, seen, arrived))
    glanced: list[tuple[str, str]] = []  # a watch that reads the log again at its deadline
    glancer = asyncio.create_task(watched(client, since, 10, glanced))
    disk.hold()
    writer = asyncio.create_task(client.create(CM, cm("pending")))
    await disk.held()
    revision = cluster.log.revision
    assert cluster.log.visible == revision - 1, "appended, not yet durable"
    assert cluster.store.get(CM, "default", "pending") is not None, "writers see it"
    with pytest.raises(ApiError) as missing:
        await client.get(CM, "pending", "default")
    assert missing.value.code == 404
    assert visible_names(cluster) == ["before"]
    listed, at = await client.snapshot(CM, "default")
    assert [o["metadata"]["name"] for o in listed] == ["before"] and at == revision - 1
    await clock.advance(10)  # the glancer's deadline: it reads the log once more, and ends
    await glancer
    assert glanced == [] and seen == [] and not writer.done()

    disk.release()
    created = await writer
    assert created["metadata"]["resourceVersion"] == str(revision)
    assert (await client.get(CM, "pending", "default"))["metadata"]["name"] == "pending"
    await asyncio.wait_for(arrived.wait(), 10)  # the publish woke the waiting watcher
    assert seen == [("ADDED", "pending")]
    watcher.cancel()
    await cluster.close()


async def test_a_group_commit_becomes_visible_before_any_writer_is_answered(
        tmp_path: Path, disk: DiskFaults) -> None:
    cluster = durable_cluster(tmp_path)
    client = cluster.client("tester")
    assert cluster.wal is not None
    disk.hold()
    first = asyncio.create_task(client.create(CM, cm("first")))
    await disk.held()  # the first flush holds; these ride in the next one
    answered_with: dict[str, list[str]] = {}

    async def write(name: str) -> None:
        await client.create(CM, cm(name))
        answered_with[name] = visible_names(cluster)  # read-your-write, at once

    rest = [asyncio.create_task(write(f"batch-{i}")) for i in range(20)]
    await asyncio.sleep(0)  # one turn of the loop: each writer appends in its first step
    assert cluster.log.revision - cluster.log.visible == 21, "appended behind the held fsync"
    flushes = cluster.wal.flush_count
    disk.release()
    await first
    await asyncio.gather(*rest)
    assert cluster.wal.flush_count - flushes <= 2, "one fsync for the whole batch"
    batch = {f"batch-{i}" for i in range(20)}
    for name, names in answered_with.items():
        assert batch <= set(names), f"{name} was answered before its batch was visible"
    await cluster.close()


async def test_an_io_error_discards_the_unsynced_writes_and_refuses_more(
        tmp_path: Path, disk: DiskFaults) -> None:
    clock = group_commit_clock()
    cluster = durable_cluster(tmp_path, clock)
    clock.add_probe(lambda: cluster.log.wake_pending)  # a resume probe under way, too
    client = cluster.client("tester")
    kept = await client.create(CM, cm("kept", "old"))
    await client.create(CM, cm("doomed-delete"))
    durable_revision = cluster.log.revision
    disk.hold()
    disk.fsync_error = OSError(errno.EIO, "Input/output error")
    writes = [asyncio.create_task(client.create(CM, cm("lost"))),
              asyncio.create_task(client.update(CM, {**kept, "data": {"k": "new"}})),
              asyncio.create_task(client.delete(CM, "doomed-delete", "default"))]
    await disk.held()
    disk.release()
    results = await asyncio.gather(*writes, return_exceptions=True)
    for result in results:
        assert isinstance(result, ApiError) and result.code == 500, result
        assert result.reason == "InternalError"
        assert "Input/output error" in result.message and "not applied" in result.message

    # not visible, not half-applied: writers and readers see the durable state again
    assert cluster.log.revision == cluster.log.visible == durable_revision
    assert cluster.store.get(CM, "default", "lost") is None
    stored = cluster.store.get(CM, "default", "kept")
    assert stored is not None and stored.object["data"] == {"k": "old"}
    assert cluster.store.get(CM, "default", "doomed-delete") is not None
    assert (await client.get(CM, "kept", "default"))["data"] == {"k": "old"}
    assert sorted(visible_names(cluster)) == ["doomed-delete", "kept"]
    assert cluster.health() == [("log", False, "[Errno 5] Input/output error")]
    with pytest.raises(ApiError) as refused:
        await client.create(CM, cm("while-failed"))
    assert (refused.value.code, refused.value.reason) == (503, "ServiceUnavailable")
    assert refused.value.retry_after == 1

    await clock.advance(RESUME_INTERVAL)  # the probe finds the fault still there
    assert not cluster.log.writable
    disk.fsync_error = None  # the device is back: the next probe, on the clock, finds it so
    await clock.advance(RESUME_INTERVAL / 2)
    assert not cluster.log.writable
    await clock.advance(RESUME_INTERVAL / 2)
    assert cluster.health() == [("log", True, "")]
    again = await client.create(CM, cm("after"))
    assert int(again["metadata"]["resourceVersion"]) == durable_revision + 1
    await cluster.close()

    reopened = durable_cluster(tmp_path)
    assert sorted(visible_names(reopened)) == ["after", "doomed-delete", "kept"]
    stored = reopened.store.get(CM, "default", "kept")
    assert stored is not None and stored.object["data"] == {"k": "old"}
    await reopened.close()


async def test_on_a_deterministic_clock_each_write_is_durable_when_it_is_appended(
        tmp_path: Path) -> None:
    """No sync thread orders the run: the write is synced inline, visible as in memory mode."""
    cluster = durable_cluster(tmp_path, VirtualClock())
    assert cluster.wal is not None
    kind = cluster.kinds.by_id(CM)
    assert kind is not None
    flushes = cluster.wal.flush_count
    event = cluster.registry.create(kind, "default", cm("now"),
                                    RequestContext(user="tester")).event
    assert event is not None  # and nothing awaited
    assert cluster.log.visible == cluster.log.revision == event.revision
    assert (cluster.wal.durable_seq, cluster.wal.flush_count) == (event.revision, flushes + 1)
    assert visible_names(cluster) == ["now"]
    await cluster.close()
    reopened = durable_cluster(tmp_path)
    assert visible_names(reopened) == ["now"]
    await reopened.close()


async def test_on_a_deterministic_clock_a_failed_sync_applies_nothing(
        tmp_path: Path, disk: DiskFaults) -> None:
    clock = VirtualClock()
    cluster = durable_cluster(tmp_path, clock)
    clock.add_probe(lambda: cluster.log.wake_pending)
    client = cluster.client("tester")
    kept = await client.create(CM, cm("kept", "old"))
    durable_revision = cluster.log.revision
    disk.fsync_error = OSError(errno.EIO, "Input/output error")
    with pytest.raises(ApiError) as failed:
        await client.update(CM, {**kept, "data": {"k": "new"}})
    assert (failed.value.code, failed.value.reason) == (500, "InternalError")
    assert "Input/output error" in failed.value.message and "not applied" in failed.value.message
    with pytest.raises(ApiError) as refused:
        await client.create(CM, cm("lost"))
    assert (refused.value.code, refused.value.reason) == (503, "ServiceUnavailable")
    assert cluster.log.revision == cluster.log.visible == durable_revision
    stored = cluster.store.get(CM, "default", "kept")
    assert stored is not None and stored.object["data"] == {"k": "old"}
    assert visible_names(cluster) == ["kept"]

    disk.fsync_error = None
    await clock.advance(RESUME_INTERVAL)
    again = await client.create(CM, cm("after"))
    assert int(again["metadata"]["resourceVersion"]) == durable_revision + 1
    await cluster.close()
    reopened = durable_cluster(tmp_path)
    assert visible_names(reopened) == ["after", "kept"]
    stored = reopened.store.get(CM, "default", "kept")
    assert stored is not None and stored.object["data"] == {"k": "old"}
    await reopened.close()


async def test_in_memory_nothing_waits() -> None:
    cluster = Cluster(ClusterConfig())
    kind = cluster.kinds.by_id(CM)
    assert kind is not None
    cluster.registry.create(kind, "default", cm("now"), RequestContext(user="tester"))
    assert cluster.log.visible == cluster.log.revision, "visible as it is appended"
    assert visible_names(cluster) == ["now"]


async def test_retention_is_bounded_by_bytes() -> None:
    bound = 400_000
    cluster = Cluster(ClusterConfig(retention_bytes=bound))
    client = cluster.client("tester")
    first = await client.create(CM, cm("big", "x" * 20_000))
    for i in range(100):
        current = await client.get(CM, "big", "default")
        await client.update(CM, {**current, "data": {"k": f"{i}" + "x" * 20_000}})
        assert cluster.log.retained_bytes <= bound
    assert cluster.log.oldest_revision > int(first["metadata"]["resourceVersion"])
    spec = WatchSpec(kind=client.kind(CM), resource_version=first["metadata"]["resourceVersion"])
    batches = [b async for b in notices(cluster.store, spec)]
    assert [t for t, _ in batches[0]] == ["ERROR"]
    error = batches[0][0][1]
    assert isinstance(error, dict) and error["code"] == 410, error


async def test_a_durable_control_plane_settles(tmp_path: Path) -> None:
    """Quiescence waits for pending group commits too (the informers see only durable
    events), so settle() works the same with a data directory."""
    plane = ControlPlane(ClusterConfig(data_dir=tmp_path, seed=5), clock=VirtualClock(),
                         components="namespace-controller,garbage-collector")
    await plane.start()
    await plane.settle()
    client = plane.cluster.client("tester")
    await client.create("namespaces", {"metadata": {"name": "doomed"}})
    await client.create(CM, {**cm("inside"), "metadata": {"name": "inside",
                                                          "namespace": "doomed"}})
    await client.delete("namespaces", "doomed")
    await plane.settle()
    assert plane.cluster.store.get("namespaces", "", "doomed") is None
    assert plane.cluster.store.get(CM, "doomed", "inside") is None
    assert plane.cluster.log.visible == plane.cluster.log.revision
    await plane.stop()
