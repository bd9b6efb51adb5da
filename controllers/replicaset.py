"""The ReplicaSet controller: keeps `spec.replicas` pods of the template alive and reports
them in the status, as kube-controller-manager's replicaset controller does; and the
replication manager, the same controller for ReplicationControllers (as upstream's, which
runs the ReplicaSet logic over them)."""

from __future__ import annotations

import logging
from typing import Any

from controllers.owners import (
    OwnedPods,
    PodOwnerController,
    deletion_order,
    is_ready,
    pod_from_template,
)
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.registry.kinds import REPLICA_SETS, REPLICATION_CONTROLLERS

log = logging.getLogger(__name__)

Obj = dict[str, Any]
BURST = 500  # same as upstream's BurstReplicas: pods created or deleted per sync at most


class ReplicaSetController(PodOwnerController):
    """Keys are `namespace/name` of ReplicaSets; a pod's change wakes its owner."""

    owner_resource = REPLICA_SETS.resource_id
    owner_kind = "ReplicaSet"
    owner_api_version = "apps/v1"

    async def sync(self, key: str, rs: Obj, pods: OwnedPods) -> None:
        """Create or delete pods towards spec.replicas, then write the status."""
        active = list(pods.active)
        if not rs["metadata"].get("deletionTimestamp"):
            wanted = int((rs.get("spec") or {}).get("replicas", 1))
            diff = wanted - len(active) - len(pods.adding)
            template = (rs.get("spec") or {}).get("template") or {}
            for _ in range(min(diff, BURST)):
                await self.create_pod(key, pod_from_template(
                    template, owner=rs, api_version=self.owner_api_version,
                    kind=self.owner_kind,
                    generate_name=rs["metadata"]["name"] + "-"))
            if diff < 0 and not pods.adding:
                for pod in deletion_order(active)[:min(-diff, BURST)]:
                    await self.delete_pod(key, pod)
                    active.remove(pod)
        await self._write_status(rs, active)

    async def _write_status(self, rs: Obj, active: list[Obj]) -> None:
        labels = ((rs.get("spec") or {}).get("template") or {}).get("metadata", {}).get(
            "labels") or {}
        ready = sum(1 for p in active if is_ready(p))
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(1 for p in active if label_selector_matches(
                {"matchLabels": labels}, p["metadata"].get("labels") or {})),
            "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        status = {k: v for k, v in status.items() if v or k == "replicas"}
        if (rs.get("status") or {}) == status:
            return
        await self.client.update(self.owner_resource, {**rs, "status": status},
                                 subresource="status")


class ReplicationManager(ReplicaSetController):
    """ReplicationControllers: a ReplicaSet's pods and status, under their own kind (a
    selector that is a plain label map, which the defaulted pod labels match)."""

    owner_resource = REPLICATION_CONTROLLERS.resource_id
    owner_kind = "ReplicationController"
    owner_api_version = "v1"
    event_source = "replication-controller"
