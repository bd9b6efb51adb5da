"""The scheduler component: kube-scheduler's loop for pods of `default-scheduler`, as a client.

One pod at a time, as upstream: PreEnqueue (its claims exist), then the scheduling cycle
(`scheduler.cycle`: PreFilter, Filter over the nodes in a rotating order until enough
feasible ones are found, PostFilter, Score), then the binding (Reserve, PreBind with the
claims' allocation and reservation and any binding conditions, Bind), here for now. A pod
no node can take gets `PodScheduled=False` and a FailedScheduling Event with upstream's
message, and waits for a change of the cluster. What the scheduler knows between cycles, and
when it reuses a verdict, is `scheduler.cache`. This module wires them: informer events to
the cache and to work-queue keys, `reconcile` for one pod, the binding, the failure handler
and the `/explain` route. Everything is written through the API as
`system:serviceaccount:kube-system:kube-scheduler`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from aiohttp import web

import scheduler.explain as explanation
import scheduler.nodeallocatable as nodealloc
from fakeapi.clock import rfc3339
from fakeapi.errors import ApiError, not_found
from fakeapi.log import DELETED
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, WARNING, EventRecorder, object_reference
from fakeapi.runtime.informer import object_key
from fakeapi.runtime.workqueue import RateLimiter, Retry, WorkQueue
from fakeapi.server import Route
from scheduler.allocator import AllocationError, AllocatorFeatures
from scheduler.cache import CLAIMS, CLASSES, RULES, SLICES, SchedulerCache
from scheduler.claims import (
    FINALIZER,
    ClaimsNotReady,
    PodClaim,
    SpecialClaim,
    claim_key,
    pod_claims,
    with_finalizer,
    with_reservation,
)
from scheduler.cycle import ScheduleResult, SchedulingCycle, Unschedulable

Obj = dict[str, Any]
NAME = "default-scheduler"
PODGROUPS = "podgroups.scheduling.k8s.io"
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
BACKOFF_INITIAL, BACKOFF_MAX = 1.0, 10.0  # upstream's podInitialBackoffSeconds / max
UNSCHEDULABLE_FLUSH = 300.0  # upstream's podMaxInUnschedulablePodsDuration (5 min)
BINDING_POLL = 5.0  # upstream PreBind polls binding conditions every 5 s
BINDING_TIMEOUT = 600.0  # upstream's default bindingTimeout (10 min)

log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Waiting:
    """A pod whose claims are allocated and reserved, waiting for binding conditions."""

    node: str
    deadline: float
    claims: list[str]
    """`namespace/name` of the claims whose devices have binding conditions."""


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
        self.cache = SchedulerCache(features=AllocatorFeatures.from_gates(ctx.gates),
                                    node_allocatable=ctx.gates.enabled(nodealloc.GATE))
        self.recorder = EventRecorder(client=self.client, clock=ctx.clock, component=NAME)
        self._unschedulable: set[str] = set()
        """Pods no node could take, queued again by the next change of the cluster."""
        self._waiting: dict[str, Waiting] = {}
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

    # ----- one pod -------------------------------------------------------------------------

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
            claims = pod_claims(pod, get_claim=self._get_claim, group=self._group_of(pod))
        except ClaimsNotReady:
            # upstream's PreEnqueue: not attempted (no condition, no event) until it changes
            self._unschedulable.add(key)
            return
        try:
            result = self.cycle.schedule(pod, claims, scan_cached=self.scan_cached)
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
        waiting = self._waiting.get(object_key(pod))
        return explanation.explain(pod, ours=self._ours(pod),
                                   waiting_node=waiting.node if waiting is not None else None,
                                   get_claim=self._get_claim, group=self._group_of(pod),
                                   cycle=self.cycle)


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
