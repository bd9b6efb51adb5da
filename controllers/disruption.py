"""The disruption controller: each PodDisruptionBudget's status (expected, healthy and
desired pods, disruptions allowed), which the eviction subresource reads, as
kube-controller-manager's disruption controller does."""

from __future__ import annotations

import datetime as dt
from typing import Any

from controllers.deployment import resolve
from controllers.owners import is_active, is_ready
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.machinery.timestamps import parse_time_or_none, rfc3339
from fakeapi.registry.kinds import POD_DISRUPTION_BUDGETS, PODS
from fakeapi.runtime.component import ComponentContext, Controller

Obj = dict[str, Any]
DISRUPTED_TIMEOUT = dt.timedelta(minutes=2)  # same as upstream's DeletionTimeout


class DisruptionController(Controller[str]):
    """Keys are `namespace/name` of budgets; a pod's change wakes the budgets of its
    namespace."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.budgets = self.watch(POD_DISRUPTION_BUDGETS.resource_id)
        self.pods = self.watch(PODS.resource_id, self._budgets_of)

    def _budgets_of(self, type_: str, pod: Obj, old: Obj | None) -> list[str]:
        namespace = pod["metadata"].get("namespace", "")
        return [f"{namespace}/{b['metadata']['name']}"
                for b in self.budgets.cache.list(namespace)]

    async def reconcile(self, key: str) -> None:
        """Count the budget's pods and write its status."""
        namespace, _, name = key.partition("/")
        budget = self.budgets.cache.get(name, namespace)
        if budget is None:
            return
        spec = budget.get("spec") or {}
        selector = spec.get("selector")
        pods = [p for p in self.pods.cache.list(namespace) if is_active(p) and selector
                is not None and label_selector_matches(selector, p["metadata"].get("labels") or {})]
        now = self.clock.now()
        disrupted = {pod: when for pod, when in ((budget.get("status") or {}).get(
            "disruptedPods") or {}).items()
            if (parse_time_or_none(when) or now) + DISRUPTED_TIMEOUT > now
            and any(p["metadata"]["name"] == pod for p in pods)}
        healthy = sum(1 for p in pods if is_ready(p) and p["metadata"]["name"] not in disrupted)
        expected = len(pods)
        if "minAvailable" in spec:
            desired = resolve(spec["minAvailable"], expected, round_up=True)
        elif "maxUnavailable" in spec:
            desired = max(expected - resolve(spec["maxUnavailable"], expected, round_up=True), 0)
        else:
            desired = expected
        allowed = max(healthy - desired, 0)
        old = budget.get("status") or {}
        before: Obj = next((c for c in old.get("conditions") or []
                       if c.get("type") == "DisruptionAllowed"), {})
        state = "True" if allowed > 0 else "False"
        condition = {"type": "DisruptionAllowed", "status": state,
                     "reason": "SufficientPods" if allowed > 0 else "InsufficientPods",
                     "message": "", "observedGeneration": budget["metadata"].get("generation", 1),
                     "lastTransitionTime": before.get("lastTransitionTime", rfc3339(now))
                     if before.get("status") == state else rfc3339(now)}
        status: Obj = {"observedGeneration": budget["metadata"].get("generation", 1),
                       "disruptionsAllowed": allowed, "currentHealthy": healthy,
                       "desiredHealthy": desired, "expectedPods": expected,
                       "conditions": [condition]}
        if disrupted:
            status["disruptedPods"] = disrupted
        if status == old:
            return
        await self.client.update(POD_DISRUPTION_BUDGETS.resource_id, {**budget, "status": status},
                                 subresource="status")
