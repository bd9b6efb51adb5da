"""The boundary between the kubelet and a DRA driver's kubelet plugin, mirroring the kubelet
plugin API (k8s.io/kubelet/pkg/apis/dra/v1 and dra-health/v1): NodePrepareResources,
NodeUnprepareResources and the NodeWatchResources health stream, with the same messages.

The emulator's drivers implement `DRAPlugin` in process; the kubelet's gRPC client of a
registered plugin (`grpc_plugin.GrpcPlugin`) implements it too, and the pod worker does not
notice which one it calls.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol


@dataclasses.dataclass(frozen=True, kw_only=True)
class Claim:
    """dra.v1.Claim: which claim to prepare (the plugin reads it from the API itself)."""

    namespace: str
    uid: str
    name: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class PreparedDevice:
    """dra.v1.Device: one prepared device and the CDI devices that make it usable."""

    request_names: tuple[str, ...]
    pool_name: str
    device_name: str
    cdi_device_ids: tuple[str, ...]
    share_id: str | None = None


@dataclasses.dataclass(frozen=True)
class PrepareResult:
    """dra.v1.NodePrepareResourceResponse: the devices, or an error."""

    devices: tuple[PreparedDevice, ...] = ()
    error: str = ""


class HealthStatus(enum.IntEnum):
    """dra-health.v1.HealthStatus."""

    UNKNOWN = 0
    HEALTHY = 1
    UNHEALTHY = 2

    @property
    def api_value(self) -> str:
        """The pod status spelling (`Healthy`, `Unhealthy`, `Unknown`)."""
        return self.name.capitalize()


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeviceHealth:
    """dra-health.v1.DeviceHealth: one device's health as the plugin last determined it."""

    pool_name: str
    device_name: str
    health: HealthStatus
    last_updated_time: int
    """Unix seconds."""
    health_check_timeout_seconds: int = 0
    """0 (or less): the kubelet's default, 30 s."""
    message: str = ""


HealthStream = Callable[[Sequence[DeviceHealth]], None]
"""Receives each NodeWatchResourcesResponse: the complete list of the driver's devices."""


class PluginCallError(Exception):
    """A call to a plugin failed as a whole (not one claim's error); the message is the
    kubelet's text, such as `NodePrepareResources: rpc error: code = Unavailable ...`."""


class DRAPlugin(Protocol):
    """What the kubelet calls on a driver's plugin (one per driver per node)."""

    driver_name: str

    async def node_prepare_resources(self, claims: Sequence[Claim]) -> dict[str, PrepareResult]:
        """Prepare each claim's devices for this node; results by claim UID."""
        ...

    async def node_unprepare_resources(self, claims: Sequence[Claim]) -> dict[str, str]:
        """Undo a preparation; an error text per claim UID ("" when it went fine)."""
        ...

    def node_watch_resources(self, stream: HealthStream) -> Callable[[], None]:
        """Start streaming device health to `stream`; returns the call that stops it."""
        ...

    async def run_pod_sandbox(self, pod: dict[str, Any], claims: Sequence[Claim]) -> None:
        """The NRI RunPodSandbox hook: the pod's sandbox (network namespace, IP) exists;
        drivers that configure late (network data) do it here."""
        ...


def base_request(name: str) -> str:
    """The top-level request of `request/subrequest` (upstream resourceclaim.BaseRequestRef)."""
    return name.split("/", 1)[0]
