"""The CronJob controller: a Job per schedule time on the injected clock (so virtual-clock
tests and replays run schedules instantly), concurrency policies, suspend, history limits
and the status `kubectl get cronjob` shows, as kube-controller-manager's cronjob controller
does."""

from __future__ import annotations

import datetime as dt
from typing import Any

from controllers.owners import controller_uid_index, owner_key, reference_to
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time_or_none, rfc3339
from fakeapi.registry.kinds import CRON_JOBS, JOBS
from fakeapi.runtime.component import ComponentContext, Controller

Obj = dict[str, Any]
SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
          "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
          "@hourly": "0 * * * *"}
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_NAMES = {3: ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
              "DEC"], 4: ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]}


class Schedule:
    """A standard 5-field cron schedule (robfig/cron's syntax: `*`, `*/n`, `a-b/n`, lists,
    month and day names, the @ macros), as upstream parses `spec.schedule`."""

    def __init__(self, text: str) -> None:
        fields = MACROS.get(text.strip(), text).split()
        if len(fields) != 5:
            raise ValueError(f"expected exactly 5 fields, found {len(fields)}: {text!r}")
        self.sets = [self._field(f, i) for i, f in enumerate(fields)]
        self.any_day = fields[2] == "*", fields[4] == "*"

    @staticmethod
    def _field(text: str, index: int) -> set[int]:
        low, high = _RANGES[index]
        out: set[int] = set()
        for part in text.split(","):
            body, _, step_text = part.partition("/")
            step = int(step_text) if step_text else 1
            if body in ("*", "?"):
                start, end = low, high
            else:
                a, _, b = body.partition("-")
                start = _value(a, index)
                end = _value(b, index) if b else (high if step_text else start)
            if not (low <= start <= high and low <= end <= high) or step < 1:
                raise ValueError(f"value out of range in {text!r}")
            out.update(range(start, end + 1, step))
        if index == 4 and 7 in out:
            out.add(0)
        return out

    def _day_matches(self, t: dt.datetime) -> bool:
        dom = t.day in self.sets[2]
        dow = (t.isoweekday() % 7) in self.sets[4]
        if self.any_day[0] or self.any_day[1]:  # same as cron: both must match then
            return dom and dow
        return dom or dow

    def next_after(self, t: dt.datetime) -> dt.datetime | None:
        """The first schedule time strictly after `t` (None within five years: never)."""
        t = t.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
        limit = t + dt.timedelta(days=5 * 366)
        while t < limit:
            if t.month not in self.sets[3]:
                t = (t.replace(day=1, hour=0, minute=0) + dt.timedelta(days=32)).replace(day=1)
            elif not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + dt.timedelta(days=1)
            elif t.hour not in self.sets[1]:
                t = t.replace(minute=0) + dt.timedelta(hours=1)
            elif t.minute not in self.sets[0]:
                t += dt.timedelta(minutes=1)
            else:
                return t
        return None


def _value(text: str, index: int) -> int:
    names = _NAMES.get(index)
    if names and text.upper() in names:
        return names.index(text.upper()) + (1 if index == 3 else 0)
    return int(text)


def _finished(job: Obj) -> str:
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return ""


class CronJobController(Controller[str]):
    """Keys are `namespace/name` of CronJobs; a Job's change wakes its CronJob; each
    CronJob wakes itself at its next schedule time."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.crons = self.watch(CRON_JOBS.resource_id)
        self.jobs = self.watch(JOBS.resource_id, owner_key("CronJob"))
        self.jobs.cache.add_index("controller", controller_uid_index)
        self._timers: dict[str, Any] = {}

    async def reconcile(self, key: str) -> None:
        """Start the Job of a due schedule time, trim the history, write the status."""
        namespace, _, name = key.partition("/")
        cron = self.crons.cache.get(name, namespace)
        if cron is None:
            return
        spec = cron.get("spec") or {}
        try:
            schedule = Schedule(str(spec.get("schedule") or ""))
        except ValueError:
            return  # refused by validation upstream; nothing to run
        jobs = self.jobs.cache.by_index("controller", cron["metadata"]["uid"])
        active = [j for j in jobs if not _finished(j)]
        status = dict(cron.get("status") or {})
        now = self.clock.now()
        if now.tzinfo is None:
            now = now.replace(tzinfo=dt.UTC)
        last = parse_time_or_none(status.get("lastScheduleTime")) or parse_time_or_none(
            cron["metadata"].get("creationTimestamp")) or now
        due = schedule.next_after(last)
        if due is not None and due <= now and not spec.get("suspend"):
            policy = spec.get("concurrencyPolicy") or "Allow"
            if policy == "Forbid" and active:
                pass  # same as upstream: skip this run
            else:
                if policy == "Replace":
                    for job in active:
                        await self._delete(job)
                    active = []
                created = await self._start(cron, due)
                if created is not None:
                    active.append(created)
                status["lastScheduleTime"] = rfc3339(due)
        finished = [j for j in jobs if _finished(j)]
        await self._trim(finished, "Complete", int(spec.get("successfulJobsHistoryLimit", 3)))
        await self._trim(finished, "Failed", int(spec.get("failedJobsHistoryLimit", 1)))
        done = [parse_time_or_none((j.get("status") or {}).get("completionTime")) for j in finished
                if _finished(j) == "Complete"]
        if any(done):
            status["lastSuccessfulTime"] = rfc3339(max(t for t in done if t))
        status["active"] = [{"kind": "Job", "namespace": namespace, "apiVersion": "batch/v1",
                             "name": j["metadata"]["name"], "uid": j["metadata"]["uid"]}
                            for j in active]
        status = {k: v for k, v in status.items() if v}
        if status != (cron.get("status") or {}):
            await self.client.update(CRON_JOBS.resource_id, {**cron, "status": status},
                                     subresource="status")
        self._wake_at(key, schedule.next_after(max(now, last)), now)

    def _wake_at(self, key: str, when: dt.datetime | None, now: dt.datetime) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if when is not None:
            self._timers[key] = self.clock.call_later(
                max((when - now).total_seconds(), 0.0), lambda: self.queue.add(key))

    async def _start(self, cron: Obj, due: dt.datetime) -> Obj | None:
        """Same as upstream getJobFromTemplate2: `NAME-<minutes since the epoch>`."""
        template = (cron.get("spec") or {}).get("jobTemplate") or {}
        meta = template.get("metadata") or {}
        name = f"{cron['metadata']['name']}-{int(due.timestamp()) // 60}"
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": name, "namespace": cron["metadata"]["namespace"],
            "labels": dict(meta.get("labels") or {}),
            "annotations": {**(meta.get("annotations") or {}), SCHEDULED: rfc3339(due)},
            "ownerReferences": [reference_to(cron, "batch/v1", "CronJob")]},
            "spec": template.get("spec") or {}}
        try:
            return await self.client.create(JOBS.resource_id, job)
        except ApiError as e:
            if e.code != 409:
                raise
            return None

    async def _trim(self, finished: list[Obj], kind: str, keep: int) -> None:
        ended = sorted((j for j in finished if _finished(j) == kind),
                       key=lambda j: str(j["metadata"].get("creationTimestamp") or ""))
        for job in ended[:max(len(ended) - keep, 0)]:
            await self._delete(job)

    async def _delete(self, job: Obj) -> None:
        try:
            await self.client.delete(JOBS.resource_id, job["metadata"]["name"],
                                     job["metadata"]["namespace"],
                                     propagation_policy="Background")
        except ApiError as e:
            if e.code != 404:
                raise
