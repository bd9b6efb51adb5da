"""What the scheduler knows between cycles, kept from its informers, and when it reuses a verdict.

The informer handlers here (`pod_changed`, `node_changed`, `claim_changed`, `slice_changed`,
`class_changed`, `taint_rule_changed`) keep the scheduler's view of the cluster: the
allocator's inputs (`inventory`), the devices in use (`allocated`: allocated claims, and the
new allocations in flight between Reserve and the end of PreBind), what the pods counted on
each node request (`usage`: bound pods, and pods assumed at Reserve), and the nodes in the
scheduler's order with their parsed allocatable. The component turns the same changes into
work-queue keys; the cycle reads this cache and fills its memos.

**The rule: a verdict is reused only when every input it depends on is unchanged.** Each memo
either compares a key made of all its inputs at every lookup, or is dropped by every event
that can change one of them:

- `equivalence`, a node's whole verdict (its Filter rejection, or its allocations and score)
  for pods of one shape. The pod's inputs are its shape (`verdict_shape`): the placement
  fields, the requests, the specs of the claims to allocate, the node selectors of its
  allocated claims and, with DRANodeAllocatableResources, which containers use which claim
  and the devices its allocated claims hold. A new shape drops every verdict (only the last
  shape's are kept); pods with DRA-backed extended resources share none. A node's verdict is
  dropped by any event of its Node; by a pod starting or stopping to count on it (seen bound,
  assumed, finished, deleted, forgotten at Unreserve or a failed Bind); and by devices taken
  or freed there: a claim reserved or unreserved, and any event of a claim that has an
  allocation or has just lost one, drop the nodes its devices are local to (every node's,
  when they are not node-local). Every node's is dropped by any ResourceSlice, DeviceClass or
  DeviceTaintRule event.
- `dra_outcomes`, a node's DRA Filter outcome (the allocator's rejection or results), keyed by
  `dra_key`: the allocator-inputs `epoch` (bumped by every slice, class and taint-rule event),
  the Node's resourceVersion, the specs of the claims to allocate, and the allocation version
  of every pool the node sees. Dropped with the Node. One outcome depends on time, which no
  key holds: a filterTimeout rejection (an allocation running past `cycle.FILTER_TIMEOUT` on
  a real clock) is remembered like the others, here and in `equivalence`.
- `placements`, a node's placement-filter verdict (NodeUnschedulable, NodeName,
  TaintToleration, NodeAffinity), keyed by the Node's resourceVersion and the pod's placement
  fields (`placement_key`). Dropped with the Node.
- `special_claims`, a pod's special claim for its DRA-backed extended resources (a claim body,
  not a verdict), keyed by the pod's uid and which of those resources a device plugin offers
  on the node; dropped with the pod. It is not keyed by the `epoch`: a DeviceClass change
  that gives an extended resource to another class leaves an already-built special claim as
  it was.
- Claim spec encodings (`spec`), per claim uid: a claim's spec is immutable; dropped with the
  claim.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, Generic, TypeVar

import orjson

import scheduler.nodeallocatable as nodealloc
from fakeapi.machinery.watchtypes import DELETED
from fakeapi.registry.kinds import (
    DEVICE_CLASSES,
    DEVICE_TAINT_RULES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)
from fakeapi.runtime.informer import object_key
from scheduler.allocator import (
    CLAIM_ANNOTATION,
    AllocatedState,
    AllocatorFeatures,
    Inventory,
)
from scheduler.claims import PodClaim, SpecialClaim
from scheduler.equivalence import EquivalenceCache, allocation_nodes
from scheduler.filters import (
    PLACEMENT_FIELDS,
    Rejection,
    Resources,
    allocatable,
    pod_requests,
)
from scheduler.usage import NodeUsage, counts_on_node

Obj = dict[str, Any]
V = TypeVar("V")
CLAIMS = RESOURCE_CLAIMS.resource_id
SLICES = RESOURCE_SLICES.resource_id
CLASSES = DEVICE_CLASSES.resource_id
RULES = DEVICE_TAINT_RULES.resource_id
EXTENDED_PREFIX = "extended-resources/"
"""In-flight key of a special claim not created yet: the prefix and its pod's uid."""
DraOutcome = tuple[Rejection | None, list[Obj] | None]
"""The DRA Filter's rejection, or the allocation results of the claims to allocate."""


class KeyedMemo(Generic[V]):
    """Per name (a node or a pod): the last value computed, and the key of the inputs it was
    computed from; a lookup with another key computes it again."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Any, V]] = {}

    def get(self, name: str, key: Any, compute: Callable[[], V]) -> V:
        """The value remembered for `name` when its key equals `key`, else `compute()`'s
        (remembered with `key`)."""
        hit = self._entries.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = compute()
        self._entries[name] = (key, value)
        return value

    def drop(self, name: str) -> None:
        """Forget the value of `name`."""
        self._entries.pop(name, None)


def placement_key(pod: Obj) -> bytes:
    """The pod's placement fields (what the placement filters read), canonically encoded."""
    spec = pod.get("spec") or {}
    return orjson.dumps([spec.get(f) for f in PLACEMENT_FIELDS], option=orjson.OPT_SORT_KEYS)


class SchedulerCache:
    """The scheduler's view of the cluster and its memos (see the module docstring)."""

    def __init__(self, *, features: AllocatorFeatures, node_allocatable: bool) -> None:
        self.features = features
        self.node_allocatable = node_allocatable
        """Whether DRANodeAllocatableResources is on (claims add to the pods' requests)."""
        self.inventory = Inventory(features=features)
        self.allocated = AllocatedState()
        self.equivalence = EquivalenceCache()
        self.usage = NodeUsage(on_change=lambda node: self.equivalence.forget((node,)))
        self.epoch = 0
        """Bumped by every slice, class or taint-rule change (the allocator's inputs)."""
        self.dra_outcomes: KeyedMemo[DraOutcome] = KeyedMemo()
        self.placements: KeyedMemo[Rejection | None] = KeyedMemo()
        self.special_claims: KeyedMemo[SpecialClaim | None] = KeyedMemo()
        self._node_names: list[str] = []
        self._capacity: dict[str, dict[str, Fraction]] = {}
        """Each node's parsed allocatable (parsed once per node change, not per pod)."""
        self._in_flight: dict[str, Obj] = {}
        self._specs: dict[str, bytes] = {}
        self._allocation_nodes: dict[str, list[str] | None] = {}
        """Per claim uid in the allocated state: the nodes its devices are local to."""

    # ----- the informer handlers ---------------------------------------------------------

    def pod_changed(self, type_: str, pod: Obj) -> bool:
        """Count the pod on its node, or no longer; whether it stopped counting on a node it
        counted on (room for others)."""
        key = object_key(pod)
        before = self.usage.node_of(key)
        if type_ == DELETED:
            self.usage.forget(key)
            self.special_claims.drop(pod["metadata"].get("uid", ""))
            return bool(before)
        node = counts_on_node(pod)
        if node or not self.assumed(key):
            if self.node_allocatable and node != self.usage.node_of(key):
                self.usage.set(key, node, self._footprint(pod))
            else:
                self.usage.set(key, node, pod=pod)
        return bool(before) and not node

    def node_changed(self, type_: str, node: Obj, old: Obj | None) -> None:
        """A node was added, changed or deleted."""
        name = node["metadata"]["name"]
        self.equivalence.forget((name,))
        if type_ == DELETED:
            if name in self._node_names:
                self._node_names.remove(name)
                self.equivalence.order(self._node_names)
            self._capacity.pop(name, None)
            self.dra_outcomes.drop(name)
            self.placements.drop(name)
        else:
            self._capacity[name] = allocatable(node)
            if old is None and name not in self._node_names:
                self._node_names.append(name)
                self._node_names.sort()
                self.equivalence.order(self._node_names)

    def claim_changed(self, type_: str, claim: Obj) -> None:
        """A claim was added, changed or deleted: its devices are in use while it has an
        allocation (or one in flight)."""
        uid = claim["metadata"].get("uid", "")
        allocation = (claim.get("status") or {}).get("allocation")
        if type_ != DELETED and allocation:
            self._take(uid, allocation)
        elif uid not in self._in_flight:
            self._free(uid)
        if type_ == DELETED:
            self._specs.pop(uid, None)
        elif allocation and (claim["metadata"].get("annotations") or {}).get(CLAIM_ANNOTATION):
            for owner in claim["metadata"].get("ownerReferences") or ():
                self._free(f"{EXTENDED_PREFIX}{owner.get('uid')}")

    def slice_changed(self, type_: str, obj: Obj) -> None:
        """A ResourceSlice was added, changed or deleted."""
        self._inventory_changed(type_, obj, self.inventory.set_slice,
                                self.inventory.remove_slice)

    def class_changed(self, type_: str, obj: Obj) -> None:
        """A DeviceClass was added, changed or deleted."""
        self._inventory_changed(type_, obj, self.inventory.set_class,
                                self.inventory.remove_class)

    def taint_rule_changed(self, type_: str, obj: Obj) -> None:
        """A DeviceTaintRule was added, changed or deleted."""
        self._inventory_changed(type_, obj, self.inventory.set_taint_rule,
                                self.inventory.remove_taint_rule)

    def _inventory_changed(self, type_: str, obj: Obj, put: Callable[[Obj], None],
                           remove: Callable[[str], None]) -> None:
        self.epoch += 1
        self.equivalence.forget()
        if type_ == DELETED:
            remove(obj["metadata"]["name"])
        else:
            put(obj)

    def _take(self, uid: str, allocation: Obj) -> None:
        """A claim's devices are in use (allocated, or in flight)."""
        self._free(uid)
        self.allocated.add(uid, allocation)
        nodes = allocation_nodes(allocation)
        self._allocation_nodes[uid] = nodes
        self.equivalence.forget(nodes)

    def _free(self, uid: str) -> None:
        """A claim's devices are free again."""
        if uid in self._allocation_nodes:
            self.equivalence.forget(self._allocation_nodes.pop(uid))
        self.allocated.remove(uid)

    # ----- Reserve and Unreserve -----------------------------------------------------------

    def reserve_claim(self, uid: str, allocation: Obj) -> None:
        """Reserve: the claim's new allocation is in flight, its devices in use."""
        self._in_flight[uid] = allocation
        self._take(uid, allocation)

    def end_in_flight(self, uid: str) -> None:
        """PreBind is over for the claim: from now on its informer events say what it holds."""
        self._in_flight.pop(uid, None)

    def unreserve_claim(self, uid: str) -> None:
        """Unreserve: the claim's new allocation is dropped, its devices are free again."""
        self._in_flight.pop(uid, None)
        self._free(uid)

    def claim_in_flight(self, uid: str) -> bool:
        """Whether the claim is being allocated (between Reserve and the end of PreBind)."""
        return uid in self._in_flight

    def assume(self, key: str, node: str, pod: Obj, statuses: list[Obj]) -> None:
        """Reserve: the pod counts on `node`, with the node-allocatable resources of its
        claims' `statuses`, until it is seen bound there or forgotten."""
        self.usage.set(key, node, self._footprint(pod, statuses) if statuses else None,
                       pod=pod)

    def forget_pod(self, key: str) -> None:
        """The pod no longer counts on the node it was assumed on."""
        self.usage.forget(key)

    def assumed(self, key: str) -> bool:
        """Whether the pod counts on a node (assumed there, or seen bound)."""
        return bool(self.usage.node_of(key))

    def _footprint(self, pod: Obj, statuses: list[Obj] | None = None) -> Resources:
        """What the pod takes from its node: its requests, plus the node-allocatable
        resources of its claims (those given, else those its status records)."""
        requests = pod_requests(pod)
        if not self.node_allocatable:
            return requests
        more = nodealloc.demand(statuses) if statuses is not None else \
            nodealloc.status_demand(pod)
        return nodealloc.plus(requests, more) if more else requests

    # ----- what the cycle reads ------------------------------------------------------------

    @property
    def node_names(self) -> list[str]:
        """The nodes, sorted by name (read-only)."""
        return self._node_names

    def capacity(self, node: str) -> dict[str, Fraction]:
        """The node's parsed allocatable ({} when it reports none, or is unknown)."""
        return self._capacity.get(node) or {}

    def spec(self, c: PodClaim) -> bytes:
        """A claim's spec, canonically encoded (claims from one template encode alike)."""
        spec = self._specs.get(c.uid)
        if spec is None:
            spec = self._specs[c.uid] = orjson.dumps(c.claim.get("spec"),
                                                    option=orjson.OPT_SORT_KEYS)
        return spec

    def dra_key(self, node: Obj, to_allocate: list[PodClaim]) -> tuple[Any, ...]:
        """What a node's allocation outcome depends on: the allocator's inputs (epoch), the
        node (labels, via its resourceVersion), the claims' specs (not their names: claims
        from one template share outcomes) and the devices in use in the node's pools. The
        allocator is a pure function of these, so an equal key means an equal outcome."""
        meta = node["metadata"]
        view = self.inventory.view(meta["name"], meta.get("labels") or {})
        return (self.epoch, meta.get("resourceVersion"), tuple(self.spec(c) for c in to_allocate),
                tuple(self.allocated.pool_version(p.id) for p in view.pools))

    def verdict_shape(self, pod: Obj, claims: list[PodClaim], to_allocate: list[PodClaim],
                      requests: Resources, placement: bytes) -> bytes:
        """The pod's shape: everything of the pod a node's verdict depends on (pods of one
        shape share verdicts in the equivalence cache)."""
        return b"\0".join([
            # hex: exact for any size (decimal text of a 5,000-digit value is refused)
            placement, orjson.dumps(sorted((k, f"{v.numerator:x}/{v.denominator:x}")
                                           for k, v in requests.items())),
            *(self.spec(c) for c in to_allocate),
            orjson.dumps([c.claim["status"]["allocation"].get("nodeSelector")
                          for c in claims if c.allocated], option=orjson.OPT_SORT_KEYS),
            *self._node_allocatable_shape(pod, claims)])

    def _node_allocatable_shape(self, pod: Obj, claims: list[PodClaim]) -> list[bytes]:
        """With DRANodeAllocatableResources, what else a verdict depends on: which containers
        use which claim and what the allocated claims already hold."""
        if not self.node_allocatable:
            return []
        spec = pod.get("spec") or {}
        refs = [(c.get("resources") or {}).get("claims") for c in
                (spec.get("initContainers") or []) + (spec.get("containers") or [])]
        held = [c.claim["status"]["allocation"].get("devices") for c in claims if c.allocated]
        return [orjson.dumps([refs, held], option=orjson.OPT_SORT_KEYS)]
