"""The status the kubelet writes for a pod it runs (pure: no I/O), as upstream's status
manager computes it: the phase (getPhase), the kubelet's four conditions (others kept as they
are), container statuses with containerd's ids and image references, the containers'
allocatedResourcesStatus from their devices' health, and the Pending status of a pod whose
claims aren't ready."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from kubelet_emu.health import DeviceKey, resource_status
from kubelet_emu.plugin import HealthStatus
from kubelet_emu.pod_claims import devices_for
from kubelet_emu.pod_records import ContainerRun, PodRecord

Obj = dict[str, Any]
KUBELET_CONDITIONS = frozenset({"PodReadyToStartContainers", "Initialized", "Ready",
                                "ContainersReady"})
"""Same as upstream's PodConditionByKubelet: the pod conditions the kubelet writes."""
BACKOFF_BASE, BACKOFF_MAX = 10.0, 300.0
"""Upstream's CrashLoopBackOff: 10 s doubling up to 5 min."""


def container_id(pod_uid: str, name: str, restarts: int) -> str:
    """A stable containerd id for one run of a container."""
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restarts}".encode()).hexdigest()


def image_ref(image: str) -> tuple[str, str]:
    """(image, imageID) as containerd reports them (`ubuntu:22.04` is
    `docker.io/library/ubuntu:22.04`)."""
    first, slash, _ = image.partition("/")
    if not slash or not ("." in first or ":" in first or first == "localhost"):
        image = f"docker.io/{image if slash else 'library/' + image}"
    if ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
        image += ":latest"
    digest = hashlib.sha256(image.encode()).hexdigest()
    return image, f"{image.rsplit(':', 1)[0]}@sha256:{digest}"


def _cond(type_: str, status: bool, since: str, reason: str = "") -> Obj:
    c: Obj = {"type": type_, "status": "True" if status else "False",
              "lastTransitionTime": since}
    if reason:
        c["reason"] = reason
    return c


def container_status(run: ContainerRun, health: list[Obj] | None = None) -> Obj:
    """One entry of containerStatuses / initContainerStatuses."""
    image, image_id = image_ref(str(run.spec.get("image") or ""))
    out: Obj = {"name": run.name, "image": image, "imageID": image_id if run.started_at else "",
                "ready": run.running and not run.init, "restartCount": run.restarts,
                "started": run.running, "lastState": run.last_state or {}}
    if run.container_id:
        out["containerID"] = run.container_id
    if run.running:
        out["state"] = {"running": {"startedAt": run.started_at}}
    elif run.exit_code is not None and run.finished_at and not run.waiting_reason:
        out["state"] = {"terminated": terminated_state(run)}
    else:
        waiting: Obj = {"reason": run.waiting_reason}
        if run.waiting_message:
            waiting["message"] = run.waiting_message
        out["state"] = {"waiting": waiting}
    if health:
        out["allocatedResourcesStatus"] = health
    return out


def terminated_state(run: ContainerRun) -> Obj:
    """The `terminated` state of a container's run that has exited."""
    code = run.exit_code or 0
    out: Obj = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                "finishedAt": run.finished_at, "containerID": run.container_id}
    if run.started_at:  # (null when it never started: the server's merge patch drops it)
        out["startedAt"] = run.started_at
    return out


def phase_of(record: PodRecord) -> str:
    """Same as upstream's getPhase: Pending during init or while a container was never
    created; Running while a container runs or will restart; once all are done, Succeeded
    when every one exited 0, else Failed."""
    if any(not r.started_at or r.running or r.exit_code is None for r in record.init):
        return "Pending"
    runs = record.containers
    if any(not r.started_at and r.exit_code is None and not r.last_state for r in runs):
        return "Pending"  # a container never created yet (CreateContainerError) waits
    if any(r.running or r.exit_code is None for r in runs):
        return "Running"
    if record.terminating or record.restart_policy == "Never" or (
            record.restart_policy == "OnFailure" and all(r.exit_code == 0 for r in runs)):
        return "Succeeded" if all(r.exit_code == 0 for r in runs) else "Failed"
    return "Running"  # restarting


def pod_status(pod: Obj, record: PodRecord, host_ip: str,
               health: dict[str, list[Obj]] | None = None, now: str = "") -> Obj:
    """The status the kubelet writes for a pod it runs: a condition keeps its
    lastTransitionTime while its status holds, and takes `now` when it flips (the pod's start
    for a condition it never had)."""
    status = dict(pod.get("status") or {})
    phase = phase_of(record)
    initialized = phase != "Pending"
    ready = phase == "Running" and all(r.running for r in record.containers)
    # same as upstream's status manager: conditions the kubelet does not own (PodScheduled,
    # DisruptionTarget, readiness gates) are kept as they are
    # (their null fields, as the scheduler writes `lastProbeTime: null`, are left out: the
    # server's merge patch drops them, and the status must compare equal to what it keeps)
    others = [{k: v for k, v in c.items() if v is not None}
              for c in status.get("conditions") or [] if c.get("type") not in KUBELET_CONDITIONS]
    since = record.started
    conditions = [
        _cond("PodReadyToStartContainers", not record.finished, since),
        _cond("Initialized", initialized, since,
              "" if initialized else "ContainersNotInitialized"),
        _cond("Ready", ready, since, "" if ready else (
            "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady")),
        _cond("ContainersReady", ready, since, "" if ready else (
            "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady")),
        *others]
    previous = {c.get("type"): c for c in status.get("conditions") or []}
    for c in conditions:
        old = previous.get(c["type"])
        if old is None or c["type"] not in KUBELET_CONDITIONS:
            continue
        if old.get("status") == c["status"] and old.get("lastTransitionTime"):
            c["lastTransitionTime"] = old["lastTransitionTime"]
        elif old.get("status") != c["status"] and now:
            c["lastTransitionTime"] = now
    health = health or {}
    status.update({
        "phase": phase, "conditions": conditions, "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}], "podIP": record.ip, "podIPs": [{"ip": record.ip}],
        "startTime": record.started,
        "containerStatuses": [container_status(r, health.get(r.name))
                              for r in record.containers]})
    if record.init:
        status["initContainerStatuses"] = [container_status(r) for r in record.init]
    generation = pod["metadata"].get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    return status


def pending_status(pod: Obj, reason: str = "ContainerCreating") -> Obj:
    """The status of a pod admitted to the node but not started (claims not ready)."""
    status = dict(pod.get("status") or {})
    status["phase"] = "Pending"
    status["containerStatuses"] = [{
        "name": c["name"], "image": image_ref(str(c.get("image") or ""))[0], "imageID": "",
        "ready": False, "restartCount": 0, "started": False, "lastState": {},
        "state": {"waiting": {"reason": reason}}} for c in pod["spec"].get("containers") or []]
    return status


def restarts_after_exit(record: PodRecord, run: ContainerRun) -> bool:
    """Whether an exited container is started again (restartPolicy; never while the pod
    terminates)."""
    if record.terminating:
        return False
    return record.restart_policy == "Always" or (
        record.restart_policy == "OnFailure" and run.exit_code != 0)


def crash_loop_delay(restarts: int) -> float:
    """Seconds before a container that exited `restarts` times already starts again."""
    return min(BACKOFF_BASE * 2 ** restarts, BACKOFF_MAX)


def allocated_resources_status(
        record: PodRecord,
        health: Callable[[DeviceKey], tuple[HealthStatus, str]]) -> dict[str, list[Obj]]:
    """Per container: its allocatedResourcesStatus, one entry per claim reference
    (`claim:<pod claim>` or `claim:<pod claim>/<request>`) with its devices' health
    (`health(key)` of each)."""
    by_name = {c.pod_claim: c for c in record.claims}
    out: dict[str, list[Obj]] = {}
    for run in record.containers:
        entries = []
        for ref in (run.spec.get("resources") or {}).get("claims") or []:
            claim = by_name.get(ref.get("name"))
            if claim is None:
                continue
            request = ref.get("request") or ""
            keys = list(dict.fromkeys((driver, d.pool_name, d.device_name)
                                      for driver, d in devices_for(claim, request)))
            if keys:
                name = f"claim:{claim.pod_claim}" + (f"/{request}" if request else "")
                entries.append(resource_status(name, [(k, *health(k)) for k in keys]))
        if entries:
            out[run.name] = entries
    return out
