"""The event recorder: core/v1 Events about objects, repeats counted instead of repeated."""

from __future__ import annotations

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import VirtualClock
from fakeapi.runtime.events import WARNING, EventRecorder, object_reference

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "namespace": "default", "uid": "u1", "resourceVersion": "7"}}


@pytest.fixture
def cluster() -> Cluster:
    return Cluster(ClusterConfig(seed=1), clock=VirtualClock())


async def test_an_event_names_its_object_and_source(cluster: Cluster) -> None:
    recorder = EventRecorder(client=cluster.component_client("kube-scheduler"),
                             clock=cluster.clock, component="default-scheduler")
    await recorder.event(object_reference(POD), WARNING, "FailedScheduling", "no nodes")
    [event] = await cluster.client("test").list("events", "default")
    assert event["involvedObject"] == {"kind": "Pod", "apiVersion": "v1", "name": "p",
                                       "uid": "u1", "resourceVersion": "7",
                                       "namespace": "default"}
    assert (event["type"], event["reason"], event["message"], event["count"]) == (
        "Warning", "FailedScheduling", "no nodes", 1)
    assert event["source"] == {"component": "default-scheduler"}
    assert event["reportingComponent"] == "default-scheduler"
    assert event["firstTimestamp"] == event["lastTimestamp"]


async def test_a_repeat_counts_and_a_new_message_is_a_new_event(cluster: Cluster) -> None:
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    recorder = EventRecorder(client=cluster.component_client("kube-scheduler"), clock=clock,
                             component="default-scheduler")
    ref = object_reference(POD)
    await recorder.event(ref, WARNING, "FailedScheduling", "no nodes")
    await clock.advance(30)
    await recorder.event(ref, WARNING, "FailedScheduling", "no nodes")
    await recorder.event(ref, WARNING, "FailedScheduling", "other")
    events = sorted(await cluster.client("test").list("events", "default"),
                    key=lambda e: e["message"])
    assert [(e["message"], e["count"]) for e in events] == [("no nodes", 2), ("other", 1)]
    assert events[0]["lastTimestamp"] > events[0]["firstTimestamp"]


async def test_a_deleted_event_is_recorded_anew(cluster: Cluster) -> None:
    recorder = EventRecorder(client=cluster.component_client("kube-scheduler"),
                             clock=cluster.clock, component="default-scheduler")
    ref = object_reference(POD)
    await recorder.event(ref, WARNING, "FailedScheduling", "no nodes")
    admin = cluster.client("test")
    [event] = await admin.list("events", "default")
    await admin.delete("events", event["metadata"]["name"], "default")
    await recorder.event(ref, WARNING, "FailedScheduling", "no nodes")
    [again] = await admin.list("events", "default")
    assert again["count"] == 1


async def test_a_refused_event_is_logged_not_raised(cluster: Cluster,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    recorder = EventRecorder(client=cluster.component_client("nobody-in-particular"),
                             clock=cluster.clock, component="x")
    await recorder.event(object_reference(POD), WARNING, "R", "m")
    assert "not recorded" in caplog.text and "forbidden" in caplog.text
    assert await cluster.client("test").list("events", "default") == []


async def test_events_of_one_instant_get_names_of_their_own_and_parts_count_apart(
        cluster: Cluster) -> None:
    """On a virtual clock many Events share an instant: each gets its own name at the first
    try (a retry would show in the log as a refused create), and the same report about two
    containers of a pod (`fieldPath`) is two Events, as upstream's correlator keys them."""
    recorder = EventRecorder(client=cluster.component_client("kubelet"), clock=cluster.clock,
                             component="kubelet")
    for part in ("spec.containers{a}", "spec.containers{b}", "spec.containers{a}"):
        await recorder.event({**object_reference(POD), "fieldPath": part}, "Normal",
                             "Created", "Container created")
    events = sorted(await cluster.client("test").list("events", "default"),
                    key=lambda e: e["metadata"]["name"])
    assert [(e["involvedObject"]["fieldPath"], e["count"]) for e in events] == [
        ("spec.containers{a}", 2), ("spec.containers{b}", 1)]
    stamps = [int(e["metadata"]["name"].removeprefix("p."), 16) for e in events]
    assert stamps[1] == stamps[0] + 1
