"""A control plane on a virtual clock with only the components under test, started and
settled (the controller and scheduler tests' set-up), and a way to stop one mid-way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from kubelet_emu.settings import EmulatorSettings


@contextlib.asynccontextmanager
async def running_plane(components: str, *, seed: int = 1,
                        gates: Mapping[str, bool] | None = None,
                        data_dir: Path | None = None,
                        clock: VirtualClock | None = None,
                        emulator: EmulatorSettings | None = None,
                        settle: bool = True) -> AsyncIterator[ControlPlane]:
    """A seeded control plane on a virtual clock running `components` (with these feature
    gates, durable in `data_dir` when given, the emulated nodes of `emulator` when the
    kubelet is among them), settled once started unless `settle` is False (to stop it
    mid-way), stopped on exit."""
    plane = ControlPlane(ClusterConfig(seed=seed, feature_gates=dict(gates or {}),
                                       data_dir=data_dir),
                         clock=clock or VirtualClock(), components=components,
                         emulator=emulator)
    await plane.start()
    if settle:
        await plane.settle()
    try:
        yield plane
    finally:
        await plane.stop()


def stall_calls(obj: object, method: str) -> asyncio.Event:
    """Make `obj.method` (a component's client call) hang for ever: the component stops
    mid-way there. The returned event is set once it is reached."""
    reached = asyncio.Event()

    async def hang(*args: object, **kwargs: object) -> None:
        reached.set()
        await asyncio.Event().wait()  # never set: the plane is stopped while waiting

    setattr(obj, method, hang)
    return reached
