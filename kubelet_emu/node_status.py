"""The kubelets' node status: each node's conditions (with a fresh heartbeat), capacity,
addresses and nodeInfo, posted at registration and again every 5 min (upstream's
nodeStatusReportFrequency); keys are node names. An adopted node keeps its own capacity and
gets a pod CIDR when it has none. A node whose heartbeat a NodeFault stopped posts nothing."""

from __future__ import annotations

from typing import Any

import kubelet_emu.nodes as nodes
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.settings import KUBELET_ACCOUNT

Obj = dict[str, Any]
NODES = "nodes"


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
        self.queue.add_after(name, nodes.STATUS_REPORT_SECONDS)
