"""The composition root: the API-server core plus the chosen components, wired together.

This is the one module that knows both sides. The core (`fakeapi.cluster`: log, store,
registry, RBAC, watch) knows nothing of components; each component package (`controllers`,
`scheduler`, `kubelet_emu`) declares its `COMPONENTS`; here they are selected with
kube-controller-manager's `--controllers` syntax, built with their own API identity, the
shared informers, the injected clock and a random stream of their own, and supervised.
The CLI, tests and replay all build a `ControlPlane`.

Imports: the core (all but HTTP), the runtime, the catalogue and the components.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Iterable

from fakeapi.auth.authn import service_account_username
from fakeapi.auth.bootstrap import COMPONENT_NAMESPACE, COMPONENT_ROLES
from fakeapi.catalog import all_components
from fakeapi.client import Client
from fakeapi.cluster import SYSTEM_ACTOR, Cluster, ClusterConfig
from fakeapi.machinery.clock import Clock, VirtualClock
from fakeapi.runtime.assembly import build_components
from fakeapi.runtime.component import Route, ServesRoutes
from fakeapi.runtime.informer import Informer, Informers
from fakeapi.runtime.spec import ComponentSpec, select
from fakeapi.runtime.supervisor import Health, Supervisor
from kubelet_emu.settings import EmulatorSettings

log = logging.getLogger(__name__)
INFORMERS_IDENTITY = "system:kube-controller-manager"
"""Who the shared informers list and watch as (upstream's controller-manager user)."""
COMPONENT_IDENTITIES = frozenset({INFORMERS_IDENTITY, SYSTEM_ACTOR, *(
    service_account_username(COMPONENT_NAMESPACE, account) for account in COMPONENT_ROLES)})
"""Every identity the control plane itself acts as: the API server's own writes, the shared
informers and each component's service account (whichever components a run selected)."""


class ControlPlane:
    """One cluster and its supervised components; `start()`, `settle()`, `stop()`."""

    def __init__(self, config: ClusterConfig | None = None, *, clock: Clock | None = None,
                 components: str | Iterable[str] = "*",
                 specs: Iterable[ComponentSpec] | None = None,
                 emulator: EmulatorSettings | None = None) -> None:
        config = config or ClusterConfig()
        self.cluster = Cluster(config, clock=clock)
        self.clock = self.cluster.clock
        self.informers = Informers(client=self.cluster.client(INFORMERS_IDENTITY))
        self.supervisor = Supervisor(clock=self.clock)
        if specs is None:
            emulator = emulator or EmulatorSettings()
            if emulator.state_dir is None and config.data_dir is not None:
                emulator = dataclasses.replace(emulator, state_dir=config.data_dir)
            specs = all_components(emulator)
        self.components = build_components(
            select(tuple(specs), components), client_for=self._client_for,
            informers=self.informers, clock=self.clock, gates=self.cluster.gates,
            random_for=self.cluster.randomness.for_component, supervisor=self.supervisor)
        self.clock.add_probe(self.busy)
        self._auto: asyncio.Task[None] | None = None

    @staticmethod
    def is_component_identity(user: str) -> bool:
        """Whether `user` is the control plane itself (the API server or a component), not a
        client from outside: what a component writes, even on a user's behalf, is its own."""
        return user in COMPONENT_IDENTITIES

    def _client_for(self, account: str, node: str | None) -> Client:
        return self.cluster.component_client(account, node=node)

    def _start_informer(self, informer: Informer) -> None:
        self.supervisor.add(f"informer:{informer.resource}", informer)

    async def start(self) -> None:
        """Start the shared informers and every component (and, on a `virtual:auto` clock,
        the loop that moves it whenever everything has settled)."""
        self.informers.start(self._start_informer)
        self.supervisor.start()
        if isinstance(self.clock, VirtualClock) and self.clock.auto:
            self._auto = asyncio.create_task(self.clock.run_auto(), name="clock:auto")

    async def stop(self) -> None:
        """Stop the clock's auto loop and every component, then close the core (watchers
        woken, log flushed)."""
        if self._auto is not None:
            self._auto.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._auto
        await self.supervisor.stop()
        await self.cluster.close()

    def busy(self) -> bool:
        """Whether any work is pending: undelivered watch events, queued keys, log wake-ups.

        The clock's settling probe: the log, the informers (through the log, as they catch
        up), the work queues and the supervisor tell the clock when it may have gone idle."""
        return self.cluster.log.wake_pending or self.supervisor.busy()

    async def settle(self) -> None:
        """Run until all work has settled (queues empty, informers caught up, no timer due),
        woken by the work as it finishes rather than polling."""
        await self.clock.run_until_settled()

    def health(self) -> list[Health]:
        """Readiness of every supervised component and informer."""
        return self.supervisor.health()

    def routes(self) -> list[Route]:
        """The non-resource paths the components serve (see `ServesRoutes`)."""
        return [route for c in self.components.values() if isinstance(c, ServesRoutes)
                for route in c.http_routes()]

    def metrics_text(self) -> str:
        """Prometheus text about the components."""
        return self.supervisor.metrics_text()
