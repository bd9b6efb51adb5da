"""The ReplicaSet controller: keeps `spec.replicas` pods of the template alive and reports
them in the status, as kube-controller-manager's replicaset controller does."""

from __future__ import annotations

import logging
from typing import Any

from controllers.owners import (
    Expectations,
    controller_uid_index,
    delete_pod,
    deletion_order,
    is_active,
    is_ready,
    owner_key,
    pod_from_template,
)
from fakeapi.rbac import selector_matches
from fakeapi.runtime.component import ComponentContext, Controller

log = logging.getLogger(__name__)

Obj = dict[str, Any]
REPLICA_SETS = "replicasets.apps"
BURST = 500  # same as upstream's BurstReplicas: pods created or deleted per sync at most


class ReplicaSetController(Controller[str]):
    """Keys are `namespace/name` of ReplicaSets; a pod's change wakes its owner."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.sets = self.watch(REPLICA_SETS)
        self.pods = self.watch("pods", owner_key("ReplicaSet"))
        self.pods.cache.add_index("controller", controller_uid_index)
        self.expectations = Expectations()

    async def reconcile(self, key: str) -> None:
        """Create or delete pods towards spec.replicas, then write the status."""
        namespace, _, name = key.partition("/")
        rs = self.sets.cache.get(name, namespace)
        if rs is None:
            self.expectations.forget(key)
            return
        owned = [p for p in self.pods.cache.by_index("controller", rs["metadata"]["uid"])]
        names = {p["metadata"]["name"] for p in owned}
        adding, deleting = self.expectations.pending(key, names)
        active = [p for p in owned if is_active(p) and p["metadata"]["name"] not in deleting]
        if not rs["metadata"].get("deletionTimestamp"):
            wanted = int((rs.get("spec") or {}).get("replicas", 1))
            diff = wanted - len(active) - len(adding)
            if diff > 0:
                await self._create(key, rs, min(diff, BURST))
            elif diff < 0 and not adding:
                for pod in deletion_order(active)[:min(-diff, BURST)]:
                    await delete_pod(self.client, self.expectations, key, pod)
                    active.remove(pod)
        await self._write_status(rs, active)

    async def _create(self, key: str, rs: Obj, count: int) -> None:
        template = (rs.get("spec") or {}).get("template") or {}
        for _ in range(count):
            pod = pod_from_template(template, owner=rs, api_version="apps/v1",
                                    kind="ReplicaSet",
                                    generate_name=rs["metadata"]["name"] + "-")
            created = await self.client.create("pods", pod)
            self.expectations.created(key, created["metadata"]["name"])


    async def _write_status(self, rs: Obj, active: list[Obj]) -> None:
        labels = ((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get(
            "labels") or {}
        ready = sum(1 for p in active if is_ready(p))
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(1 for p in active if selector_matches(
                {"matchLabels": labels}, p["metadata"].get("labels") or {})),
            "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k == "replicas"}
        if (rs.get("status") or {}) == status:
            return
        await self.client.update(REPLICA_SETS, {**rs, "status": status}, subresource="status")
