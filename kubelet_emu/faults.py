"""Fault injection: the emulator's DeviceFaults and NodeFaults applied to the nodes they
name; keys are node names. A DeviceFault makes its device Unhealthy (or silences its health
reports, so it turns Unknown after the timeout); a NodeFault stops the node's heartbeat (no
Lease renewals, no status, no pod work). A fault with `durationSeconds` ends by itself; a
deleted one heals at once.

Each fault's status says what came of it, in an `Applied` condition (True: Applied; False:
NotApplied, for a DeviceFault naming no device of the node's fake drivers, or Expired), and
each change of it, and the healing of a deleted fault, is an Event about the fault."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.kinds import DEVICE_FAULTS, NODE_FAULTS, Kind
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, WARNING, object_reference
from fakeapi.runtime.workqueue import Retry
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.plugin import HealthStatus
from kubelet_emu.settings import KUBELET_ACCOUNT

Obj = dict[str, Any]
DEVICE_FAULTS_ID = DEVICE_FAULTS.resource_id
NODE_FAULTS_ID = NODE_FAULTS.resource_id
NODE_INDEX = "node"
"""The faults-by-node index."""
APPLIED = "Applied"
"""The condition type of a fault's status, and its reason while the fault acts."""
NOT_APPLIED, EXPIRED = "NotApplied", "Expired"
"""The reasons of an Applied condition that is False."""


def fault_node(obj: Obj) -> list[str]:
    """Index values of a fault by the node it names."""
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


class FaultInjector(Controller[str]):
    """Makes the nodes' drivers and kubelets follow their faults (see the module docstring);
    `resumed(node)` is awaited when a node's heartbeat comes back."""

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes,
                 resumed: Callable[[str], Awaitable[None]]) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self._resumed = resumed
        self.device_faults = self.watch(DEVICE_FAULTS_ID, self._fault_keys)
        self.node_faults = self.watch(NODE_FAULTS_ID, self._fault_keys)
        for informer in (self.device_faults, self.node_faults):
            informer.cache.add_index(NODE_INDEX, fault_node)
        self.reported: dict[str, tuple[str, Kind, Obj]] = {}
        """Faults whose outcome was reported, by uid: (node, kind, the fault as last seen)."""

    def _fault_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        nodes_named = set(fault_node(obj)) | (set(fault_node(old)) if old else set())
        return [n for n in sorted(nodes_named) if n in self.nodes.by_name]

    def _active(self, fault: Obj) -> tuple[bool, float | None]:
        """Whether a fault is in force now, and in how many seconds it ends (if it does)."""
        duration = (fault.get("spec") or {}).get("durationSeconds")
        if not duration:
            return True, None
        created = parse_time(fault["metadata"]["creationTimestamp"])
        left = (created - self.clock.now()).total_seconds() + float(duration)
        return left > 0, (left if left > 0 else None)

    async def _report(self, node: str, kind: Kind, fault: Obj, reason: str,
                      message: str) -> None:
        """Write the fault's Applied condition when it changes, with an Event about the fault
        (`Fault<reason>`: a Warning for a DeviceFault that acts on nothing, a typo or your own
        driver's device, whose health your plugin reports: said, not ignored)."""
        meta = fault["metadata"]
        self.reported[meta["uid"]] = (node, kind, fault)
        status = "True" if reason == APPLIED else "False"
        [current] = [c for c in (fault.get("status") or {}).get("conditions") or []
                     if c.get("type") == APPLIED] or [{}]
        if (current.get("status"), current.get("reason"), current.get("message")) == (
                status, reason, message):
            return
        condition = {"type": APPLIED, "status": status, "reason": reason, "message": message,
                     "lastTransitionTime": (current.get("lastTransitionTime")
                                            if current.get("status") == status
                                            else rfc3339(self.clock.now()))}
        try:
            await self.nodes.client(KUBELET_ACCOUNT, node).patch(
                kind.resource_id, meta["name"], {
                    "metadata": {"resourceVersion": meta["resourceVersion"]},
                    "status": {"conditions": [condition]}}, subresource="status")
        except ApiError as e:
            if e.code == 404:
                return
            if e.code == 409:  # changed meanwhile: the informer brings the key back
                raise Retry(reason="fault changed") from e
            raise
        await self._event(node, kind, fault, WARNING if reason == NOT_APPLIED else NORMAL,
                          "Fault" + reason, message)

    async def _event(self, node: str, kind: Kind, fault: Obj, type_: str, reason: str,
                     message: str) -> None:
        ref = object_reference(fault, api_version=kind.api_version, kind=kind.kind)
        await self.nodes.recorder(node, self.clock).event(ref, type_, reason, message)

    async def _healed(self, name: str) -> None:
        """The faults of node `name` reported before and deleted since: an Event each."""
        present = {f["metadata"]["uid"] for informer in (self.device_faults, self.node_faults)
                   for f in informer.cache.by_index(NODE_INDEX, name)}
        for uid, (node, kind, fault) in list(self.reported.items()):
            if node == name and uid not in present:
                del self.reported[uid]
                await self._event(node, kind, fault, NORMAL, "FaultHealed",
                                  f"{kind.kind} {fault['metadata']['name']} was deleted: "
                                  "healed")

    async def reconcile(self, key: str) -> None:
        """Make the node's drivers and kubelet follow the faults that name it."""
        name = key
        state = self.nodes.by_name.get(name)
        if state is None:
            return
        wanted: dict[tuple[str, str], tuple[HealthStatus, str, bool]] = {}
        soonest: float | None = None
        for fault in sorted(self.device_faults.cache.by_index(NODE_INDEX, name),
                            key=lambda f: (f["metadata"]["creationTimestamp"],
                                           f["metadata"]["name"])):
            active, left = self._active(fault)
            if left is not None:
                soonest = left if soonest is None else min(soonest, left)
            spec = fault["spec"]
            if not active:
                await self._report(name, DEVICE_FAULTS, fault, EXPIRED, _expired(fault))
                continue
            fake = state.fakes.get(spec["driver"])
            if fake is None or spec["device"] not in fake.devices:
                await self._report(
                    name, DEVICE_FAULTS, fault, NOT_APPLIED,
                    f"{spec['driver']}/{spec['device']} is not a device of the emulator's fake "
                    f"drivers on node {name}: a DeviceFault acts on those only")
                continue
            await self._report(name, DEVICE_FAULTS, fault, APPLIED, _what(fault, name))
            stop = spec.get("mode") == "StopReporting"
            wanted[(spec["driver"], spec["device"])] = (
                HealthStatus.UNHEALTHY if not stop else HealthStatus.HEALTHY,
                "" if stop else str(spec.get("message") or ""), not stop)
        for driver, plugin in state.fakes.items():
            for device, current in plugin.devices.items():
                health, message, reporting = wanted.get((driver, device),
                                                        (HealthStatus.HEALTHY, "", True))
                if (current.health, current.message, current.reporting) != (
                        health, message, reporting):
                    plugin.set_health(device, health, message, reporting)
        down = False
        for fault in self.node_faults.cache.by_index(NODE_INDEX, name):
            active, left = self._active(fault)
            if left is not None:
                soonest = left if soonest is None else min(soonest, left)
            down = down or active
            await self._report(name, NODE_FAULTS, fault, APPLIED if active else EXPIRED,
                               _what(fault, name) if active else _expired(fault))
        if down != state.heartbeat_stopped:
            state.heartbeat_stopped = down
            if not down:  # the kubelet is back: heartbeat at once, look at every pod again
                await self._resumed(name)
        await self._healed(name)
        if soonest is not None:
            self.queue.add_after(name, soonest)


def _what(fault: Obj, node: str) -> str:
    """What a fault does, in words."""
    spec = fault["spec"]
    if "device" not in spec:
        return f"the kubelet of node {node} stops heartbeating"
    device = f"{spec['driver']}/{spec['device']} on node {node}"
    if spec.get("mode") == "StopReporting":
        return f"{device} is left out of its driver's health reports"
    message = spec.get("message")
    return f"{device} is reported Unhealthy" + (f": {message}" if message else "")


def _expired(fault: Obj) -> str:
    return f"its {fault['spec']['durationSeconds']} s are over"
