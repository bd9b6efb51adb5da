"""The node lifecycle controller and the taint eviction controller, as kube-controller-manager
runs them (pkg/controller/nodelifecycle, pkg/controller/tainteviction).

Node lifecycle: a node is probed by the newer of its Ready heartbeat and its Lease renewal.
Past the grace period (50 s; 60 s for a node that never reported) its conditions become
Unknown ("Kubelet stopped posting node status."), its pods are marked not Ready, and it gets
the `node.kubernetes.io/unreachable` taints (NoSchedule, and NoExecute with timeAdded);
a node whose Ready is False gets `node.kubernetes.io/not-ready` instead. A node Ready again
loses them.

Taint eviction: a pod on a node with NoExecute taints is evicted (DisruptionTarget condition,
then a graceful deletion) at once when a taint is not tolerated, else when the shortest
`tolerationSeconds` of the matching tolerations has passed since the taint was added.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

from fakeapi.kube import taints
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.kinds import LEASES
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, EventRecorder, object_reference
from fakeapi.runtime.informer import object_key
from kubelet_emu.nodes import NODE_INDEX, pod_node

log = logging.getLogger(__name__)

Obj = dict[str, Any]
LEASES_ID = LEASES.resource_id
LEASE_NAMESPACE = "kube-node-lease"
NODE_CONTROLLER = "node-controller"
"""The source of the node lifecycle controller's Events (upstream's recorder name)."""
GRACE_SECONDS = 50.0
"""--node-monitor-grace-period (50 s since 1.32)."""
STARTUP_GRACE_SECONDS = 60.0
"""--node-startup-grace-period."""
UNREACHABLE = "node.kubernetes.io/unreachable"
NOT_READY = "node.kubernetes.io/not-ready"
CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


def _condition(node: Obj, type_: str) -> Obj | None:
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def _time(value: Any) -> dt.datetime | None:
    return parse_time(value) if isinstance(value, str) and value else None


def wanted_taints(ready: str | None) -> list[tuple[str, str]]:
    """(key, effect) of the lifecycle taints a Ready status calls for."""
    key = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(ready or "")
    return [(key, taints.NO_SCHEDULE), (key, taints.NO_EXECUTE)] if key else []


class NodeLifecycleController(Controller[str]):
    """Marks silent nodes Unknown and keeps the lifecycle taints in line (keys: node names)."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.nodes = self.watch("nodes")
        self.leases = self.watch(LEASES_ID, self._lease_keys)
        self.pods = self.ctx.informers.get("pods")
        self.pods.cache.add_index(NODE_INDEX, pod_node)
        self.events = EventRecorder(client=self.client, clock=self.clock,
                                    component=NODE_CONTROLLER)
        self.known: set[str] = set()
        """The uids of the nodes this controller has registered (an Event each)."""

    def _lease_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        meta = obj["metadata"]
        return [meta["name"]] if meta.get("namespace") == LEASE_NAMESPACE else []

    def _probe(self, node: Obj) -> tuple[dt.datetime, float]:
        """When the node last showed life, and the grace it has from then."""
        meta = node["metadata"]
        ready = _condition(node, "Ready")
        times = [_time(meta.get("creationTimestamp"))]
        if ready is not None:
            times.append(_time(ready.get("lastHeartbeatTime")))
        lease = self.leases.cache.get(meta["name"], LEASE_NAMESPACE)
        if lease is not None:
            times.append(_time((lease.get("spec") or {}).get("renewTime")))
        probe = max(t for t in times if t is not None)
        return probe, GRACE_SECONDS if ready is not None else STARTUP_GRACE_SECONDS

    async def reconcile(self, key: str) -> None:
        """Check one node's health; set its taints."""
        node = self.nodes.cache.get(key)
        if node is None:
            return
        if node["metadata"]["uid"] not in self.known:  # as upstream's, once per controller
            self.known.add(node["metadata"]["uid"])
            await self._node_event(node, "RegisteredNode",
                                   f"Node {key} event: Registered Node {key} in Controller")
        now = self.clock.now()
        probe, grace = self._probe(node)
        ready = _condition(node, "Ready")
        silent = (now - probe).total_seconds() > grace
        if silent and (ready is None or ready.get("status") != "Unknown"):
            node = await self.mark_unknown(node, ready is None)
            await self._node_event(node, "NodeNotReady", f"Node {key} status is now: "
                                   "NodeNotReady")
            await self._mark_pods_not_ready(key)
        elif not silent:
            left = grace - (now - probe).total_seconds()
            self.queue.add_after(key, left + 1.0)
        await self.write_taints(node)

    async def _node_event(self, node: Obj, reason: str, message: str) -> None:
        await self.events.event(object_reference(node, api_version="v1", kind="Node"), NORMAL,
                                reason, message)

    async def mark_unknown(self, node: Obj, never: bool) -> Obj:
        """Write the node's conditions Unknown (`never`: it never posted a status), over the
        node as read (a stale read is refused with 409); returns the node written."""
        now = rfc3339(self.clock.now())
        by_type = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or []}
        conditions = []
        for type_ in CONDITIONS:
            old = by_type.get(type_)
            if old is None and type_ != "Ready":
                continue
            reason, message = (("NodeStatusNeverUpdated", "Kubelet never posted node status.")
                               if never or old is None else
                               ("NodeStatusUnknown", "Kubelet stopped posting node status."))
            conditions.append({"type": type_, "status": "Unknown", "reason": reason,
                               "message": message, "lastTransitionTime": now,
                               "lastHeartbeatTime": (old or {}).get("lastHeartbeatTime")})
        others = [c for t, c in by_type.items() if t not in CONDITIONS]
        return await self.client.patch("nodes", node["metadata"]["name"], {
            "metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
            "status": {"conditions": conditions + others}}, subresource="status")

    async def _mark_pods_not_ready(self, node: str) -> None:
        """Same as upstream's MarkPodsNotReady: every pod on the node is not Ready any more."""
        now = rfc3339(self.clock.now())
        for pod in self.pods.cache.by_index(NODE_INDEX, node):
            meta = pod["metadata"]
            for _ in range(5):  # the conditions are written whole: only over what was read
                conditions = list((pod.get("status") or {}).get("conditions") or [])
                changed = False
                for i, c in enumerate(conditions):
                    if c.get("type") == "Ready" and c.get("status") != "False":
                        conditions[i] = {**c, "status": "False", "lastTransitionTime": now}
                        changed = True
                if not changed:
                    break
                try:
                    await self.client.patch("pods", meta["name"], {
                        "metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]},
                        "status": {"conditions": conditions}}, namespace=meta["namespace"],
                        subresource="status", copy=False)
                    break
                except ApiError as e:
                    if e.code == 404:
                        break
                    if e.code != 409:
                        raise
                try:
                    pod = await self.client.get("pods", meta["name"], meta["namespace"])
                except ApiError as e:
                    if e.code != 404:
                        raise
                    break

    async def write_taints(self, node: Obj) -> None:
        """Put the lifecycle taints the node's Ready status calls for, over the node as read
        (a stale read is refused with 409)."""
        ready = _condition(node, "Ready")
        wanted = wanted_taints(ready.get("status") if ready else None)
        current = (node.get("spec") or {}).get("taints") or []
        keep = [t for t in current if t.get("key") not in (UNREACHABLE, NOT_READY)
                or (t.get("key"), t.get("effect")) in wanted]
        have = {(t.get("key"), t.get("effect")) for t in keep}
        now = rfc3339(self.clock.now())
        add = [{"key": k, "effect": e, **({"timeAdded": now} if e == taints.NO_EXECUTE else {})}
               for k, e in wanted if (k, e) not in have]
        if not add and len(keep) == len(current):
            return
        await self.client.patch("nodes", node["metadata"]["name"], {  # a 409 retries the key
            "metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
            "spec": {"taints": keep + add or None}}, copy=False)


class TaintEvictionController(Controller[str]):
    """Evicts pods from nodes with NoExecute taints they don't tolerate (keys: pods)."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.pods = self.watch("pods")
        self.pods.cache.add_index(NODE_INDEX, pod_node)
        self.nodes = self.watch("nodes", self._node_pods)
        self.events = EventRecorder(client=self.client, clock=self.clock, component=ctx.name)

    def _node_pods(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        return [object_key(p) for p in self.pods.cache.by_index(NODE_INDEX,
                                                                obj["metadata"]["name"])]

    async def reconcile(self, key: str) -> None:
        """Evict the pod now, later, or never."""
        namespace, _, name = key.partition("/")
        pod = self.pods.cache.get(name, namespace)
        if pod is None or pod["metadata"].get("deletionTimestamp"):
            return
        node = self.nodes.cache.get((pod.get("spec") or {}).get("nodeName") or "")
        if node is None:
            return
        no_execute = [t for t in (node.get("spec") or {}).get("taints") or []
                      if t.get("effect") == taints.NO_EXECUTE]
        if not no_execute:
            return
        tolerations = (pod.get("spec") or {}).get("tolerations") or []
        now = self.clock.now()
        dues: list[dt.datetime] = []
        for taint in no_execute:
            try:
                seconds = taints.toleration_seconds(tolerations, taint)
            except LookupError:
                dues.append(now)  # not tolerated: evict now
                continue
            if seconds is not None:
                added = _time(taint.get("timeAdded")) or now
                dues.append(added + dt.timedelta(seconds=seconds))
        if not dues:
            return  # every taint tolerated for ever
        left = (min(dues) - now).total_seconds()
        if left > 0:
            self.queue.add_after(key, left)
            return
        await self._evict(pod)

    async def _evict(self, pod: Obj) -> None:
        meta = pod["metadata"]
        now = rfc3339(self.clock.now())
        conditions = [c for c in (pod.get("status") or {}).get("conditions") or []
                      if c.get("type") != "DisruptionTarget"]
        conditions.append({"type": "DisruptionTarget", "status": "True",
                           "reason": "DeletionByTaintManager",
                           "message": "Taint manager: deleting due to NoExecute taint",
                           "lastTransitionTime": now})
        try:  # the conditions are written whole: a 409 (the pod changed) retries the key
            await self.client.patch("pods", meta["name"], {
                "metadata": {"resourceVersion": meta["resourceVersion"]},
                "status": {"conditions": conditions}}, namespace=meta["namespace"],
                subresource="status", copy=False)
        except ApiError as e:
            if e.code != 404:
                raise
            return
        await self.events.event(object_reference(pod, api_version="v1", kind="Pod"), NORMAL,
                                "TaintManagerEviction", f"Marking for deletion Pod "
                                f"{meta['namespace']}/{meta['name']}")
        try:
            await self.client.delete("pods", meta["name"], meta["namespace"],
                                     preconditions={"uid": meta["uid"]})
        except ApiError as e:
            if e.code not in (404, 409):  # gone, or replaced by a pod of the same name
                raise

