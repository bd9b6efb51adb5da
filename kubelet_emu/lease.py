"""The kubelets' heartbeat: each node's Lease in kube-node-lease, created at registration
and renewed every 10 s on the injected clock (upstream's nodelease controller); keys are
node names. A node whose heartbeat a NodeFault stopped renews nothing."""

from __future__ import annotations

import kubelet_emu.nodes as nodes
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339_micro
from fakeapi.registry.kinds import LEASES
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.settings import KUBELET_ACCOUNT

LEASES_ID = LEASES.resource_id


class LeaseRenewer(Controller[str]):
    """Creates and renews the emulated nodes' Leases (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes

    def renew_now(self, name: str) -> None:
        """Renew the node's Lease at once, reading it first (the heartbeat comes back after a
        fault: the Lease may have changed meanwhile)."""
        state = self.nodes.by_name.get(name)
        if state is not None:
            state.lease = None
        self.queue.add(name)

    async def reconcile(self, key: str) -> None:
        """Create or renew the node's Lease; the next renewal is due in 10 s."""
        name = key
        state = self.nodes.by_name.get(name)
        if state is None or state.heartbeat_stopped:
            return
        client = self.nodes.client(KUBELET_ACCOUNT, name)
        now = rfc3339_micro(self.clock.now())
        if state.lease is None:
            try:
                state.lease = await client.get(LEASES_ID, name, nodes.LEASE_NAMESPACE)
            except ApiError as e:
                if e.code != 404:
                    raise
        if state.lease is None:
            node = {"metadata": {"name": name, "uid": state.uid}}
            try:
                state.lease = await client.create(LEASES_ID, nodes.lease_object(node, now))
            except ApiError as e:
                if e.code != 409:
                    raise
                state.lease = await client.get(LEASES_ID, name, nodes.LEASE_NAMESPACE)
        else:
            lease = {**state.lease, "spec": {  # the stored lease is shared: never mutated
                **state.lease.get("spec", {}), "holderIdentity": name,
                "leaseDurationSeconds": nodes.LEASE_DURATION_SECONDS, "renewTime": now}}
            try:
                state.lease = await client.update(LEASES_ID, lease, copy=False)
            except ApiError as e:
                state.lease = None
                if e.code not in (404, 409):
                    raise
                self.queue.add(name)
                return
        self.queue.add_after(name, nodes.LEASE_RENEW_SECONDS)
