"""The scheduling loop: kube-scheduler's cycle for pods of `default-scheduler`, as a client.

One pod at a time, as upstream: PreEnqueue (its claims exist), PreFilter, Filter over the
nodes in a rotating order until enough feasible ones are found (upstream's
numFeasibleNodesToFind), Score (DRA's prioritized-list score, then the least-allocated
spread), Reserve (claims in flight, the pod assumed on its node), PreBind (the claims'
delete-protection finalizer, allocation and reservation; binding conditions waited for),
Bind (`pods/binding`). A pod no node can take gets `PodScheduled=False` and a
FailedScheduling Event with upstream's message, and waits for a change of the cluster.
Everything is written through the API as `system:serviceaccount:kube-system:kube-scheduler`.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any, cast

import orjson
from aiohttp import web

import scheduler.explain as explanation
import scheduler.nodeallocatable as nodealloc
from fakeapi.kube import nodeselector
from fakeapi.machinery.errors import ApiError, not_found
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.machinery.watchtypes import DELETED
from fakeapi.runtime.component import ComponentContext, Controller, Route
from fakeapi.runtime.events import NORMAL, WARNING, EventRecorder, object_reference
from fakeapi.runtime.informer import object_key
from fakeapi.runtime.workqueue import RateLimiter, Retry, WorkQueue
from scheduler.allocator import (
    CLAIM_ANNOTATION,
    AllocatedState,
    AllocationError,
    AllocationTimeout,
    Diagnostics,
    Features,
    Inventory,
    NodeUnschedulable,
    allocate,
    extended_resource_request,
    is_dra_extended_resource_name,
)
from scheduler.claims import (
    FINALIZER,
    ClaimsNotReady,
    PodClaim,
    check_reservable,
    claim_key,
    pod_claims,
    pod_reference,
    requested_classes,
    with_finalizer,
    with_reservation,
)
from scheduler.equivalence import (
    REJECTED,
    EquivalenceCache,
    Verdict,
    allocation_nodes,
    score_of,
)
from scheduler.filters import (
    CPU,
    MEMORY,
    PLACEMENT_FIELDS,
    Rejection,
    Resources,
    allocatable,
    fits,
    placement_rejection,
    pod_requests,
    resources_rejection,
    run_filters,
)
from scheduler.fiterror import NO_NODES, fit_error
from scheduler.usage import NodeUsage, counts_on_node

Obj = dict[str, Any]
NAME = "default-scheduler"
CLAIMS = "resourceclaims.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
RULES = "devicetaintrules.resource.k8s.io"
PODGROUPS = "podgroups.scheduling.k8s.io"
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0  # upstream's podInitialBackoffSeconds / max
UNSCHEDULABLE_FLUSH = 300.0  # upstream's podMaxInUnschedulablePodsDuration (5 min)
BINDING_POLL = 5.0  # upstream PreBind polls binding conditions every 5 s
BINDING_TIMEOUT = 600.0  # upstream's default bindingTimeout (10 min)
MIN_FEASIBLE_NODES = 100  # upstream's minFeasibleNodesToFind
FILTER_TIMEOUT = 10.0  # upstream's DynamicResources filterTimeout (DRASchedulerFilterTimeout)
EXTENDED_PREFIX = "extended-resources/"
"""In-flight key of a special claim not created yet: the prefix and its pod's uid."""
DRA_PLUGIN = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
UNAVAILABLE = "resourceclaim not available on the node"
DEFAULT_CPU, DEFAULT_MEMORY = Fraction(1, 10), Fraction(200 * 2**20)  # non-zero scoring defaults

log = logging.getLogger(__name__)


def _explain_share_id() -> str:
    """The share id an explanation's trial allocations use (they are thrown away)."""
    return "00000000-0000-4000-8000-000000000000"


def feasible_nodes_to_find(total: int) -> int:
    """Same as upstream's numFeasibleNodesToFind with the adaptive percentage."""
    if total < MIN_FEASIBLE_NODES:
        return total
    percentage = max(5, 50 - total // 125)
    return max(total * percentage // 100, MIN_FEASIBLE_NODES)


class Unschedulable(Exception):
    """This attempt found no node: the FitError message to report, and the claim that
    DynamicResources' PostFilter deallocates to make room, if any."""

    def __init__(self, message: str, deallocate: PodClaim | None = None) -> None:
        super().__init__(message)
        self.deallocate = deallocate


@dataclasses.dataclass
class Waiting:
    """A pod whose claims are allocated and reserved, waiting for binding conditions."""

    node: str
    deadline: float
    claims: list[str]
    """`namespace/name` of the claims whose devices have binding conditions."""


@dataclasses.dataclass
class Choice:
    """The outcome of one scheduling cycle: a node and the claims' new allocations."""

    node: str
    claims: list[PodClaim]
    allocations: dict[str, Obj]
    """claim uid → the allocation this cycle made for it."""
    extended: Extended | None = None
    """The special claim for the pod's DRA-backed extended resources, to create at PreBind."""
    node_allocatable: list[Obj] = dataclasses.field(default_factory=list)
    """The pod's `status.nodeAllocatableResourceClaimStatuses` on the node (KEP-5517)."""


@dataclasses.dataclass
class Extended:
    """The special claim of one pod (DRAExtendedResource): its body, the request mappings for
    the pod's status, and its allocation once the node is chosen."""

    claim: PodClaim
    mappings: list[Obj]
    allocation: Obj | None = None


class Scheduler(Controller[str]):
    """kube-scheduler for the pods whose `spec.schedulerName` is `default-scheduler`."""

    scan_cached = True
    """Find the node window on the equivalence cache's score list (`_scan_cached`); off,
    every cycle walks the nodes one by one (the reference the tests compare it with)."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.queue = WorkQueue(clock=ctx.clock, name=ctx.name,
                               limiter=RateLimiter(base=BACKOFF_INITIAL, cap=BACKOFF_MAX))
        served = {k.resource_id for k in self.client.resources()}
        self.features = Features.from_gates(ctx.gates)
        self.workload_claims = PODGROUPS in served and ctx.gates.enabled(WORKLOAD_CLAIMS_GATE)
        self.node_allocatable = ctx.gates.enabled(nodealloc.GATE)
        self.inventory = Inventory(features=self.features)
        self.allocated = AllocatedState()
        self.equivalence = EquivalenceCache()
        self.usage = NodeUsage(on_change=lambda node: self.equivalence.forget((node,)))
        self.recorder = EventRecorder(client=self.client, clock=ctx.clock, component=NAME)
        self._random = ctx.random
        self._unschedulable: set[str] = set()
        self._in_flight: dict[str, Obj] = {}
        self._waiting: dict[str, Waiting] = {}
        self._node_names: list[str] = []
        self._capacity: dict[str, dict[str, Fraction]] = {}
        """Each node's parsed allocatable (parsed once per node change, not per pod)."""
        self._dra_outcomes: dict[str, tuple[tuple[Any, ...], Rejection | None,
                                            list[Obj] | None]] = {}
        """Per node: the last DRA outcome and what it depended on (see `_dra_key`)."""
        self._specs: dict[str, bytes] = {}
        self._allocation_nodes: dict[str, list[str] | None] = {}
        """Per claim uid in the allocated state: the nodes its devices are local to."""
        self._extended_claims: dict[str, tuple[Any, Extended | None]] = {}
        """Per pod uid: its special claim for extended resources, and for which nodes."""
        self._placements: dict[str, tuple[tuple[Any, ...], Rejection | None]] = {}
        """Per node: the last placement-filter verdict and the (node version, pod placement
        fields) it was for."""
        self._epoch = 0
        """Bumped by every slice, class or taint-rule change (the allocator's inputs)."""
        self._next_start = 0
        self.pods = self.watch("pods", self._pod_changed)
        self.nodes = self.watch("nodes", self._node_changed)
        self.claims = self.watch(CLAIMS, self._claim_changed)
        self.watch(SLICES, self._inventory_changed(self.inventory.set_slice,
                                                   self.inventory.remove_slice))
        self.classes = self.watch(CLASSES, self._inventory_changed(
            self.inventory.set_class, self.inventory.remove_class))
        if RULES in served:
            self.watch(RULES, self._inventory_changed(self.inventory.set_taint_rule,
                                                      self.inventory.remove_taint_rule))
        self.groups = self.watch(PODGROUPS, self._cluster_changed) if self.workload_claims \
            else None

    # ----- events → keys -------------------------------------------------------------------

    def _ours(self, pod: Obj) -> bool:
        """A pending pod of this scheduler, not bound and not being deleted."""
        spec, meta = pod.get("spec") or {}, pod["metadata"]
        return (not spec.get("nodeName") and not meta.get("deletionTimestamp")
                and (spec.get("schedulerName") or NAME) == NAME
                and (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))

    def _requeue_unschedulable(self) -> list[str]:
        keys = sorted(self._unschedulable)
        self._unschedulable.clear()
        return keys

    def _cluster_changed(self, type_: str, obj: Obj, old: Obj | None) -> list[str]:
        return self._requeue_unschedulable()

    def _pod_changed(self, type_: str, pod: Obj, old: Obj | None) -> list[str]:
        key = object_key(pod)
        before = self.usage.node_of(key)
        if type_ == DELETED:
            self.usage.forget(key)
            self._unschedulable.discard(key)
            self._waiting.pop(key, None)
            self._extended_claims.pop(pod["metadata"].get("uid", ""), None)
            return self._requeue_unschedulable() if before else []
        node = counts_on_node(pod)
        if node or not self._assumed(key):
            if self.node_allocatable and node != self.usage.node_of(key):
                self.usage.set(key, node, self._footprint(pod))
            else:
                self.usage.set(key, node, pod=pod)
        if self._ours(pod):
            self._unschedulable.discard(key)
            return [key]
        if before and not node:  # finished or gone from its node: room for others
            return self._requeue_unschedulable()
        return []

    def _footprint(self, pod: Obj, statuses: list[Obj] | None = None) -> Resources:
        """What the pod takes from its node: its requests, plus the node-allocatable
        resources of its claims (those given, else those its status records)."""
        requests = pod_requests(pod)
        if not self.node_allocatable:
            return requests
        more = nodealloc.demand(statuses) if statuses is not None else \
            nodealloc.status_demand(pod)
        return nodealloc.plus(requests, more) if more else requests

    def _assumed(self, key: str) -> bool:
        """Whether the pod is assumed on a node it isn't seen bound to yet."""
        return bool(self.usage.node_of(key))

    def _node_changed(self, type_: str, node: Obj, old: Obj | None) -> list[str]:
        name = node["metadata"]["name"]
        self.equivalence.forget((name,))
        if type_ == DELETED:
            if name in self._node_names:
                self._node_names.remove(name)
                self.equivalence.order(self._node_names)
            self._capacity.pop(name, None)
            self._dra_outcomes.pop(name, None)
            self._placements.pop(name, None)
        else:
            self._capacity[name] = allocatable(node)
            if old is None and name not in self._node_names:
                self._node_names.append(name)
                self._node_names.sort()
                self.equivalence.order(self._node_names)
        return self._requeue_unschedulable()

    def _claim_changed(self, type_: str, claim: Obj, old: Obj | None) -> list[str]:
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
        keys = self._requeue_unschedulable()
        key = claim_key(claim)
        keys.extend(k for k, w in self._waiting.items() if key in w.claims)
        return keys

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

    def _inventory_changed(self, put: Any, remove: Any) -> Any:
        def changed(type_: str, obj: Obj, old: Obj | None) -> list[str]:
            self._epoch += 1
            self.equivalence.forget()
            if type_ == DELETED:
                remove(obj["metadata"]["name"])
            else:
                put(obj)
            return self._requeue_unschedulable()
        return changed

    # ----- the cycle ----------------------------------------------------------------------

    def _get_claim(self, namespace: str, name: str) -> Obj | None:
        return self.claims.cache.get(name, namespace)

    def _group_of(self, pod: Obj) -> Obj | None:
        if self.groups is None:
            return None
        group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if not group:
            return None
        return self.groups.cache.get(group, pod["metadata"].get("namespace", ""))

    async def reconcile(self, key: str) -> None:
        """One scheduling attempt for the pod `key` (or a look at its binding conditions)."""
        namespace, _, name = key.rpartition("/")
        pod = self.pods.cache.get(name, namespace)
        if pod is None or not self._ours(pod):
            self._waiting.pop(key, None)
            return
        waiting = self._waiting.get(key)
        if waiting is not None:
            await self._continue_binding(key, pod, waiting)
            return
        if self._assumed(key):
            return  # bound a moment ago; the informer hasn't shown it yet
        try:
            claims = pod_claims(pod, get_claim=self._get_claim,
                                          group=self._group_of(pod))
        except ClaimsNotReady:
            # upstream's PreEnqueue: not attempted (no condition, no event) until it changes
            self._unschedulable.add(key)
            return
        try:
            choice = self._schedule(pod, claims)
        except Unschedulable as e:
            if e.deallocate is not None:
                await self._deallocate([claim_key(e.deallocate.claim)])
            await self._report_unschedulable(key, pod, "Unschedulable", str(e))
            self._unschedulable.add(key)
            self.queue.add_after(key, UNSCHEDULABLE_FLUSH)
            return
        except AllocationError as e:
            await self._report_unschedulable(key, pod, "SchedulerError", str(e))
            raise Retry(reason=str(e)) from None
        await self._bind_cycle(key, pod, choice)

    def _prefilter(self, claims: list[PodClaim]) -> list[PodClaim]:
        """DynamicResources' PreFilter; the claims that need an allocation."""
        check_reservable(claims)
        to_allocate = [c for c in claims if not c.allocated]
        for c in to_allocate:
            meta = c.claim["metadata"]
            if c.uid in self._in_flight:
                raise ClaimsNotReady(f"resource claim {meta.get('namespace', '')}/"
                                     f"{meta['name']} is in the process of being allocated")
            for request, class_name in requested_classes(c.claim):
                if not class_name:
                    raise AllocationError(f"request {request}: unsupported request type")
                if self.classes.cache.get(class_name) is None:
                    raise ClaimsNotReady(f"request {request}: device class {class_name} "
                                         "does not exist")
        return to_allocate

    def _node_order(self) -> list[str]:
        names = self._node_names
        start = self._next_start % len(names) if names else 0
        return names[start:] + names[:start]

    def _filter_dra(self, pod: Obj, node: Obj, claims: list[PodClaim],
                    to_allocate: list[PodClaim], diagnostics: Diagnostics | None = None,
                    share_id: Callable[[], str] | None = None
                    ) -> tuple[Rejection | None, list[Obj] | None]:
        for c in claims:
            if c.allocated and not nodeselector.selector_matches(
                    c.claim["status"]["allocation"].get("nodeSelector"), node):
                return Rejection(DRA_PLUGIN, (UNAVAILABLE,)), None
        if not to_allocate:
            return None, []
        key: tuple[Any, ...] | None = None
        if diagnostics is None:
            key = self._dra_key(node, to_allocate)
            hit = self._dra_outcomes.get(node["metadata"]["name"])
            if hit is not None and hit[0] == key:
                return hit[1], hit[2]
        rejection, results = self._allocate_on(node, to_allocate, diagnostics, share_id)
        if key is not None:
            self._dra_outcomes[node["metadata"]["name"]] = (key, rejection, results)
        return rejection, results

    def _dra_key(self, node: Obj, to_allocate: list[PodClaim]) -> tuple[Any, ...]:
        """What a node's allocation outcome depends on: the allocator's inputs (epoch), the
        node (labels, via its resourceVersion), the claims' specs (not their names: claims
        from one template share outcomes) and the devices in use in the node's pools. The
        allocator is a pure function of these, so an equal key means an equal outcome."""
        meta = node["metadata"]
        view = self.inventory.view(meta["name"], meta.get("labels") or {})
        return (self._epoch, meta.get("resourceVersion"), tuple(self._spec(c) for c in to_allocate),
                tuple(self.allocated.pool_version(p.id) for p in view.pools))

    def _allocate_on(self, node: Obj, to_allocate: list[PodClaim],
                     diagnostics: Diagnostics | None, share_id: Callable[[], str] | None
                     ) -> tuple[Rejection | None, list[Obj] | None]:
        deadline = self.clock.monotonic() + FILTER_TIMEOUT
        try:
            results = allocate(claims=[c.claim for c in to_allocate], node=node,
                               inventory=self.inventory, allocated=self.allocated,
                               new_share_id=share_id or self._share_id,
                               diagnostics=diagnostics,
                               expired=lambda: self.clock.monotonic() > deadline)
        except NodeUnschedulable as e:
            return Rejection(DRA_PLUGIN, (str(e),)), None
        except AllocationTimeout as e:  # upstream's filterTimeout: this node only
            return Rejection(DRA_PLUGIN, (str(e),)), None
        if results is None:
            return Rejection(DRA_PLUGIN, (CANNOT_ALLOCATE,)), None
        return None, results

    def _share_id(self) -> str:
        return str(uuid.UUID(int=self._random.getrandbits(128), version=4))

    def _schedule(self, pod: Obj, claims: list[PodClaim]) -> Choice:
        """PreFilter, Filter, PostFilter and Score: the chosen node, or Unschedulable."""
        total = len(self._node_names)
        post = ("no new claims to deallocate" if pod["spec"].get("resourceClaims") else "")
        if total == 0:
            raise Unschedulable(NO_NODES)
        try:
            to_allocate = self._prefilter(claims)
        except ClaimsNotReady as e:
            raise Unschedulable(fit_error(total, prefilter=str(e),
                                                   post_filter=post)) from None
        requests = pod_requests(pod)
        backed = [r for r in requests if self._dra_backed(r)]
        if backed and any(c.claim["metadata"].get("annotations", {}).get(CLAIM_ANNOTATION)
                          for c in claims):
            backed = []  # the special claim exists from an earlier attempt: it is a claim
        spec = pod.get("spec") or {}
        placement = orjson.dumps([spec.get(f) for f in PLACEMENT_FIELDS],
                                 option=orjson.OPT_SORT_KEYS)
        want = feasible_nodes_to_find(total)
        ranked = any(_subrequest_indexes(c.claim) for c in to_allocate)
        wants = (float(requests.get(CPU) or DEFAULT_CPU),
                 float(requests.get(MEMORY) or DEFAULT_MEMORY))
        verdicts: dict[str, Verdict] | None = None
        if not backed:  # a special claim is the pod's own: its verdicts can't be shared
            verdicts = self.equivalence.use(b"\0".join([
                placement, orjson.dumps(sorted((k, str(v)) for k, v in requests.items())),
                *(self._spec(c) for c in to_allocate),
                orjson.dumps([c.claim["status"]["allocation"].get("nodeSelector")
                              for c in claims if c.allocated], option=orjson.OPT_SORT_KEYS),
                *self._node_allocatable_shape(pod, claims)]))
        extended_by_node: dict[str, Extended | None] = {}

        def judge(name: str) -> Verdict | None:
            """Filter and Score on a node without a verdict yet (None: the node is gone)."""
            node = self.nodes.cache.get(name)
            if node is None:
                return None
            verdict, extended_by_node[name] = self._judge(
                pod, node, claims, to_allocate, requests, backed, placement, ranked, wants)
            if verdicts is not None:
                self.equivalence.put(name, verdict)
            return verdict

        picked = (self._scan_cached(want, judge) if verdicts is not None and self.scan_cached
                  else None)
        if picked is None:
            picked = self._scan_nodes(pod, claims, want, verdicts, judge, post)
        node_name, results = picked
        extended = extended_by_node.get(node_name)
        if extended is not None:
            results, extended.allocation = results[:-1], results[-1]
        return Choice(node=node_name, claims=claims, extended=extended,
                      allocations={c.uid: r for c, r in zip(to_allocate, results, strict=True)},
                      node_allocatable=self._node_allocatable_statuses(
                          pod, claims, to_allocate, results))

    def _scan_nodes(self, pod: Obj, claims: list[PodClaim], want: int,
                    verdicts: dict[str, Verdict] | None, judge: Callable[[str], Verdict | None],
                    post: str) -> tuple[str, list[Obj]]:
        """Filter and Score node by node from the rotating start until `want` nodes fit
        (upstream's numFeasibleNodesToFind), then the best-scored one; Unschedulable with
        every node's rejection when none fits."""
        total = len(self._node_names)
        found = 0  # feasible nodes, and the best-scored of them so far
        top = -1.0
        best: list[tuple[str, list[Obj]]] = []
        rejections: list[Rejection] = []
        unavailable = False
        processed = 0
        for name in self._node_order():
            processed += 1
            verdict = verdicts.get(name) if verdicts is not None else None
            if verdict is None:
                verdict = judge(name)
                if verdict is None:
                    continue
            if verdict.rejection is not None:
                rejections.append(verdict.rejection)
                unavailable = unavailable or verdict.rejection.reasons == (UNAVAILABLE,)
                continue
            score = verdict.score  # Score, as the nodes are found (one pass, not three)
            if score > top:
                top, best = score, [(name, verdict.results)]
            elif score == top:
                best.append((name, verdict.results))
            found += 1
            if found >= want:
                break
        self._next_start = (self._next_start + processed) % max(total, 1)
        if not found:
            victim = self._deallocatable(pod, claims) if unavailable else None
            if claims:
                post = ("deallocation of ResourceClaim completed" if victim is not None
                        else "still not schedulable")
            raise Unschedulable(fit_error(total, rejections=rejections,
                                                   post_filter=post), victim)
        return self._select(best)

    def _scan_cached(self, want: int, judge: Callable[[str], Verdict | None]
                     ) -> tuple[str, list[Obj]] | None:
        """The node loop of `_schedule` done on the equivalence cache's score list: the same
        window (from the rotating start to the `want`-th feasible node), the same nodes
        judged in the same order (only unknown ones, each before the window is known to
        end), the same best-scored node and seeded tie-break; None when no node is feasible
        (the loop then collects the rejections for the message)."""
        names = self._node_names
        total = len(names)
        start = self._next_start % total
        scores = self.equivalence.scores
        row = scores[start:] + scores[:start]  # in visiting order
        end = min(want, total)
        while True:
            window = row[:end]
            try:
                unknown = window.index(None)
            except ValueError:
                unknown = -1
            if unknown >= 0:
                verdict = judge(names[(start + unknown) % total])
                row[unknown] = REJECTED if verdict is None else score_of(verdict)
                continue
            rejected = window.count(REJECTED)
            if end - rejected >= want or end == total:
                break
            end = min(total, want + rejected)
        found = end - rejected
        if not found:
            return None
        self._next_start = (self._next_start + end) % total
        known = cast(list[float], window)  # no None left in the window
        top = max(known)
        ties = known.count(top)
        pick = self._random.randrange(ties) if ties > 1 else 0
        at = known.index(top)
        for _ in range(pick):
            at = known.index(top, at + 1)
        name = names[(start + at) % total]
        return name, self.equivalence.verdict(name).results

    def _judge(self, pod: Obj, node: Obj, claims: list[PodClaim],
               to_allocate: list[PodClaim], requests: dict[str, Fraction], backed: list[str],
               placement: bytes, ranked: bool, wants: tuple[float, float]
               ) -> tuple[Verdict, Extended | None]:
        """One node's Filter and Score for the pod."""
        name = node["metadata"]["name"]
        cap = self._capacity.get(name) or {}
        node_requests = ({k: v for k, v in requests.items() if k not in backed or cap.get(k)}
                         if backed else requests)
        rejection = self._placement(pod, node, placement) or resources_rejection(
            node_requests, cap, self.usage.used(name), self.usage.pods(name))
        results: list[Obj] | None = []
        extended = self._extended(pod, node, backed, cap) if backed else None
        if rejection is None and (claims or extended):
            rejection, results = self._filter_dra(
                pod, node, claims, to_allocate + ([extended.claim] if extended else []))
            if rejection is None and self.node_allocatable:
                rejection = self._node_allocatable_fit(pod, name, claims, to_allocate,
                                                       results or [], node_requests, cap)
        if rejection is not None:
            return Verdict(rejection, [], 0.0), None
        score = self._least_allocated(name, *wants)
        if ranked:
            score += _dra_score(to_allocate, results or []) * 100
        return Verdict(None, results or [], score), extended

    # ----- node-allocatable resources (KEP-5517) ----------------------------------------------

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

    def _node_allocatable_statuses(self, pod: Obj, claims: list[PodClaim],
                                   to_allocate: list[PodClaim], results: list[Obj]
                                   ) -> list[Obj]:
        """The pod's nodeAllocatableResourceClaimStatuses for the claims' allocations (the
        new `results` of `to_allocate`, else each claim's own), by claim name."""
        if not self.node_allocatable:
            return []
        new = {c.uid: r for c, r in zip(to_allocate, results, strict=False)}
        out = []
        for c in claims:
            allocation = new.get(c.uid) or (c.claim.get("status") or {}).get("allocation")
            if not allocation:
                continue
            status = nodealloc.claim_status(
                c.claim["metadata"].get("name", ""), allocation,
                nodealloc.containers_using(pod, c.pod_claim_name), self.inventory.device)
            if status is not None:
                out.append(status)
        return sorted(out, key=lambda s: str(s["resourceClaimName"]))

    def _node_allocatable_fit(self, pod: Obj, node_name: str, claims: list[PodClaim],
                              to_allocate: list[PodClaim], results: list[Obj],
                              requests: Resources, cap: dict[str, Fraction]
                              ) -> Rejection | None:
        """Same as upstream's DynamicResources node-allocatable check: a mapped claim must
        be used by a container and by no other pod, and the pod's requests plus its claims'
        node resources must fit what the node has left."""
        statuses = self._node_allocatable_statuses(pod, claims, to_allocate, results)
        if not statuses:
            return None
        uid = pod["metadata"].get("uid")
        mapped = {s["resourceClaimName"] for s in statuses}
        for s in statuses:
            if not s["containers"]:
                return Rejection(DRA_PLUGIN, (
                    f"claim {s['resourceClaimName']}: node-allocatable resource claim not "
                    "referenced by any container within the pod",))
        for c in claims:
            name = c.claim["metadata"].get("name", "")
            users = (c.claim.get("status") or {}).get("reservedFor") or ()
            if name in mapped and any(r.get("resource") == "pods" and r.get("uid") != uid
                                      for r in users):
                return Rejection(DRA_PLUGIN, (
                    f"node allocatable resource claim {name} is already used by another pod",))
        if not cap:
            return None  # a node without capacity takes any pod (see resources_rejection)
        total = nodealloc.plus(requests, nodealloc.demand(statuses))
        used = self.usage.used(node_name)
        free = {n: cap.get(n, Fraction(0)) - used.get(n, Fraction(0)) for n in total}
        reasons = fits(total, free, pods_free=1)
        return Rejection(DRA_PLUGIN, reasons, resolvable=True) if reasons else None

    def _spec(self, c: PodClaim) -> bytes:
        """A claim's spec, canonically encoded (claims from one template encode alike)."""
        spec = self._specs.get(c.uid)
        if spec is None:
            spec = self._specs[c.uid] = orjson.dumps(c.claim.get("spec"),
                                                    option=orjson.OPT_SORT_KEYS)
        return spec

    def _dra_backed(self, resource: str) -> bool:
        """Whether a DeviceClass serves the extended resource (DRAExtendedResource)."""
        return (self.features.extended_resource and is_dra_extended_resource_name(resource)
                and self.inventory.extended_resource_class(resource) is not None)

    def _extended(self, pod: Obj, node: Obj, backed: list[str],
                  cap: dict[str, Fraction]) -> Extended | None:
        """The pod's special claim on this node (resources a device plugin offers here are
        left to it, as upstream decides per node); one body per pod otherwise."""
        uid = pod["metadata"].get("uid", "")
        key = (uid, tuple(r for r in backed if cap.get(r)))
        hit = self._extended_claims.get(uid)
        if hit is not None and hit[0] == key:
            return hit[1]
        found = extended_resource_request(pod, self.inventory, node=node)
        extended = None
        if found is not None:
            claim = {**found.claim, "metadata": {**found.claim["metadata"],
                                                 "uid": f"{EXTENDED_PREFIX}{uid}"}}
            extended = Extended(claim=PodClaim(pod_claim_name="", claim=claim,
                                               consumer=pod_reference(pod)),
                                mappings=found.mappings)
        self._extended_claims[uid] = (key, extended)
        return extended

    def _placement(self, pod: Obj, node: Obj, placement: bytes) -> Rejection | None:
        """The placement filters' verdict, remembered per node for pods that place alike."""
        meta = node["metadata"]
        key = (meta.get("resourceVersion"), placement)
        hit = self._placements.get(meta["name"])
        if hit is not None and hit[0] == key:
            return hit[1]
        rejection = placement_rejection(pod, node)
        self._placements[meta["name"]] = (key, rejection)
        return rejection

    def _deallocatable(self, pod: Obj, claims: list[PodClaim]) -> PodClaim | None:
        """DynamicResources' PostFilter candidate: an allocated claim unavailable here that
        nobody (or only this pod) has reserved."""
        uid = pod["metadata"].get("uid")
        for c in claims:
            reserved = (c.claim.get("status") or {}).get("reservedFor") or []
            if c.allocated and (not reserved or (len(reserved) == 1
                                                 and reserved[0].get("uid") == uid)):
                return c
        return None

    def _select(self, best: list[tuple[str, list[Obj]]]) -> tuple[str, list[Obj]]:
        """The node among the best-scored (DRA's prioritized-list points, 8 − subrequest
        index per result, then the least-allocated spread): ties go to a seeded random pick
        (upstream's selectHost)."""
        return best[self._random.randrange(len(best))] if len(best) > 1 else best[0]

    def _least_allocated(self, node_name: str, want_cpu: float, want_memory: float) -> float:
        """NodeResourcesFit's LeastAllocated score (0-100) over cpu and memory, with
        upstream's non-zero defaults for pods that request neither."""
        cap = self._capacity.get(node_name) or {}
        used = self.usage.used(node_name)
        score, weight = 0.0, 0
        for name, want in ((CPU, want_cpu), (MEMORY, want_memory)):
            total = cap.get(name)
            if not total:
                continue
            total_f = float(total)
            free = total_f - float(used.get(name, 0)) - want
            score += max(0.0, free) * 100 / total_f
            weight += 1
        return score / weight if weight else 0.0

    # ----- why is my pod pending? -----------------------------------------------------------

    def http_routes(self) -> list[Route]:
        """`GET /explain/namespaces/NS/pods/NAME`: the explanation as JSON."""
        return [("GET", "/explain/namespaces/{namespace}/pods/{name}", self._explain_handler)]

    async def _explain_handler(self, request: web.Request) -> web.StreamResponse:
        found = self.explain(request.match_info["namespace"], request.match_info["name"])
        return web.json_response(found, dumps=lambda o: orjson.dumps(o).decode())

    def explain(self, namespace: str, name: str) -> Obj:
        """Every node's verdict for the pod, as this scheduler would reach it now (404 for a
        pod it doesn't know). Read-only: nothing is reserved, no randomness is drawn."""
        pod = self.pods.cache.get(name, namespace)
        if pod is None:
            raise not_found("pods", "", name)
        key = object_key(pod)
        node_name = (pod.get("spec") or {}).get("nodeName") or ""
        current: Obj = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                             if c.get("type") == "PodScheduled"), {})
        common = {"namespace": namespace, "name": name, "message": current.get("message", "")}
        if node_name:
            return explanation.report(**common, node_name=node_name, state="scheduled")
        if not self._ours(pod):
            return explanation.report(**common, state="not for this scheduler")
        if key in self._waiting:
            return explanation.report(**common, node_name=self._waiting[key].node,
                                  state="waiting for binding conditions")
        try:
            claims = pod_claims(pod, get_claim=self._get_claim, group=self._group_of(pod))
            to_allocate = self._prefilter(claims)
        except (ClaimsNotReady, AllocationError) as e:
            return explanation.report(**common, state="pending", prefilter=str(e))
        requests = pod_requests(pod)
        nodes = [self._explain_node(pod, name, claims, to_allocate, requests)
                 for name in self._node_names]
        return explanation.report(**common, state="pending", nodes=nodes)

    def _explain_node(self, pod: Obj, name: str, claims: list[PodClaim],
                      to_allocate: list[PodClaim], requests: dict[str, Fraction]) -> Obj:
        node = self.nodes.cache.get(name) or {"metadata": {"name": name}}
        rejection = run_filters(pod, node, requests=requests, used=self.usage.used(name),
                                pod_count=self.usage.pods(name))
        if rejection is not None:
            return explanation.node_entry(name, plugin=rejection.plugin, reasons=rejection.reasons)
        if not claims:
            return explanation.node_entry(name)
        diagnostics = Diagnostics()
        try:
            rejection, _ = self._filter_dra(pod, node, claims, to_allocate, diagnostics,
                                            share_id=_explain_share_id)
        except AllocationError as e:
            rejection = Rejection(DRA_PLUGIN, (f"error: {e}",))
        if rejection is None:
            return explanation.node_entry(name)
        devices = [{"claim": d["claim"], "request": d["request"], "ruledOut": d["causes"]}
                   for d in diagnostics.as_dict()]
        if not devices and rejection.reasons == (CANNOT_ALLOCATE,):
            devices = [{"claim": claim_key(c.claim), "request": r, "ruledOut": {}}
                       for c in to_allocate for r, _ in requested_classes(c.claim)]
        return explanation.node_entry(name, plugin=rejection.plugin, reasons=rejection.reasons,
                                  devices=devices)

    # ----- reserve, prebind, bind -----------------------------------------------------------

    async def _bind_cycle(self, key: str, pod: Obj, choice: Choice) -> None:
        reserved = dict(choice.allocations)
        if choice.extended is not None and choice.extended.allocation is not None:
            reserved[choice.extended.claim.uid] = choice.extended.allocation
        for uid, allocation in reserved.items():  # Reserve
            self._in_flight[uid] = allocation
            self._take(uid, allocation)
        self.usage.set(key, choice.node, self._footprint(pod, choice.node_allocatable)
                       if choice.node_allocatable else None, pod=pod)  # assume
        try:
            conditional = await self._prebind(pod, choice)
        except (ApiError, Retry) as e:
            self._unreserve(key, choice)
            await self.recorder.event(object_reference(pod, api_version="v1", kind="Pod"),
                                      WARNING, "FailedScheduling", f"running PreBind: {e}")
            raise Retry(reason=str(e)) from None
        finally:
            for uid in reserved:
                self._in_flight.pop(uid, None)
        if conditional:
            self._waiting[key] = Waiting(node=choice.node, claims=conditional,
                                         deadline=self.clock.monotonic() + BINDING_TIMEOUT)
            self.queue.add_after(key, BINDING_POLL)
            return
        await self._bind(key, pod, choice.node)

    def _unreserve(self, key: str, choice: Choice) -> None:
        uids = list(choice.allocations)
        if choice.extended is not None:
            uids.append(choice.extended.claim.uid)
        for uid in uids:
            self._in_flight.pop(uid, None)
            self._free(uid)
        self.usage.forget(key)

    async def _prebind(self, pod: Obj, choice: Choice) -> list[str]:
        """Record each claim's allocation and reservation (upstream bindClaim); the keys of
        claims whose devices have binding conditions to wait for."""
        conditional: list[str] = []
        now = rfc3339(self.clock.now())
        for c in choice.claims:
            allocation = choice.allocations.get(c.uid)
            if c.reserved and allocation is None:
                continue
            if allocation is not None:
                allocation = {**allocation, "allocationTimestamp": now}
            claim = await self._write_reservation(c, allocation)
            results = (((claim.get("status") or {}).get("allocation") or {})
                       .get("devices") or {}).get("results") or []
            if any(r.get("bindingConditions") for r in results):
                conditional.append(claim_key(claim))
        if choice.extended is not None and choice.extended.allocation is not None:
            claim = await self._create_extended(pod, choice.extended, now)
            results = (claim["status"]["allocation"]["devices"] or {}).get("results") or []
            if any(r.get("bindingConditions") for r in results):
                conditional.append(claim_key(claim))
        if choice.node_allocatable:  # upstream's PreBind records them for the kubelet
            meta = pod["metadata"]
            await self.client.patch("pods", meta["name"], {"status": {
                nodealloc.STATUSES: choice.node_allocatable}},
                namespace=meta.get("namespace", ""), subresource="status", copy=False)
        return conditional

    async def _create_extended(self, pod: Obj, extended: Extended, now: str) -> Obj:
        """Same as upstream's PreBind for extended resources: create the special claim (pod
        owned, delete-protected), record its allocation and the pod's reservation, then the
        pod's `status.extendedResourceClaimStatus`."""
        body = extended.claim.claim
        meta = {k: v for k, v in body["metadata"].items() if k != "uid"}
        meta["ownerReferences"] = [{**r, "blockOwnerDeletion": True}
                                   for r in meta.get("ownerReferences") or ()]
        meta["finalizers"] = [FINALIZER]
        created = await self.client.create(CLAIMS, {**body, "metadata": meta})
        assert extended.allocation is not None
        claim = await self.client.update(CLAIMS, with_reservation(
            created, extended.claim.consumer, {**extended.allocation, "allocationTimestamp": now}),
            subresource="status")
        pod_meta = pod["metadata"]
        await self.client.patch("pods", pod_meta["name"], {"status": {
            "extendedResourceClaimStatus": {"resourceClaimName": created["metadata"]["name"],
                                            "requestMappings": extended.mappings}}},
            namespace=pod_meta.get("namespace", ""), subresource="status")
        return claim

    async def _write_reservation(self, c: PodClaim, allocation: Obj | None) -> Obj:
        """Finalizer first (a plain update), then the status, retried on conflicts with a
        fresh read."""
        meta = c.claim["metadata"]
        claim = c.claim
        for _ in range(5):
            try:
                if allocation is not None:
                    protected = with_finalizer(claim)
                    if protected is not None:
                        claim = await self.client.update(CLAIMS, protected, copy=False)
                return await self.client.update(
                    CLAIMS, with_reservation(claim, c.consumer, allocation),
                    subresource="status", copy=False)
            except ApiError as e:
                if e.code != 409:
                    raise
                claim = await self.client.get(CLAIMS, meta["name"], meta.get("namespace", ""))
                if allocation is not None and (claim.get("status") or {}).get("allocation"):
                    raise Retry(reason="claim allocated by someone else") from None
        raise Retry(reason="claim kept changing")

    async def _continue_binding(self, key: str, pod: Obj, waiting: Waiting) -> None:
        """Binding conditions: bind once all are True, fail on a failure condition or at the
        deadline (then the claims are deallocated and the pod tried again)."""
        failed = ""
        pending = False
        for ref in waiting.claims:
            namespace, _, name = ref.rpartition("/")
            claim = self.claims.cache.get(name, namespace)
            state = _binding_state(claim)
            if state == "failed":
                failed = f"claim {ref}: a binding failure condition is true"
            elif state == "pending":
                pending = True
        if not failed and not pending:
            del self._waiting[key]
            await self._bind(key, pod, waiting.node)
            return
        if not failed and self.clock.monotonic() < waiting.deadline:
            raise Retry(after=min(BINDING_POLL, waiting.deadline - self.clock.monotonic()))
        del self._waiting[key]
        self.usage.forget(key)
        reason = failed or "binding timeout: the device binding conditions did not become true"
        await self._deallocate(waiting.claims)
        await self._report_unschedulable(key, pod, "SchedulerError", reason)
        raise Retry(reason=reason)

    async def _deallocate(self, keys: Iterable[str]) -> None:
        for ref in keys:
            namespace, _, name = ref.rpartition("/")
            claim = self.claims.cache.get(name, namespace)
            if claim is None:
                continue
            status = {k: v for k, v in (claim.get("status") or {}).items()
                      if k not in ("allocation", "reservedFor", "devices")}
            try:
                await self.client.update(CLAIMS, {**claim, "status": status},
                                         subresource="status")
            except ApiError as e:
                log.warning("scheduler: deallocating %s failed: %s", ref, e)

    async def _bind(self, key: str, pod: Obj, node: str) -> None:
        meta = pod["metadata"]
        try:
            await self.client.create_subresource("pods", meta["name"], "binding", {
                "apiVersion": "v1", "kind": "Binding",
                "metadata": {"name": meta["name"], "namespace": meta.get("namespace", ""),
                             "uid": meta.get("uid")},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}},
                namespace=meta.get("namespace", ""), copy=False)
        except ApiError as e:
            self.usage.forget(key)
            if e.code == 404:
                return  # the pod is gone
            raise
        self._unschedulable.discard(key)
        await self.recorder.event(
            object_reference(pod, api_version="v1", kind="Pod"), NORMAL, "Scheduled",
            f"Successfully assigned {meta.get('namespace', '')}/{meta['name']} to {node}")

    async def _report_unschedulable(self, key: str, pod: Obj, reason: str,
                                    message: str) -> None:
        """PodScheduled=False with the reason and message (when they changed), and a
        FailedScheduling Event, as upstream's failure handler."""
        conditions = (pod.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if current is None or (current.get("status"), current.get("reason"),
                               current.get("message")) != ("False", reason, message):
            meta = pod["metadata"]
            condition = {"type": "PodScheduled", "status": "False", "reason": reason,
                         "message": message,
                         "lastTransitionTime": rfc3339(self.clock.now())}
            try:
                await self.client.patch("pods", meta["name"],
                                        {"status": {"conditions": [condition]}},
                                        namespace=meta.get("namespace", ""),
                                        patch_type="strategic", subresource="status")
            except ApiError as e:
                if e.code != 404:
                    log.warning("scheduler: pod %s condition not updated: %s", key, e)
        await self.recorder.event(object_reference(pod, api_version="v1", kind="Pod"),
                                  WARNING, "FailedScheduling", message)


def _binding_state(claim: Obj | None) -> str:
    """"ready", "pending" or "failed" for the binding conditions of a claim's devices."""
    if claim is None:
        return "failed"
    status = claim.get("status") or {}
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    devices = {(d.get("driver"), d.get("pool"), d.get("device")): d
               for d in status.get("devices") or ()}
    pending = False
    for r in results:
        device = devices.get((r.get("driver"), r.get("pool"), r.get("device"))) or {}
        true = {c.get("type") for c in device.get("conditions") or ()
                if c.get("status") == "True"}
        if true & set(r.get("bindingFailureConditions") or ()):
            return "failed"
        if not set(r.get("bindingConditions") or ()) <= true:
            pending = True
    return "pending" if pending else "ready"


def _dra_score(to_allocate: list[PodClaim], results: list[Obj]) -> int:
    """Upstream's prioritized-list score: 8 − index of each chosen subrequest."""
    score = 0
    for c, result in zip(to_allocate, results, strict=False):
        index = _subrequest_indexes(c.claim)
        for r in (result.get("devices") or {}).get("results") or ():
            position = index.get(r.get("request", ""))
            if position is not None:
                score += 8 - position
    return score


def _subrequest_indexes(claim: Obj) -> dict[str, int]:
    out: dict[str, int] = {}
    for req in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
        for i, sub in enumerate(req.get("firstAvailable") or ()):
            out[f"{req.get('name', '')}/{sub.get('name', '')}"] = i
    return out
