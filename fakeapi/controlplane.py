"""The composition root: the API-server core plus the chosen components, wired together.

This is the one module that knows both sides. The core (`fakeapi.cluster`: log, store,
registry, RBAC, watch) knows nothing of components; each component package (`controllers`,
`scheduler`, `kubelet_emu`) declares its `COMPONENTS`; here they are selected with
kube-controller-manager's `--controllers` syntax, built with their own API identity, the
shared informers, the injected clock and a random stream of their own, and supervised.
The CLI, tests and replay all build a `ControlPlane`.
"""

from __future__ import annotations

from collections.abc import Iterable

import controllers
import kubelet_emu
import scheduler
from fakeapi.clock import Clock
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.runtime.component import ComponentContext, ComponentSpec, select
from fakeapi.runtime.informer import Informer, Informers
from fakeapi.runtime.supervisor import Component, Health, Supervisor

ALL_COMPONENTS: tuple[ComponentSpec, ...] = (
    *controllers.COMPONENTS, *scheduler.COMPONENTS, *kubelet_emu.COMPONENTS)
"""Every component any package offers, in start order."""
INFORMERS_IDENTITY = "system:kube-controller-manager"
"""Who the shared informers list and watch as (upstream's controller-manager user)."""


class ControlPlane:
    """One cluster and its supervised components; `start()`, `settle()`, `stop()`."""

    def __init__(self, config: ClusterConfig | None = None, *, clock: Clock | None = None,
                 components: str | Iterable[str] = "*",
                 specs: Iterable[ComponentSpec] = ALL_COMPONENTS) -> None:
        self.cluster = Cluster(config or ClusterConfig(), clock=clock)
        self.clock = self.cluster.clock
        self.informers = Informers(client=self.cluster.client(INFORMERS_IDENTITY))
        self.supervisor = Supervisor(clock=self.clock)
        self.components: dict[str, Component] = {}
        for spec in select(tuple(specs), components):
            ctx = ComponentContext(
                name=spec.name,
                client=self.cluster.component_client(spec.service_account or spec.name),
                informers=self.informers, clock=self.clock,
                random=self.cluster.randomness.for_component(spec.name))
            self.components[spec.name] = spec.build(ctx)
            self.supervisor.add(spec.name, self.components[spec.name])
        self.clock.add_probe(self.busy)

    def _start_informer(self, informer: Informer) -> None:
        self.supervisor.add(f"informer:{informer.resource}", informer)

    async def start(self) -> None:
        """Start the shared informers and every component."""
        self.informers.start(self._start_informer)
        self.supervisor.start()

    async def stop(self) -> None:
        """Stop every component, then close the core (watchers woken, log flushed)."""
        await self.supervisor.stop()
        await self.cluster.close()

    def busy(self) -> bool:
        """Whether any work is pending: undelivered watch events, queued keys, log wake-ups."""
        return self.cluster.log.wake_pending or self.supervisor.busy()

    async def settle(self) -> None:
        """Run until all work has settled (queues empty, informers caught up, no timer due)."""
        await self.clock.run_until_settled()

    def health(self) -> list[Health]:
        """Readiness of every supervised component and informer."""
        return self.supervisor.health()

    def metrics_text(self) -> str:
        """Prometheus text about the components."""
        return self.supervisor.metrics_text()
