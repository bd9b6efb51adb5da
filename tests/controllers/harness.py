"""Shared set-up of the controller tests: a control plane on a virtual clock with only the
components under test, started and settled."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fakeapi.clock import VirtualClock
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane


@contextlib.asynccontextmanager
async def running_plane(components: str, *, seed: int = 1) -> AsyncIterator[ControlPlane]:
    """A seeded control plane on a virtual clock running `components`, settled once started,
    stopped on exit."""
    plane = ControlPlane(ClusterConfig(seed=seed), clock=VirtualClock(), components=components)
    await plane.start()
    await plane.settle()
    try:
        yield plane
    finally:
        await plane.stop()
