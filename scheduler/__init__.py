"""The scheduler, a component like kube-scheduler: `scheduler.scheduler` (the component:
informers, queue, reconcile) over `cache` (what it knows between cycles, and when a verdict
is reused), `cycle` (PreFilter, Filter, Score), `binding` (Reserve, PreBind, Bind) and
`explain` (the /explain report); the structured allocator (`scheduler.allocator`) and
`claims`, `filters`, `fiterror`, `usage`, `equivalence`, `nodeallocatable` are pure.

Declared here with a builder that imports the scheduler only when it is built.

Imports (every component package): `fakeapi.client`, `fakeapi.runtime`, `fakeapi.machinery`,
`fakeapi.kube`, `fakeapi.cel` and the kind table `fakeapi.registry.kinds`; never another
component package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.runtime.spec import ComponentSpec

if TYPE_CHECKING:
    from fakeapi.runtime.component import ComponentContext
    from fakeapi.runtime.supervisor import Component


def _scheduler(ctx: ComponentContext) -> Component:
    from scheduler.scheduler import Scheduler
    return Scheduler(ctx)


COMPONENTS: tuple[ComponentSpec, ...] = (
    ComponentSpec(name="scheduler", build=_scheduler, service_account="kube-scheduler",
                  help="kube-scheduler: filters, scores, allocates devices and binds pods"),
)
"""The scheduler's components."""
