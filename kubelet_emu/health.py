"""The kubelet's device health cache (KEP-4680 for DRA), fed by the drivers' health streams.

Each NodeWatchResources response refreshes the devices it lists; a device that gets no
update within its `health_check_timeout_seconds` (30 s when unset) turns Unknown. A change
is reported so the kubelet rewrites `allocatedResourcesStatus` of the containers using the
device: name `claim:<pod claim>[/<request>]`, resources with resourceID
`<driver>/<pool>/<device>`, health and message.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from fakeapi.machinery.clock import Clock, Timer
from kubelet_emu.plugin import DeviceHealth, HealthStatus

DEFAULT_TIMEOUT = 30
MESSAGE_MAX = 1024

DeviceKey = tuple[str, str, str]
"""(driver, pool, device)."""


@dataclasses.dataclass(kw_only=True)
class Entry:
    """What the kubelet knows of one device's health."""

    health: HealthStatus
    message: str
    seen: float
    """The monotonic time of the last update."""
    timeout: float


def _message(text: str) -> str:
    """Upstream: messages past 1024 characters are cut to 1021 plus `...`."""
    return text if len(text) <= MESSAGE_MAX else text[:MESSAGE_MAX - 3] + "..."


class HealthCache:
    """Device health per node, with the timeout that turns silent devices Unknown."""

    def __init__(self, clock: Clock, changed: Callable[[str, set[DeviceKey]], None]) -> None:
        self.clock = clock
        self._changed = changed
        self._entries: dict[str, dict[DeviceKey, Entry]] = {}
        self._timers: dict[tuple[str, str], Timer] = {}

    def update(self, node: str, driver: str, devices: Sequence[DeviceHealth]) -> None:
        """One NodeWatchResourcesResponse from `driver` on `node`."""
        entries = self._entries.setdefault(node, {})
        now = self.clock.monotonic()
        changed: set[DeviceKey] = set()
        for d in devices:
            key = (driver, d.pool_name, d.device_name)
            timeout = float(d.health_check_timeout_seconds
                            if d.health_check_timeout_seconds > 0 else DEFAULT_TIMEOUT)
            message = _message(d.message)
            entry = entries.get(key)
            if entry is None or (entry.health, entry.message) != (d.health, message):
                changed.add(key)
            entries[key] = Entry(health=d.health, message=message, seen=now, timeout=timeout)
        self._arm(node, driver)
        if changed:
            self._changed(node, changed)

    def _arm(self, node: str, driver: str) -> None:
        timer = self._timers.pop((node, driver), None)
        if timer is not None:
            timer.cancel()
        deadlines = [e.seen + e.timeout for k, e in self._entries.get(node, {}).items()
                     if k[0] == driver and e.health != HealthStatus.UNKNOWN]
        if deadlines:
            delay = max(0.0, min(deadlines) - self.clock.monotonic())
            self._timers[(node, driver)] = self.clock.call_later(
                delay, lambda: self._expire(node, driver))

    def _expire(self, node: str, driver: str) -> None:
        self._timers.pop((node, driver), None)
        now = self.clock.monotonic()
        changed: set[DeviceKey] = set()
        for key, entry in self._entries.get(node, {}).items():
            if key[0] == driver and entry.health != HealthStatus.UNKNOWN and \
                    entry.seen + entry.timeout <= now:
                entry.health, entry.message = HealthStatus.UNKNOWN, ""
                changed.add(key)
        self._arm(node, driver)
        if changed:
            self._changed(node, changed)

    def get(self, node: str, key: DeviceKey) -> tuple[HealthStatus, str]:
        """A device's health and message (Unknown for a device never reported)."""
        entry = self._entries.get(node, {}).get(key)
        return (entry.health, entry.message) if entry is not None else (HealthStatus.UNKNOWN, "")

    def forget(self, node: str) -> None:
        """Drop a node's devices (its kubelet stopped)."""
        for key in [k for k in self._timers if k[0] == node]:
            self._timers.pop(key).cancel()
        self._entries.pop(node, None)

    def stop(self) -> None:
        """Cancel every timer."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()


def resource_status(name: str,
                    devices: Sequence[tuple[DeviceKey, HealthStatus, str]]) -> dict[str, Any]:
    """One allocatedResourcesStatus entry: the claim reference and its devices' health."""
    resources = []
    for (driver, pool, device), health, message in devices:
        r: dict[str, Any] = {"resourceID": f"{driver}/{pool}/{device}",
                             "health": health.api_value}
        if message:
            r["message"] = message
        resources.append(r)
    return {"name": name, "resources": resources}
