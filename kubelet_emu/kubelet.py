"""The emulated kubelets: one component that runs a kubelet for every emulated node.

Like kwok, one process plays every node. Each node has its own state (`NodeState`, shared
by the controllers below through `EmulatedNodes`) and acts with identities bound to it: the
kubelet (`kube-system/kubelet` with the node-name extra) registers the Node, renews its
Lease and runs its pods; the node's fake DRA drivers (`kube-system/dra-kubelet-plugin`,
same binding) publish its ResourceSlices. The work is done by separate controllers, each
with its own queue, workers and backoff (`/metrics` shows each queue as
`queue="kubelet/<part>"`):

- `nodes`, `NodeRegistrar`: register (or adopt) a node, forget a deleted one;
- `plugins`, `PluginRegistrar`: register the DRA plugins whose sockets appear in a node's
  plugins_registry folder (external drivers, and the built-in ones with `--drivers grpc`);
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

from aiohttp import web

import kubelet_emu.node_dirs as node_dirs
import kubelet_emu.nodes as nodes
import kubelet_emu.podresources as podresources
import kubelet_emu.sockets as sockets
from fakeapi.machinery.errors import not_found
from fakeapi.runtime.component import ComponentContext, Controller, Route
from fakeapi.runtime.workqueue import WorkQueue
from kubelet_emu.binding_conditions import BindingConditionsController
from kubelet_emu.device_classes import CLASSES, DeviceClassInstaller
from kubelet_emu.faults import FaultInjector
from kubelet_emu.lease import RELEASE_SECONDS, LeaseRenewer
from kubelet_emu.node_dirs import PLUGINS, REGISTRY
from kubelet_emu.node_registration import NodeRegistrar
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.node_status import NodeStatusReporter, node_events, status_events
from kubelet_emu.plugin_registration import PluginRegistrar
from kubelet_emu.pod_worker import PodWorker
from kubelet_emu.settings import EmulatorSettings
from kubelet_emu.slice_publisher import SlicePublisher

log = logging.getLogger(__name__)

Obj = dict[str, Any]
NODE_PATH = "/emulator/nodes/{name}"
"""Where the kubelet tells what an emulated node's folders are."""


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
                                       registered=self._registered, forgotten=self._forgotten)
        self.plugins = PluginRegistrar(part("plugins"), nodes=self.nodes,
                                       health=self.pods.health, registered=self.pods.resync)
        self.status = NodeStatusReporter(part("status"), nodes=self.nodes)
        self.leases = LeaseRenewer(part("leases"), nodes=self.nodes)
        self.slices = SlicePublisher(part("slices"), nodes=self.nodes)
        self.classes = DeviceClassInstaller(part("classes"), nodes=self.nodes)
        self.faults = FaultInjector(part("faults"), nodes=self.nodes, resumed=self._resumed)
        self.binding = BindingConditionsController(part("binding"), nodes=self.nodes)
        self.controllers: tuple[Controller[Any], ...] = (
            self.registrar, self.plugins, self.status, self.leases, self.slices, self.classes,
            self.pods, self.faults, self.binding)
        """The kubelet's controllers, each with its own queue."""
        self._servers: dict[str, Any] = {}
        self._plugin_servers: dict[str, list[Any]] = {}
        """Per node, with `--drivers grpc`: its fake drivers' `plugin_server.PluginServer`s."""

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
            await self._release_leases()
            await self.plugins.close()  # the channels before the servers they talk to
            for name in list(self._plugin_servers):
                await self._stop_plugin_servers(name)
            servers, self._servers = self._servers, {}
            for name, server in servers.items():
                await server.stop(None)
                sockets.release(self.nodes.root(name) / podresources.SOCKET)

    async def _release_leases(self) -> None:
        """Release the nodes' Leases for the next process, within a bound (real time: a
        stop must not hang on a server that is gone, whatever the clock)."""
        try:
            await asyncio.wait_for(self.leases.release(), RELEASE_SECONDS)
        except TimeoutError:
            log.warning("the nodes' Leases were not released within %g s", RELEASE_SECONDS)

    def busy(self) -> bool:
        """Whether any controller has keys queued or being reconciled."""
        return any(c.busy() for c in self.controllers)

    def ready(self) -> bool:
        """Every controller's informers synced and every emulated node of the settings
        registered, its drivers' plugins too (the server's ready line waits for it, so
        `kubectl get nodes` right after it lists them, and their pods can run)."""
        return all(c.ready() for c in self.controllers) and all(
            n in self.nodes.by_name and all(self.nodes.by_name[n].plugin(d) is not None
                                            for d in self.nodes.by_name[n].fakes)
            for n in self.nodes.configured)

    def not_ready_reason(self) -> str:
        """The informers it waits for, else the nodes not running yet (and why, when another
        process runs one)."""
        waiting = sorted({r for c in self.controllers for r in c.unsynced()})
        if waiting:
            return "waiting for the informers of " + ", ".join(waiting)
        pending = [self.nodes.refused.get(n, n) for n in self.nodes.configured
                   if n not in self.nodes.by_name]
        return "nodes not running yet: " + "; ".join(pending) if pending else \
            "waiting for the nodes' plugins to register"

    def queues(self) -> Sequence[WorkQueue[Any]]:
        """Each controller's work queue (for `/metrics`)."""
        return tuple(c.queue for c in self.controllers)

    # ----- what a node needs from each controller ----------------------------------------

    async def _registered(self, state: NodeState, node: Obj, created: bool) -> None:
        """A node the kubelet now runs: its status (now, unless it was just created with
        one), Lease, slices, classes, faults, the pods bound to it, its PodResources."""
        name = state.name
        await node_events(self.nodes, self.status.clock, name, [
            ("Starting", "Starting kubelet."),
            ("NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")])
        if created:  # with its status: the conditions are new
            await node_events(self.nodes, self.status.clock, name,
                              status_events(name, None, node.get("status") or {}))
            self.status.queue.add_after(name, nodes.STATUS_REPORT_SECONDS)
        else:
            await self.status.report(name, node)
        self.leases.queue.add(name)
        self.slices.node_added(name)
        self.classes.node_added(state)
        self.faults.queue.add(name)
        self.pods.resync(name)
        self.plugins.node_added(state)
        if self.settings.grpc_drivers:
            await self._serve_plugins(state)
        await self._serve_pod_resources(name)

    def _forgotten(self, name: str) -> None:
        """A node the kubelet no longer runs: its plugins go with it."""
        self.plugins.node_forgotten(name)
        if name in self._plugin_servers:
            asyncio.get_running_loop().create_task(self._stop_plugin_servers(name))

    # ----- the built-in drivers as gRPC plugins (`--drivers grpc`) ----------------------

    async def _serve_plugins(self, state: NodeState) -> None:
        """Serve each fake driver of the node as a kubelet plugin and have it registered
        (at once: the registry folder's watch would see it too, a moment later)."""
        from kubelet_emu.plugin_server import PluginServer  # grpcio, when it is asked for

        root = self.nodes.root(state.name)
        servers = self._plugin_servers.setdefault(state.name, [])
        for fake in state.fakes.values():
            server = PluginServer(plugin=fake, registry=root / REGISTRY, plugins=root / PLUGINS)
            await server.start()
            servers.append(server)
            self.plugins.queue.add((state.name, server.registration_socket.name))

    async def _stop_plugin_servers(self, name: str) -> None:
        for server in self._plugin_servers.pop(name, []):
            await server.stop()

    async def _resumed(self, name: str) -> None:
        """The node's heartbeat is back: renew its Lease and post its status at once, look
        at every pod again."""
        self.leases.renew_now(name)
        await self.status.report(name)
        self.pods.resync(name)

    # ----- the node's folders (`fakeapi node env`) --------------------------------------

    def http_routes(self) -> list[Route]:
        """`GET /emulator/nodes/NAME`: where an emulated node's plugin, CDI and PodResources
        folders are (what a driver's kubelet plugin is pointed at)."""
        return [("GET", NODE_PATH, self._node_handler)]

    def node_folders(self, name: str) -> dict[str, str]:
        """The node's folders (404 for a node no emulated kubelet runs)."""
        if self.nodes.get(name) is None:
            raise not_found("nodes", "", name)
        root = self.nodes.root(name)
        return {"node": name, "root": str(root),
                "registry": str(root / node_dirs.REGISTRY),
                "plugins": str(root / node_dirs.PLUGINS), "cdi": str(root / node_dirs.CDI),
                "podResources": str(root / node_dirs.POD_RESOURCES)}

    async def _node_handler(self, request: web.Request) -> web.StreamResponse:
        return web.json_response(self.node_folders(request.match_info["name"]))

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
