"""The supervisor: runs components, restarts a crashed one with backoff, reports health.

Nothing is swallowed: a crash is logged with its traceback and counted (the count is in
`/metrics`), and a component that is backing off after a crash is not ready (`/readyz`).
Backoff waits are timers on the injected clock, which hears when a component stops running
(its work no longer counts for settling). `/metrics` also shows each component's work queues
(`HasQueues`): depth, adds, retries and reconciles.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from fakeapi.machinery.clock import Clock
from fakeapi.runtime.workqueue import WorkQueue

log = logging.getLogger(__name__)

BASE_BACKOFF = 1.0
MAX_BACKOFF = 60.0
STABLE_AFTER = 60.0
"""Seconds a component must run after a restart before its backoff starts over."""


class Component(Protocol):
    """What the supervisor runs: a long-running task, and how busy and ready it is."""

    async def run(self) -> None:
        """Run until cancelled (returning counts as a crash)."""
        ...

    def busy(self) -> bool:
        """Whether the component has work it has not finished (for quiescence)."""
        ...

    def ready(self) -> bool:
        """Whether the component is up to date enough to act (e.g. its informers synced)."""
        ...


@runtime_checkable
class SaysWhy(Protocol):
    """A component that can say why it is not ready (`/readyz` shows it)."""

    def not_ready_reason(self) -> str:
        """Why `ready()` is False, in a few words."""
        ...


@runtime_checkable
class HasQueues(Protocol):
    """A component whose work queues `/metrics` reports (every `Controller`; the kubelet
    emulator has one per controller)."""

    def queues(self) -> Sequence[WorkQueue[Any]]:
        """The component's work queues (each named)."""
        ...


QUEUE_METRICS: tuple[tuple[str, str, str, Callable[[WorkQueue[Any]], int]], ...] = (
    ("fakeapi_workqueue_depth", "gauge", "Keys waiting in a work queue.", len),
    ("fakeapi_workqueue_adds_total", "counter", "Keys added to a work queue.",
     lambda q: q.adds),
    ("fakeapi_workqueue_retries_total", "counter",
     "Reconciles that failed or asked to be retried.", lambda q: q.retries),
    ("fakeapi_workqueue_reconciles_total", "counter", "Keys a work queue's workers reconciled.",
     lambda q: q.reconciles),
)
"""(name, type, help, value of a queue) of each work-queue metric."""


@dataclasses.dataclass
class Unit:
    """One supervised component and its record."""

    name: str
    component: Component
    crashes: int = 0
    state: str = "pending"
    """pending, running, backoff or stopped."""
    last_error: str = ""
    task: asyncio.Task[None] | None = None


class Health(NamedTuple):
    """One health check result, as `/readyz?verbose` lists them."""

    name: str
    ok: bool
    reason: str = ""


class Supervisor:
    """Starts, watches over and stops a set of named components."""

    def __init__(self, *, clock: Clock, base_backoff: float = BASE_BACKOFF,
                 max_backoff: float = MAX_BACKOFF, stable_after: float = STABLE_AFTER) -> None:
        self.clock = clock
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self.stable_after = stable_after
        self.units: dict[str, Unit] = {}
        self._started = False

    def add(self, name: str, component: Component) -> None:
        """Supervise `component` under `name` (started at once if the supervisor runs)."""
        if name in self.units:
            raise ValueError(f"component {name!r} added twice")
        unit = self.units[name] = Unit(name=name, component=component)
        if self._started:
            self._spawn(unit)

    def start(self) -> None:
        """Start every component."""
        self._started = True
        for unit in self.units.values():
            if unit.task is None:
                self._spawn(unit)

    def _spawn(self, unit: Unit) -> None:
        unit.task = asyncio.create_task(self._supervise(unit), name=unit.name)

    async def _supervise(self, unit: Unit) -> None:
        delay = self.base_backoff
        while True:
            unit.state = "running"
            started = self.clock.monotonic()
            try:
                await unit.component.run()
                error = "run() returned"
                log.error("component %s stopped by itself; restarting in %gs", unit.name,
                          delay)
            except Exception as e:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise  # it failed while being stopped: `stop()` reports it
                error = f"{type(e).__name__}: {e}"
                log.exception("component %s crashed; restarting in %gs", unit.name, delay)
            unit.crashes += 1
            unit.last_error = error
            if self.clock.monotonic() - started >= self.stable_after:
                delay = self.base_backoff
            unit.state = "backoff"
            self.clock.probe_changed()
            await self.clock.sleep(delay)
            delay = min(delay * 2, self.max_backoff)

    async def stop(self) -> None:
        """Cancel every component and wait for it; an error while stopping is logged."""
        self._started = False
        units = [u for u in self.units.values() if u.task is not None]
        for unit in units:
            assert unit.task is not None
            unit.task.cancel()
        for unit in units:
            assert unit.task is not None
            try:
                await unit.task
            except asyncio.CancelledError:
                pass
            except Exception:
                log.exception("component %s failed while stopping", unit.name)
            unit.state = "stopped"
            unit.task = None
        self.clock.probe_changed()

    def busy(self) -> bool:
        """Whether any running component has unfinished work."""
        return any(u.state == "running" and u.component.busy() for u in self.units.values())

    def health(self) -> list[Health]:
        """One check per component: running and ready."""
        checks = []
        for unit in self.units.values():
            if unit.state == "backoff":
                checks.append(Health(unit.name, False, f"crashed ({unit.last_error}), "
                                     "restarting"))
            elif unit.state != "running":
                checks.append(Health(unit.name, False, unit.state))
            elif not unit.component.ready():
                why = unit.component.not_ready_reason() \
                    if isinstance(unit.component, SaysWhy) else "not ready"
                if unit.last_error:
                    why += f" (last crash: {unit.last_error})"
                checks.append(Health(unit.name, False, why))
            else:
                checks.append(Health(unit.name, True))
        return checks

    def metrics_text(self) -> str:
        """Prometheus text: crashes and readiness per component, and its queues' metrics."""
        lines = ["# HELP fakeapi_component_crashes_total Times a component crashed and was "
                 "restarted.", "# TYPE fakeapi_component_crashes_total counter"]
        lines += [f'fakeapi_component_crashes_total{{component="{u.name}"}} {u.crashes}'
                  for u in self.units.values()]
        lines += ["# HELP fakeapi_component_ready Whether a component runs and is ready.",
                  "# TYPE fakeapi_component_ready gauge"]
        lines += [f'fakeapi_component_ready{{component="{h.name}"}} {int(h.ok)}'
                  for h in self.health()]
        queues = [(u.name, q) for u in self.units.values() if isinstance(u.component, HasQueues)
                  for q in u.component.queues()]
        for name, type_, help_, value in QUEUE_METRICS:
            lines += [f"# HELP {name} {help_}", f"# TYPE {name} {type_}"]
            lines += [f'{name}{{component="{unit}",queue="{q.name}"}} {value(q)}'
                      for unit, q in queues]
        return "\n".join(lines) + "\n"
