"""The DaemonSet controller: one pod of the template on every node that its node selector and
the nodes' taints allow, pinned to the node by affinity as upstream does (the scheduler then
binds it), and the status `kubectl get ds` shows, as kube-controller-manager's daemonset
controller does."""

from __future__ import annotations

import copy
from typing import Any

from controllers.owners import (
    OwnedPods,
    PodOwnerController,
    is_ready,
    pod_from_template,
)
from fakeapi.kube.taints import untolerated
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.registry.kinds import DAEMON_SETS, NODES
from fakeapi.runtime.component import ComponentContext

Obj = dict[str, Any]
# Same as upstream's daemon pods: they tolerate what a node-level agent must survive.
DAEMON_TOLERATIONS = [
    {"key": key, "operator": "Exists", "effect": effect} for key, effect in (
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"))]


def _target_node(pod: Obj) -> str:
    """The node a daemon pod is for: its nodeName, else its metadata.name affinity."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""


def daemon_pod_template(template: Obj, node: str) -> Obj:
    """The template pinned to `node` (upstream's ReplaceDaemonSetPodNodeNameNodeAffinity)
    with the daemon tolerations added."""
    out = copy.deepcopy(template)
    spec = out.setdefault("spec", {})
    affinity = spec.setdefault("affinity", {})
    affinity["nodeAffinity"] = {**(affinity.get("nodeAffinity") or {}),
                                "requiredDuringSchedulingIgnoredDuringExecution": {
                                    "nodeSelectorTerms": [{"matchFields": [{
                                        "key": "metadata.name", "operator": "In",
                                        "values": [node]}]}]}}
    tolerations = list(spec.get("tolerations") or [])
    for toleration in DAEMON_TOLERATIONS:
        if toleration not in tolerations:
            tolerations.append(toleration)
    spec["tolerations"] = tolerations
    return out


class DaemonSetController(PodOwnerController):
    """Keys are `namespace/name` of DaemonSets; a node's change wakes every DaemonSet, a
    pod's change wakes its owner."""

    owner_resource = DAEMON_SETS.resource_id
    owner_kind = "DaemonSet"
    owner_api_version = "apps/v1"

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.nodes = self.watch(NODES.resource_id, self._every_set)

    def _every_set(self, type_: str, node: Obj, old: Obj | None) -> list[str]:
        return [f"{ds['metadata']['namespace']}/{ds['metadata']['name']}"
                for ds in self.owners.cache.list()]

    def _eligible(self, ds: Obj, node: Obj) -> bool:
        spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        labels = node["metadata"].get("labels") or {}
        if not label_selector_matches({"matchLabels": spec.get("nodeSelector") or {}}, labels):
            return False
        tolerations = [*(spec.get("tolerations") or []), *DAEMON_TOLERATIONS]
        return untolerated((node.get("spec") or {}).get("taints") or [], tolerations) is None

    async def sync(self, key: str, ds: Obj, pods: OwnedPods) -> None:
        """One pod per eligible node; none elsewhere; then the status."""
        name = ds["metadata"]["name"]
        active, adding = pods.active, pods.adding
        by_node: dict[str, list[Obj]] = {}
        for pod in active:
            by_node.setdefault(_target_node(pod), []).append(pod)
        eligible = [n["metadata"]["name"] for n in self.nodes.cache.list()
                    if self._eligible(ds, n)]
        if not ds["metadata"].get("deletionTimestamp") and not adding:
            template = (ds.get("spec") or {}).get("template") or {}
            for node in eligible:
                if not by_node.get(node):
                    await self.create_pod(key, pod_from_template(
                        daemon_pod_template(template, node), owner=ds, api_version="apps/v1",
                        kind="DaemonSet", generate_name=name + "-"))
            for node, on_node in by_node.items():
                extra = on_node if node not in eligible else on_node[1:]
                for pod in extra:
                    await self.delete_pod(key, pod)
        scheduled = [n for n in eligible if by_node.get(n)]
        ready = sum(1 for n in scheduled if any(is_ready(p) for p in by_node[n]))
        status = {"desiredNumberScheduled": len(eligible),
                  "currentNumberScheduled": len(scheduled),
                  "numberMisscheduled": sum(1 for n in by_node if n not in eligible),
                  "numberReady": ready, "updatedNumberScheduled": len(scheduled),
                  "numberAvailable": ready,
                  "numberUnavailable": max(len(eligible) - ready, 0),
                  "observedGeneration": ds["metadata"].get("generation", 1)}
        status = {k: v for k, v in status.items() if v or k in (
            "desiredNumberScheduled", "currentNumberScheduled", "numberMisscheduled",
            "numberReady")}
        if status != (ds.get("status") or {}):
            await self.client.update(DAEMON_SETS.resource_id, {**ds, "status": status},
                                     subresource="status")

