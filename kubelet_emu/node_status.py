"""The kubelets' node status: each node's conditions (with a fresh heartbeat), capacity,
addresses and nodeInfo, posted at registration and again every 5 min (upstream's
nodeStatusReportFrequency); keys are node names. An adopted node keeps its own capacity and
gets a pod CIDR when it has none. A node whose heartbeat a NodeFault stopped posts nothing."""

from __future__ import annotations

from typing import Any

import kubelet_emu.nodes as nodes
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.settings import KUBELET_ACCOUNT

Obj = dict[str, Any]
NODES = "nodes"
CONDITION_EVENTS = {
    ("MemoryPressure", "False"): "NodeHasSufficientMemory",
    ("MemoryPressure", "True"): "NodeHasInsufficientMemory",
    ("DiskPressure", "False"): "NodeHasNoDiskPressure",
    ("DiskPressure", "True"): "NodeHasDiskPressure",
    ("PIDPressure", "False"): "NodeHasSufficientPID",
    ("PIDPressure", "True"): "NodeHasInsufficientPID",
    ("Ready", "True"): "NodeReady",
    ("Ready", "False"): "NodeNotReady",
}
"""The Event upstream's kubelet records when a node condition is new or changes to a status."""


def condition_events(before: Obj | None, after: Obj) -> list[str]:
    """The Events of the conditions that `after` (a node status) sets anew over `before`'s."""
    old = {c.get("type"): c.get("status")
           for c in ((before or {}).get("conditions") or [])}
    return [CONDITION_EVENTS[key] for c in after.get("conditions") or []
            if (key := (c.get("type"), c.get("status"))) in CONDITION_EVENTS
            and old.get(c.get("type")) != c.get("status")]


def node_reference(name: str) -> Obj:
    """The kubelet's reference to its node in Events (upstream's nodeRef: the UID is the
    node's name)."""
    return {"kind": "Node", "apiVersion": "v1", "name": name, "uid": name}


async def node_events(nodes_: EmulatedNodes, clock: Clock, name: str,
                      reasons: list[tuple[str, str]]) -> None:
    """Record the kubelet's Events (reason, message) about its node."""
    recorder = nodes_.recorder(name, clock)
    for reason, message in reasons:
        await recorder.event(node_reference(name), NORMAL, reason, message)


def status_events(name: str, before: Obj | None, after: Obj) -> list[tuple[str, str]]:
    """`Node NAME status is now: REASON` for each condition `after` sets anew."""
    return [(reason, f"Node {name} status is now: {reason}")
            for reason in condition_events(before, after)]


class NodeStatusReporter(Controller[str]):
    """Posts the emulated nodes' status (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.node_informer = ctx.informers.get(NODES)

    async def reconcile(self, key: str) -> None:
        """The periodic report of one node."""
        await self.report(key)

    async def report(self, name: str, node: Obj | None = None) -> None:
        """Post the node's status now (from `node` as just read, when given), then again in
        5 min."""
        state = self.nodes.by_name.get(name)
        if state is None or state.heartbeat_stopped:
            return
        node = node or self.node_informer.cache.get(name)
        if node is None:
            return
        status = nodes.adopted_status(node, state.profile, state.where,
                                      rfc3339(self.clock.now()),
                                      self.nodes.settings.node_profile().node.capacity)
        client = self.nodes.client(KUBELET_ACCOUNT, name)
        if not (node.get("spec") or {}).get("podCIDR") and not state.emulated:
            await client.patch(NODES, name, {"spec": {"podCIDR": state.where.pod_cidr,
                                                      "podCIDRs": [state.where.pod_cidr]}},
                               copy=False)
        await client.patch(NODES, name, {"status": status}, subresource="status", copy=False)
        await node_events(self.nodes, self.clock, name,
                          status_events(name, node.get("status"), status))
        self.queue.add_after(name, nodes.STATUS_REPORT_SECONDS)
