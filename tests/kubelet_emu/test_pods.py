"""Pods on emulated nodes, on a virtual clock: Running and Ready in one status write,
commands that exit, restarts, graceful deletion (TERM, KILL at the deadline, then the pod
goes), and nodes no kubelet runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from fakeapi.printers.columns import summarize_pod
from tests.support.emulated_nodes import (
    WITH_SCHEDULING,
    condition,
    emulated_plane,
    kubelet_of,
    present_condition,
)

DEMO = "export; trap 'exit 0' TERM; sleep 9999 & wait"
KUBELET = "system:serviceaccount:kube-system:kubelet"
"""Who the kubelet's writes are by (the event log's actor)."""


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


def pod(name: str, *, node: str = "worker-0", command: list[str] | None = None,
        policy: str | None = None, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "ctr0", "image": "ubuntu:22.04"}
    if command is not None:
        container["command"] = command
    body: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"},
                            "spec": {"nodeName": node, "containers": [container], **spec}}
    if policy:
        body["spec"]["restartPolicy"] = policy
    return body


async def get_pod(c: Client, name: str) -> dict[str, Any]:
    return await c.get("pods", name, "default")


async def test_a_bound_pod_goes_running_and_ready(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("web"))
        await plane.settle()
        p = await get_pod(c, "web")
        status = p["status"]
        assert status["phase"] == "Running"
        assert [cond["type"] for cond in status["conditions"]] == [
            "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"]
        assert all(cond["status"] == "True" for cond in status["conditions"])
        assert status["podIP"].startswith("10.64.0.") and status["hostIP"] == "172.16.0.2"
        [cs] = status["containerStatuses"]
        assert cs["ready"] and cs["started"] and cs["restartCount"] == 0
        assert cs["state"]["running"]["startedAt"] == status["startTime"]
        assert cs["image"] == "docker.io/library/ubuntu:22.04"
        assert cs["containerID"].startswith("containerd://")
        summary = summarize_pod(p, plane.clock.now())
        assert (summary.ready, summary.status) == ("1/1", "Running")
        # the kubelet wrote it, through pods/status, with its node-bound identity
        managers = {(m["manager"], m.get("subresource")) for m in p["metadata"]["managedFields"]}
        assert ("kubelet", "status") in managers


async def test_the_kubelet_writes_a_started_pods_status_once(tmp_path: Path) -> None:
    """Running and Ready in one write, and no second one: the status the kubelet computes
    compares equal to what the server keeps (null fields, as the scheduler's PodScheduled
    `lastProbeTime: null`, are pruned by its merge patch), so nothing is written again when
    the kubelet looks at the pod its own write changed (the event log shows every write)."""
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        c = admin(plane)
        start = plane.cluster.log.revision
        body = pod("web", command=["bash", "-c", DEMO])
        del body["spec"]["nodeName"]
        await c.create("pods", body)
        await plane.settle()
        clock = plane.clock
        assert isinstance(clock, VirtualClock)
        await clock.advance(60)
        written = [e.object for e in plane.cluster.log.since(start)
                   if (e.resource, e.name, e.actor) == ("pods", "web", KUBELET)]
        assert [w["status"]["phase"] for w in written] == ["Running"]
        assert (await get_pod(c, "web"))["status"]["conditions"] == \
            written[0]["status"]["conditions"]


@pytest.mark.parametrize(("script", "policy", "phase", "code"), [
    ("exit 0", "Never", "Succeeded", 0),
    ("echo bye; exit 3", "Never", "Failed", 3),
    ("exit 0", "OnFailure", "Succeeded", 0),
])
async def test_commands_that_exit_end_the_pod(tmp_path: Path, script: str, policy: str,
                                              phase: str, code: int) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("job", command=["sh", "-c", script], policy=policy))
        await plane.settle()
        status = (await get_pod(c, "job"))["status"]
        assert status["phase"] == phase
        terminated = status["containerStatuses"][0]["state"]["terminated"]
        assert terminated["exitCode"] == code
        assert terminated["reason"] == ("Completed" if code == 0 else "Error")
        assert present_condition({"status": status}, "Ready")["reason"] == "PodCompleted"


async def test_a_failing_container_restarts_after_a_back_off(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("crash", command=["sh", "-c", "sleep 5; exit 1"]))
        await plane.settle()
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(6)
        cs = (await get_pod(c, "crash"))["status"]["containerStatuses"][0]
        assert cs["state"] == {"waiting": {"reason": "CrashLoopBackOff"}}
        assert cs["lastState"]["terminated"]["exitCode"] == 1
        assert (await get_pod(c, "crash"))["status"]["phase"] == "Running"
        await plane.clock.advance(10)
        cs = (await get_pod(c, "crash"))["status"]["containerStatuses"][0]
        assert cs["restartCount"] == 1 and "running" in cs["state"]


async def test_run_seconds_annotation_ends_a_service(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        body = pod("timed", policy="Never")
        body["metadata"]["annotations"] = {"emulator.fakeapi.dev/run-seconds": "20"}
        await c.create("pods", body)
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(19)
        assert (await get_pod(c, "timed"))["status"]["phase"] == "Running"
        await plane.clock.advance(2)
        assert (await get_pod(c, "timed"))["status"]["phase"] == "Succeeded"


async def test_graceful_deletion_waits_for_the_containers(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("stubborn", command=["sleep", "3600"]))
        await c.create("pods", pod("polite", command=["bash", "-c", DEMO]))
        await plane.settle()
        await c.delete("pods", "polite", "default")
        deleted = await c.delete("pods", "stubborn", "default")
        assert deleted["metadata"]["deletionGracePeriodSeconds"] == 30
        await plane.settle()
        with pytest.raises(ApiError) as e:
            await get_pod(c, "polite")  # its TERM trap exits at once
        assert e.value.code == 404
        p = await get_pod(c, "stubborn")  # sleep ignores TERM: it waits for the deadline
        assert p["metadata"]["deletionTimestamp"]
        assert p["status"]["phase"] == "Running"
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(29)
        assert await get_pod(c, "stubborn")
        await plane.clock.advance(2)
        with pytest.raises(ApiError) as e:
            await get_pod(c, "stubborn")
        assert e.value.code == 404


async def test_conditions_the_kubelet_does_not_own_stay_to_the_end(tmp_path: Path) -> None:
    """Same as upstream's status manager: an evictor's DisruptionTarget (and PodScheduled)
    survive the kubelet's status writes, up to the pod's final state."""
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("evicted", command=["bash", "-c", DEMO]))
        await plane.settle()
        seen: list[dict[str, Any]] = []
        plane.informers.get("pods").add_handler(
            lambda t, o, old: seen.append(o) if t == "DELETED" else None)
        target = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByTest",
                  "message": "evicted by the test", "lastTransitionTime": None}
        await c.patch("pods", "evicted", {"status": {"conditions": [target]}},
                      namespace="default", patch_type="strategic", subresource="status")
        await c.delete("pods", "evicted", "default")
        await plane.settle()
        [last] = seen
        assert last["status"]["phase"] == "Succeeded"
        assert [cond["type"] for cond in last["status"]["conditions"]] == [
            "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
            "DisruptionTarget"]
        kept = condition(last, "DisruptionTarget")
        assert kept is not None and kept["reason"] == "EvictionByTest"


async def test_a_condition_written_while_the_kubelet_writes_is_kept(tmp_path: Path) -> None:
    """The kubelet's status is computed from the pod as it saw it: a condition another writer
    adds meanwhile (an evictor's DisruptionTarget) is not overwritten; the stale write is
    refused and made again from the newer pod."""
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        kubelet = kubelet_of(plane)
        target = {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByTest",
                  "message": "evicted by the test", "lastTransitionTime": None}
        raced: list[str] = []
        node_client = kubelet.nodes.client

        def racing_client(account: str, node: str | None) -> Any:
            client = node_client(account, node)
            patch = client.patch

            async def racing_patch(resource: str, name: str, body: Any, **kw: Any) -> Any:
                if resource == "pods" and kw.get("subresource") == "status" and not raced:
                    raced.append(name)  # the other writer goes first, once
                    await c.patch("pods", name, {"status": {"conditions": [target]}},
                                  namespace="default", patch_type="strategic",
                                  subresource="status")
                return await patch(resource, name, body, **kw)

            setattr(client, "patch", racing_patch)  # noqa: B010
            return client

        setattr(kubelet.nodes, "client", racing_client)  # noqa: B010
        await c.create("pods", pod("web", command=["bash", "-c", DEMO]))
        await plane.settle()
        p = await get_pod(c, "web")
        assert raced == ["web"] and p["status"]["phase"] == "Running"
        assert [cond["type"] for cond in p["status"]["conditions"]] == [
            "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
            "DisruptionTarget"]


async def test_a_shorter_grace_period_moves_the_deadline(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", pod("p", command=["sleep", "3600"]))
        await plane.settle()
        await c.delete("pods", "p", "default")
        again = await c.delete("pods", "p", "default", grace_period_seconds=5)
        assert again["metadata"]["deletionGracePeriodSeconds"] == 5
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(6)
        with pytest.raises(ApiError):
            await get_pod(c, "p")


async def test_nodes_without_a_kubelet_keep_pods_pending_and_terminating(
        tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=0) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "dead", "labels": {
            "emulator.fakeapi.dev/managed": "false"}}})
        await c.create("pods", pod("stuck", node="dead"))
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(60)
        p = await get_pod(c, "stuck")
        assert p["status"]["phase"] == "Pending"
        await c.delete("pods", "stuck", "default")
        await plane.clock.advance(120)
        assert (await get_pod(c, "stuck"))["metadata"]["deletionTimestamp"]
        # force deletion still works
        await c.delete("pods", "stuck", "default", grace_period_seconds=0)
        with pytest.raises(ApiError):
            await get_pod(c, "stuck")


async def test_unscheduled_pods_are_deleted_at_once(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        await c.create("pods", {"metadata": {"name": "free", "namespace": "default"},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}})
        await c.delete("pods", "free", "default")
        with pytest.raises(ApiError):
            await get_pod(c, "free")


async def test_init_containers_run_first(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        body = pod("with-init", command=["bash", "-c", DEMO])
        body["spec"]["initContainers"] = [{"name": "init0", "image": "ubuntu:22.04",
                                           "command": ["bash", "-c"], "args": ["sleep 3"]}]
        await c.create("pods", body)
        await plane.settle()
        status = (await get_pod(c, "with-init"))["status"]
        assert status["phase"] == "Pending"
        assert "running" in status["initContainerStatuses"][0]["state"]
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(4)
        status = (await get_pod(c, "with-init"))["status"]
        assert status["phase"] == "Running"
        assert status["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
        assert status["containerStatuses"][0]["ready"]


async def kubelet_events(c: Client, name: str) -> list[tuple[str, str, str, str, int]]:
    """The kubelet's Events about pod `name`, first seen first (their names end in the time
    the recorder made them): (type, reason, fieldPath, message, count)."""
    events = await c.list("events", "default")
    return [(e["type"], e["reason"], e["involvedObject"].get("fieldPath", ""), e["message"],
             e["count"]) for e in sorted(events, key=lambda e: e["metadata"]["name"])
            if e["involvedObject"]["name"] == name and e["source"]["component"] == "kubelet"]


def started(path: str) -> list[tuple[str, str, str, str, int]]:
    return [("Normal", "Created", path, "Container created", 1),
            ("Normal", "Started", path, "Container started", 1)]


def pulled(image: str, path: str) -> list[tuple[str, str, str, str, int]]:
    return [("Normal", "Pulling", path, f'Pulling image "{image}"', 1),
            ("Normal", "Pulled", path, f'Successfully pulled image "{image}" in 0s (0s '
             'including waiting). Image size: 0 bytes.', 1)]


def present(image: str, path: str) -> list[tuple[str, str, str, str, int]]:
    return [("Normal", "Pulled", path, f'Container image "{image}" already present on '
             'machine and can be accessed by the pod', 1)]


INIT, CTR = "spec.initContainers{init0}", "spec.containers{ctr0}"


@pytest.mark.parametrize(("image", "policy", "first", "second"), [
    ("ubuntu:22.04", "IfNotPresent", pulled, present),
    ("ubuntu:22.04", "Always", pulled, pulled),
    ("ubuntu:22.04", "Never", present, present),
    ("ubuntu", None, pulled, pulled),  # no tag: defaulted to Always, as upstream
])
async def test_the_kubelet_reports_each_pull_creation_and_start(
        tmp_path: Path, image: str, policy: str | None, first: Any, second: Any) -> None:
    """As upstream's image manager and container runtime manager: Pulling/Pulled by the pull
    policy and what the node has, then Created and Started, each about its container."""
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        for name in ("one", "two"):
            body = pod(name)
            body["spec"]["containers"][0]["image"] = image
            if policy:
                body["spec"]["containers"][0]["imagePullPolicy"] = policy
            await c.create("pods", body)
            await plane.settle()
        assert await kubelet_events(c, "one") == first(image, CTR) + started(CTR)
        assert await kubelet_events(c, "two") == second(image, CTR) + started(CTR)


async def test_init_containers_back_offs_and_kills_are_reported(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        body = pod("crash", command=["sh", "-c", "sleep 5; exit 1"])
        body["spec"]["initContainers"] = [{"name": "init0", "image": "ubuntu:22.04",
                                           "command": ["true"]}]
        await c.create("pods", body)
        await plane.settle()
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(6)  # exits; back-off 10 s
        await plane.clock.advance(10)  # runs again, to exit at 21 s
        await plane.clock.advance(3)
        uid = (await get_pod(c, "crash"))["metadata"]["uid"]
        backoff = ("Warning", "BackOff", CTR, f"Back-off restarting failed container ctr0 in "
                   f"pod crash_default({uid})")
        image = "ubuntu:22.04"
        assert await kubelet_events(c, "crash") == [
            *pulled(image, INIT), *started(INIT),  # a restart pulls (finds) again, as upstream
            (*present(image, CTR)[0][:4], 2), ("Normal", "Created", CTR, "Container created", 2),
            ("Normal", "Started", CTR, "Container started", 2), (*backoff, 1)]
        await c.delete("pods", "crash", "default")
        await plane.settle()
        assert (await kubelet_events(c, "crash"))[-1] == (
            "Normal", "Killing", CTR, "Stopping container ctr0", 1)
