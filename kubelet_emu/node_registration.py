"""Which nodes the emulator runs a kubelet for: it registers the configured nodes (a Ready
Node of the settings' profile), adopts the Nodes clients create (as kwok's
manage-all-nodes: unless `--no-adopt-nodes` or the node opts out with
`emulator.fakeapi.dev/managed: "false"`; its fake devices are those of the profile it names;
with `--shard i/n` only the nodes of its shard, so that one process adopts each)
and forgets a node that is deleted or opts out (a deleted node is not registered again, as
upstream's kubelet doesn't). Keys are node names.

Registering a node builds its `NodeState` (its fake drivers' pools and drivers, less those
the settings turn off on it; in process, they are its registered plugins at once, their
health streams feeding the pod worker's health cache; with `--drivers grpc` they register
through the node's plugin folder like any other plugin), registers its logs and exec with
`fakeapi.kube.podio`, then hands the node to the kubelet's other controllers (`registered`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import kubelet_emu.nodes as nodes
from fakeapi.kube.podio import NodeStreams
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.kinds import LEASES, RESOURCE_CLAIMS
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.drivers import FakeDriver
from kubelet_emu.health import HealthCache
from kubelet_emu.inventory import inventory
from kubelet_emu.node_dirs import CDI, PLUGINS
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.settings import (
    KUBELET_ACCOUNT,
    MANAGED_ANNOTATION,
    PLUGIN_ACCOUNT,
    PROFILE_ANNOTATION,
)

if TYPE_CHECKING:
    from kubelet_emu.profile import NodeProfile

log = logging.getLogger(__name__)

Obj = dict[str, Any]
NODES = "nodes"
CLAIMS = RESOURCE_CLAIMS.resource_id
LEASES_ID = LEASES.resource_id


def opted_out(node: Obj) -> bool:
    """Whether the node asks to be left to no kubelet (label or annotation)."""
    meta = node["metadata"]
    return "false" in ((meta.get("labels") or {}).get(MANAGED_ANNOTATION),
                       (meta.get("annotations") or {}).get(MANAGED_ANNOTATION))


def named_profile(node: Obj) -> str:
    """The profile the node names (annotation, else label; "" when none)."""
    meta = node["metadata"]
    return ((meta.get("annotations") or {}).get(PROFILE_ANNOTATION)
            or (meta.get("labels") or {}).get(PROFILE_ANNOTATION) or "")


class NodeRegistrar(Controller[str]):
    """Registers, adopts and forgets the emulated nodes (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes, health: HealthCache,
                 streams: Callable[[str], NodeStreams],
                 registered: Callable[[NodeState, Obj, bool], Awaitable[None]],
                 forgotten: Callable[[str], None]) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.health = health
        self._streams = streams
        self._registered = registered
        self._forgotten = forgotten
        self.node_informer = self.watch(NODES, self._node_keys)
        self.claim_informer = ctx.informers.get(CLAIMS)

    def _node_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        name = obj["metadata"]["name"]
        if name in self.nodes.by_name or name in self.nodes.configured or \
                self.nodes.settings.adopt_nodes and self.nodes.settings.owns(name):
            return [name]
        return []

    def _profile_for(self, node: Obj | None, name: str) -> NodeProfile | None:
        from kubelet_emu.profile import ProfileError, load_profile  # pydantic, on first use

        named = named_profile(node) if node is not None else ""
        if named:
            try:
                return load_profile(named)
            except ProfileError as e:
                log.warning("node %s names profile %r: %s", name, named, e)
                return None
        return self.nodes.settings.node_profile() if name in self.nodes.configured else None

    def _deleted(self, state: NodeState, node: Obj | None) -> bool:
        """Whether the Node the kubelet registered is gone (or replaced by another of the
        same name): missing from a cache that has seen the registration, or another uid."""
        if node is None:
            return self.node_informer.revision >= state.registered_at
        return bool(node["metadata"]["uid"] != state.uid)

    async def reconcile(self, key: str) -> None:
        """Register a configured node, adopt a client's, forget a deleted one."""
        name = key
        state = self.nodes.by_name.get(name)
        node = self.node_informer.cache.get(name)
        if state is not None and self._deleted(state, node):
            # deleted: a kubelet does not register its node again by itself (as upstream)
            self.forget(name)
            return
        if name not in self.nodes.configured and (node is None or opted_out(node)
                                                  or not self.nodes.settings.adopt_nodes
                                                  or not self.nodes.settings.owns(name)):
            self.forget(name)
            return
        if state is not None or await self._run_elsewhere(name):
            return
        where = nodes.Addressing(self.nodes.index(name), self.nodes.settings.kubelet_endpoint)
        state = NodeState(name=name, where=where,
                          profile=self._profile_for(node, name),
                          emulated=name in self.nodes.configured)
        state.disabled = self.nodes.settings.disabled_on(name)
        root = self.nodes.root(name)
        state.inventories = {d.name: inventory(d, name) for d in state.drivers()}
        state.fakes = {driver: FakeDriver(inv=inv, cdi_dir=root / CDI, plugins_dir=root / PLUGINS,
                                          client=self.nodes.client(PLUGIN_ACCOUNT, name),
                                          clock=self.clock, cached=self.claim_informer.cache.get)
                       for driver, inv in state.inventories.items()}
        if not self.nodes.settings.grpc_drivers:  # else they register over gRPC
            for driver, plugin in state.fakes.items():
                state.register_plugin(driver, plugin)
                state.health_stops.append(plugin.node_watch_resources(
                    functools.partial(self.health.update, name, driver)))
        client = self.nodes.client(KUBELET_ACCOUNT, name)
        created = False
        if node is None:
            assert state.profile is not None
            try:
                node = await client.create(NODES, nodes.node_object(
                    name, state.profile, state.where, rfc3339(self.clock.now()),
                    profile_annotation=PROFILE_ANNOTATION))
                created = True
            except ApiError as e:
                if e.code != 409:
                    raise
                node = await client.get(NODES, name)
        state.uid = node["metadata"]["uid"]
        state.registered_at = int(node["metadata"]["resourceVersion"])
        self.nodes.by_name[name] = state
        client.serve_pod_streams(name, self._streams(name))
        await self._registered(state, node, created)

    async def _run_elsewhere(self, name: str) -> bool:
        """Whether another emulate process runs `name` (its node Lease, renewed in time,
        names that process): then this one refuses the node, says which process owns it, and
        looks again at each renewal period (it runs the node once the Lease has expired or the
        other process released it)."""
        process = self.nodes.settings.process
        if not process:
            return False
        try:
            lease = await self.nodes.client(KUBELET_ACCOUNT, name).get(
                LEASES_ID, name, nodes.LEASE_NAMESPACE)
        except ApiError as e:
            if e.code != 404:
                raise
            lease = None
        owner = nodes.lease_owner(lease, process, self.clock.now())
        if not owner:
            self.nodes.refused.pop(name, None)
            return False
        assert lease is not None
        why = (f"{name} is run by emulate process {owner} (its Lease "
               f"{nodes.LEASE_NAMESPACE}/{name} renewed at {lease['spec'].get('renewTime')})")
        if self.nodes.refused.get(name) != why:
            log.warning("not running node %s", why)
        self.nodes.refused[name] = why
        self.queue.add_after(name, nodes.LEASE_RENEW_SECONDS)
        return True

    def forget(self, name: str) -> None:
        """Stop running a kubelet for `name` (its pending keys find no state)."""
        state = self.nodes.by_name.pop(name, None)
        if state is not None:
            self.nodes.client(KUBELET_ACCOUNT, name).serve_pod_streams(name, None)
            for stop in state.health_stops:
                stop()
            for plugin in state.fakes.values():
                plugin.stop()
            self._forgotten(name)
            self.health.forget(name)
        self.nodes.forget_clients(name)
