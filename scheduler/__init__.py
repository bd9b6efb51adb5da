"""The scheduler: the structured allocator (`scheduler.allocator`, pure) and the pod
scheduling loop (`scheduler.scheduler`), a component like kube-scheduler."""

from __future__ import annotations

from fakeapi.runtime.component import ComponentSpec
from scheduler.scheduler import Scheduler

COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(name="scheduler", build=Scheduler, service_account="kube-scheduler",
                  help="kube-scheduler: filters, scores, allocates devices and binds pods"),
)
"""The scheduler's components."""
