"""The StatefulSet controller: pods with stable names (`NAME-0` ... `NAME-N-1`), created in
order while each is Ready (OrderedReady) or all at once (Parallel), removed from the highest
ordinal down, their claims made from volumeClaimTemplates, rolling updates from the highest
ordinal above the partition, ControllerRevisions for `kubectl rollout history`, as
kube-controller-manager's statefulset controller does."""

from __future__ import annotations

import copy
from typing import Any

from controllers.deployment import template_hash
from controllers.owners import (
    OwnedPods,
    PodOwnerController,
    is_ready,
    pod_from_template,
    reference_to,
)
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import CONTROLLER_REVISIONS, PERSISTENT_VOLUME_CLAIMS, STATEFUL_SETS

Obj = dict[str, Any]
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"


def _ordinal(pod: Obj, name: str) -> int:
    suffix = pod["metadata"]["name"].removeprefix(name + "-")
    return int(suffix) if suffix.isdigit() else -1


class StatefulSetController(PodOwnerController):
    """Keys are `namespace/name` of StatefulSets; a pod's change wakes its owner."""

    owner_resource = STATEFUL_SETS.resource_id
    owner_kind = "StatefulSet"
    owner_api_version = "apps/v1"
    created_message = "create Pod {pod} in StatefulSet {owner} successful"
    deleted_message = "delete Pod {pod} in StatefulSet {owner} successful"

    async def sync(self, key: str, sts: Obj, owned: OwnedPods) -> None:
        """One step towards spec.replicas pods of the update revision, then the status."""
        name = sts["metadata"]["name"]
        spec = sts.get("spec") or {}
        template = spec.get("template") or {}
        revision = f"{name}-{template_hash(template)}"
        await self._record_revision(sts, revision, template)
        pods = {_ordinal(p, name): p for p in owned.active}
        adding, deleting = owned.adding, owned.deleting
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        wanted = range(start, start + int(spec.get("replicas", 1)))
        parallel = spec.get("podManagementPolicy") == "Parallel"
        if not sts["metadata"].get("deletionTimestamp") and not adding and not deleting:
            await self._step(key, sts, pods, wanted, revision, parallel)
        await self._write_status(sts, list(pods.values()), revision)

    async def _step(self, key: str, sts: Obj, pods: dict[int, Obj], wanted: range,
                    revision: str, parallel: bool) -> None:
        for ordinal in wanted:
            if ordinal not in pods:
                await self._create(key, sts, ordinal, revision)
                if not parallel:
                    return
            elif not parallel and not is_ready(pods[ordinal]):
                return  # same as upstream OrderedReady: wait for this one
        extra = sorted((o for o in pods if o not in wanted), reverse=True)
        for ordinal in extra[:len(extra) if parallel else 1]:
            await self.delete_pod(key, pods[ordinal])
        if extra:
            return
        partition = int((((sts.get("spec") or {}).get("updateStrategy") or {}).get(
            "rollingUpdate") or {}).get("partition") or 0)
        if ((sts.get("spec") or {}).get("updateStrategy") or {}).get("type") == "OnDelete":
            return
        stale = sorted((o for o, p in pods.items() if o >= partition and (
            p["metadata"].get("labels") or {}).get(REVISION_LABEL) != revision), reverse=True)
        if stale and all(is_ready(p) for p in pods.values()):
            await self.delete_pod(key, pods[stale[0]])

    async def _create(self, key: str, sts: Obj, ordinal: int, revision: str) -> None:
        spec = sts.get("spec") or {}
        name = f"{sts['metadata']['name']}-{ordinal}"
        pod = pod_from_template(spec.get("template") or {}, owner=sts, api_version="apps/v1",
                                kind="StatefulSet", generate_name="", extra_labels={
                                    REVISION_LABEL: revision, POD_NAME_LABEL: name,
                                    POD_INDEX_LABEL: str(ordinal)})
        del pod["metadata"]["generateName"]
        pod["metadata"]["name"] = name
        pod["spec"]["hostname"] = name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes = list(pod["spec"].get("volumes") or [])
        for template in spec.get("volumeClaimTemplates") or []:
            claim = f"{template['metadata']['name']}-{name}"
            await self._claim(sts, template, claim)
            volumes = [v for v in volumes if v.get("name") != template["metadata"]["name"]]
            volumes.append({"name": template["metadata"]["name"],
                            "persistentVolumeClaim": {"claimName": claim}})
        if volumes:
            pod["spec"]["volumes"] = volumes
        try:
            await self.create_pod(key, pod)
        except ApiError as e:
            if e.code != 409:
                raise

    async def _claim(self, sts: Obj, template: Obj, name: str) -> None:
        """Same as upstream: one PersistentVolumeClaim per template and pod, kept on scale
        down (the default Retain policy)."""
        claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
            "name": name, "namespace": sts["metadata"]["namespace"],
            "labels": dict(((sts.get("spec") or {}).get("selector") or {}).get(
                "matchLabels") or {})}, "spec": copy.deepcopy(template.get("spec") or {})}
        try:
            await self.client.create(PERSISTENT_VOLUME_CLAIMS.resource_id, claim)
        except ApiError as e:
            if e.code != 409:
                raise

    async def _record_revision(self, sts: Obj, revision: str, template: Obj) -> None:
        """A ControllerRevision per template, numbered in order (`rollout history`)."""
        meta = sts["metadata"]
        try:
            await self.client.get(CONTROLLER_REVISIONS.resource_id, revision, meta["namespace"])
            return
        except ApiError as e:
            if e.code != 404:
                raise
        revisions = await self.client.list(CONTROLLER_REVISIONS.resource_id, meta["namespace"])
        existing = [r for r in revisions
                    if any(o.get("uid") == meta["uid"]
                           for o in r["metadata"].get("ownerReferences") or [])]
        number = max((int(r.get("revision") or 0) for r in existing), default=0) + 1
        try:
            await self.client.create(CONTROLLER_REVISIONS.resource_id, {
                "apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {
                    "name": revision, "namespace": meta["namespace"],
                    "labels": dict(((sts.get("spec") or {}).get("selector") or {}).get(
                        "matchLabels") or {}),
                    "ownerReferences": [reference_to(sts, "apps/v1", "StatefulSet")]},
                "data": {"spec": {"template": {**template, "$patch": "replace"}}},
                "revision": number})
        except ApiError as e:
            if e.code != 409:
                raise

    async def _write_status(self, sts: Obj, pods: list[Obj], revision: str) -> None:
        updated = [p for p in pods
                   if (p["metadata"].get("labels") or {}).get(REVISION_LABEL) == revision]
        ready = sum(1 for p in pods if is_ready(p))
        old = sts.get("status") or {}
        complete = len(updated) == len(pods) == int((sts.get("spec") or {}).get("replicas", 1))
        status: Obj = {"observedGeneration": sts["metadata"].get("generation", 1),
                       "replicas": len(pods), "readyReplicas": ready,
                       "availableReplicas": ready,
                       "currentReplicas": len(pods) if complete else len(pods) - len(updated),
                       "updatedReplicas": len(updated),
                       "currentRevision": revision if complete else (
                           old.get("currentRevision") or revision),
                       "updateRevision": revision, "collisionCount": 0}
        status = {k: v for k, v in status.items() if v or k in ("replicas",)}
        if status != old:
            await self.client.update(STATEFUL_SETS.resource_id, {**sts, "status": status},
                                     subresource="status")
