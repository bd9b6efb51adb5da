"""The ResourcePoolStatusRequest controller (KEP-5677, gate DRAResourcePoolStatus).

Each request is processed once: its status (`poolCount`, `pools`, one `Complete` or
`Failed` condition) is computed from the shared slice, claim and DeviceTaintRule caches
(`controllers.poolstatus`) and written through `/status`, after which the apiserver keeps the
whole request immutable. A request whose pools are still being published (fewer slices
than `resourceSliceCount`) is retried a few times with backoff first, giving the driver
time; then the incomplete pools are reported with their validationError. Completed requests
are deleted an hour after completion, pending ones 24 hours after creation: each request
has a timer on the injected clock for its deadline, so nothing polls.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import controllers.poolstatus as poolstatus
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.kinds import (
    DEVICE_TAINT_RULES,
    RESOURCE_CLAIMS,
    RESOURCE_POOL_STATUS_REQUESTS,
    RESOURCE_SLICES,
)
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.informer import Informer
from fakeapi.runtime.workqueue import Retry

log = logging.getLogger(__name__)

Obj = dict[str, Any]
COMPLETED_TTL = dt.timedelta(hours=1)
"""Same as upstream completedRequestTTL."""
PENDING_TTL = dt.timedelta(hours=24)
"""Same as upstream pendingRequestTTL."""
INCOMPLETE_RETRIES = 5
"""Same as upstream maxRetries: tries before incomplete pools are reported as they are."""
FINISHED = ("Complete", "Failed")


class ResourcePoolStatusRequestController(Controller[str]):
    """Computes each request's status once and deletes requests when their time is up."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.requests = self.watch(RESOURCE_POOL_STATUS_REQUESTS.resource_id)
        self.slices = ctx.informers.get(RESOURCE_SLICES.resource_id)
        self.claims = ctx.informers.get(RESOURCE_CLAIMS.resource_id)
        served = {k.resource_id for k in self.client.resources()}
        rules = DEVICE_TAINT_RULES.resource_id
        self.rules: Informer | None = ctx.informers.get(rules) if rules in served else None
        # read, not watched: slice and claim churn never re-triggers a computed request
        self._read = [i for i in (self.slices, self.claims, self.rules) if i is not None]

    async def run(self) -> None:
        """Wait for the caches the computation reads, then work."""
        for informer in self._read:
            await informer.wait_synced()
        await super().run()

    def ready(self) -> bool:
        """Every informer read or watched has synced."""
        return super().ready() and all(i.synced for i in self._read)

    async def reconcile(self, key: str) -> None:
        """Delete the request when its time is up; else compute its status once; then wait
        for its deadline."""
        request = self.requests.cache.get(key)
        if request is None:
            return
        now = self.clock.now()
        deadline = _deadline(request)
        if now >= deadline:
            await self._delete(request)
            return
        if request.get("status") is None:
            status = self._compute(request, retried=self.queue.limiter.retries(key))
            updated = {**request, "status": status}
            await self.client.update(RESOURCE_POOL_STATUS_REQUESTS.resource_id, updated,
                                     subresource="status")
            deadline = now + COMPLETED_TTL
        self.queue.add_after(key, max(0.0, (deadline - now).total_seconds()))

    def _compute(self, request: Obj, *, retried: int) -> Obj:
        """The status to write; raises Retry while pools are incomplete and tries remain."""
        try:
            status = poolstatus.compute(poolstatus.Inputs(
                spec=request.get("spec") or {}, slices=self.slices.cache.list(),
                claims=self.claims.cache.list(),
                rules=self.rules.cache.list() if self.rules is not None else ()))
        except (ValueError, KeyError, TypeError) as e:
            log.warning("%s: %s: calculation failed: %s", self.name,
                        request["metadata"]["name"], e)
            return {"poolCount": 0, "conditions": [self._condition(
                "Failed", "CalculationFailed", f"Failed to calculate pool status: {e}")]}
        pools = status["pools"]
        incomplete = [p for p in pools if
                      p.get("validationError", "").startswith(poolstatus.INCOMPLETE)]
        if incomplete and retried < INCOMPLETE_RETRIES:
            raise Retry(reason="incomplete pools, waiting for the driver to publish them")
        errors = sum(1 for p in pools if p.get("validationError"))
        message = f"Calculated status for {len(pools)} pools"
        if errors:
            message += f" ({errors} incomplete)"
        if not pools:
            status.pop("pools")
        status["conditions"] = [self._condition("Complete", "CalculationComplete", message)]
        return status

    def _condition(self, type_: str, reason: str, message: str) -> Obj:
        return {"type": type_, "status": "True", "reason": reason, "message": message,
                "lastTransitionTime": rfc3339(self.clock.now())}

    async def _delete(self, request: Obj) -> None:
        meta = request["metadata"]
        try:
            current = await self.client.get(RESOURCE_POOL_STATUS_REQUESTS.resource_id, meta["name"])
            if current["metadata"]["uid"] != meta["uid"]:
                return  # recreated meanwhile: the new one has its own deadline
            await self.client.delete(RESOURCE_POOL_STATUS_REQUESTS.resource_id, meta["name"])
        except ApiError as e:
            if e.code != 404:
                raise
        log.info("%s: deleted expired request %s", self.name, meta["name"])


def _deadline(request: Obj) -> dt.datetime:
    """Same as upstream shouldDeleteRequest: an hour after the Complete/Failed condition's
    transition, 24 hours after creation while pending."""
    status = request.get("status")
    if status is not None:
        for condition in status.get("conditions") or []:
            if condition.get("type") in FINISHED and condition.get("lastTransitionTime"):
                return parse_time(condition["lastTransitionTime"]) + COMPLETED_TTL
        return parse_time(request["metadata"]["creationTimestamp"]) + COMPLETED_TTL
    return parse_time(request["metadata"]["creationTimestamp"]) + PENDING_TTL
