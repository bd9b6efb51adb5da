"""The emulated kubelets: one component that runs a kubelet for every emulated node.

Like kwok, one process plays every node. Each node has its own state (`NodeState`, shared
by the controllers below through `EmulatedNodes`) and acts with identities bound to it: the
kubelet (`kube-system/kubelet` with the node-name extra) registers the Node, renews its
Lease and runs its pods; the node's fake DRA drivers (`kube-system/dra-kubelet-plugin`,
same binding) publish its ResourceSlices. The work is done by separate controllers, each
with its own queue, workers and backoff (`/metrics` shows each queue as
`queue="kubelet/<part>"`):

- `nodes`, `NodeRegistrar`: register (or adopt) a node, forget a deleted one;
- `status`, `NodeStatusReporter`: post the node's status, again every 5 min;
- `leases`, `LeaseRenewer`: renew its Lease, every 10 s on the injected clock;
- `slices`, `SlicePublisher`: publish each driver's pool (and repair manual edits);
- `classes`, `DeviceClassInstaller`: install the drivers' DeviceClasses, as their Helm
  charts would;
- `pods`, `PodWorker`: run the pods bound to the nodes (with the devices' health cache);
- `faults`, `FaultInjector`: apply the DeviceFaults and NodeFaults that name a node;
- `binding`, `BindingConditionsController`: a driver's controller sets the binding
  conditions of its devices in an allocated claim (its BindingConditions plugin).

This module wires them: what a newly registered node, or one whose heartbeat comes back,
needs from each; and each node's PodResources service.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
from collections.abc import Sequence
from typing import Any

import kubelet_emu.nodes as nodes
import kubelet_emu.podresources as podresources
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.workqueue import WorkQueue
from kubelet_emu.binding_conditions import BindingConditionsController
from kubelet_emu.device_classes import CLASSES, DeviceClassInstaller
from kubelet_emu.faults import FaultInjector
from kubelet_emu.lease import LeaseRenewer
from kubelet_emu.node_registration import NodeRegistrar
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.node_status import NodeStatusReporter
from kubelet_emu.pod_worker import PodWorker
from kubelet_emu.settings import EmulatorSettings
from kubelet_emu.slice_publisher import SlicePublisher

log = logging.getLogger(__name__)

Obj = dict[str, Any]


class Kubelet:
    """Every emulated node's kubelet and drivers (see the module docstring)."""

    def __init__(self, ctx: ComponentContext, settings: EmulatorSettings) -> None:
        self.name = ctx.name
        self.settings = settings
        self.nodes = EmulatedNodes(settings=settings, client=ctx.client,
                                   client_for=ctx.client_for)
        """The nodes the kubelet runs, shared by its controllers."""

        def part(name: str) -> ComponentContext:
            return dataclasses.replace(ctx, name=f"{ctx.name}/{name}")

        self.pods = PodWorker(part("pods"), nodes=self.nodes)
        self.registrar = NodeRegistrar(part("nodes"), nodes=self.nodes,
                                       health=self.pods.health, streams=self.pods.pod_streams,
                                       registered=self._registered)
        self.status = NodeStatusReporter(part("status"), nodes=self.nodes)
        self.leases = LeaseRenewer(part("leases"), nodes=self.nodes)
        self.slices = SlicePublisher(part("slices"), nodes=self.nodes)
        self.classes = DeviceClassInstaller(part("classes"), nodes=self.nodes)
        self.faults = FaultInjector(part("faults"), nodes=self.nodes, resumed=self._resumed)
        self.binding = BindingConditionsController(part("binding"), nodes=self.nodes)
        self.controllers: tuple[Controller[Any], ...] = (
            self.registrar, self.status, self.leases, self.slices, self.classes, self.pods,
            self.faults, self.binding)
        """The kubelet's controllers, each with its own queue."""
        self._servers: dict[str, Any] = {}

    # ----- the component ----------------------------------------------------------------

    async def run(self) -> None:
        """Register the configured nodes, then run every controller until one fails (the
        nodes' PodResources servers stop with them)."""
        self.classes.queue.add(CLASSES)
        for name in self.nodes.configured:
            self.registrar.queue.add(name)
        tasks = [asyncio.create_task(c.run(), name=c.name) for c in self.controllers]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:  # in the controllers' order, not the set's
                if task in done:
                    task.result()  # a controller's crash is the component's
            raise RuntimeError(f"{', '.join(t.get_name() for t in done)} stopped")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            servers, self._servers = self._servers, {}
            for name, server in servers.items():
                await server.stop(None)
                podresources.release(self.nodes.root(name) / podresources.SOCKET)

    def busy(self) -> bool:
        """Whether any controller has keys queued or being reconciled."""
        return any(c.busy() for c in self.controllers)

    def ready(self) -> bool:
        """Every controller's informers synced and every emulated node of the settings
        registered (the server's ready line waits for it, so `kubectl get nodes` right after
        it lists them)."""
        return all(c.ready() for c in self.controllers) and all(
            n in self.nodes.by_name for n in self.nodes.configured)

    def queues(self) -> Sequence[WorkQueue[Any]]:
        """Each controller's work queue (for `/metrics`)."""
        return tuple(c.queue for c in self.controllers)

    # ----- what a node needs from each controller ----------------------------------------

    async def _registered(self, state: NodeState, node: Obj, created: bool) -> None:
        """A node the kubelet now runs: its status (now, unless it was just created with
        one), Lease, slices, classes, faults, the pods bound to it, its PodResources."""
        name = state.name
        if created:
            self.status.queue.add_after(name, nodes.STATUS_REPORT_SECONDS)
        else:
            await self.status.report(name, node)
        self.leases.queue.add(name)
        self.slices.node_added(name)
        self.classes.node_added(state)
        self.faults.queue.add(name)
        self.pods.resync(name)
        await self._serve_pod_resources(name)

    async def _resumed(self, name: str) -> None:
        """The node's heartbeat is back: renew its Lease and post its status at once, look
        at every pod again."""
        self.leases.renew_now(name)
        await self.status.report(name)
        self.pods.resync(name)

    # ----- PodResources -----------------------------------------------------------------

    def pod_views(self, node: str) -> list[podresources.PodView]:
        """What the node runs, as the PodResources service reports it."""
        return self.pods.pod_views(node)

    def container_log(self, namespace: str, pod: str, container: str, *,
                      previous: bool = False, timestamps: bool = False) -> str | None:
        """What `kubectl logs` shows for a container on an emulated node (None: no such
        container has run here)."""
        return self.pods.container_log(namespace, pod, container, previous=previous,
                                       timestamps=timestamps)

    def _cpus(self, node: str) -> int:
        obj = self.registrar.node_informer.cache.get(node) or {}
        text = str(((obj.get("status") or {}).get("capacity") or {}).get("cpu") or "0")
        return int(text) if text.isdigit() else 0

    async def _serve_pod_resources(self, name: str) -> None:
        if name in self._servers:
            return
        lister = podresources.Lister(functools.partial(self.pod_views, name),
                                     functools.partial(self._cpus, name))
        try:
            server = await podresources.serve(self.nodes.root(name) / podresources.SOCKET,
                                              lister)
        except RuntimeError as e:  # e.g. a socket path too long for the system
            log.warning("node %s: PodResources not served: %s", name, e)
            return
        if server is not None:
            self._servers[name] = server
