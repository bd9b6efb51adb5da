"""Fault injection: the emulator's DeviceFaults and NodeFaults applied to the nodes they
name; keys are node names. A DeviceFault makes its device Unhealthy (or silences its health
reports, so it turns Unknown after the timeout); a NodeFault stops the node's heartbeat (no
Lease renewals, no status, no pod work). A fault with `durationSeconds` ends by itself; a
deleted one heals at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from fakeapi.machinery.timestamps import parse_time
from fakeapi.registry.kinds import DEVICE_FAULTS, NODE_FAULTS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import WARNING, object_reference
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.plugin import HealthStatus

Obj = dict[str, Any]
DEVICE_FAULTS_ID = DEVICE_FAULTS.resource_id
NODE_FAULTS_ID = NODE_FAULTS.resource_id
NODE_INDEX = "node"
"""The faults-by-node index."""
NOT_APPLIED = "FaultNotApplied"
"""The Warning Event on a DeviceFault that names no device of the node's fake drivers."""


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

    async def _not_applied(self, node: str, fault: Obj) -> None:
        """A DeviceFault naming no device of the node's fake drivers (a typo, or your own
        driver's device, whose health your plugin reports): said, not ignored."""
        spec = fault["spec"]
        ref = object_reference(fault, api_version=DEVICE_FAULTS.api_version, kind="DeviceFault")
        await self.nodes.recorder(node, self.clock).event(
            ref, WARNING, NOT_APPLIED,
            f"{spec['driver']}/{spec['device']} is not a device of the emulator's fake drivers "
            f"on node {node}: a DeviceFault acts on those only")

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
            if not active:
                continue
            spec = fault["spec"]
            fake = state.fakes.get(spec["driver"])
            if fake is None or spec["device"] not in fake.devices:
                await self._not_applied(name, fault)
                continue
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
        if down != state.heartbeat_stopped:
            state.heartbeat_stopped = down
            if not down:  # the kubelet is back: heartbeat at once, look at every pod again
                await self._resumed(name)
        if soonest is not None:
            self.queue.add_after(name, soonest)
