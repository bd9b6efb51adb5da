"""What the scheduler does once a cycle chose a node: Reserve, PreBind, Bind, or Unreserve.

Reserve puts the claims' new allocations in flight and assumes the pod on its node (in the
cache, so the next cycles see the devices and resources taken). PreBind writes each claim's
delete-protection finalizer, allocation and reservation (upstream's bindClaim), creates the
special claim for DRA-backed extended resources and records the node-allocatable statuses;
a claim whose devices have binding conditions makes the pod wait, polled every
`BINDING_POLL` seconds until they are all true (then Bind), a failure condition is true or
`BINDING_TIMEOUT` passes (then the claims are deallocated and the pod tried again). Bind
writes `pods/binding` and the Scheduled Event. A failed PreBind is undone by Unreserve.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from typing import Any

import scheduler.nodeallocatable as nodealloc
from fakeapi.client import ApiClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.runtime.events import NORMAL, WARNING, EventRecorder, object_reference
from fakeapi.runtime.workqueue import Retry, WorkQueue
from scheduler.cache import CLAIMS, SchedulerCache
from scheduler.claims import (
    FINALIZER,
    PodClaim,
    SpecialClaim,
    claim_key,
    with_finalizer,
    with_reservation,
)
from scheduler.cycle import ScheduleResult

Obj = dict[str, Any]
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


class BindingFailed(Exception):
    """A binding failure condition became true, or the binding timeout passed: the claims
    are deallocated and the pod is to be reported unschedulable and tried again."""


class Binder:
    """Reserve, PreBind, Bind and Unreserve for the pods the cycle placed, and the pods that
    wait for binding conditions."""

    def __init__(self, *, client: ApiClient, clock: Clock, recorder: EventRecorder,
                 cache: SchedulerCache, queue: WorkQueue[str],
                 get_claim: Callable[[str, str], Obj | None],
                 on_bound: Callable[[str], None]) -> None:
        self.client = client
        self.clock = clock
        self.recorder = recorder
        self.cache = cache
        self.queue = queue
        """Where a waiting pod is queued again to poll its binding conditions."""
        self._get_claim = get_claim
        """`get_claim(namespace, name)`: the claims informer's object."""
        self._on_bound = on_bound
        """Called with the key of each pod bound, before its Scheduled Event is written."""
        self._waiting: dict[str, Waiting] = {}

    def waiting(self, key: str) -> Waiting | None:
        """What the pod waits for, if it waits for binding conditions."""
        return self._waiting.get(key)

    def waiting_on(self, claim: str) -> list[str]:
        """The pods waiting for the binding conditions of the claim `namespace/name`."""
        return [k for k, w in self._waiting.items() if claim in w.claims]

    def forget(self, key: str) -> None:
        """The pod is gone, or no longer this scheduler's: stop waiting for it."""
        self._waiting.pop(key, None)

    async def bind(self, key: str, pod: Obj, result: ScheduleResult) -> None:
        """Reserve, PreBind, then Bind, or wait for binding conditions (the pod is queued
        again to poll them); a failed PreBind is unreserved and retried (Retry)."""
        self.reserve(key, pod, result)
        await self.finish(key, pod, result)

    def reserve(self, key: str, pod: Obj, result: ScheduleResult) -> None:
        """Reserve: the claims' new allocations in flight, the pod assumed on its node."""
        for uid, allocation in _reserved(result).items():
            self.cache.reserve_claim(uid, allocation)
        self.cache.assume(key, result.node, pod, result.node_allocatable)

    async def finish(self, key: str, pod: Obj, result: ScheduleResult) -> None:
        """PreBind and Bind of a reserved (and permitted) pod, as `bind` after Reserve."""
        reserved = _reserved(result)
        try:
            conditional = await self._prebind(pod, result)
        except (ApiError, Retry) as e:
            self.unreserve(key, result)
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

    def unreserve(self, key: str, result: ScheduleResult) -> None:
        """Unreserve: the claims' new allocations dropped, the pod no longer assumed."""
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

    async def continue_binding(self, key: str, pod: Obj, waiting: Waiting) -> None:
        """Binding conditions: bind once all are True; poll again (Retry) while some are
        pending before the deadline; BindingFailed on a failure condition or at the deadline,
        once the claims are deallocated."""
        failed = ""
        pending = False
        for ref in waiting.claims:
            namespace, _, name = ref.rpartition("/")
            claim = self._get_claim(namespace, name)
            state = binding_state(claim)
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
        await self.deallocate(waiting.claims)
        raise BindingFailed(reason)

    async def deallocate(self, keys: Iterable[str]) -> None:
        """Drop the allocation, reservations and device statuses of the claims
        `namespace/name` (DynamicResources' PostFilter, or a failed binding)."""
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
        self._on_bound(key)
        await self.recorder.event(
            object_reference(pod, api_version="v1", kind="Pod"), NORMAL, "Scheduled",
            f"Successfully assigned {meta.get('namespace', '')}/{meta['name']} to {node}")


def _reserved(result: ScheduleResult) -> dict[str, Obj]:
    """claim uid → the allocation Reserve puts in flight for it (the special claim's too)."""
    reserved = dict(result.allocations)
    if result.special is not None and result.special.allocation is not None:
        reserved[result.special.claim.uid] = result.special.allocation
    return reserved


def binding_state(claim: Obj | None) -> str:
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
