"""The kubelets' heartbeat: each node's Lease in kube-node-lease, created at registration
and renewed every 10 s on the injected clock (upstream's nodelease controller); keys are
node names. A node whose heartbeat a NodeFault stopped renews nothing."""

from __future__ import annotations

import logging
from typing import Any

import kubelet_emu.nodes as nodes
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339_micro
from fakeapi.registry.kinds import LEASES
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.settings import KUBELET_ACCOUNT, PROCESS_ANNOTATION

LEASES_ID = LEASES.resource_id
RELEASE_SECONDS = 5.0
"""How long a graceful stop tries to release the nodes' Leases."""
log = logging.getLogger(__name__)


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

    def _owned(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """The Lease's metadata naming this process as the one renewing it."""
        process = self.nodes.settings.process
        if not process:
            return metadata
        return {**metadata, "annotations": {**(metadata.get("annotations") or {}),
                                            PROCESS_ANNOTATION: process}}

    async def release(self) -> None:
        """Take this process's name off its nodes' Leases (a graceful stop), so that a
        process started next for them runs them at once; a Lease that can't be written is
        left to expire."""
        process = self.nodes.settings.process
        for name, state in list(self.nodes.by_name.items()):
            if not process or state.lease is None:
                continue
            annotations = {k: v for k, v in (state.lease["metadata"].get("annotations")
                                             or {}).items() if k != PROCESS_ANNOTATION}
            try:
                await self.nodes.client(KUBELET_ACCOUNT, name).update(LEASES_ID, {
                    **state.lease, "metadata": {**state.lease["metadata"],
                                                "annotations": annotations}})
            except (ApiError, ConnectionError) as e:
                log.warning("could not release the Lease of node %s: %s", name, e)

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
                state.lease = await client.create(LEASES_ID, nodes.lease_object(
                    node, now, self.nodes.settings.process))
            except ApiError as e:
                if e.code != 409:
                    raise
                state.lease = await client.get(LEASES_ID, name, nodes.LEASE_NAMESPACE)
        else:
            lease = {**state.lease, "metadata": self._owned(state.lease["metadata"]),
                     "spec": {  # the stored lease is shared: never mutated
                         **state.lease.get("spec", {}), "holderIdentity": name,
                         "leaseDurationSeconds": nodes.LEASE_DURATION_SECONDS,
                         "renewTime": now}}
            try:
                state.lease = await client.update(LEASES_ID, lease, copy=False)
            except ApiError as e:
                state.lease = None
                if e.code not in (404, 409):
                    raise
                self.queue.add(name)
                return
        self.queue.add_after(name, nodes.LEASE_RENEW_SECONDS)
