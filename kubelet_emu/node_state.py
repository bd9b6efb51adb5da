"""What the kubelet's controllers share about the nodes they run: one `NodeState` per node
(its drivers, Lease, published slices, heartbeat, pod IP slots) in `EmulatedNodes`, with
the identities each node acts with and the folder its files go to."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kubelet_emu.nodes as nodes
from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.runtime.events import EventRecorder
from kubelet_emu.drivers import FakeDriver
from kubelet_emu.inventory import DriverPool
from kubelet_emu.plugin import DRAPlugin
from kubelet_emu.settings import KUBELET_ACCOUNT, EmulatorSettings

if TYPE_CHECKING:
    from kubelet_emu.profile import DriverProfile, NodeProfile

Obj = dict[str, Any]
MAX_SLOT = 253
"""Pod IP slots per node: 1..253 of its /24."""


@dataclasses.dataclass(kw_only=True)
class NodeState:
    """What the emulator keeps about one node it runs a kubelet for."""

    name: str
    where: nodes.Addressing
    profile: NodeProfile | None
    emulated: bool
    """Registered by the emulator (else adopted: created by a client)."""
    uid: str = ""
    registered_at: int = 0
    """The revision of the Node as the kubelet registered or adopted it (the node informer
    must reach it before a Node missing from its cache means a deleted one)."""
    inventories: dict[str, DriverPool] = dataclasses.field(default_factory=dict)
    lease: Obj | None = None
    """The Lease as last written (its resourceVersion saves a read per renewal)."""
    written: dict[str, dict[str, str]] = dataclasses.field(default_factory=dict)
    """Per driver: the slices last written (name → resourceVersion)."""
    written_at: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per driver: the revision of the last slice write (the informer must reach it)."""
    heartbeat_stopped: bool = False
    """A NodeFault is on: no Lease renewals, no status, no pod work."""
    fakes: dict[str, FakeDriver] = dataclasses.field(default_factory=dict)
    """The node's built-in fake drivers by driver name (in process, or served over gRPC)."""
    plugins: dict[str, list[DRAPlugin]] = dataclasses.field(default_factory=dict)
    """The DRA plugins registered with the node's kubelet, per driver name, newest last:
    the newest is the one the kubelet calls."""
    health_stops: list[Callable[[], None]] = dataclasses.field(default_factory=list)
    """Stop the in-process drivers' health streams."""
    slots: dict[str, int] = dataclasses.field(default_factory=dict)
    """Pod IP slots in use, by pod uid."""
    images: set[str] = dataclasses.field(default_factory=set)
    """The images pulled to the node (its container runtime's image store)."""

    disabled: frozenset[str] = frozenset()
    """The profile's drivers turned off on this node (`--disable-driver`)."""

    def drivers(self) -> list[DriverProfile]:
        """The node's fake drivers (its profile's, less the disabled ones)."""
        return [d for d in self.profile.drivers if d.name not in self.disabled] \
            if self.profile else []

    def plugin(self, driver: str) -> DRAPlugin | None:
        """The plugin the kubelet calls for `driver` (None: not registered)."""
        stack = self.plugins.get(driver)
        return stack[-1] if stack else None

    def register_plugin(self, driver: str, plugin: DRAPlugin) -> None:
        """A plugin registered for `driver`: it wins over the earlier ones."""
        self.plugins.setdefault(driver, []).append(plugin)

    def deregister_plugin(self, driver: str, plugin: DRAPlugin) -> None:
        """A plugin went: the one registered before it (if any) serves the driver again."""
        stack = self.plugins.get(driver) or []
        if plugin in stack:
            stack.remove(plugin)
        if not stack:
            self.plugins.pop(driver, None)

    def allocate_slot(self, uid: str) -> int:
        """The pod's IP slot on the node (its own if it has one, else the lowest free one)."""
        if uid in self.slots:
            return self.slots[uid]
        used = set(self.slots.values())
        slot = next((i for i in range(1, MAX_SLOT + 1) if i not in used), MAX_SLOT)
        self.slots[uid] = slot
        return slot

    def release_slot(self, uid: str) -> None:
        """Free a pod's IP slot."""
        self.slots.pop(uid, None)


class EmulatedNodes:
    """The nodes the kubelet runs, by name, shared by its controllers: each reads the state
    of a node from here and acts with the node's own identities (`client`)."""

    def __init__(self, *, settings: EmulatorSettings, client: ApiClient,
                 client_for: Callable[[str, str | None], ApiClient] | None) -> None:
        self.settings = settings
        self.configured = settings.node_names()
        """The nodes the emulator registers itself (the others are adopted)."""
        self.by_name: dict[str, NodeState] = {}
        """The nodes a kubelet runs for now."""
        self.refused: dict[str, str] = {}
        """Nodes of this shard that another emulate process runs, and why this one says so."""
        self._client = client
        self._client_for = client_for
        self._clients: dict[tuple[str, str | None], ApiClient] = {}
        self._recorders: dict[str, EventRecorder] = {}
        every = settings.all_node_names()
        self._indexes: dict[str, int] = {n: i for i, n in enumerate(every) if n in
                                         self.configured}
        self._next_adopted = len(every) + settings.shard[0]

    def get(self, name: str) -> NodeState | None:
        """The state of a node the kubelet runs (None for any other)."""
        return self.by_name.get(name)

    def client(self, account: str, node: str | None) -> ApiClient:
        """A client of `account` bound to `node` (the component's own where the composition
        root offers no other), made once per identity."""
        if self._client_for is None:
            return self._client
        key = (account, node)
        client = self._clients.get(key)
        if client is None:
            client = self._clients[key] = self._client_for(account, node)
        return client

    def recorder(self, node: str, clock: Clock) -> EventRecorder:
        """The Event recorder of the node's kubelet (source `kubelet` on host `node`, with
        client-go's correlation: a repeated Event counts up)."""
        recorder = self._recorders.get(node)
        if recorder is None:
            recorder = self._recorders[node] = EventRecorder(
                client=self.client(KUBELET_ACCOUNT, node), clock=clock, component="kubelet",
                host=node, instance=node)
        return recorder

    def forget_clients(self, node: str) -> None:
        """Drop the clients and the Event recorder bound to `node` (its kubelet stopped)."""
        for key in [k for k in self._clients if k[1] == node]:
            del self._clients[key]
        self._recorders.pop(node, None)

    def root(self, node: str) -> Path:
        """The node's root folder: `<state>/nodes/<node>`."""
        return self.settings.root() / "nodes" / node

    def index(self, name: str) -> int:
        """The node's place in the emulated network: the configured nodes first (each at
        its place among all shards'), then the adopted ones in the order they came, each
        shard taking every n-th place so that no two shards' nodes share an address."""
        index = self._indexes.get(name)
        if index is None:
            index = self._indexes[name] = self._next_adopted
            self._next_adopted += self.settings.shard[1]
        return index
