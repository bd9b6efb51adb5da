"""What the workload controllers share: controller references, pods made from templates, pod
readiness, and kube-controller-manager's expectations (creations and deletions a controller
made that its informer has not shown yet, so that it never acts twice on them)."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from fakeapi.client import ApiClient
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import PODS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, WARNING, EventRecorder, object_reference

Obj = dict[str, Any]
TERMINAL = ("Succeeded", "Failed")


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference with `controller: true`, if any."""
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def controller_uid_index(obj: Obj) -> list[str]:
    """Index function: the uid of the object's controller (shared by every controller that
    finds its objects by owner, so the informers' index is defined once)."""
    ref = controller_ref(obj)
    return [ref["uid"]] if ref and ref.get("uid") else []


def owner_key(kind: str) -> Any:
    """Key function for dependents: `namespace/name` of a controller of kind `kind`."""

    def keys(type_: str, obj: Obj, old: Obj | None) -> list[str]:
        found = []
        for o in (obj, old):
            ref = controller_ref(o) if o is not None else None
            if ref and ref.get("kind") == kind:
                found.append(f"{obj['metadata'].get('namespace', '')}/{ref['name']}")
        return list(dict.fromkeys(found))

    return keys


def reference_to(owner: Obj, api_version: str, kind: str) -> Obj:
    """A controller ownerReference to `owner` (blocking its foreground deletion)."""
    return {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def pod_from_template(template: Obj, *, owner: Obj, api_version: str, kind: str,
                      generate_name: str, extra_labels: dict[str, str] | None = None,
                      annotations: dict[str, str] | None = None) -> Obj:
    """Same as upstream's GetPodFromTemplate: the template's labels, annotations and spec,
    a generated name and a controller reference."""
    meta = template.get("metadata") or {}
    pod: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "generateName": generate_name, "namespace": owner["metadata"]["namespace"],
        "labels": {**(meta.get("labels") or {}), **(extra_labels or {})},
        "ownerReferences": [reference_to(owner, api_version, kind)]},
        "spec": copy.deepcopy(template.get("spec") or {})}
    merged = {**(meta.get("annotations") or {}), **(annotations or {})}
    if merged:
        pod["metadata"]["annotations"] = merged
    if meta.get("finalizers"):
        pod["metadata"]["finalizers"] = list(meta["finalizers"])
    return pod


def is_active(pod: Obj) -> bool:
    """Neither being deleted nor finished."""
    return not pod["metadata"].get("deletionTimestamp") and (
        (pod.get("status") or {}).get("phase") not in TERMINAL)


def is_ready(pod: Obj) -> bool:
    """The pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def deletion_order(pods: list[Obj]) -> list[Obj]:
    """Same order as upstream's ActivePods: unscheduled, pending, not ready, then newest
    first — the pods a scale-down removes first come first."""
    newest = sorted(pods, key=lambda p: (str(p["metadata"].get("creationTimestamp") or ""),
                                         p["metadata"]["name"]), reverse=True)
    return sorted(newest, key=lambda p: (
        1 if (p.get("spec") or {}).get("nodeName") else 0,
        {"Pending": 0, "Unknown": 1, "Running": 2}.get(str((p.get("status") or {}).get(
            "phase")), 0),
        1 if is_ready(p) else 0))


class Expectations:
    """Pods a controller created or deleted, per owner key, until its informer shows them."""

    def __init__(self) -> None:
        self._adds: dict[str, set[str]] = {}
        self._deletes: dict[str, set[str]] = {}

    def created(self, key: str, name: str) -> None:
        """A create of `name` for `key` went through."""
        self._adds.setdefault(key, set()).add(name)

    def deleted(self, key: str, name: str) -> None:
        """A delete of `name` for `key` went through."""
        self._deletes.setdefault(key, set()).add(name)

    def pending(self, key: str, seen: set[str]) -> tuple[set[str], set[str]]:
        """The creations not yet seen and the deletions still seen, given the names the
        informer shows now (what was observed is forgotten)."""
        adds = self._adds.get(key, set()) - seen
        deletes = self._deletes.get(key, set()) & seen
        self._adds[key], self._deletes[key] = adds, deletes
        return adds, deletes

    def forget(self, key: str) -> None:
        """The owner is gone."""
        self._adds.pop(key, None)
        self._deletes.pop(key, None)


async def delete_pod(client: ApiClient, expectations: Expectations, key: str,
                     pod: Obj) -> None:
    """Delete one of `key`'s pods (gone already is fine) and expect it to go."""
    try:
        await client.delete(PODS.resource_id, pod["metadata"]["name"], pod["metadata"]["namespace"])
    except ApiError as e:
        if e.code != 404:
            raise
    expectations.deleted(key, pod["metadata"]["name"])


class PodOwnerController(Controller[str]):
    """The shape every pod-owning controller shares: its owners' informer, the pods indexed
    by controller uid (a pod's change wakes its owner), expectations for its own creations
    and deletions. Keys are `namespace/name`; subclasses implement `sync`."""

    owner_resource = ""
    """The owners' resource id (`replicasets.apps`)."""
    owner_kind = ""
    """The owners' kind, as pods' controller references name it."""
    owner_api_version = ""
    """The owners' apiVersion, as Events about them name it."""
    event_source = ""
    """The Events' source component (default: the component's name)."""
    created_message = "Created pod: {pod}"
    deleted_message = "Deleted pod: {pod}"
    """The Events of a pod created or deleted (`{pod}`, `{owner}`), as upstream's
    RealPodControl words them."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.owners = self.watch(self.owner_resource)
        self.pods = self.watch(PODS.resource_id, owner_key(self.owner_kind))
        self.pods.cache.add_index("controller", controller_uid_index)
        self.expectations = Expectations()
        self.events = EventRecorder(client=self.client, clock=self.clock,
                                    component=self.event_source or ctx.name)

    async def reconcile(self, key: str) -> None:
        """Gather the owner and its pods (those being created or deleted accounted for),
        then `sync`."""
        namespace, _, name = key.partition("/")
        owner = self.owners.cache.get(name, namespace)
        if owner is None:
            self.expectations.forget(key)
            return
        owned = self.pods.cache.by_index("controller", owner["metadata"]["uid"])
        adding, deleting = self.expectations.pending(key, {p["metadata"]["name"] for p in owned})
        active = [p for p in owned if is_active(p) and p["metadata"]["name"] not in deleting]
        await self.sync(key, owner, OwnedPods(owned=owned, active=active, adding=adding,
                                              deleting=deleting))

    async def sync(self, key: str, owner: Obj, pods: OwnedPods) -> None:
        """Converge one owner."""
        raise NotImplementedError

    async def create_pod(self, key: str, pod: Obj) -> Obj:
        """Create one of `key`'s pods and expect it to show; an Event about the owner says
        what came of it."""
        try:
            created = await self.client.create(PODS.resource_id, pod)
        except ApiError as e:
            await self.owner_event(key, WARNING, "FailedCreate", f"Error creating: {e.message}")
            raise
        self.expectations.created(key, created["metadata"]["name"])
        await self.owner_event(key, NORMAL, "SuccessfulCreate",
                               self.created_message.format(pod=created["metadata"]["name"],
                                                           owner=key.partition("/")[2]))
        return created

    async def delete_pod(self, key: str, pod: Obj) -> None:
        """Delete one of `key`'s pods (gone already is fine) and expect it to go."""
        try:
            await delete_pod(self.client, self.expectations, key, pod)
        except ApiError as e:
            await self.owner_event(key, WARNING, "FailedDelete", f"Error deleting: {e.message}")
            raise
        await self.owner_event(key, NORMAL, "SuccessfulDelete",
                               self.deleted_message.format(pod=pod["metadata"]["name"],
                                                           owner=key.partition("/")[2]))

    async def owner_event(self, key: str, type_: str, reason: str, message: str) -> None:
        """Record an Event about the owner `key` (if it is still there)."""
        namespace, _, name = key.partition("/")
        owner = self.owners.cache.get(name, namespace)
        if owner is not None:
            await self.events.event(object_reference(
                owner, api_version=self.owner_api_version, kind=self.owner_kind), type_,
                reason, message)


@dataclasses.dataclass(frozen=True, kw_only=True)
class OwnedPods:
    """An owner's pods as its informer shows them: all, the active ones (running or
    pending, not being deleted by us), and our creations not seen yet."""

    owned: list[Obj]
    active: list[Obj]
    adding: set[str]
    deleting: set[str]
