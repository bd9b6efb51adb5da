"""The scheduler, a component like kube-scheduler: `scheduler.scheduler` (the component:
informers, queue, reconcile) over `cache` (what it knows between cycles, and when a verdict
is reused), `cycle` (PreFilter, Filter, Score), `binding` (Reserve, PreBind, Bind) and
`explain` (the /explain report); the structured allocator (`scheduler.allocator`) and
`claims`, `filters`, `fiterror`, `usage`, `equivalence`, `nodeallocatable` are pure."""

from __future__ import annotations

from fakeapi.runtime.component import ComponentSpec
from scheduler.scheduler import Scheduler

COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(name="scheduler", build=Scheduler, service_account="kube-scheduler",
                  help="kube-scheduler: filters, scores, allocates devices and binds pods"),
)
"""The scheduler's components."""
