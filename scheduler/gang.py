"""Gang scheduling (KEP-4671, the `GangScheduling` gate): upstream's GangScheduling plugin.

A pod whose PodGroup (`spec.schedulingGroup.podGroupName`) has `schedulingPolicy.gang`
is not tried until `minCount` pods of the group exist (PreEnqueue: no condition, no
event). Once its cycle has chosen a node and Reserve has taken its devices and resources,
it waits at Permit until `minCount` pods of the group are waiting there or bound; then every
waiting pod of the group goes on to PreBind and Bind. The group has one deadline
(`TIMEOUT` from the first pod that waits, renewed once passed): a pod still waiting then is
rejected, its reservations are undone (Unreserve) and it is reported unschedulable with
upstream's message. Nothing is written while a pod waits: the claims' allocations and
reservations are PreBind's.

This module holds the waiting pods and the rules; `scheduler.scheduler` calls it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fakeapi.kube.resourceclaim import pod_group_name
from fakeapi.machinery.durations import SECOND, format_duration
from scheduler.cycle import ScheduleResult

Obj = dict[str, Any]
GATE = "GangScheduling"
PLUGIN = "GangScheduling"
TIMEOUT = 300.0  # upstream's DefaultPodGroupSchedulingTimeoutDuration (5 min)


def min_count(group: Obj | None) -> int | None:
    """The group's `schedulingPolicy.gang.minCount`, or None when it is no gang."""
    gang = (((group or {}).get("spec") or {}).get("schedulingPolicy") or {}).get("gang")
    if gang is None:
        return None
    return int(gang.get("minCount") or 1)


def group_key(pod: Obj) -> str:
    """`namespace/podGroupName` of the pod's group, or "" for a pod of no group."""
    name = pod_group_name(pod)
    return f"{pod['metadata'].get('namespace', '')}/{name}" if name else ""


def timeout_message(waited: float) -> str:
    """Upstream's rejection of a pod that waited at Permit until the deadline."""
    return (f"rejected due to timeout after waiting {format_duration(round(waited * SECOND))}"
            f" at plugin {PLUGIN}")


@dataclasses.dataclass(kw_only=True)
class Parked:
    """A pod waiting at Permit: reserved on its node, nothing written yet."""

    key: str
    pod: Obj
    result: ScheduleResult
    group: str
    waited: float
    """How long Permit told it to wait (the group's deadline from when it arrived)."""


@dataclasses.dataclass
class _Group:
    deadline: float | None = None
    waiting: dict[str, Parked] = dataclasses.field(default_factory=dict)


class Gangs:
    """The pods waiting at Permit, by group, and each group's deadline."""

    def __init__(self) -> None:
        self._groups: dict[str, _Group] = {}
        self._by_pod: dict[str, Parked] = {}

    def parked(self, key: str) -> Parked | None:
        """The pod's wait at Permit, if it waits."""
        return self._by_pod.get(key)

    def deadline(self, group: str) -> float | None:
        """When the group's current wait ends (monotonic), if it has one."""
        state = self._groups.get(group)
        return state.deadline if state is not None else None

    def permit(self, *, key: str, pod: Obj, result: ScheduleResult, group: str,
               needed: int, bound: int, now: float) -> list[Parked] | float:
        """Permit for a reserved pod: every waiting pod of the group, this one included,
        when `needed` of them are waiting or `bound`; else the pod waits, and the time it
        is told to wait is returned."""
        state = self._groups.setdefault(group, _Group())
        if len(state.waiting) + 1 + bound >= needed:
            allowed = [*state.waiting.values(),
                       Parked(key=key, pod=pod, result=result, group=group, waited=0.0)]
            for p in state.waiting.values():
                self._by_pod.pop(p.key, None)
            state.waiting.clear()
            return allowed
        if state.deadline is None or state.deadline <= now:
            state.deadline = now + TIMEOUT
        wait = state.deadline - now
        parked = Parked(key=key, pod=pod, result=result, group=group, waited=wait)
        state.waiting[key] = parked
        self._by_pod[key] = parked
        return wait

    def release(self, key: str) -> Parked | None:
        """The pod stops waiting (rejected at its deadline, or gone)."""
        parked = self._by_pod.pop(key, None)
        if parked is not None:
            state = self._groups.get(parked.group)
            if state is not None:
                state.waiting.pop(key, None)
        return parked
