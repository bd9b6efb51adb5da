"""What the kubelet keeps about each pod it runs: its prepared claims, its sandbox's IP
slot, and each container's current run and history (plain records; the pod worker changes
them, the status functions read them)."""

from __future__ import annotations

import dataclasses
from typing import Any

from kubelet_emu.pod_claims import PreparedClaim
from kubelet_emu.process import Process

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class PodEvent:
    """An Event of the kubelet about a pod, as upstream's container runtime manager records
    it: `field_path` names the container (`spec.containers{NAME}`), empty for the pod."""

    type: str
    reason: str
    message: str
    field_path: str = ""


@dataclasses.dataclass(kw_only=True)
class ContainerRun:
    """One container of a running pod: its current run and history."""

    spec: Obj
    init: bool
    process: Process | None = None
    restarts: int = 0
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    last_state: Obj | None = None
    waiting_reason: str = "ContainerCreating"
    waiting_message: str = ""
    """Why the container waits, when it is an error (CreateContainerError)."""
    wake_at: float | None = None
    """Monotonic clock time the process must be resumed at."""
    container_id: str = ""
    cdi_devices: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The container's name."""
        return str(self.spec["name"])

    @property
    def field_path(self) -> str:
        """The container within its pod, as an Event's involvedObject names it."""
        return f"spec.{'initContainers' if self.init else 'containers'}{{{self.name}}}"

    def event(self, type_: str, reason: str, message: str) -> PodEvent:
        """An Event of the kubelet about this container."""
        return PodEvent(type=type_, reason=reason, message=message,
                        field_path=self.field_path)

    @property
    def running(self) -> bool:
        """Started and not exited."""
        return bool(self.started_at) and self.exit_code is None


@dataclasses.dataclass(kw_only=True)
class PodRecord:
    """What the kubelet keeps about a pod it runs."""

    uid: str
    namespace: str
    name: str
    node: str
    claims: list[PreparedClaim]
    slot: int
    ip: str
    started: str
    init: list[ContainerRun]
    containers: list[ContainerRun]
    restart_policy: str
    mappings: tuple[Obj, ...] = ()
    """The special claim's request mappings (see `pod_claims.request_mappings`)."""
    terminating: bool = False
    kill_at: float | None = None
    finished: bool = False
    """Terminal phase reached (claims unprepared)."""
    last_status: Obj | None = None
    health: dict[str, list[Obj]] | None = None
    """allocatedResourcesStatus as last written; kept once the pod has terminated."""
    timer: Any = None
    events: list[PodEvent] = dataclasses.field(default_factory=list)
    """Events the container work found (pulls, creations, starts, failures, back-offs),
    sent with the next status write."""

    def runs(self) -> list[ContainerRun]:
        """Init containers, then containers."""
        return [*self.init, *self.containers]
