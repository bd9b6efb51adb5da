"""A control plane on a virtual clock with the emulated kubelets (and whichever other
components a test needs), started and settled, and what the node-emulator tests read of it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from kubelet_emu.kubelet import Kubelet
from kubelet_emu.profile import load_profile
from kubelet_emu.settings import EmulatorSettings

SLICES = "resourceslices.resource.k8s.io"
CLAIMS = "resourceclaims.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
LEASES = "leases.coordination.k8s.io"
WITH_SCHEDULING = "kubelet,scheduler,resource-claim-controller"
"""The emulated kubelets with the components that make and allocate their pods' claims,
reserve them and bind the pods, as on a cluster."""


def device_index(index: int, driver: str = "gpu.example.com") -> dict[str, Any]:
    """A CEL selector for the example driver's device with this `index` attribute (`gpu-2`
    has index 2), to make the scheduler pick it."""
    return {"cel": {"expression": f"device.attributes['{driver}'].index == {index}"}}


@contextlib.asynccontextmanager
async def emulated_plane(state: Path, *, components: str = "kubelet", nodes: int = 2,
                         profile: str = "default", seed: int = 1, adopt: bool = True,
                         gates: dict[str, bool] | None = None,
                         disabled: tuple[str, ...] = ()) -> AsyncIterator[ControlPlane]:
    """A seeded control plane on a virtual clock running `components` with `nodes` emulated
    nodes of `profile` (files under `state`; `disabled`: `--disable-driver`'s values),
    settled once started, stopped on exit."""
    settings = EmulatorSettings(nodes=nodes, profile=load_profile(profile), adopt_nodes=adopt,
                                state_dir=state, disabled_drivers=disabled)
    plane = ControlPlane(ClusterConfig(seed=seed, feature_gates=gates or {}),
                         clock=VirtualClock(), components=components, emulator=settings)
    await plane.start()
    await plane.settle()
    try:
        yield plane
    finally:
        await plane.stop()


def kubelet_of(plane: ControlPlane) -> Kubelet:
    """The plane's emulated kubelets (its component named kubelet)."""
    kubelet = plane.components["kubelet"]
    assert isinstance(kubelet, Kubelet), type(kubelet)
    return kubelet


def condition(obj: dict[str, Any], type_: str) -> dict[str, Any] | None:
    """The status condition of `type_`, or None."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return dict(c)
    return None


def present_condition(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    """The status condition of `type_`, which the test expects the object to have."""
    found = condition(obj, type_)
    assert found is not None, f"no {type_} condition in {obj.get('status')}"
    return found
