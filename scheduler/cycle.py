"""One scheduling cycle of one pod, over the cache: PreFilter, Filter, PostFilter and Score.

DynamicResources' PreFilter (the claims reservable, none in flight, every class there), then
Filter in upstream's plugin order (the placement filters, NodeResourcesFit, DynamicResources,
the node-allocatable fit) and Score (DRA's prioritized-list score, then the least-allocated
spread) over the nodes in a rotating order until `feasible_nodes_to_find` nodes fit, and the
best-scored of them with a seeded tie-break (upstream's selectHost). Nothing is written
here: the outcome is a `ScheduleResult` for Reserve, or `Unschedulable` with upstream's
FitError message and the claim DynamicResources' PostFilter would deallocate.

Two scans judge the same nodes in the same order and pick the same node: `scan_nodes`, node
by node (the reference, and the one that collects every node's rejection for the message),
and `scan_cached`, on the equivalence cache's score list, with list operations for the nodes
whose verdict is known.
"""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections.abc import Callable
from fractions import Fraction
from typing import Any, cast

import scheduler.nodeallocatable as nodealloc
from fakeapi.kube import nodeselector
from fakeapi.machinery.clock import Clock
from fakeapi.runtime.informer import Cache
from scheduler.allocator import (
    CLAIM_ANNOTATION,
    AllocationError,
    AllocationTimeout,
    Diagnostics,
    NodeUnschedulable,
    allocate,
    extended_resource_request,
    is_dra_extended_resource_name,
)
from scheduler.cache import EXTENDED_PREFIX, DraOutcome, SchedulerCache, placement_key
from scheduler.claims import (
    ClaimsNotReady,
    PodClaim,
    SpecialClaim,
    check_reservable,
    pod_reference,
    requested_classes,
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
)
from scheduler.fiterror import NO_NODES, fit_error

Obj = dict[str, Any]
Judge = Callable[[str], Verdict | None]
"""Filter and Score on one node by name (None: the node is gone)."""
MIN_FEASIBLE_NODES = 100  # upstream's minFeasibleNodesToFind
FILTER_TIMEOUT = 10.0  # upstream's DynamicResources filterTimeout (DRASchedulerFilterTimeout)
DRA_PLUGIN = "DynamicResources"
CANNOT_ALLOCATE = "cannot allocate all claims"
UNAVAILABLE = "resourceclaim not available on the node"
DEFAULT_CPU, DEFAULT_MEMORY = Fraction(1, 10), Fraction(200 * 2**20)  # non-zero scoring defaults


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


class SchedulingCycle:
    """PreFilter, Filter and Score of one pod at a time over the scheduler's cache; the
    rotating start of the node scan and the seeded randomness (share ids, tie-breaks) are
    its own."""

    def __init__(self, *, cache: SchedulerCache, nodes: Cache, classes: Cache, clock: Clock,
                 rng: random.Random) -> None:
        self.cache = cache
        self.nodes = nodes
        """The nodes informer's objects."""
        self.classes = classes
        """The DeviceClasses informer's objects (PreFilter's 'class exists')."""
        self.clock = clock
        self._random = rng
        self._next_start = 0

    def prefilter(self, claims: list[PodClaim]) -> list[PodClaim]:
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
                if self.classes.get(class_name) is None:
                    raise ClaimsNotReady(f"request {request}: device class {class_name} "
                                         "does not exist")
        return to_allocate

    def schedule(self, pod: Obj, claims: list[PodClaim], *, scan_cached: bool
                 ) -> ScheduleResult:
        """PreFilter, Filter, PostFilter and Score: the chosen node, or Unschedulable.
        `scan_cached` finds the node window on the equivalence cache's score list."""
        total = len(self.cache.node_names)
        post = ("no new claims to deallocate" if pod["spec"].get("resourceClaims") else "")
        if total == 0:
            raise Unschedulable(NO_NODES)
        try:
            to_allocate = self.prefilter(claims)
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
        wants = (_score_value(requests.get(CPU) or DEFAULT_CPU),
                 _score_value(requests.get(MEMORY) or DEFAULT_MEMORY))
        verdicts: dict[str, Verdict] | None = None
        if not backed:  # a special claim is the pod's own: its verdicts can't be shared
            verdicts = self.cache.equivalence.use(self.cache.verdict_shape(
                pod, claims, to_allocate, requests, placement))
        special_by_node: dict[str, SpecialClaim | None] = {}

        def judge(name: str) -> Verdict | None:
            """Filter and Score on a node without a verdict yet (None: the node is gone)."""
            node = self.nodes.get(name)
            if node is None:
                return None
            verdict, special_by_node[name] = self._judge(
                pod, node, claims, to_allocate, requests, backed, placement, ranked, wants)
            if verdicts is not None:
                self.cache.equivalence.put(name, verdict)
            return verdict

        picked = (self.scan_cached(want, judge) if verdicts is not None and scan_cached
                  else None)
        if picked is None:
            picked = self.scan_nodes(pod, claims, want, verdicts, judge, post)
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

    def scan_nodes(self, pod: Obj, claims: list[PodClaim], want: int,
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

    def scan_cached(self, want: int, judge: Judge) -> tuple[str, list[Obj]] | None:
        """The node scan done on the equivalence cache's score list: the same window (from
        the rotating start to the `want`-th feasible node), the same nodes judged in the
        same order (only unknown ones, each before the window is known to end), the same
        best-scored node and seeded tie-break as `scan_nodes`; None when no node is feasible
        (`scan_nodes` then collects the rejections for the message)."""
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
            rejection, results = self.filter_dra(
                pod, node, claims, to_allocate + ([special.claim] if special else []))
            if rejection is None and cache.node_allocatable:
                rejection = self._node_allocatable_fit(pod, name, claims, to_allocate,
                                                       results or [], node_requests, cap)
        if rejection is not None:
            return Verdict(rejection=rejection, results=[], score=0.0), None
        score = self._least_allocated(name, *wants)
        if ranked:
            score += _dra_score(to_allocate, results or []) * 100
        return Verdict(rejection=None, results=results or [], score=score), special

    def filter_dra(self, pod: Obj, node: Obj, claims: list[PodClaim],
                   to_allocate: list[PodClaim], diagnostics: Diagnostics | None = None,
                   share_id: Callable[[], str] | None = None) -> DraOutcome:
        """DynamicResources' Filter on one node: the rejection, or the allocations of
        `to_allocate` there. With `diagnostics` (an explanation) the outcome is computed
        afresh and not remembered; `share_id` replaces the seeded share ids."""
        for c in claims:
            if c.allocated and not nodeselector.selector_matches(
                    c.claim["status"]["allocation"].get("nodeSelector"), node):
                return Rejection(plugin=DRA_PLUGIN, reasons=(UNAVAILABLE,)), None
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
            return Rejection(plugin=DRA_PLUGIN, reasons=(str(e),)), None
        except AllocationTimeout as e:  # upstream's filterTimeout: this node only
            return Rejection(plugin=DRA_PLUGIN, reasons=(str(e),)), None
        if results is None:
            return Rejection(plugin=DRA_PLUGIN, reasons=(CANNOT_ALLOCATE,)), None
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
            total_f = _score_value(total)
            free = total_f - _score_value(used.get(name, 0)) - want
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
                return Rejection(plugin=DRA_PLUGIN, reasons=(
                    f"claim {s['resourceClaimName']}: node-allocatable resource claim not "
                    "referenced by any container within the pod",))
        for c in claims:
            name = c.claim["metadata"].get("name", "")
            users = (c.claim.get("status") or {}).get("reservedFor") or ()
            if name in mapped and any(r.get("resource") == "pods" and r.get("uid") != uid
                                      for r in users):
                return Rejection(plugin=DRA_PLUGIN, reasons=(
                    f"node allocatable resource claim {name} is already used by another pod",))
        if not cap:
            return None  # a node without capacity takes any pod (see resources_rejection)
        total = nodealloc.plus(requests, nodealloc.demand(statuses))
        used = self.cache.usage.used(node_name)
        free = {n: cap.get(n, Fraction(0)) - used.get(n, Fraction(0)) for n in total}
        reasons = fits(total, free, pods_free=1)
        return Rejection(plugin=DRA_PLUGIN, reasons=reasons, resolvable=True) if reasons else None


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


_INT64_MAX = 2**63 - 1


def _score_value(value: Any) -> float:
    """A quantity as the score's arithmetic takes it: capped at int64's range, as upstream's
    scores work on int64 values (`cpu: 1e999` fits no node, and never overflows a float)."""
    return float(min(max(value, -_INT64_MAX), _INT64_MAX))
