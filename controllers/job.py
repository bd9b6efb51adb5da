"""The Job controller: runs pods until `completions` succeed (at most `parallelism` at once,
NonIndexed or Indexed), gives up after `backoffLimit` failures or `activeDeadlineSeconds`,
honours `suspend`, and writes the status and conditions `kubectl wait` and `get` read, as
kube-controller-manager's job controller does. Pods finish when a kubelet says so."""

from __future__ import annotations

import datetime as dt
from typing import Any

from controllers.owners import (
    OwnedPods,
    PodOwnerController,
    deletion_order,
    is_ready,
    pod_from_template,
)
from fakeapi.machinery.timestamps import parse_time_or_none, rfc3339
from fakeapi.registry.kinds import JOBS
from fakeapi.runtime.component import ComponentContext
from fakeapi.runtime.events import NORMAL, WARNING

Obj = dict[str, Any]
INDEX = "batch.kubernetes.io/job-completion-index"


def _condition(kind: str, reason: str, message: str, now: str) -> Obj:
    return {"type": kind, "status": "True", "lastProbeTime": now, "lastTransitionTime": now,
            "reason": reason, "message": message}


class JobController(PodOwnerController):
    """Keys are `namespace/name` of Jobs; a pod's change wakes its job."""

    owner_resource = JOBS.resource_id
    owner_kind = "Job"
    owner_api_version = "batch/v1"

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self._deadlines: set[str] = set()

    async def sync(self, key: str, job: Obj, pods: OwnedPods) -> None:
        """Count pods, start or stop some, then write the status."""
        spec, status = job.get("spec") or {}, dict(job.get("status") or {})
        if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in status.get("conditions") or []):
            return
        owned, active, adding = pods.owned, list(pods.active), pods.adding
        succeeded = [p for p in owned if (p.get("status") or {}).get("phase") == "Succeeded"]
        failed = [p for p in owned if (p.get("status") or {}).get("phase") == "Failed"]
        now = self.clock.now()
        if not spec.get("suspend"):
            status.setdefault("startTime", rfc3339(now))
        completions = spec.get("completions")
        indexed = spec.get("completionMode") == "Indexed"
        done_indexes = {_index(p) for p in succeeded} if indexed else set()
        done = len(done_indexes) if indexed else len(succeeded)
        conditions = [c for c in status.get("conditions") or []
                      if c.get("type") not in ("Suspended",)]
        stamp = rfc3339(now)
        finished = ""
        if completions is not None and done >= int(completions) or (
                completions is None and succeeded and not active):
            finished = "Complete"
            conditions += [_condition("SuccessCriteriaMet", "CompletionsReached",
                                      "Reached expected number of succeeded pods", stamp),
                           _condition("Complete", "CompletionsReached",
                                      "Reached expected number of succeeded pods", stamp)]
        elif len(failed) > int(spec.get("backoffLimit", 6)):
            finished = "Failed"
            conditions += [_condition("FailureTarget", "BackoffLimitExceeded",
                                      "Job has reached the specified backoff limit", stamp),
                           _condition("Failed", "BackoffLimitExceeded",
                                      "Job has reached the specified backoff limit", stamp)]
        elif spec.get("activeDeadlineSeconds") is not None and status.get("startTime") and (
                now - (parse_time_or_none(status["startTime"]) or now)
                >= dt.timedelta(seconds=int(spec["activeDeadlineSeconds"]))):
            finished = "Failed"
            conditions += [_condition("FailureTarget", "DeadlineExceeded",
                                      "Job was active longer than specified deadline", stamp),
                           _condition("Failed", "DeadlineExceeded",
                                      "Job was active longer than specified deadline", stamp)]
        if finished or spec.get("suspend"):
            for pod in active:
                await self.delete_pod(key, pod)
            active = []
            if spec.get("suspend") and not finished:
                conditions.append(_condition("Suspended", "JobSuspended", "Job suspended",
                                             stamp))
        else:
            parallelism = int(spec.get("parallelism", 1))
            remaining = (int(completions) - done) if completions is not None else parallelism
            wanted = min(parallelism, remaining)
            missing = wanted - len(active) - len(adding)
            if missing > 0:
                busy = {_index(p) for p in active} | done_indexes
                free = [i for i in range(int(completions or 0)) if i not in busy]
                for i in range(missing):
                    await self._create(key, job, free[i] if indexed and i < len(free) else None)
            elif missing < 0 and not adding:
                for pod in deletion_order(active)[:-missing]:
                    await self.delete_pod(key, pod)
            if spec.get("activeDeadlineSeconds") is not None and key not in self._deadlines:
                self._deadlines.add(key)  # look again when the deadline passes
                self.clock.call_later(float(spec["activeDeadlineSeconds"]),
                                      lambda: self.queue.add(key))
        status.update(active=len(active), succeeded=len(succeeded), failed=len(failed),
                      ready=sum(1 for p in active if is_ready(p)), conditions=conditions)
        if indexed:
            status["completedIndexes"] = _ranges(sorted(done_indexes))
        if finished == "Complete":
            status["completionTime"] = stamp
        status["uncountedTerminatedPods"] = {}
        status = {k: v for k, v in status.items() if v or k in ("ready",)}
        if status == (job.get("status") or {}):
            return
        await self.client.update(JOBS.resource_id, {**job, "status": status}, subresource="status")
        if finished == "Complete":  # as upstream's job controller reports the end
            await self.owner_event(key, NORMAL, "Completed", "Job completed")
        elif finished:
            failed_condition = conditions[-1]
            await self.owner_event(key, WARNING, failed_condition["reason"],
                                   failed_condition["message"])

    async def _create(self, key: str, job: Obj, index: int | None) -> None:
        template = (job.get("spec") or {}).get("template") or {}
        name = job["metadata"]["name"]
        annotations = {INDEX: str(index)} if index is not None else None
        labels = {INDEX: str(index)} if index is not None else None
        pod = pod_from_template(template, owner=job, api_version="batch/v1", kind="Job",
                                generate_name=f"{name}-{index}-" if index is not None
                                else f"{name}-", extra_labels=labels, annotations=annotations)
        if index is not None:
            pod["spec"].setdefault("hostname", f"{name}-{index}")
        await self.create_pod(key, pod)



def _index(pod: Obj) -> int:
    try:
        return int((pod["metadata"].get("annotations") or {}).get(INDEX, -1))
    except ValueError:
        return -1


def _ranges(indexes: list[int]) -> str:
    """Upstream's completedIndexes form: `0-2,4`."""
    parts: list[str] = []
    start = prev = None
    for i in indexes:
        if start is None:
            start = prev = i
        elif prev is not None and i == prev + 1:
            prev = i
        else:
            parts.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = i
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(parts)
