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
