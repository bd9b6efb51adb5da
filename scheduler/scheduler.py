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
from fakeapi import nodeselector
from fakeapi.clock import rfc3339
from fakeapi.errors import ApiError, not_found
from fakeapi.log import DELETED
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, WARNING, EventRecorder, object_reference
from fakeapi.runtime.informer import object_key
from fakeapi.runtime.workqueue import RateLimiter, Retry, WorkQueue
from fakeapi.server import Route
from scheduler.allocator import (
    CLAIM_ANNOTATION,
    AllocationError,
    AllocationTimeout,
    AllocatorFeatures,
    Diagnostics,
    NodeUnschedulable,
    allocate,
    extended_resource_request,
    is_dra_extended_resource_name,
)
from scheduler.cache import (
    CLAIMS,
    CLASSES,
    EXTENDED_PREFIX,
    RULES,
    SLICES,
    DraOutcome,
    SchedulerCache,
    placement_key,
)
from scheduler.claims import (
    FINALIZER,
    ClaimsNotReady,
    PodClaim,
    SpecialClaim,
    check_reservable,
    claim_key,
    pod_claims,
    pod_reference,
    requested_classes,
    with_finalizer,
    with_reservation,
)
from scheduler.equivalence import REJECTED, Verdict, score_of
from scheduler.filters import (
    CPU,
    MEMORY,
    Rejection,
    Resources,
    fits,
    placement_rejection,
    pod_requests,
    resources_rejection,
    run_filters,
)
from scheduler.fiterror import NO_NODES, fit_error

Obj = dict[str, Any]
NAME = "default-scheduler"
PODGROUPS = "podgroups.scheduling.k8s.io"
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0  # upstream's podInitialBackoffSeconds / max
UNSCHEDULABLE_FLUSH = 300.0  # upstream's podMaxInUnschedulablePodsDuration (5 min)
BINDING_POLL = 5.0  # upstream PreBind polls binding conditions every 5 s
BINDING_TIMEOUT = 600.0  # upstream's default bindingTimeout (10 min)
MIN_FEASIBLE_NODES = 100  # upstream's minFeasibleNodesToFind
FILTER_TIMEOUT = 10.0  # upstream's DynamicResources filterTimeout (DRASchedulerFilterTimeout)
DRA_PLUGIN = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
UNAVAILABLE = "resourceclaim not available on the node"
DEFAULT_CPU, DEFAULT_MEMORY = Fraction(1, 10), Fraction(200 * 2**20)  # non-zero scoring defaults

Judge = Callable[[str], Verdict | None]
"""Filter and Score on one node by name (None: the node is gone)."""

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


@dataclasses.dataclass(kw_only=True)
class Waiting:
    """A pod whose claims are allocated and reserved, waiting for binding conditions."""

    node: str
    deadline: float
    claims: list[str]
    """`namespace/name` of the claims whose devices have binding conditions."""


@dataclasses.dataclass(kw_only=True)
class ScheduleResult:
    """The outcome of one scheduling cycle: a node and the claims' new allocations."""

    node: str
    claims: list[PodClaim]
    allocations: dict[str, Obj]
    """claim uid → the allocation this cycle made for it."""
    special: SpecialClaim | None = None
    """The special claim for the pod's DRA-backed extended resources, to create at PreBind."""
    node_allocatable: list[Obj] = dataclasses.field(default_factory=list)
    """The pod's `status.nodeAllocatableResourceClaimStatuses` on the node (KEP-5517)."""


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
        self.workload_claims = PODGROUPS in served and ctx.gates.enabled(WORKLOAD_CLAIMS_GATE)
        self.cache = SchedulerCache(features=AllocatorFeatures.from_gates(ctx.gates),
                                    node_allocatable=ctx.gates.enabled(nodealloc.GATE))
        self.recorder = EventRecorder(client=self.client, clock=ctx.clock, component=NAME)
        self._random = ctx.random
        self._unschedulable: set[str] = set()
        self._waiting: dict[str, Waiting] = {}
        self._next_start = 0
        # the informers deliver what they hold at once: everything above exists first
        self.pods = self.watch("pods", self._pod_changed)
        self.nodes = self.watch("nodes", self._node_changed)
        self.claims = self.watch(CLAIMS, self._claim_changed)
        self.watch(SLICES, self._inventory_changed(self.cache.slice_changed))
        self.classes = self.watch(CLASSES, self._inventory_changed(self.cache.class_changed))
        if RULES in served:
            self.watch(RULES, self._inventory_changed(self.cache.taint_rule_changed))
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
        left_a_node = self.cache.pod_changed(type_, pod)
        if type_ == DELETED:
            self._unschedulable.discard(key)
            self._waiting.pop(key, None)
            return self._requeue_unschedulable() if left_a_node else []
        if self._ours(pod):
            self._unschedulable.discard(key)
            return [key]
        if left_a_node:  # finished or gone from its node: room for others
            return self._requeue_unschedulable()
        return []

    def _node_changed(self, type_: str, node: Obj, old: Obj | None) -> list[str]:
        self.cache.node_changed(type_, node, old)
        return self._requeue_unschedulable()

    def _claim_changed(self, type_: str, claim: Obj, old: Obj | None) -> list[str]:
        self.cache.claim_changed(type_, claim)
        keys = self._requeue_unschedulable()
        key = claim_key(claim)
        keys.extend(k for k, w in self._waiting.items() if key in w.claims)
        return keys

    def _inventory_changed(self, changed: Callable[[str, Obj], None]
                           ) -> Callable[[str, Obj, Obj | None], list[str]]:
        """The handler of a kind the allocator reads: the cache's, then every unschedulable
        pod again."""
        def handler(type_: str, obj: Obj, old: Obj | None) -> list[str]:
            changed(type_, obj)
            return self._requeue_unschedulable()
        return handler

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
        if self.cache.assumed(key):
            return  # bound a moment ago; the informer hasn't shown it yet
        try:
            claims = pod_claims(pod, get_claim=self._get_claim,
                                          group=self._group_of(pod))
        except ClaimsNotReady:
            # upstream's PreEnqueue: not attempted (no condition, no event) until it changes
            self._unschedulable.add(key)
            return
        try:
            result = self._schedule(pod, claims)
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
        await self._bind_cycle(key, pod, result)

    def _prefilter(self, claims: list[PodClaim]) -> list[PodClaim]:
        """DynamicResources' PreFilter; the claims that need an allocation."""
        check_reservable(claims)
        to_allocate = [c for c in claims if not c.allocated]
        for c in to_allocate:
            meta = c.claim["metadata"]
            if self.cache.claim_in_flight(c.uid):
                raise ClaimsNotReady(f"resource claim {meta.get('namespace', '')}/"
                                     f"{meta['name']} is in the process of being allocated")
            for request, class_name in requested_classes(c.claim):
                if not class_name:
                    raise AllocationError(f"request {request}: unsupported request type")
                if self.classes.cache.get(class_name) is None:
                    raise ClaimsNotReady(f"request {request}: device class {class_name} "
                                         "does not exist")
        return to_allocate

    def _schedule(self, pod: Obj, claims: list[PodClaim]) -> ScheduleResult:
        """PreFilter, Filter, PostFilter and Score: the chosen node, or Unschedulable."""
        total = len(self.cache.node_names)
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
        placement = placement_key(pod)
        want = feasible_nodes_to_find(total)
        ranked = any(_subrequest_indexes(c.claim) for c in to_allocate)
        wants = (float(requests.get(CPU) or DEFAULT_CPU),
                 float(requests.get(MEMORY) or DEFAULT_MEMORY))
        verdicts: dict[str, Verdict] | None = None
        if not backed:  # a special claim is the pod's own: its verdicts can't be shared
            verdicts = self.cache.equivalence.use(self.cache.verdict_shape(
                pod, claims, to_allocate, requests, placement))
        special_by_node: dict[str, SpecialClaim | None] = {}

        def judge(name: str) -> Verdict | None:
            """Filter and Score on a node without a verdict yet (None: the node is gone)."""
            node = self.nodes.cache.get(name)
            if node is None:
                return None
            verdict, special_by_node[name] = self._judge(
                pod, node, claims, to_allocate, requests, backed, placement, ranked, wants)
            if verdicts is not None:
                self.cache.equivalence.put(name, verdict)
            return verdict

        picked = (self._scan_cached(want, judge) if verdicts is not None and self.scan_cached
                  else None)
        if picked is None:
            picked = self._scan_nodes(pod, claims, want, verdicts, judge, post)
        node_name, results = picked
        special = special_by_node.get(node_name)
        if special is not None:
            results, special.allocation = results[:-1], results[-1]
        return ScheduleResult(node=node_name, claims=claims, special=special,
                              allocations={c.uid: r for c, r in
                                           zip(to_allocate, results, strict=True)},
                              node_allocatable=self._node_allocatable_statuses(
                                  pod, claims, to_allocate, results))

    # ----- the node scan -----------------------------------------------------------------

    def _node_order(self) -> list[str]:
        names = self.cache.node_names
        start = self._next_start % len(names) if names else 0
        return names[start:] + names[:start]

    def _scan_nodes(self, pod: Obj, claims: list[PodClaim], want: int,
                    verdicts: dict[str, Verdict] | None, judge: Judge,
                    post: str) -> tuple[str, list[Obj]]:
        """Filter and Score node by node from the rotating start until `want` nodes fit
        (upstream's numFeasibleNodesToFind), then the best-scored one; Unschedulable with
        every node's rejection when none fits."""
        total = len(self.cache.node_names)
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

    def _scan_cached(self, want: int, judge: Judge) -> tuple[str, list[Obj]] | None:
        """The node scan done on the equivalence cache's score list: the same window (from
        the rotating start to the `want`-th feasible node), the same nodes judged in the
        same order (only unknown ones, each before the window is known to end), the same
        best-scored node and seeded tie-break as `_scan_nodes`; None when no node is feasible
        (`_scan_nodes` then collects the rejections for the message)."""
        names = self.cache.node_names
        total = len(names)
        start = self._next_start % total
        scores = self.cache.equivalence.scores
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
        return name, self.cache.equivalence.verdict(name).results

    def _select(self, best: list[tuple[str, list[Obj]]]) -> tuple[str, list[Obj]]:
        """The node among the best-scored (DRA's prioritized-list points, 8 − subrequest
        index per result, then the least-allocated spread): ties go to a seeded random pick
        (upstream's selectHost)."""
        return best[self._random.randrange(len(best))] if len(best) > 1 else best[0]

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

    # ----- Filter and Score on one node ------------------------------------------------------

    def _judge(self, pod: Obj, node: Obj, claims: list[PodClaim],
               to_allocate: list[PodClaim], requests: dict[str, Fraction], backed: list[str],
               placement: bytes, ranked: bool, wants: tuple[float, float]
               ) -> tuple[Verdict, SpecialClaim | None]:
        """One node's Filter and Score for the pod."""
        name = node["metadata"]["name"]
        cache = self.cache
        cap = cache.capacity(name)
        node_requests = ({k: v for k, v in requests.items() if k not in backed or cap.get(k)}
                         if backed else requests)
        rejection = cache.placements.get(
            name, (node["metadata"].get("resourceVersion"), placement),
            lambda: placement_rejection(pod, node)) or resources_rejection(
            node_requests, cap, cache.usage.used(name), cache.usage.pods(name))
        results: list[Obj] | None = []
        special = self._special_claim(pod, node, backed, cap) if backed else None
        if rejection is None and (claims or special):
            rejection, results = self._filter_dra(
                pod, node, claims, to_allocate + ([special.claim] if special else []))
            if rejection is None and cache.node_allocatable:
                rejection = self._node_allocatable_fit(pod, name, claims, to_allocate,
                                                       results or [], node_requests, cap)
        if rejection is not None:
            return Verdict(rejection, [], 0.0), None
        score = self._least_allocated(name, *wants)
        if ranked:
            score += _dra_score(to_allocate, results or []) * 100
        return Verdict(None, results or [], score), special

    def _filter_dra(self, pod: Obj, node: Obj, claims: list[PodClaim],
                    to_allocate: list[PodClaim], diagnostics: Diagnostics | None = None,
                    share_id: Callable[[], str] | None = None) -> DraOutcome:
        """DynamicResources' Filter on one node: the rejection, or the allocations of
        `to_allocate` there. With `diagnostics` (an explanation) the outcome is computed
        afresh and not remembered; `share_id` replaces the seeded share ids."""
        for c in claims:
            if c.allocated and not nodeselector.selector_matches(
                    c.claim["status"]["allocation"].get("nodeSelector"), node):
                return Rejection(DRA_PLUGIN, (UNAVAILABLE,)), None
        if not to_allocate:
            return None, []
        if diagnostics is not None:
            return self._allocate_on(node, to_allocate, diagnostics, share_id)
        return self.cache.dra_outcomes.get(
            node["metadata"]["name"], self.cache.dra_key(node, to_allocate),
            lambda: self._allocate_on(node, to_allocate, None, share_id))

    def _allocate_on(self, node: Obj, to_allocate: list[PodClaim],
                     diagnostics: Diagnostics | None, share_id: Callable[[], str] | None
                     ) -> DraOutcome:
        deadline = self.clock.monotonic() + FILTER_TIMEOUT
        try:
            results = allocate(claims=[c.claim for c in to_allocate], node=node,
                               inventory=self.cache.inventory, allocated=self.cache.allocated,
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

    def _least_allocated(self, node_name: str, want_cpu: float, want_memory: float) -> float:
        """NodeResourcesFit's LeastAllocated score (0-100) over cpu and memory, with
        upstream's non-zero defaults for pods that request neither."""
        cap = self.cache.capacity(node_name)
        used = self.cache.usage.used(node_name)
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

    # ----- extended resources backed by DRA (DRAExtendedResource) ------------------------------

    def _dra_backed(self, resource: str) -> bool:
        """Whether a DeviceClass serves the extended resource (DRAExtendedResource)."""
        return (self.cache.features.extended_resource and is_dra_extended_resource_name(resource)
                and self.cache.inventory.extended_resource_class(resource) is not None)

    def _special_claim(self, pod: Obj, node: Obj, backed: list[str],
                       cap: dict[str, Fraction]) -> SpecialClaim | None:
        """The pod's special claim on this node (resources a device plugin offers here are
        left to it, as upstream decides per node); one body per pod otherwise."""
        uid = pod["metadata"].get("uid", "")

        def build() -> SpecialClaim | None:
            found = extended_resource_request(pod, self.cache.inventory, node=node)
            if found is None:
                return None
            claim = {**found.claim, "metadata": {**found.claim["metadata"],
                                                 "uid": f"{EXTENDED_PREFIX}{uid}"}}
            return SpecialClaim(claim=PodClaim(pod_claim_name="", claim=claim,
                                               consumer=pod_reference(pod)),
                                mappings=found.mappings)

        return self.cache.special_claims.get(uid, (uid, tuple(r for r in backed if cap.get(r))),
                                             build)

    # ----- node-allocatable resources (KEP-5517) ----------------------------------------------

    def _node_allocatable_statuses(self, pod: Obj, claims: list[PodClaim],
                                   to_allocate: list[PodClaim], results: list[Obj]
                                   ) -> list[Obj]:
        """The pod's nodeAllocatableResourceClaimStatuses for the claims' allocations (the
        new `results` of `to_allocate`, else each claim's own), by claim name."""
        if not self.cache.node_allocatable:
            return []
        new = {c.uid: r for c, r in zip(to_allocate, results, strict=False)}
        out = []
        for c in claims:
            allocation = new.get(c.uid) or (c.claim.get("status") or {}).get("allocation")
            if not allocation:
                continue
            status = nodealloc.claim_status(
                c.claim["metadata"].get("name", ""), allocation,
                nodealloc.containers_using(pod, c.pod_claim_name), self.cache.inventory.device)
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
        used = self.cache.usage.used(node_name)
        free = {n: cap.get(n, Fraction(0)) - used.get(n, Fraction(0)) for n in total}
        reasons = fits(total, free, pods_free=1)
        return Rejection(DRA_PLUGIN, reasons, resolvable=True) if reasons else None

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
                 for name in self.cache.node_names]
        return explanation.report(**common, state="pending", nodes=nodes)

    def _explain_node(self, pod: Obj, name: str, claims: list[PodClaim],
                      to_allocate: list[PodClaim], requests: dict[str, Fraction]) -> Obj:
        node = self.nodes.cache.get(name) or {"metadata": {"name": name}}
        rejection = run_filters(pod, node, requests=requests,
                                used=self.cache.usage.used(name),
                                pod_count=self.cache.usage.pods(name))
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

    async def _bind_cycle(self, key: str, pod: Obj, result: ScheduleResult) -> None:
        reserved = dict(result.allocations)
        if result.special is not None and result.special.allocation is not None:
            reserved[result.special.claim.uid] = result.special.allocation
        for uid, allocation in reserved.items():  # Reserve
            self.cache.reserve_claim(uid, allocation)
        self.cache.assume(key, result.node, pod, result.node_allocatable)
        try:
            conditional = await self._prebind(pod, result)
        except (ApiError, Retry) as e:
            self._unreserve(key, result)
            await self.recorder.event(object_reference(pod, api_version="v1", kind="Pod"),
                                      WARNING, "FailedScheduling", f"running PreBind: {e}")
            raise Retry(reason=str(e)) from None
        finally:
            for uid in reserved:
                self.cache.end_in_flight(uid)
        if conditional:
            self._waiting[key] = Waiting(node=result.node, claims=conditional,
                                         deadline=self.clock.monotonic() + BINDING_TIMEOUT)
            self.queue.add_after(key, BINDING_POLL)
            return
        await self._bind(key, pod, result.node)

    def _unreserve(self, key: str, result: ScheduleResult) -> None:
        uids = list(result.allocations)
        if result.special is not None:
            uids.append(result.special.claim.uid)
        for uid in uids:
            self.cache.unreserve_claim(uid)
        self.cache.forget_pod(key)

    async def _prebind(self, pod: Obj, result: ScheduleResult) -> list[str]:
        """Record each claim's allocation and reservation (upstream bindClaim); the keys of
        claims whose devices have binding conditions to wait for."""
        conditional: list[str] = []
        now = rfc3339(self.clock.now())
        for c in result.claims:
            allocation = result.allocations.get(c.uid)
            if c.reserved and allocation is None:
                continue
            if allocation is not None:
                allocation = {**allocation, "allocationTimestamp": now}
            claim = await self._write_reservation(c, allocation)
            results = (((claim.get("status") or {}).get("allocation") or {})
                       .get("devices") or {}).get("results") or []
            if any(r.get("bindingConditions") for r in results):
                conditional.append(claim_key(claim))
        if result.special is not None and result.special.allocation is not None:
            claim = await self._create_special(pod, result.special, now)
            results = (claim["status"]["allocation"]["devices"] or {}).get("results") or []
            if any(r.get("bindingConditions") for r in results):
                conditional.append(claim_key(claim))
        if result.node_allocatable:  # upstream's PreBind records them for the kubelet
            meta = pod["metadata"]
            await self.client.patch("pods", meta["name"], {"status": {
                nodealloc.STATUSES: result.node_allocatable}},
                namespace=meta.get("namespace", ""), subresource="status", copy=False)
        return conditional

    async def _create_special(self, pod: Obj, special: SpecialClaim, now: str) -> Obj:
        """Same as upstream's PreBind for extended resources: create the special claim (pod
        owned, delete-protected), record its allocation and the pod's reservation, then the
        pod's `status.extendedResourceClaimStatus`."""
        body = special.claim.claim
        meta = {k: v for k, v in body["metadata"].items() if k != "uid"}
        meta["ownerReferences"] = [{**r, "blockOwnerDeletion": True}
                                   for r in meta.get("ownerReferences") or ()]
        meta["finalizers"] = [FINALIZER]
        created = await self.client.create(CLAIMS, {**body, "metadata": meta})
        assert special.allocation is not None
        claim = await self.client.update(CLAIMS, with_reservation(
            created, special.claim.consumer, {**special.allocation, "allocationTimestamp": now}),
            subresource="status")
        pod_meta = pod["metadata"]
        await self.client.patch("pods", pod_meta["name"], {"status": {
            "extendedResourceClaimStatus": {"resourceClaimName": created["metadata"]["name"],
                                            "requestMappings": special.mappings}}},
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
            claim = self._get_claim(namespace, name)
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
        self.cache.forget_pod(key)
        reason = failed or "binding timeout: the device binding conditions did not become true"
        await self._deallocate(waiting.claims)
        await self._report_unschedulable(key, pod, "SchedulerError", reason)
        raise Retry(reason=reason)

    async def _deallocate(self, keys: Iterable[str]) -> None:
        for ref in keys:
            namespace, _, name = ref.rpartition("/")
            claim = self._get_claim(namespace, name)
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
            self.cache.forget_pod(key)
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
