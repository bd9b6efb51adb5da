"""The scheduler component: kube-scheduler's loop for pods of `default-scheduler`, as a client.

One pod at a time, as upstream: PreEnqueue (its claims exist), then the scheduling cycle
(`scheduler.cycle`: PreFilter, Filter over the nodes in a rotating order until enough
feasible ones are found, PostFilter, Score), then the binding (`scheduler.binding`: Reserve,
PreBind with the claims' allocation and reservation and any binding conditions, Bind). A pod
no node can take gets `PodScheduled=False` and a FailedScheduling Event with upstream's
message, and waits for a change of the cluster. What the scheduler knows between cycles, and
when it reuses a verdict, is `scheduler.cache`. With `GangScheduling`, a pod of a gang
PodGroup waits for its group at PreEnqueue and at Permit (`scheduler.gang`). This module
wires them: informer events to
the cache and to work-queue keys, `reconcile` for one pod, the failure handler and the
`/explain` route. Everything is written through the API as
`system:serviceaccount:kube-system:kube-scheduler`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

import scheduler.explain as explanation
import scheduler.gang as gangs
import scheduler.nodeallocatable as nodealloc
from fakeapi.kube.resourceclaim import pod_group_name
from fakeapi.machinery.errors import ApiError, not_found
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.machinery.watchtypes import DELETED
from fakeapi.registry.kinds import POD_GROUPS
from fakeapi.runtime.component import ComponentContext, Controller, Route
from fakeapi.runtime.events import WARNING, EventRecorder, object_reference
from fakeapi.runtime.informer import object_key
from fakeapi.runtime.workqueue import RateLimiter, Retry, WorkQueue
from scheduler.allocator import AllocationError, AllocatorFeatures
from scheduler.binding import Binder, BindingFailed
from scheduler.cache import CLAIMS, CLASSES, RULES, SLICES, SchedulerCache
from scheduler.claims import ClaimsNotReady, claim_key, pod_claims
from scheduler.cycle import SchedulingCycle, Unschedulable

Obj = dict[str, Any]
NAME = "default-scheduler"
PODGROUPS = POD_GROUPS.resource_id
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0  # upstream's podInitialBackoffSeconds / max
UNSCHEDULABLE_FLUSH = 300.0  # upstream's podMaxInUnschedulablePodsDuration (5 min)

log = logging.getLogger(__name__)


class Scheduler(Controller[str]):
    """kube-scheduler for the pods whose `spec.schedulerName` is `default-scheduler`."""

    scan_cached = True
    """Find the node window on the equivalence cache's score list
    (`SchedulingCycle.scan_cached`); off, every cycle walks the nodes one by one
    (`SchedulingCycle.scan_nodes`, the reference the tests compare it with)."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.queue = WorkQueue(clock=ctx.clock, name=ctx.name,
                               limiter=RateLimiter(base=BACKOFF_INITIAL, cap=BACKOFF_MAX))
        served = {k.resource_id for k in self.client.resources()}
        self.workload_claims = PODGROUPS in served and ctx.gates.enabled(WORKLOAD_CLAIMS_GATE)
        self.gang = PODGROUPS in served and ctx.gates.enabled(gangs.GATE)
        self.gangs = gangs.Gangs()
        """The pods waiting at Permit for their gang (GangScheduling)."""
        self._permit_rejected: set[str] = set()
        """Pods rejected at the Permit timeout: their own updates don't queue them again
        (upstream requeues them on a new pod of the group, or a change of the cluster)."""
        self.cache = SchedulerCache(features=AllocatorFeatures.from_gates(ctx.gates),
                                    node_allocatable=ctx.gates.enabled(nodealloc.GATE))
        self.recorder = EventRecorder(client=self.client, clock=ctx.clock, component=NAME)
        self._unschedulable: set[str] = set()
        """Pods no node could take, queued again by the next change of the cluster."""
        self.binder = Binder(client=self.client, clock=ctx.clock, recorder=self.recorder,
                             cache=self.cache, queue=self.queue, get_claim=self._get_claim,
                             on_bound=self._unschedulable.discard)
        # the informers deliver what they hold at once: everything above exists first
        self.pods = self.watch("pods", self._pod_changed)
        self.nodes = self.watch("nodes", self._node_changed)
        self.claims = self.watch(CLAIMS, self._claim_changed)
        self.watch(SLICES, self._inventory_changed(self.cache.slice_changed))
        self.classes = self.watch(CLASSES, self._inventory_changed(self.cache.class_changed))
        if RULES in served:
            self.watch(RULES, self._inventory_changed(self.cache.taint_rule_changed))
        self.groups = self.watch(PODGROUPS, self._cluster_changed) \
            if self.workload_claims or self.gang else None
        self.cycle = SchedulingCycle(cache=self.cache, nodes=self.nodes.cache,
                                     classes=self.classes.cache, clock=ctx.clock,
                                     rng=ctx.random)

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
            self._permit_rejected.discard(key)
            self.binder.forget(key)
            parked = self.gangs.release(key)
            if parked is not None:
                self.binder.unreserve(key, parked.result)
            return self._requeue_unschedulable() if left_a_node or parked else []
        if self._ours(pod):
            if old is not None and key in self._permit_rejected:
                return []
            self._unschedulable.discard(key)
            if self.gang and old is None and gangs.group_key(pod):
                # upstream's gang QueueingHint: a new pod may complete its group
                return [key, *self._requeue_unschedulable()]
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
        keys.extend(self.binder.waiting_on(claim_key(claim)))
        return keys

    def _inventory_changed(self, changed: Callable[[str, Obj], None]
                           ) -> Callable[[str, Obj, Obj | None], list[str]]:
        """The handler of a kind the allocator reads: the cache's, then every unschedulable
        pod again."""
        def handler(type_: str, obj: Obj, old: Obj | None) -> list[str]:
            changed(type_, obj)
            return self._requeue_unschedulable()
        return handler

    # ----- one pod -------------------------------------------------------------------------

    def _get_claim(self, namespace: str, name: str) -> Obj | None:
        return self.claims.cache.get(name, namespace)

    def _group_of(self, pod: Obj) -> Obj | None:
        if self.groups is None:
            return None
        group = pod_group_name(pod)
        if not group:
            return None
        return self.groups.cache.get(group, pod["metadata"].get("namespace", ""))

    def _claims_group(self, pod: Obj) -> Obj | None:
        """The PodGroup the pod's claims may be reserved for (DRAWorkloadResourceClaims)."""
        return self._group_of(pod) if self.workload_claims else None

    def _gang_size(self, pod: Obj) -> int | None:
        """minCount of the pod's gang, or None (no gang, or GangScheduling off)."""
        return gangs.min_count(self._group_of(pod)) if self.gang else None

    def _group_pods(self, pod: Obj) -> list[Obj]:
        """The pods of the pod's group that are not terminating."""
        group = gangs.group_key(pod)
        return [p for p in self.pods.cache.list(pod["metadata"].get("namespace", ""))
                if gangs.group_key(p) == group and not p["metadata"].get("deletionTimestamp")]

    async def reconcile(self, key: str) -> None:
        """One scheduling attempt for the pod `key` (or a look at its binding conditions)."""
        namespace, _, name = key.rpartition("/")
        pod = self.pods.cache.get(name, namespace)
        if pod is None or not self._ours(pod):
            self.binder.forget(key)
            return
        waiting = self.binder.waiting(key)
        if waiting is not None:
            try:
                await self.binder.continue_binding(key, pod, waiting)
            except BindingFailed as e:
                await self._report_unschedulable(key, pod, "SchedulerError", str(e))
                raise Retry(reason=str(e)) from None
            return
        self._permit_rejected.discard(key)
        parked = self.gangs.parked(key)
        if parked is not None:
            await self._check_permit_deadline(key, pod, parked)
            return
        if self.cache.assumed(key):
            return  # bound a moment ago; the informer hasn't shown it yet
        needed = self._gang_size(pod)
        if needed is not None and len(self._group_pods(pod)) < needed:
            # the gang's PreEnqueue: not attempted (no condition, no event) until it grows
            self._unschedulable.add(key)
            return
        try:
            claims = pod_claims(pod, get_claim=self._get_claim, group=self._claims_group(pod))
        except ClaimsNotReady:
            # upstream's PreEnqueue: not attempted (no condition, no event) until it changes
            self._unschedulable.add(key)
            return
        try:
            result = self.cycle.schedule(pod, claims, scan_cached=self.scan_cached)
        except Unschedulable as e:
            if e.deallocate is not None:
                await self.binder.deallocate([claim_key(e.deallocate.claim)])
            await self._report_unschedulable(key, pod, "Unschedulable", str(e))
            self._unschedulable.add(key)
            self.queue.add_after(key, UNSCHEDULABLE_FLUSH)
            return
        except AllocationError as e:
            await self._report_unschedulable(key, pod, "SchedulerError", str(e))
            raise Retry(reason=str(e)) from None
        if needed is None:
            await self.binder.bind(key, pod, result)
            return
        self.binder.reserve(key, pod, result)
        bound = sum(1 for p in self._group_pods(pod) if (p.get("spec") or {}).get("nodeName"))
        permitted = self.gangs.permit(key=key, pod=pod, result=result,
                                      group=gangs.group_key(pod), needed=needed, bound=bound,
                                      now=self.clock.monotonic())
        if isinstance(permitted, float):
            self.queue.add_after(key, permitted)  # the Permit timeout, on the clock
            return
        for allowed in permitted:
            if allowed.key == key:
                continue
            try:
                await self.binder.finish(allowed.key, allowed.pod, allowed.result)
            except Retry:
                self.queue.add(allowed.key)  # unreserved by its failed PreBind: tried again
        await self.binder.finish(key, pod, result)

    async def _check_permit_deadline(self, key: str, pod: Obj, parked: gangs.Parked) -> None:
        """A pod waiting at Permit: still waiting before its group's deadline; at it,
        rejected as upstream (Unreserve, then the failure handler)."""
        deadline = self.gangs.deadline(parked.group) or 0.0
        left = deadline - self.clock.monotonic()
        if left > 0:
            self.queue.add_after(key, left)
            return
        self.gangs.release(key)
        self.binder.unreserve(key, parked.result)
        self._permit_rejected.add(key)
        await self._report_unschedulable(key, pod, "Unschedulable",
                                         gangs.timeout_message(parked.waited))
        self._unschedulable.add(key)
        self.queue.add_after(key, UNSCHEDULABLE_FLUSH)

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
        waiting = self.binder.waiting(object_key(pod))
        return explanation.explain(pod, ours=self._ours(pod),
                                   waiting_node=waiting.node if waiting is not None else None,
                                   get_claim=self._get_claim, group=self._claims_group(pod),
                                   cycle=self.cycle)
