"""The emulated kubelets: one component that runs a kubelet for every emulated node.

Like kwok, one process plays every node. Each node has its own state (`NodeState`) and
acts with identities bound to it: the kubelet (`kube-system/kubelet` with the node-name
extra) registers the Node, renews its Lease and runs its pods; the node's fake DRA drivers
(`kube-system/dra-kubelet-plugin`, same binding) publish its ResourceSlices. Work is keyed:

- `("node", name)`: register (or adopt) the node and post its status;
- `("lease", name)`: renew its Lease, every 10 s on the injected clock;
- `("status", name)`: re-post its status every 5 min (upstream's report frequency);
- `("slices", node, driver)`: publish the driver's pool (and repair manual edits);
- `("classes",)`: install the drivers' DeviceClasses, as their Helm charts would;
- `("pod", namespace/name)`: run a pod bound to one of the nodes (`kubelet_emu.pods`);
- `("faults", node)`: apply the DeviceFaults and NodeFaults that name the node;
- `("binding", node, driver, namespace/name)`: the driver's controller sets the binding
  conditions of its devices in an allocated claim (its BindingConditions plugin).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kubelet_emu.cdi as cdi
import kubelet_emu.logs as logs
import kubelet_emu.nodes as nodes
import kubelet_emu.podresources as podresources
import kubelet_emu.slices as slices
import kubelet_emu.streams as streams
from fakeapi.clock import parse_time, rfc3339, rfc3339_micro
from fakeapi.errors import ApiError
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.informer import object_key
from kubelet_emu.drivers import FakeDriver
from kubelet_emu.health import DeviceKey, HealthCache
from kubelet_emu.inventory import inventory
from kubelet_emu.node_state import NodeState
from kubelet_emu.plugin import Claim, HealthStatus
from kubelet_emu.pod_claims import claim_refs, devices_for
from kubelet_emu.pod_records import PodRecord
from kubelet_emu.pod_status import allocated_resources_status
from kubelet_emu.pods import PodWorker
from kubelet_emu.profile import DriverProfile, NodeProfile, ProfileError, load_profile
from kubelet_emu.settings import (
    INSTALLER_ACCOUNT,
    KUBELET_ACCOUNT,
    MANAGED_ANNOTATION,
    PLUGIN_ACCOUNT,
    PROFILE_ANNOTATION,
    EmulatorSettings,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, ...]
NODES = "nodes"
LEASES = "leases.coordination.k8s.io"
DEVICE_CLASSES = "deviceclasses.resource.k8s.io"
CLAIMS = "resourceclaims.resource.k8s.io"
DEVICE_FAULTS = "devicefaults.emulator.fakeapi.dev"
NODE_FAULTS = "nodefaults.emulator.fakeapi.dev"
CLASSES: Key = ("classes",)


def _fault_node(obj: Obj) -> list[str]:
    node = (obj.get("spec") or {}).get("nodeName")
    return [node] if node else []


def _pool_key(obj: Obj) -> list[str]:
    spec = obj.get("spec") or {}
    return [f"{spec.get('nodeName') or ''}/{spec.get('driver') or ''}"]


def _opted_out(node: Obj) -> bool:
    meta = node["metadata"]
    return "false" in ((meta.get("labels") or {}).get(MANAGED_ANNOTATION),
                       (meta.get("annotations") or {}).get(MANAGED_ANNOTATION))


def _named_profile(node: Obj) -> str:
    meta = node["metadata"]
    return ((meta.get("annotations") or {}).get(PROFILE_ANNOTATION)
            or (meta.get("labels") or {}).get(PROFILE_ANNOTATION) or "")


class Kubelet(Controller[Key]):
    """Every emulated node's kubelet and drivers (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, settings: EmulatorSettings) -> None:
        super().__init__(ctx)
        self.settings = settings
        self._configured = settings.node_names()
        self.nodes: dict[str, NodeState] = {}
        """The nodes this component runs a kubelet for, by name."""
        self._indexes: dict[str, int] = {n: i for i, n in enumerate(self._configured)}
        self.node_informer = self.watch(NODES, self._node_keys)
        self.slice_informer = self.watch(slices.RESOURCE_SLICES, self._slice_keys)
        self.slice_informer.cache.add_index("pool", _pool_key)
        self.pod_informer = self.watch("pods", self._pod_keys)
        self.pod_informer.cache.add_index(nodes.NODE_INDEX, nodes.pod_node)
        self.claim_informer = self.watch(CLAIMS, self._claim_keys)
        self.device_faults = self.watch(DEVICE_FAULTS, self._fault_keys)
        self.node_faults = self.watch(NODE_FAULTS, self._fault_keys)
        for informer in (self.device_faults, self.node_faults):
            informer.cache.add_index("node", _fault_node)
        self.health = HealthCache(self.clock, self._health_changed)
        self.classes_done: set[str] = set()
        self.pods = PodWorker(self)
        self._cdi: dict[str, cdi.SpecCache] = {}
        self._servers: dict[str, Any] = {}
        self._clients: dict[tuple[str, str | None], Any] = {}

    def ready(self) -> bool:
        """Informers synced and every emulated node of the settings registered (the server's
        ready line waits for it, so `kubectl get nodes` right after it lists them)."""
        return super().ready() and all(n in self.nodes for n in self.settings.node_names())

    # ----- identities -------------------------------------------------------------------

    def node_client(self, account: str, node: str | None) -> Any:
        """A client of `account` bound to `node` (falls back to the component's own), made
        once per identity."""
        factory = self.ctx.client_for
        if factory is None:
            return self.client
        key = (account, node)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = factory(account, node)
        return client

    # ----- keys -------------------------------------------------------------------------

    def _node_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[Key]:
        name = obj["metadata"]["name"]
        state = self.nodes.get(name)
        if state is not None and type_ == "DELETED":
            state.deleted = True
        if state is not None or name in self._configured or self.settings.adopt_nodes:
            return [("node", name)]
        return []

    def _slice_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[Key]:
        spec = obj.get("spec") or {}
        state = self.nodes.get(spec.get("nodeName") or "")
        if state is not None and spec.get("driver") in state.inventories:
            return [("slices", state.name, spec["driver"])]
        return []

    def _pod_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[Key]:
        key = object_key(obj)
        if (obj.get("spec") or {}).get("nodeName") in self.nodes or key in self.pods.records:
            return [("pod", key)]
        return []

    def _claim_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[Key]:
        meta = obj["metadata"]
        keys: list[Key] = [("pod", k) for k in self.pods.claim_changed(
            meta.get("namespace", ""), meta["name"])]
        if type_ != "DELETED":
            keys += self._binding_keys(obj)
        return keys

    def _binding_keys(self, claim: Obj) -> list[Key]:
        """`("binding", node, driver, namespace/name)` for each driver of ours whose
        controller satisfies binding conditions still unmet in the claim."""
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        keys: list[Key] = []
        for node, driver in sorted({(r.get("pool", ""), r.get("driver", "")) for r in results
                                    if r.get("bindingConditions")}):
            state = self.nodes.get(node)
            plugin = state.plugins.get(driver) if state is not None else None
            if plugin is not None and plugin.satisfies_binding_conditions and \
                    plugin.unsatisfied_bindings(status):
                keys.append(("binding", node, driver, object_key(claim)))
        return keys

    def _fault_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[Key]:
        nodes_named = set(_fault_node(obj)) | (set(_fault_node(old)) if old else set())
        return [("faults", n) for n in sorted(nodes_named) if n in self.nodes]

    def _health_changed(self, node: str, keys: set[DeviceKey]) -> None:
        """Rewrite the status of the pods on `node` that use a device whose health moved."""
        for key, record in self.pods.records.items():
            if record.node != node:
                continue
            used = {(driver, d.pool_name, d.device_name) for c in record.claims
                    for driver, devices in c.devices.items() for d in devices}
            if used & keys:
                self.queue.add(("pod", key))

    async def run(self) -> None:
        """Register the configured nodes, then run like any controller (the nodes'
        PodResources servers stop with it)."""
        self.queue.add(CLASSES)
        for name in self._configured:
            self.queue.add(("node", name))
        try:
            await super().run()
        finally:
            servers, self._servers = self._servers, {}
            for name, server in servers.items():
                await server.stop(None)
                podresources.release(self.node_root(name) / podresources.SOCKET)

    # ----- PodResources -----------------------------------------------------------------

    def pod_views(self, node: str) -> list[podresources.PodView]:
        """What the node runs, as the PodResources service reports it."""
        views = []
        for record in self.pods.records.values():
            if record.node != node or record.finished:
                continue
            by_name = {c.pod_claim: c for c in record.claims}
            containers = []
            for run in record.runs():
                claims = []
                for name, request in claim_refs(run.spec, record.mappings):
                    claim = by_name.get(name)
                    if claim is None:
                        continue
                    devices = tuple(
                        podresources.DeviceView(driver, d.pool_name, d.device_name, d.share_id,
                                                d.cdi_device_ids)
                        for driver, d in devices_for(claim, request))
                    claims.append((claim.claim.name, claim.claim.namespace, devices))
                containers.append(podresources.ContainerView(run.name, tuple(claims)))
            views.append(podresources.PodView(record.name, record.namespace, tuple(containers)))
        return sorted(views)

    def _cpus(self, node: str) -> int:
        obj = self.node_informer.cache.get(node) or {}
        text = str(((obj.get("status") or {}).get("capacity") or {}).get("cpu") or "0")
        return int(text) if text.isdigit() else 0

    async def _serve_pod_resources(self, name: str) -> None:
        if name in self._servers:
            return
        lister = podresources.Lister(functools.partial(self.pod_views, name),
                                     functools.partial(self._cpus, name))
        try:
            server = await podresources.serve(self.node_root(name) / podresources.SOCKET,
                                              lister)
        except RuntimeError as e:  # e.g. a socket path too long for the system
            log.warning("node %s: PodResources not served: %s", name, e)
            return
        if server is not None:
            self._servers[name] = server

    async def reconcile(self, key: Key) -> None:
        """Dispatch one key to its handler."""
        kind = key[0]
        if kind == "node":
            await self.sync_node(key[1])
        elif kind == "lease":
            await self.renew_lease(key[1])
        elif kind == "status":
            await self.report_status(key[1])
        elif kind == "slices":
            await self.publish(key[1], key[2])
        elif kind == "classes":
            await self.install_classes()
        elif kind == "pod":
            await self.pods.sync(key[1])
        elif kind == "faults":
            await self.apply_faults(key[1])
        elif kind == "binding":
            await self.satisfy_bindings(key[1], key[2], key[3])

    # ----- nodes ------------------------------------------------------------------------

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _index(self, name: str) -> int:
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = len(self._indexes)
        return index

    def _profile_for(self, node: Obj | None, name: str) -> NodeProfile | None:
        named = _named_profile(node) if node is not None else ""
        if named:
            try:
                return load_profile(named)
            except ProfileError as e:
                log.warning("node %s names profile %r: %s", name, named, e)
                return None
        return self.settings.profile if name in self._configured else None

    async def sync_node(self, name: str) -> None:
        """Register a configured node, adopt a client's, forget a deleted one."""
        state = self.nodes.get(name)
        if state is not None and state.deleted:
            # deleted: a kubelet does not register its node again by itself (as upstream)
            self.forget_node(name)
            return
        node = self.node_informer.cache.get(name)
        if name not in self._configured and (node is None or _opted_out(node)
                                             or not self.settings.adopt_nodes):
            self.forget_node(name)
            return
        if state is not None:
            return
        state = NodeState(name=name, where=nodes.Addressing(self._index(name)),
                          profile=self._profile_for(node, name),
                          emulated=name in self._configured)
        state.inventories = {d.name: inventory(d, name) for d in state.drivers()}
        state.plugins = {driver: FakeDriver(inv=inv, root=self.node_root(name),
                                            client=self.node_client(PLUGIN_ACCOUNT, name),
                                            clock=self.clock,
                                            cached=self.claim_informer.cache.get)
                         for driver, inv in state.inventories.items()}
        for driver, plugin in state.plugins.items():
            state.health_stops.append(plugin.node_watch_resources(
                functools.partial(self.health.update, name, driver)))
        client = self.node_client(KUBELET_ACCOUNT, name)
        created = False
        if node is None:
            assert state.profile is not None
            try:
                node = await client.create(NODES, nodes.node_object(
                    name, state.profile, state.where, self._now(),
                    profile_annotation=PROFILE_ANNOTATION))
                created = True
            except ApiError as e:
                if e.code != 409:
                    raise
                node = await client.get(NODES, name)
        state.uid = node["metadata"]["uid"]
        self.nodes[name] = state
        client.serve_pod_streams(name, streams.KubeletStreams(
            node=name, clock=self.clock, find=self._container,
            read_log=lambda ns, pod, c, previous, timestamps: self.container_log(
                ns, pod, c, previous=previous, timestamps=timestamps)))
        if created:
            self.queue.add_after(("status", name), nodes.STATUS_REPORT_SECONDS)
        else:
            await self.report_status(name, node)
        self.queue.add(("lease", name))
        for driver in state.inventories:
            self.queue.add(("slices", name, driver))
        if any(d.name not in self.classes_done for d in state.drivers()):
            self.queue.add(CLASSES)
        self.queue.add(("faults", name))
        self.resync_pods(name)
        await self._serve_pod_resources(name)

    def resync_pods(self, node: str) -> None:
        """Look at every pod bound to `node` again."""
        for pod in self.pod_informer.cache.by_index(nodes.NODE_INDEX, node):
            self.queue.add(("pod", object_key(pod)))

    def forget_node(self, name: str) -> None:
        """Stop running a kubelet for `name` (its pending keys find no state)."""
        state = self.nodes.pop(name, None)
        if state is not None:
            self.node_client(KUBELET_ACCOUNT, name).serve_pod_streams(name, None)
            for stop in state.health_stops:
                stop()
            for plugin in state.plugins.values():
                plugin.stop()
            self.health.forget(name)
        for key in [k for k in self._clients if k[1] == name]:
            del self._clients[key]

    # ----- what pods need from the node --------------------------------------------------

    def node_root(self, node: str) -> Path:
        """The node's root folder: `<state>/nodes/<node>`."""
        return self.settings.root() / "nodes" / node

    def cdi_registry(self, node: str) -> cdi.SpecCache:
        """The container runtime's view of the node's CDI specs."""
        registry = self._cdi.get(node)
        if registry is None:
            registry = self._cdi[node] = cdi.SpecCache(self.node_root(node) / "var" / "run"
                                                      / "cdi")
        return registry

    def allocate_slot(self, state: NodeState, uid: str) -> int:
        """The pod's IP slot on the node (the lowest free one; 1..253)."""
        if uid in state.slots:
            return state.slots[uid]
        used = set(state.slots.values())
        slot = next((i for i in range(1, 254) if i not in used), 253)
        state.slots[uid] = slot
        return slot

    def release_slot(self, state: NodeState, uid: str) -> None:
        """Free a pod's IP slot."""
        state.slots.pop(uid, None)

    def health_for(self, record: PodRecord) -> dict[str, list[Obj]]:
        """Per container: its allocatedResourcesStatus (see
        `pod_status.allocated_resources_status`)."""
        return allocated_resources_status(record, functools.partial(self.health.get,
                                                                    record.node))

    # ----- faults -----------------------------------------------------------------------

    def _active(self, fault: Obj) -> tuple[bool, float | None]:
        """Whether a fault is in force now, and in how many seconds it ends (if it does)."""
        duration = (fault.get("spec") or {}).get("durationSeconds")
        if not duration:
            return True, None
        created = parse_time(fault["metadata"]["creationTimestamp"])
        left = (created - self.clock.now()).total_seconds() + float(duration)
        return left > 0, (left if left > 0 else None)

    async def apply_faults(self, name: str) -> None:
        """Make the node's drivers and kubelet follow the faults that name it."""
        state = self.nodes.get(name)
        if state is None:
            return
        wanted: dict[tuple[str, str], tuple[HealthStatus, str, bool]] = {}
        soonest: float | None = None
        for fault in sorted(self.device_faults.cache.by_index("node", name),
                            key=lambda f: (f["metadata"]["creationTimestamp"],
                                           f["metadata"]["name"])):
            active, left = self._active(fault)
            if left is not None:
                soonest = left if soonest is None else min(soonest, left)
            if not active:
                continue
            spec = fault["spec"]
            stop = spec.get("mode") == "StopReporting"
            wanted[(spec["driver"], spec["device"])] = (
                HealthStatus.UNHEALTHY if not stop else HealthStatus.HEALTHY,
                "" if stop else str(spec.get("message") or ""), not stop)
        for driver, plugin in state.plugins.items():
            for device, current in plugin.devices.items():
                health, message, reporting = wanted.get((driver, device),
                                                        (HealthStatus.HEALTHY, "", True))
                if (current.health, current.message, current.reporting) != (
                        health, message, reporting):
                    plugin.set_health(device, health, message, reporting)
        down = False
        for fault in self.node_faults.cache.by_index("node", name):
            active, left = self._active(fault)
            if left is not None:
                soonest = left if soonest is None else min(soonest, left)
            down = down or active
        if down != state.heartbeat_stopped:
            state.heartbeat_stopped = down
            if not down:  # the kubelet is back: heartbeat at once, look at every pod again
                state.lease = None
                self.queue.add(("lease", name))
                await self.report_status(name)
                self.resync_pods(name)
        if soonest is not None:
            self.queue.add_after(("faults", name), soonest)

    def _container(self, namespace: str, pod: str, container: str) -> streams.Container | None:
        """The record and run of one container of a pod this kubelet runs."""
        record = self.pods.records.get(f"{namespace}/{pod}" if namespace else pod)
        if record is None:
            return None
        run = next((r for r in record.runs() if r.name == container), None)
        return streams.Container(record=record, run=run) if run is not None else None

    def container_log(self, namespace: str, pod: str, container: str, *,
                      previous: bool = False, timestamps: bool = False) -> str | None:
        """What `kubectl logs` shows for a container on an emulated node (None: no such
        container has run here) — the log source for the API server's pods/log."""
        obj = self.pod_informer.cache.get(pod, namespace)
        if obj is None or (obj.get("spec") or {}).get("nodeName") not in self.nodes:
            return None
        return logs.read_log(self.node_root(obj["spec"]["nodeName"]), namespace=namespace,
                             pod=pod, uid=obj["metadata"]["uid"], container=container,
                             previous=previous, timestamps=timestamps)

    async def event(self, node: str, obj: Obj, reason: str, message: str, *,
                    warning: bool = False) -> None:
        """Record an Event about `obj`, from the node's kubelet."""
        meta = obj["metadata"]
        now = rfc3339(self.clock.now())
        event = {
            "metadata": {"generateName": f"{meta['name']}.", "namespace":
                         meta.get("namespace") or "default"},
            "involvedObject": {"kind": obj.get("kind", "Pod"), "apiVersion":
                               obj.get("apiVersion", "v1"), "name": meta["name"],
                               "namespace": meta.get("namespace", ""), "uid": meta["uid"]},
            "reason": reason, "message": message, "type": "Warning" if warning else "Normal",
            "source": {"component": "kubelet", "host": node}, "count": 1,
            "firstTimestamp": now, "lastTimestamp": now, "reportingComponent": "kubelet",
            "reportingInstance": node}
        try:
            await self.node_client(KUBELET_ACCOUNT, node).create("events", event, copy=False)
        except ApiError as e:
            log.warning("event %s on %s: %s", reason, meta["name"], e)

    async def report_status(self, name: str, node: Obj | None = None) -> None:
        """Post the node's status (conditions with a fresh heartbeat), then again in 5 min."""
        state = self.nodes.get(name)
        if state is None or state.heartbeat_stopped:
            return
        node = node or self.node_informer.cache.get(name)
        if node is None:
            return
        now = self._now()
        status = nodes.adopted_status(node, state.profile, state.where, now,
                                      self.settings.profile.node.capacity)
        client = self.node_client(KUBELET_ACCOUNT, name)
        patch: Obj = {"status": status}
        if not (node.get("spec") or {}).get("podCIDR") and not state.emulated:
            await client.patch(NODES, name, {"spec": {"podCIDR": state.where.pod_cidr,
                                                      "podCIDRs": [state.where.pod_cidr]}},
                               copy=False)
        await client.patch(NODES, name, patch, subresource="status", copy=False)
        self.queue.add_after(("status", name), nodes.STATUS_REPORT_SECONDS)

    async def renew_lease(self, name: str) -> None:
        """Create or renew the node's Lease; the next renewal is due in 10 s."""
        state = self.nodes.get(name)
        if state is None or state.heartbeat_stopped:
            return
        client = self.node_client(KUBELET_ACCOUNT, name)
        now = rfc3339_micro(self.clock.now())
        if state.lease is None:
            try:
                state.lease = await client.get(LEASES, name, nodes.LEASE_NAMESPACE)
            except ApiError as e:
                if e.code != 404:
                    raise
        if state.lease is None:
            node = {"metadata": {"name": name, "uid": state.uid}}
            try:
                state.lease = await client.create(LEASES, nodes.lease_object(node, now))
            except ApiError as e:
                if e.code != 409:
                    raise
                state.lease = await client.get(LEASES, name, nodes.LEASE_NAMESPACE)
        else:
            lease = {**state.lease, "spec": {  # the stored lease is shared: never mutated
                **state.lease.get("spec", {}), "holderIdentity": name,
                "leaseDurationSeconds": nodes.LEASE_DURATION_SECONDS, "renewTime": now}}
            try:
                state.lease = await client.update(LEASES, lease, copy=False)
            except ApiError as e:
                state.lease = None
                if e.code not in (404, 409):
                    raise
                self.queue.add(("lease", name))
                return
        self.queue.add_after(("lease", name), nodes.LEASE_RENEW_SECONDS)

    # ----- the drivers' controllers -------------------------------------------------------

    async def satisfy_bindings(self, node: str, driver: str, key: str) -> None:
        """Let the driver's controller set the binding conditions of the claim `key`."""
        state = self.nodes.get(node)
        plugin = state.plugins.get(driver) if state is not None else None
        namespace, _, name = key.partition("/")
        claim = self.claim_informer.cache.get(name, namespace)
        if plugin is None or claim is None:
            return
        await plugin.satisfy_binding_conditions(Claim(namespace=namespace, name=name,
                                                      uid=claim["metadata"]["uid"]))

    # ----- DeviceClasses ----------------------------------------------------------------

    def _all_drivers(self) -> list[DriverProfile]:
        seen: dict[str, DriverProfile] = {}
        for d in self.settings.profile.drivers if self._configured else ():
            seen.setdefault(d.name, d)
        for state in self.nodes.values():
            for d in state.drivers():
                seen.setdefault(d.name, d)
        return list(seen.values())

    async def install_classes(self) -> None:
        """Create each driver's DeviceClass once (an existing one is left as it is)."""
        client = self.node_client(INSTALLER_ACCOUNT, None)
        for driver in self._all_drivers():
            if driver.name in self.classes_done:
                continue
            try:
                await client.create(DEVICE_CLASSES, device_class(driver))
            except ApiError as e:
                if e.code != 409:
                    raise
            self.classes_done.add(driver.name)

    # ----- ResourceSlices ---------------------------------------------------------------

    async def publish(self, name: str, driver: str) -> None:
        """Make the driver's published pool on the node match its inventory."""
        state = self.nodes.get(name)
        if state is None or driver not in state.inventories:
            return
        if self.slice_informer.revision < state.written_at.get(driver, 0):
            return  # our last write is on its way to the cache; its event brings us back
        inv = state.inventories[driver]
        published = self.slice_informer.cache.by_index("pool", f"{name}/{driver}")
        plan = slices.plan(inv, published, state.written.get(driver))
        if plan.empty:
            state.written[driver] = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
                                     for s in published}
            return
        client = self.node_client(PLUGIN_ACCOUNT, name)
        written: dict[str, str] = {}
        last = 0
        owner = {"metadata": {"name": name, "uid": state.uid}}
        for current, spec in plan.updates:
            obj = {**current, "spec": spec,
                   "metadata": {**current["metadata"]}}
            stored = await client.update(slices.RESOURCE_SLICES, obj)
            written[stored["metadata"]["name"]] = stored["metadata"]["resourceVersion"]
            last = max(last, int(stored["metadata"]["resourceVersion"]))
        for spec in plan.creates:
            stored = await client.create(slices.RESOURCE_SLICES,
                                         slices.new_slice(inv, spec, owner))
            written[stored["metadata"]["name"]] = stored["metadata"]["resourceVersion"]
            last = max(last, int(stored["metadata"]["resourceVersion"]))
        for gone in plan.deletes:
            try:
                deleted = await client.delete(slices.RESOURCE_SLICES, gone["metadata"]["name"])
                last = max(last, int(deleted["metadata"]["resourceVersion"]))
            except ApiError as e:
                if e.code != 404:
                    raise
        state.written[driver] = written
        state.written_at[driver] = last


def device_class(driver: DriverProfile) -> Obj:
    """The DeviceClass a driver's installation creates (the example driver's chart: every
    device of the driver)."""
    spec: Obj = {"selectors": [{"cel": {"expression": driver.device_class.selector
                                        or f"device.driver == '{driver.name}'"}}]}
    if driver.device_class.extended_resource_name:
        spec["extendedResourceName"] = driver.device_class.extended_resource_name
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": driver.class_name}, "spec": spec}
