"""The Deployment controller: one ReplicaSet per pod template (named by its
pod-template-hash), rolling updates within maxSurge/maxUnavailable or Recreate, revisions for
`kubectl rollout undo`, and the status `kubectl rollout status` reads, as
kube-controller-manager's deployment controller does."""

from __future__ import annotations

import copy
import math
from typing import Any

import orjson

from controllers.owners import controller_ref, controller_uid_index, owner_key, reference_to
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.kinds import DEPLOYMENTS, REPLICA_SETS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, EventRecorder, object_reference

Obj = dict[str, Any]
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Obj, collisions: int = 0) -> str:
    """Same shape as upstream's ComputeHash: an FNV-1a 32 hash of the template (and the
    collision count), spelled with SafeEncodeString's alphabet."""
    value = 0x811C9DC5
    data = orjson.dumps(template, option=orjson.OPT_SORT_KEYS) + str(collisions).encode()
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(value))


def resolve(value: Any, total: int, *, round_up: bool) -> int:
    """An int-or-percent of `total` (upstream's GetScaledValueFromIntOrPercent)."""
    if isinstance(value, str) and value.endswith("%"):
        scaled = int(value[:-1] or 0) * total / 100
        return math.ceil(scaled) if round_up else math.floor(scaled)
    return int(value or 0)


def _strip_hash(template: Obj) -> Obj:
    out = copy.deepcopy(template)
    labels = (out.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(HASH_LABEL, None)
    return out


def _revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, 0))
    except ValueError:
        return 0


def _replicas(rs: Obj) -> int:
    return int((rs.get("spec") or {}).get("replicas") or 0)


def _status(rs: Obj, field: str) -> int:
    return int((rs.get("status") or {}).get(field) or 0)


class DeploymentController(Controller[str]):
    """Keys are `namespace/name` of Deployments; a ReplicaSet's change wakes its owner."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.deployments = self.watch(DEPLOYMENTS.resource_id)
        self.events = EventRecorder(client=self.client, clock=self.clock, component=ctx.name)
        self.sets = self.watch(REPLICA_SETS.resource_id, owner_key("Deployment"))
        self.sets.cache.add_index("controller", controller_uid_index)

    async def reconcile(self, key: str) -> None:
        """Converge the ReplicaSets one step, then write the status."""
        namespace, _, name = key.partition("/")
        deployment = self.deployments.cache.get(name, namespace)
        if deployment is None or deployment["metadata"].get("deletionTimestamp"):
            return
        spec = deployment.get("spec") or {}
        sets = [rs for rs in self.sets.cache.by_index("controller",
                                                      deployment["metadata"]["uid"])
                if not rs["metadata"].get("deletionTimestamp")]
        template = spec.get("template") or {}
        new = next((rs for rs in sets if _strip_hash((rs.get("spec") or {}).get(
            "template") or {}) == template), None)
        old = [rs for rs in sets if rs is not new]
        top = max((_revision(rs) for rs in old), default=0)
        if spec.get("paused"):
            await self._write_status(deployment, new, sets)
            return
        if new is None:
            new = await self._create_set(deployment, top + 1)
            sets.append(new)
        elif _revision(new) <= top:  # a rollback: the old template is the newest again
            new = await self._set_replicas(new, _replicas(new), revision=top + 1)
        replicas = int(spec.get("replicas", 1))
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            await self._recreate(new, old, replicas)
        else:
            await self._roll(deployment, new, old, replicas)
        await self._write_status(deployment, new, [new, *old])

    async def _create_set(self, deployment: Obj, revision: int) -> Obj:
        spec = deployment.get("spec") or {}
        template = copy.deepcopy(spec.get("template") or {})
        digest = template_hash(template, int((deployment.get("status") or {}).get(
            "collisionCount") or 0))
        template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = digest
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
        meta = deployment["metadata"]
        rs: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": f"{meta['name']}-{digest}", "namespace": meta["namespace"],
            "labels": dict(template["metadata"]["labels"]),
            "annotations": {REVISION: str(revision), DESIRED: str(spec.get("replicas", 1))},
            "ownerReferences": [reference_to(deployment, "apps/v1", "Deployment")]},
            "spec": {"replicas": 0, "minReadySeconds": spec.get("minReadySeconds", 0),
                     "selector": selector, "template": template}}
        try:
            return await self.client.create(REPLICA_SETS.resource_id, rs)
        except ApiError as e:
            if e.code != 409:
                raise
            return await self.client.get(REPLICA_SETS.resource_id, rs["metadata"]["name"],
                                         meta["namespace"])

    async def _set_replicas(self, rs: Obj, replicas: int, *, revision: int | None = None) -> Obj:
        annotations = dict(rs["metadata"].get("annotations") or {})
        if revision is not None:
            annotations[REVISION] = str(revision)
        if _replicas(rs) == replicas and annotations == rs["metadata"].get("annotations"):
            return rs
        body = {**rs, "metadata": {**rs["metadata"], "annotations": annotations},
                "spec": {**(rs.get("spec") or {}), "replicas": replicas}}
        updated = await self.client.update(REPLICA_SETS.resource_id, body)
        if _replicas(rs) != replicas:
            await self._scaled(rs, _replicas(rs), replicas)
        return updated

    async def _scaled(self, rs: Obj, before: int, after: int) -> None:
        """The Event about the Deployment that upstream's controller records for a scale."""
        ref = controller_ref(rs)
        deployment = ref and self.deployments.cache.get(ref["name"], rs["metadata"]["namespace"])
        if deployment:
            await self.events.event(
                object_reference(deployment, api_version="apps/v1", kind="Deployment"), NORMAL,
                "ScalingReplicaSet", f"Scaled {'up' if after > before else 'down'} replica set "
                f"{rs['metadata']['name']} from {before} to {after}")

    async def _recreate(self, new: Obj, old: list[Obj], replicas: int) -> None:
        """Same as upstream's Recreate: old pods all gone before new ones start."""
        for rs in old:
            await self._set_replicas(rs, 0)
        if all(_status(rs, "replicas") == 0 for rs in old):
            await self._set_replicas(new, replicas)

    async def _roll(self, deployment: Obj, new: Obj, old: list[Obj], replicas: int) -> None:
        """Same as upstream's rolling update: scale the new set up within maxSurge, the old
        ones down while maxUnavailable allows (unavailable old pods first)."""
        rolling = ((deployment.get("spec") or {}).get("strategy") or {}).get(
            "rollingUpdate") or {}
        surge = resolve(rolling.get("maxSurge", "25%"), replicas, round_up=True)
        unavailable = resolve(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
        if surge == 0 and unavailable == 0:
            unavailable = 1
        live_old = sorted((rs for rs in old if _replicas(rs) > 0),
                          key=lambda rs: (rs["metadata"].get("creationTimestamp", ""),
                                          _revision(rs)))
        if not live_old:
            await self._set_replicas(new, replicas)
            return
        total = _replicas(new) + sum(_replicas(rs) for rs in live_old)
        room = replicas + surge - total
        if room > 0 and _replicas(new) < replicas:
            new = await self._set_replicas(new, min(replicas, _replicas(new) + room))
            total = _replicas(new) + sum(_replicas(rs) for rs in live_old)
        # same as upstream reconcileOldReplicaSets: never below minAvailable, counting the
        # new set's unavailable pods; unhealthy old pods go first
        min_available = replicas - unavailable
        scalable = total - min_available - max(
            _replicas(new) - _status(new, "availableReplicas"), 0)
        if scalable <= 0:
            return
        sizes = {rs["metadata"]["name"]: _replicas(rs) for rs in live_old}
        for rs in live_old:  # cleanupUnhealthyReplicas
            unhealthy = max(_replicas(rs) - _status(rs, "availableReplicas"), 0)
            cut = min(scalable, unhealthy)
            sizes[rs["metadata"]["name"]] -= cut
            scalable -= cut
        available = _status(new, "availableReplicas") + sum(
            min(_status(rs, "availableReplicas"), sizes[rs["metadata"]["name"]])
            for rs in live_old)
        removable = available - min_available  # scaleDownOldReplicaSetsForRollingUpdate
        for rs in live_old:
            if removable <= 0:
                break
            cut = min(sizes[rs["metadata"]["name"]], removable)
            sizes[rs["metadata"]["name"]] -= cut
            removable -= cut
        for rs in live_old:
            await self._set_replicas(rs, sizes[rs["metadata"]["name"]])

    async def _write_status(self, deployment: Obj, new: Obj | None, sets: list[Obj]) -> None:
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        total = sum(_status(rs, "replicas") for rs in sets)
        available = sum(_status(rs, "availableReplicas") for rs in sets)
        updated = _status(new, "replicas") if new is not None else 0
        rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
        unavailable = resolve(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
        now = rfc3339(self.clock.now())
        old = {c.get("type"): c for c in (deployment.get("status") or {}).get("conditions") or []}
        complete = updated == replicas == total == available and new is not None
        conditions = [
            self._condition(old, "Available", available >= replicas - unavailable,
                            "MinimumReplicasAvailable" if available >= replicas - unavailable
                            else "MinimumReplicasUnavailable",
                            "Deployment has minimum availability." if available >= replicas
                            - unavailable else "Deployment does not have minimum availability.",
                            now),
            self._condition(old, "Progressing", True,
                            "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                            f'ReplicaSet "{new["metadata"]["name"]}" '
                            + ("has successfully progressed." if complete
                               else "is progressing.") if new is not None else "", now),
        ]
        status: Obj = {"observedGeneration": deployment["metadata"].get("generation", 1),
                       "replicas": total, "updatedReplicas": updated,
                       "readyReplicas": sum(_status(rs, "readyReplicas") for rs in sets),
                       "availableReplicas": available,
                       "unavailableReplicas": max(total - available, 0),
                       "conditions": conditions}
        status = {k: v for k, v in status.items() if v or k in ("observedGeneration",)}
        annotations = dict(deployment["metadata"].get("annotations") or {})
        if new is not None:
            annotations[REVISION] = str(_revision(new))
        if annotations != (deployment["metadata"].get("annotations") or {}):
            deployment = await self.client.update(DEPLOYMENTS.resource_id, {
                **deployment, "metadata": {**deployment["metadata"], "annotations": annotations}})
        if (deployment.get("status") or {}) == status:
            return
        await self.client.update(DEPLOYMENTS.resource_id, {**deployment, "status": status},
                                 subresource="status")

    @staticmethod
    def _condition(old: dict[Any, Obj], kind: str, ok: bool, reason: str, message: str,
                   now: str) -> Obj:
        before = old.get(kind) or {}
        status = "True" if ok else "False"
        changed = before.get("status") != status
        return {"type": kind, "status": status,
                "lastUpdateTime": now if changed or before.get("reason") != reason else
                before.get("lastUpdateTime", now),
                "lastTransitionTime": now if changed else before.get("lastTransitionTime", now),
                "reason": reason, "message": message}
