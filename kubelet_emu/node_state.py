"""What the emulator keeps about one node it runs a kubelet for."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import kubelet_emu.nodes as nodes
from kubelet_emu.drivers import FakeDriver
from kubelet_emu.inventory import DriverPool
from kubelet_emu.profile import DriverProfile, NodeProfile

Obj = dict[str, Any]


@dataclasses.dataclass
class NodeState:
    """What the emulator keeps about one node it runs a kubelet for."""

    name: str
    where: nodes.Addressing
    profile: NodeProfile | None
    emulated: bool
    """Registered by the emulator (else adopted: created by a client)."""
    uid: str = ""
    inventories: dict[str, DriverPool] = dataclasses.field(default_factory=dict)
    lease: Obj | None = None
    """The Lease as last written (its resourceVersion saves a read per renewal)."""
    written: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    """Per driver: the slices last written (name → resourceVersion)."""
    written_at: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per driver: the revision of the last slice write (the informer must reach it)."""
    heartbeat_stopped: bool = False
    """A NodeFault is on: no Lease renewals, no status, no pod work."""
    deleted: bool = False
    plugins: dict[str, FakeDriver] = dataclasses.field(default_factory=dict)
    """The node's DRA plugins by driver name."""
    health_stops: list[Callable[[], None]] = dataclasses.field(default_factory=list)
    """Stop the drivers' health streams."""
    slots: dict[str, int] = dataclasses.field(default_factory=dict)
    """Pod IP slots in use, by pod uid."""

    def drivers(self) -> list[DriverProfile]:
        """The node's fake drivers."""
        return list(self.profile.drivers) if self.profile else []
