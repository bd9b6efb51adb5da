"""The workload controllers on the virtual clock: Deployments roll ReplicaSets within their
surge and unavailability budgets, ReplicaSets keep their pod count, Jobs run pods to
completion or give up, budgets guard evictions, every namespace gets a default
ServiceAccount. A test stands in for the kubelet by writing pod status through the API."""

from __future__ import annotations

from typing import Any

import pytest

from controllers.deployment import HASH_LABEL, REVISION, template_hash
from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from tests.support.plane import running_plane

Obj = dict[str, Any]
WORKLOADS = "deployment-controller,replicaset-controller,garbage-collector"


def _deployment(name: str, replicas: int, image: str = "nginx:1", **strategy: Any) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     **({"strategy": strategy} if strategy else {}),
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {
                         "containers": [{"name": "c", "image": image}]}}}}


async def _pods(client: Client, **labels: str) -> list[Obj]:
    selector = ",".join(f"{k}={v}" for k, v in labels.items())
    return await client.list("pods", "default", label_selector=selector)


async def _run_pods(client: Client, pods: list[Obj], *, phase: str = "Running",
                    ready: bool = True) -> None:
    """What a kubelet would write: the pod bound, its phase and Ready condition."""
    for pod in pods:
        name = pod["metadata"]["name"]
        current = await client.get("pods", name, "default")
        status = {**current.get("status", {}), "phase": phase, "conditions": [
            {"type": "Ready", "status": "True" if ready and phase == "Running" else "False"}]}
        await client.update("pods", {**current, "status": status}, subresource="status")


async def _settle_running(plane: ControlPlane, client: Client, rounds: int = 10) -> None:
    """Run every new pod until nothing changes (a kubelet that starts whatever it gets)."""
    for _ in range(rounds):
        await plane.settle()
        pending = [p for p in await client.list("pods", "default")
                   if (p.get("status") or {}).get("phase") == "Pending"
                   and not p["metadata"].get("deletionTimestamp")]
        if not pending:
            return
        await _run_pods(client, pending)
    raise AssertionError("pods kept coming")


async def _events(client: Client, kind: str, name: str) -> list[tuple[str, str, str, str]]:
    """The Events about one object, first made first: (source, type, reason, message)."""
    return [(e["source"]["component"], e["type"], e["reason"], e["message"]) for e in sorted(
        await client.list("events", "default"), key=lambda e: e["metadata"]["name"])
        if (e["involvedObject"]["kind"], e["involvedObject"]["name"]) == (kind, name)]


def _pod_events(source: str, reason: str, pods: set[str]) -> set[tuple[str, ...]]:
    """The Events a pod-owning controller records about its owner for these pods."""
    verb = {"SuccessfulCreate": "Created", "SuccessfulDelete": "Deleted"}[reason]
    return {(source, "Normal", reason, f"{verb} pod: {pod}") for pod in pods}


async def test_a_deployment_runs_its_replicas_and_scales() -> None:
    async with running_plane(WORKLOADS) as plane:
        client = plane.cluster.client("admin")
        await client.create("deployments.apps", _deployment("web", 2), "default")
        await plane.settle()
        sets = await client.list("replicasets.apps", "default")
        assert len(sets) == 1
        rs = sets[0]
        digest = rs["metadata"]["labels"][HASH_LABEL]
        assert rs["metadata"]["name"] == f"web-{digest}"
        assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", HASH_LABEL: digest}
        assert rs["metadata"]["annotations"][REVISION] == "1"
        pods = await _pods(client, app="web")
        assert len(pods) == 2
        assert all(p["metadata"]["ownerReferences"][0]["name"] == rs["metadata"]["name"]
                   for p in pods)
        await _settle_running(plane, client)
        status = (await client.get("deployments.apps", "web", "default"))["status"]
        assert (status["replicas"], status["updatedReplicas"], status["availableReplicas"]) == (
            2, 2, 2)
        assert {c["type"]: c["reason"] for c in status["conditions"]} == {
            "Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
        await client.patch("deployments.apps", "web", {"spec": {"replicas": 3}},
                           namespace="default", subresource="scale")
        await _settle_running(plane, client)
        assert len(await _pods(client, app="web")) == 3
        await client.patch("deployments.apps", "web", {"spec": {"replicas": 1}},
                           namespace="default")
        await plane.settle()
        live = [p for p in await _pods(client, app="web")
                if not p["metadata"].get("deletionTimestamp")]
        assert len(live) == 1
        name = rs["metadata"]["name"]
        assert await _events(client, "Deployment", "web") == [
            ("deployment-controller", "Normal", "ScalingReplicaSet",
             f"Scaled {verb} replica set {name} from {a} to {b}")
            for verb, a, b in (("up", 0, 2), ("up", 2, 3), ("down", 3, 1))]
        made = await _events(client, "ReplicaSet", name)
        created = {e[3].removeprefix("Created pod: ") for e in made
                   if e[2] == "SuccessfulCreate"}
        deleted = created - {p["metadata"]["name"] for p in live}
        assert len(created) == 3 and len(made) == 5
        assert set(made) == (_pod_events("replicaset-controller", "SuccessfulCreate", created)
                             | _pod_events("replicaset-controller", "SuccessfulDelete", deleted))


async def test_a_replication_controller_keeps_its_pods_and_scales() -> None:
    """Issue 18: an RC with replicas 1 stayed at CURRENT 0; the replication manager runs it."""
    async with running_plane("replicationcontroller-controller,garbage-collector") as plane:
        client = plane.cluster.client("admin")
        await client.create("replicationcontrollers", {
            "metadata": {"name": "rc"}, "spec": {"replicas": 2, "selector": {"app": "rc"},
                                                 "template": {
                "metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}, "default")
        await _settle_running(plane, client)
        pods = await _pods(client, app="rc")
        assert len(pods) == 2
        assert {(o["apiVersion"], o["kind"], o["name"], o["controller"])
                for p in pods for o in p["metadata"]["ownerReferences"]} == {
            ("v1", "ReplicationController", "rc", True)}
        status = (await client.get("replicationcontrollers", "rc", "default"))["status"]
        assert (status["replicas"], status["readyReplicas"], status["fullyLabeledReplicas"]) == (
            2, 2, 2)
        await client.patch("replicationcontrollers", "rc", {"spec": {"replicas": 1}},
                           namespace="default", subresource="scale")
        await plane.settle()
        live = [p for p in await _pods(client, app="rc")
                if not p["metadata"].get("deletionTimestamp")]
        assert len(live) == 1
        assert {e[:3] for e in await _events(client, "ReplicationController", "rc")} == {
            ("replication-controller", "Normal", "SuccessfulCreate"),
            ("replication-controller", "Normal", "SuccessfulDelete")}


async def test_a_template_change_rolls_within_surge_and_unavailability() -> None:
    async with running_plane(WORKLOADS) as plane:
        client = plane.cluster.client("admin")
        await client.create("deployments.apps", _deployment(
            "web", 4, type="RollingUpdate", rollingUpdate={"maxSurge": 1, "maxUnavailable": 0}),
            "default")
        await _settle_running(plane, client)
        await client.patch("deployments.apps", "web", {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "nginx:2"}]}}}}, namespace="default",
            patch_type="strategic")
        await plane.settle()
        # before any new pod is ready: one surge pod, no old pod removed
        sets = {rs["metadata"]["annotations"][REVISION]: rs
                for rs in await client.list("replicasets.apps", "default")}
        assert (sets["1"]["spec"]["replicas"], sets["2"]["spec"]["replicas"]) == (4, 1)
        await _settle_running(plane, client, rounds=20)
        sets = {rs["metadata"]["annotations"][REVISION]: rs
                for rs in await client.list("replicasets.apps", "default")}
        assert (sets["1"]["spec"]["replicas"], sets["2"]["spec"]["replicas"]) == (0, 4)
        deployment = await client.get("deployments.apps", "web", "default")
        assert deployment["metadata"]["annotations"][REVISION] == "2"
        # a rollback makes the first template the newest revision again
        old_template = sets["1"]["spec"]["template"]
        labels = {k: v for k, v in old_template["metadata"]["labels"].items() if k != HASH_LABEL}
        await client.patch("deployments.apps", "web", {"spec": {"template": {
            **old_template, "metadata": {"labels": labels}}}}, namespace="default")
        await _settle_running(plane, client, rounds=20)
        sets = {rs["metadata"]["name"]: rs
                for rs in await client.list("replicasets.apps", "default")}
        first = next(rs for rs in sets.values()
                     if rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1")
        assert first["metadata"]["annotations"][REVISION] == "3"
        assert first["spec"]["replicas"] == 4


def test_the_template_hash_is_stable_and_safe() -> None:
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
    assert template_hash(template) == template_hash(dict(template))
    assert template_hash(template) != template_hash(template, 1)
    assert set(template_hash(template)) <= set("bcdfghjklmnpqrstvwxz2456789")


def _job(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox"}]}}}}


async def test_a_job_runs_pods_to_completion() -> None:
    async with running_plane("job-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("jobs.batch", _job("pi", completions=3, parallelism=2), "default")
        await plane.settle()
        pods = await _pods(client, **{"job-name": "pi"})
        assert len(pods) == 2
        await _run_pods(client, pods, phase="Succeeded")
        await plane.settle()
        pods = [p for p in await _pods(client, **{"job-name": "pi"})
                if p["status"]["phase"] == "Pending"]
        assert len(pods) == 1  # one completion left
        await _run_pods(client, pods, phase="Succeeded")
        await plane.settle()
        job = await client.get("jobs.batch", "pi", "default")
        assert job["status"]["succeeded"] == 3
        assert "completionTime" in job["status"]
        assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet",
                                                                    "Complete"]
        events = await _events(client, "Job", "pi")
        assert events[-1] == ("job-controller", "Normal", "Completed", "Job completed")
        assert set(events[:-1]) == _pod_events("job-controller", "SuccessfulCreate", {
            p["metadata"]["name"] for p in await _pods(client, **{"job-name": "pi"})})


async def test_a_job_gives_up_after_its_backoff_limit() -> None:
    async with running_plane("job-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("jobs.batch", _job("flaky", backoffLimit=1), "default")
        for _ in range(2):
            await plane.settle()
            pending = [p for p in await _pods(client, **{"job-name": "flaky"})
                       if p["status"]["phase"] == "Pending"]
            assert len(pending) == 1
            await _run_pods(client, pending, phase="Failed")
        await plane.settle()
        job = await client.get("jobs.batch", "flaky", "default")
        failed = {c["type"]: c["reason"] for c in job["status"]["conditions"]}
        assert failed == {"FailureTarget": "BackoffLimitExceeded",
                          "Failed": "BackoffLimitExceeded"}
        assert job["status"]["failed"] == 2
        assert (await _events(client, "Job", "flaky"))[-1] == (
            "job-controller", "Warning", "BackoffLimitExceeded",
            "Job has reached the specified backoff limit")


async def test_every_namespace_gets_a_default_service_account() -> None:
    async with running_plane("serviceaccount-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("namespaces", {"metadata": {"name": "team"}})
        await plane.settle()
        account = await client.get("serviceaccounts", "default", "team")
        await client.delete("serviceaccounts", "default", "team")
        await plane.settle()
        again = await client.get("serviceaccounts", "default", "team")
        assert again["metadata"]["uid"] != account["metadata"]["uid"]


async def _evict(client: Client, name: str) -> Obj:
    return await client.create_subresource("pods", name, "eviction", {
        "apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": name, "namespace": "default"}}, namespace="default")


async def test_evictions_honour_the_disruption_budget() -> None:
    async with running_plane("disruption-controller") as plane:
        client = plane.cluster.client("admin")
        for name in ("a", "b"):
            await client.create("pods", {"metadata": {"name": name, "labels": {"app": "db"}},
                                         "spec": {"nodeName": "n1", "containers": [
                                             {"name": "c", "image": "db"}]}}, "default")
        await client.create("poddisruptionbudgets.policy", {
            "metadata": {"name": "db"}, "spec": {"minAvailable": 1, "selector": {
                "matchLabels": {"app": "db"}}}}, "default")
        await _run_pods(client, await _pods(client, app="db"))
        await plane.settle()
        budget = await client.get("poddisruptionbudgets.policy", "db", "default")
        assert (budget["status"]["currentHealthy"], budget["status"]["disruptionsAllowed"]) == (
            2, 1)
        answer = await _evict(client, "a")
        assert answer["status"] == "Success"
        try:  # deleted, or terminating gracefully on its node
            assert (await client.get("pods", "a", "default"))["metadata"]["deletionTimestamp"]
        except ApiError as gone:
            assert gone.code == 404
        await plane.settle()
        with pytest.raises(ApiError) as e:
            await _evict(client, "b")
        assert (e.value.code, e.value.reason) == (429, "TooManyRequests")
        assert e.value.causes[0].message == (
            "The disruption budget db needs 1 healthy pods and has 1 currently")
        await client.get("pods", "b", "default")  # still there


async def test_an_eviction_without_a_budget_deletes_the_pod() -> None:
    async with running_plane("") as plane:
        client = plane.cluster.client("admin")
        await client.create("pods", {"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "image": "x"}]}}, "default")
        with pytest.raises(ApiError) as e:
            await client.create_subresource("pods", "p", "eviction", {
                "metadata": {"name": "other"}}, namespace="default")
        assert (e.value.code, e.value.message) == (
            400, "name in URL does not match name in Eviction object")
        await _evict(client, "p")
        assert await client.list("pods", "default") == []


async def test_a_daemon_set_runs_one_pod_per_eligible_node() -> None:
    async with running_plane("daemonset-controller") as plane:
        client = plane.cluster.client("admin")
        for name, labels, taints in (("gpu-1", {"gpu": "yes"}, []),
                                     ("gpu-2", {"gpu": "yes"}, [{"key": "dedicated",
                                                                 "effect": "NoSchedule"}]),
                                     ("cpu-1", {}, [])):
            await client.create("nodes", {"metadata": {"name": name, "labels": labels},
                                          "spec": {"taints": taints}})
        await client.create("daemonsets.apps", {
            "metadata": {"name": "agent"}, "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                    "nodeSelector": {"gpu": "yes"},
                    "containers": [{"name": "c", "image": "agent"}]}}}}, "default")
        await plane.settle()
        pods = await _pods(client, app="agent")
        assert len(pods) == 1
        terms = pods[0]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                           "values": ["gpu-1"]}]}]
        await client.patch("nodes", "gpu-2", {"spec": {"taints": None}})
        await plane.settle()
        assert len(await _pods(client, app="agent")) == 2
        await client.delete("nodes", "gpu-1")
        await plane.settle()
        live = [p for p in await _pods(client, app="agent")
                if not p["metadata"].get("deletionTimestamp")]
        assert len(live) == 1
        ds = await client.get("daemonsets.apps", "agent", "default")
        assert (ds["status"]["desiredNumberScheduled"],
                ds["status"]["currentNumberScheduled"]) == (1, 1)


async def test_a_rollout_waits_while_new_pods_are_not_available() -> None:
    async with running_plane(WORKLOADS) as plane:
        client = plane.cluster.client("admin")
        await client.create("deployments.apps", _deployment("web", 1), "default")
        await _settle_running(plane, client)
        await client.patch("deployments.apps", "web", {"spec": {"template": {"metadata": {
            "annotations": {"restartedAt": "now"}}}}}, namespace="default")
        for _ in range(3):  # new pods never become ready: the old one must stay
            await plane.settle()
        sets = {rs["metadata"]["annotations"][REVISION]: rs["spec"]["replicas"]
                for rs in await client.list("replicasets.apps", "default")}
        assert sets == {"1": 1, "2": 1}
        status = (await client.get("deployments.apps", "web", "default"))["status"]
        assert (status["updatedReplicas"], status["availableReplicas"]) == (1, 1)


async def test_a_stateful_set_creates_ordered_pods_and_updates_from_the_top() -> None:
    async with running_plane("statefulset-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("statefulsets.apps", {"metadata": {"name": "db"}, "spec": {
            "replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                "containers": [{"name": "c", "image": "db:1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}]}}, "default")
        await plane.settle()
        assert [p["metadata"]["name"] for p in await _pods(client, app="db")] == ["db-0"]
        await _settle_running(plane, client)  # each Ready pod lets the next one start
        pods = await _pods(client, app="db")
        assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
        assert (await _events(client, "StatefulSet", "db")) == [
            ("statefulset-controller", "Normal", "SuccessfulCreate",
             f"create Pod db-{i} in StatefulSet db successful") for i in range(3)]
        assert pods[1]["spec"]["hostname"] == "db-1" and pods[1]["spec"]["subdomain"] == "db"
        claims = [c["metadata"]["name"] for c in
                  await client.list("persistentvolumeclaims", "default")]
        assert claims == ["data-db-0", "data-db-1", "data-db-2"]
        await client.patch("statefulsets.apps", "db", {"spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "db:2"}]}}}}, namespace="default",
            patch_type="strategic")
        await plane.settle()
        images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
                  for p in await _pods(client, app="db")}
        # db-2 is replaced first; the others wait for it to be Ready
        assert images == {"db-0": "db:1", "db-1": "db:1", "db-2": "db:2"}
        await _settle_running(plane, client, rounds=20)
        images = {p["metadata"]["name"]: p["spec"]["containers"][0]["image"]
                  for p in await _pods(client, app="db")}
        assert images == {"db-0": "db:2", "db-1": "db:2", "db-2": "db:2"}
        sts = await client.get("statefulsets.apps", "db", "default")
        assert sts["status"]["updatedReplicas"] == 3
        assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
        revisions = sorted(r["revision"] for r in
                           await client.list("controllerrevisions.apps", "default"))
        assert revisions == [1, 2]
        await client.patch("statefulsets.apps", "db", {"spec": {"replicas": 1}},
                           namespace="default", subresource="scale")
        await _settle_running(plane, client)
        assert [p["metadata"]["name"] for p in await _pods(client, app="db")] == ["db-0"]


@pytest.mark.parametrize(("schedule", "after", "expected"), [
    ("*/15 * * * *", "2026-01-01T00:07:00+00:00", "2026-01-01T00:15:00+00:00"),
    ("0 9 * * MON-FRI", "2026-01-02T10:00:00+00:00", "2026-01-05T09:00:00+00:00"),
    ("@monthly", "2026-01-31T23:59:00+00:00", "2026-02-01T00:00:00+00:00"),
    ("30 2 29 2 *", "2026-03-01T00:00:00+00:00", "2028-02-29T02:30:00+00:00"),
])
def test_cron_schedules(schedule: str, after: str, expected: str) -> None:
    import datetime as dt

    from controllers.cronjob import Schedule

    assert Schedule(schedule).next_after(dt.datetime.fromisoformat(after)) == (
        dt.datetime.fromisoformat(expected))


def test_a_bad_cron_schedule_is_refused() -> None:
    from controllers.cronjob import Schedule

    for text in ("* * * *", "61 * * * *", "*/0 * * * *"):
        with pytest.raises(ValueError):
            Schedule(text)


async def test_a_cron_job_starts_jobs_on_the_clock_and_keeps_its_history() -> None:
    async with running_plane("cronjob-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("cronjobs.batch", {"metadata": {"name": "tick"}, "spec": {
            "schedule": "*/10 * * * *", "successfulJobsHistoryLimit": 1,
            "concurrencyPolicy": "Forbid", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}}},
            "default")
        await plane.settle()
        assert await client.list("jobs.batch", "default") == []
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(600)
        [first] = await client.list("jobs.batch", "default")
        assert first["metadata"]["ownerReferences"][0]["name"] == "tick"
        await plane.clock.advance(600)  # Forbid: the first one is still running
        assert len(await client.list("jobs.batch", "default")) == 1
        await client.update("jobs.batch", {**first, "status": {"conditions": [
            {"type": "Complete", "status": "True"}]}}, subresource="status")
        await plane.clock.advance(600)
        jobs = await client.list("jobs.batch", "default")
        assert len(jobs) == 2 and jobs[0]["metadata"]["name"] == first["metadata"]["name"]
        second = jobs[1]
        await client.update("jobs.batch", {**second, "status": {"conditions": [
            {"type": "Complete", "status": "True"}]}}, subresource="status")
        await plane.clock.advance(600)
        names = [j["metadata"]["name"] for j in await client.list("jobs.batch", "default")]
        # one finished job is kept (successfulJobsHistoryLimit), the oldest is gone
        assert names[0] == second["metadata"]["name"] and len(names) == 2
        cron = await client.get("cronjobs.batch", "tick", "default")
        assert len(cron["status"]["active"]) == 1 and cron["status"]["lastScheduleTime"]


async def test_a_service_gets_the_endpoints_of_its_pods() -> None:
    async with running_plane("endpointslice-controller") as plane:
        client = plane.cluster.client("admin")
        await client.create("services", {"metadata": {"name": "web"}, "spec": {
            "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80,
                                                   "targetPort": "http"}]}}, "default")
        for i, ready in ((1, True), (2, False)):
            await client.create("pods", {"metadata": {"name": f"web-{i}", "labels": {
                "app": "web"}}, "spec": {"nodeName": "n1", "containers": [{
                    "name": "c", "image": "x", "ports": [{"name": "http",
                                                          "containerPort": 8080}]}]}},
                "default")
            pod = await client.get("pods", f"web-{i}", "default")
            await client.update("pods", {**pod, "status": {
                "phase": "Running", "podIP": f"10.244.0.{i}", "conditions": [
                    {"type": "Ready", "status": "True" if ready else "False"}]}},
                subresource="status")
        await client.create("pods", {"metadata": {"name": "other", "labels": {"app": "db"}},
                                     "spec": {"containers": [{"name": "c", "image": "x"}]}},
                            "default")
        await plane.settle()
        es = await client.get("endpointslices.discovery.k8s.io", "web", "default")
        assert es["metadata"]["labels"]["kubernetes.io/service-name"] == "web"
        assert [(e["addresses"], e["conditions"]["ready"]) for e in es["endpoints"]] == [
            (["10.244.0.1"], True), (["10.244.0.2"], False)]
        assert es["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
        ep = await client.get("endpoints", "web", "default")
        [subset] = ep["subsets"]
        assert [a["ip"] for a in subset["addresses"]] == ["10.244.0.1"]
        assert [a["ip"] for a in subset["notReadyAddresses"]] == ["10.244.0.2"]
        await client.delete("pods", "web-1", "default")
        await plane.settle()
        es = await client.get("endpointslices.discovery.k8s.io", "web", "default")
        assert [e["addresses"] for e in es["endpoints"]] == [["10.244.0.2"]]
