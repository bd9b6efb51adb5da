"""Components: how a package declares them, what they are given, and the controller shape.

A component package (controllers, scheduler, kubelet_emu) lists `ComponentSpec`s; the
composition root picks some with the `--components` syntax, builds each from a
`ComponentContext` and hands it to the supervisor. Most components are a `Controller`:
shared informers → a rate-limited work queue → an idempotent `reconcile(key)` that writes
through the API with the component's own identity.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from aiohttp import web

from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.features import FeatureGates, GateReader
from fakeapi.runtime.informer import Informer, Informers, Obj, object_key
from fakeapi.runtime.workqueue import WorkQueue, process

K = TypeVar("K", bound=Hashable)
KeyFunc = Callable[[str, Obj, "Obj | None"], Iterable[Any]]
"""Maps one change (type, obj, old) to the work-queue keys it concerns."""
Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]
"""An extra (method, path, handler) route outside /api and /apis that a component answers
(a read-only report); the server authenticates and authorizes it like every other path."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ComponentContext:
    """What a component gets: its own API client, the shared informers, time, randomness."""

    name: str
    client: ApiClient
    informers: Informers
    clock: Clock
    random: random.Random
    """A stream of the component's own, reproducible under a seed."""
    gates: GateReader = dataclasses.field(default_factory=FeatureGates)
    """The feature gates in effect (components behave as their upstream counterpart does
    under the same gates)."""
    client_for: Callable[[str, str | None], ApiClient] | None = None
    """`client_for(account, node)`: a client of another kube-system service account, bound
    to a node when one is named (the kubelet emulator acts for each node with its own
    identities); None where the composition root offers none."""


@runtime_checkable
class ServesRoutes(Protocol):
    """A component that answers some non-resource paths of the server (the scheduler's
    `/explain/...`); the composition root hands them to the HTTP server."""

    def http_routes(self) -> list[Route]:
        """The routes, registered once when the server is built."""
        ...


class Controller(Generic[K]):
    """Informers feeding a work queue, drained by workers calling `reconcile(key)`.

    Subclasses call `watch()` in their constructor and implement `reconcile`. Restarting
    (after a crash) requeues interrupted keys and re-delivers every cached object through
    the key functions, so a restarted controller converges to the same state.
    """

    workers = 1

    def __init__(self, ctx: ComponentContext) -> None:
        self.ctx = ctx
        self.name = ctx.name
        self.client = ctx.client
        self.clock = ctx.clock
        self.queue: WorkQueue[K] = WorkQueue(clock=ctx.clock, name=ctx.name)
        self._watched: list[tuple[Informer, KeyFunc]] = []
        self._working = False

    def watch(self, resource: str, keys: KeyFunc | None = None) -> Informer:
        """Enqueue the keys of every change of `resource` (by default the object's key)."""
        informer = self.ctx.informers.get(resource)
        key_func: KeyFunc = keys or _own_key
        self._watched.append((informer, key_func))
        informer.add_handler(lambda t, o, old: self._enqueue(key_func(t, o, old)))
        return informer

    def _enqueue(self, keys: Iterable[K]) -> None:
        for key in keys:
            self.queue.add(key)

    async def reconcile(self, key: K) -> None:
        """Bring the world in line for `key`; raise (or `Retry`) to be called again later."""
        raise NotImplementedError

    async def run(self) -> None:
        """Wait for the informers, resync, then run the workers until cancelled."""
        for informer, _ in self._watched:
            await informer.wait_synced()
        self.queue.requeue_processing()
        for informer, key_func in self._watched:
            for obj in informer.cache.list():
                self._enqueue(key_func("ADDED", obj, None))
        workers = [asyncio.create_task(process(self.queue, self.reconcile, name=self.name))
                   for _ in range(self.workers)]
        self._working = True
        try:
            await asyncio.gather(*workers)
        finally:
            self._working = False
            self.clock.probe_changed()
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    def busy(self) -> bool:
        """Keys queued or being reconciled while the workers run (queued keys of a stopped
        controller wait for its restart, a timer)."""
        return self._working and self.queue.busy()

    def ready(self) -> bool:
        """Every watched informer has synced."""
        return all(i.synced for i, _ in self._watched)

    def unsynced(self) -> list[str]:
        """The resources of the watched informers that have not synced."""
        return [i.resource for i, _ in self._watched if not i.synced]

    def not_ready_reason(self) -> str:
        """Which informers it waits for."""
        return "waiting for the informers of " + ", ".join(self.unsynced())

    def queues(self) -> Sequence[WorkQueue[Any]]:
        """Its work queue (for `/metrics`)."""
        return (self.queue,)


def _own_key(type_: str, obj: Obj, old: Obj | None) -> list[str]:
    return [object_key(obj)]
