"""The supervisor: runs components, restarts a crashed one with backoff, reports health.

Nothing is swallowed: a crash is logged with its traceback and counted (the count is in
`/metrics`), and a component that is backing off after a crash is not ready (`/readyz`).
Backoff waits are timers on the injected clock, which hears when a component stops running
(its work no longer counts for settling).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import NamedTuple, Protocol

from fakeapi.machinery.clock import Clock

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
                checks.append(Health(unit.name, False, "not ready"))
            else:
                checks.append(Health(unit.name, True))
        return checks

    def metrics_text(self) -> str:
        """Prometheus text: crashes and readiness per component."""
        lines = ["# HELP fakeapi_component_crashes_total Times a component crashed and was "
                 "restarted.", "# TYPE fakeapi_component_crashes_total counter"]
        lines += [f'fakeapi_component_crashes_total{{component="{u.name}"}} {u.crashes}'
                  for u in self.units.values()]
        lines += ["# HELP fakeapi_component_ready Whether a component runs and is ready.",
                  "# TYPE fakeapi_component_ready gauge"]
        lines += [f'fakeapi_component_ready{{component="{h.name}"}} {int(h.ok)}'
                  for h in self.health()]
        return "\n".join(lines) + "\n"
