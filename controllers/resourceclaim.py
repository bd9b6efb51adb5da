"""The ResourceClaim controller: claims from templates for Pods and PodGroups, reservation
cleanup and deallocation, after kube-controller-manager's pkg/controller/resourceclaim.

- A Pod's template claim becomes one ResourceClaim (generateName `<pod>-<claim>-`, the
  `resource.kubernetes.io/pod-claim-name` annotation, the Pod as controlling owner),
  recorded in `status.resourceClaimStatuses`. A claim that exists for the Pod is found
  again (by owner and annotation) and reused, never duplicated, across restarts too.
- With DRAWorkloadResourceClaims, a PodGroup's template claim becomes one ResourceClaim
  owned by the PodGroup, recorded in its status and in the status of each Pod whose claim
  matches it (name, resourceClaimName and resourceClaimTemplateName equal). With the gate
  off, such a matching Pod claim gets no claim at all, as upstream.
- A scheduled Pod's allocated claims get reserved for it, or for its PodGroup when shared.
- `reservedFor` entries of Pods that are gone or done, and of PodGroups that are gone, are
  removed; a claim nobody reserves any more is deallocated (allocation and device status
  cleared, the delete-protection finalizer dropped); a generated claim whose Pod is done is
  deleted (the garbage collector deletes the others once their owner is gone). The special
  claim the scheduler makes for a Pod's DRA-backed extended resources, named in its
  `status.extendedResourceClaimStatus` rather than its spec, is freed the same way.
- A Pod whose ResourceClaim or template does not exist stays Pending with a
  `PodScheduled=False` condition and a Warning Event naming what is missing.

Keys are `(kind, namespace, name)` with kind `pod`, `podgroup` or `claim`.
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import fakeapi.kube.resourceclaim as pc
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.kinds import POD_GROUPS, PODS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_CLAIMS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import WARNING, EventRecorder, object_reference
from fakeapi.runtime.informer import Informer

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str, str]
WORKLOAD_CLAIMS = "DRAWorkloadResourceClaims"
EVENT_SOURCE = "resource_claim"
"""Same as upstream: the source component of this controller's events."""
CREATION_FAILED = "FailedResourceClaimCreation"
"""Same as upstream: a template claim could not be created."""
CLAIM_NOT_FOUND = "ResourceClaimNotFound"
"""A Pod names a ResourceClaim that does not exist (the scheduler waits for it)."""
BY_TEMPLATE = "resourceclaim:template"
BY_GROUP = "resourceclaim:podgroup"
BY_OWNER = "resourceclaim:owner"
BY_CONSUMER = "resourceclaim:consumer"
"""Informer indexes of this controller (names of its own: the informers are shared)."""
DELETED_UIDS_MAX = 500
"""Same as upstream maxUIDCacheEntries: deleted Pods and PodGroups remembered."""


class ResourceClaimController(Controller[Key]):
    """Creates claims from templates for Pods and PodGroups and frees claims nobody uses."""

    workers = 4

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.events = EventRecorder(client=self.client, clock=self.clock,
                                    component=EVENT_SOURCE)
        self.workload_claims = ctx.gates.enabled(WORKLOAD_CLAIMS)
        self.pods = self.watch(PODS.resource_id, self._pod_changed)
        self.claims = self.watch(RESOURCE_CLAIMS.resource_id, self._claim_changed)
        self.templates = self.watch(RESOURCE_CLAIM_TEMPLATES.resource_id, self._template_changed)
        served = {k.resource_id for k in self.client.resources()}
        self.groups: Informer | None = (self.watch(POD_GROUPS.resource_id, self._group_changed)
                                        if POD_GROUPS.resource_id in served else None)
        self.pods.cache.add_index(pc.CLAIMS_INDEX, pc.claims_index)
        self.pods.cache.add_index(BY_TEMPLATE, _template_index)
        self.pods.cache.add_index(BY_GROUP, _pod_group_index)
        self.claims.cache.add_index(BY_OWNER, _owner_index)
        self.claims.cache.add_index(BY_CONSUMER, _consumer_index)
        if self.groups is not None:
            self.groups.cache.add_index(BY_TEMPLATE, _template_index)
        self.deleted: collections.OrderedDict[str, None] = collections.OrderedDict()
        """Uids of Pods and PodGroups seen deleted (upstream's uidCache)."""
        self.created = PendingClaims()
        """Claims this controller created that the informer has not delivered yet."""
        self.missing: dict[str, str] = {}
        """Pod uid → what was last reported missing for it (Event and condition)."""

    # ----- informer handlers: changes → keys ------------------------------------------------

    def _pod_changed(self, type_: str, pod: Obj, old: Obj | None) -> list[Key]:
        # Same as upstream enqueuePod: the special claim of the pod's extended resources is
        # in its status, not its spec, and is released like the others (whatever the gate
        # is now: it may have been made while it was on)
        spec_claims = bool((pod.get("spec") or {}).get("resourceClaims"))
        extended = pc.extended_claim_name(pod)
        if not spec_claims and not extended:
            return []
        meta = pod["metadata"]
        ns = meta.get("namespace", "")
        keys: list[Key] = []
        gone = type_ == "DELETED"
        if gone:
            self._forget(meta["uid"])
            self.missing.pop(meta["uid"], None)
        if gone or pc.pod_done(pod):
            keys += [("claim", ns, n) for n in pc.known_claim_names(pod)]
            if extended:
                keys.append(("claim", ns, extended))
            keys += [("claim", ns, o["metadata"]["name"])
                     for o in self.claims.cache.by_index(BY_CONSUMER, meta["uid"])]
        elif spec_claims and not meta.get("deletionTimestamp"):
            keys.append(("pod", ns, meta["name"]))  # nothing to make for the special claim
        return keys

    def _claim_changed(self, type_: str, claim: Obj, old: Obj | None) -> list[Key]:
        meta = claim["metadata"]
        ns = meta.get("namespace", "")
        self._caught_up(ns, meta["name"])
        keys: list[Key] = []
        if type_ != "DELETED":
            keys.append(("claim", ns, meta["name"]))
        keys += [("pod", ns, p["metadata"]["name"])
                 for p in self.pods.cache.by_index(pc.CLAIMS_INDEX, f"{ns}/{meta['name']}")]
        if type_ == "DELETED" and self.groups is not None:
            owner = pc.controller_uid(claim, pc.POD_GROUP_API_VERSION, "PodGroup")
            keys += [("podgroup", ns, g["metadata"]["name"])
                     for g in self.groups.cache.list(ns) if g["metadata"]["uid"] == owner]
        return keys

    def _template_changed(self, type_: str, template: Obj, old: Obj | None) -> list[Key]:
        if type_ != "ADDED":
            return []
        meta = template["metadata"]
        ns, value = meta.get("namespace", ""), f"{meta.get('namespace', '')}/{meta['name']}"
        keys: list[Key] = [("pod", ns, p["metadata"]["name"])
                           for p in self.pods.cache.by_index(BY_TEMPLATE, value)]
        if self.groups is not None:
            keys += [("podgroup", ns, g["metadata"]["name"])
                     for g in self.groups.cache.by_index(BY_TEMPLATE, value)]
        return keys

    def _group_changed(self, type_: str, group: Obj, old: Obj | None) -> list[Key]:
        meta = group["metadata"]
        ns = meta.get("namespace", "")
        keys: list[Key] = [("pod", ns, p["metadata"]["name"]) for p in
                           self.pods.cache.by_index(BY_GROUP, f"{ns}/{meta['name']}")]
        if type_ == "DELETED":
            self._forget(meta["uid"])
            keys += [("claim", ns, n) for n in pc.known_claim_names(group)]
            keys += [("claim", ns, o["metadata"]["name"])
                     for o in self.claims.cache.by_index(BY_CONSUMER, meta["uid"])]
        elif not meta.get("deletionTimestamp"):
            keys.append(("podgroup", ns, meta["name"]))
        return keys

    def _forget(self, uid: str) -> None:
        self.deleted[uid] = None
        while len(self.deleted) > DELETED_UIDS_MAX:
            self.deleted.popitem(last=False)

    def _caught_up(self, namespace: str, name: str) -> None:
        self.created.delivered(namespace, name)

    # ----- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Key) -> None:
        """Sync one Pod, PodGroup or claim (409s come back through the queue)."""
        kind, namespace, name = key
        try:
            if kind == "pod":
                await self._sync_pod(namespace, name)
            elif kind == "podgroup":
                await self._sync_group(namespace, name)
            else:
                await self._sync_claim(namespace, name)
        except ApiError as e:
            if e.code != 404:
                raise

    # ----- claims lookups (informer cache plus what was just created) -----------------------

    def _claim(self, namespace: str, name: str) -> Obj | None:
        return self.claims.cache.get(name, namespace) or self.created.get(namespace, name)

    def _generated(self, owner: Obj, owner_claim: str) -> Obj | None:
        """A claim generated for this owner's claim (owned by it, with the annotation)."""
        uid = owner["metadata"]["uid"]
        for claim in [*self.claims.cache.by_index(BY_OWNER, uid),
                      *self.created.owned_by(uid)]:
            if (claim["metadata"].get("annotations") or {}).get(
                    pc.POD_CLAIM_ANNOTATION) == owner_claim:
                return claim
        return None

    async def _claim_for(self, owner: Obj, owner_claim: Obj, api_version: str,
                         kind: str) -> tuple[str | None, str]:
        """The generated claim of one template claim of a Pod or PodGroup, created if need
        be: (its name, or None with why not)."""
        name = owner_claim["name"]
        recorded = _status_names(owner)
        if name in recorded:
            current = recorded[name]
            if current is None:
                return None, ""  # the status says no claim is needed
            existing = self._claim(owner["metadata"].get("namespace", ""), current)
            if existing is not None and pc.controlled_by(existing, owner, api_version, kind):
                return current, ""
        claim = self._generated(owner, name)
        if claim is None:
            claim = await self._create_from_template(owner, owner_claim, api_version, kind)
            if claim is None:
                template = owner_claim["resourceClaimTemplateName"]
                return None, _template_missing(template)
        return claim["metadata"]["name"], ""

    async def _create_from_template(self, owner: Obj, owner_claim: Obj, api_version: str,
                                    kind: str) -> Obj | None:
        meta = owner["metadata"]
        ns = meta.get("namespace", "")
        template = self.templates.cache.get(owner_claim["resourceClaimTemplateName"], ns)
        if template is None:
            return None
        spec = template.get("spec") or {}
        template_meta = spec.get("metadata") or {}
        claim_meta: Obj = {
            "generateName": pc.generate_name(meta["name"], owner_claim["name"]),
            "namespace": ns,
            "annotations": {**(template_meta.get("annotations") or {}),
                            pc.POD_CLAIM_ANNOTATION: owner_claim["name"]},
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": meta["name"],
                                 "uid": meta["uid"], "controller": True,
                                 "blockOwnerDeletion": True}],
        }
        if template_meta.get("labels"):
            claim_meta["labels"] = dict(template_meta["labels"])
        claim = await self.client.create(RESOURCE_CLAIMS.resource_id, {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": claim_meta,
            "spec": spec.get("spec") or {}}, ns, copy=False)
        if self.claims.cache.get(claim["metadata"]["name"], ns) is None:
            self.created.add(claim)
        log.debug("created ResourceClaim %s/%s for %s %s", ns, claim["metadata"]["name"], kind,
                  meta["name"])
        return claim

    # ----- Pods --------------------------------------------------------------------------------

    def _pod_group(self, pod: Obj) -> tuple[Obj | None, bool]:
        """(the Pod's PodGroup, whether the Pod waits for it): a named PodGroup that does not
        exist yet keeps its template claims waiting, since they may be the group's."""
        name = pc.pod_group_name(pod)
        if not name or self.groups is None:
            return None, False
        group = self.groups.cache.get(name, pod["metadata"].get("namespace", ""))
        return group, group is None

    async def _sync_pod(self, namespace: str, name: str) -> None:
        pod = self.pods.cache.get(name, namespace)
        if pod is None or pod["metadata"].get("deletionTimestamp") or pc.pod_done(pod):
            return  # a pod that will not run (again) needs no claims
        pod_claims = (pod.get("spec") or {}).get("resourceClaims") or []
        group, waiting = self._pod_group(pod)
        recorded = _status_names(pod)
        updates: dict[str, str] = {}
        missing: list[str] = []
        for pod_claim in pod_claims:
            claim_name = pod_claim.get("resourceClaimName")
            if claim_name:
                if self._claim(namespace, claim_name) is None:
                    missing.append(f'resourceclaim.resource.k8s.io "{claim_name}" not found')
                continue
            if not pod_claim.get("resourceClaimTemplateName") or waiting:
                continue
            group_claim = pc.matching_group_claim(pod_claim, group)
            if group is not None and group_claim is not None:
                if not self.workload_claims:
                    continue  # same as upstream: no per-Pod claim for a group's claim
                shared = self._group_claim_name(group, group_claim)
                template = str(group_claim.get("resourceClaimTemplateName"))
                if shared is None and self.templates.cache.get(template, namespace) is None:
                    missing.append(_template_missing(template))  # the group's claim waits
                elif shared and recorded.get(pod_claim["name"]) != shared:
                    updates[pod_claim["name"]] = shared
                continue
            generated, why = await self._claim_for(pod, pod_claim, "v1", "Pod")
            if generated is None:
                if why:
                    missing.append(why)
                continue
            if recorded.get(pod_claim["name"], "") != generated:
                updates[pod_claim["name"]] = generated
        if updates:
            await self.client.patch(PODS.resource_id, name, {"status": {"resourceClaimStatuses": [
                {"name": k, "resourceClaimName": v} for k, v in sorted(updates.items())]}},
                namespace=namespace, patch_type="strategic", subresource="status", copy=False)
        await self._report_missing(pod, missing)
        if (pod.get("spec") or {}).get("nodeName"):
            await self._reserve_for_scheduled(pod, group, updates)

    def _group_claim_name(self, group: Obj, group_claim: Obj) -> str | None:
        """The claim a PodGroup claim uses: named, recorded in its status, or generated."""
        if group_claim.get("resourceClaimName"):
            return str(group_claim["resourceClaimName"])
        recorded = _status_names(group)
        if recorded.get(group_claim["name"]):
            return recorded[group_claim["name"]]
        claim = self._generated(group, group_claim["name"])
        return None if claim is None else str(claim["metadata"]["name"])

    async def _report_missing(self, pod: Obj, missing: list[str]) -> None:
        """Event and PodScheduled condition while a claim or template is missing; the
        condition goes once nothing is (the scheduler owns it from then on)."""
        uid = pod["metadata"]["uid"]
        message = "; ".join(missing)
        current = _pod_condition(pod, "PodScheduled")
        ours = current is not None and _reported_by_us(current)
        if missing and self.missing.get(uid) != message:
            ref = object_reference(pod, api_version="v1", kind="Pod")
            for why in missing:
                reason = CLAIM_NOT_FOUND if why.startswith("resourceclaim.") else CREATION_FAILED
                await self.events.event(ref, WARNING, reason, _event_message(pod, why))
        if missing:
            self.missing[uid] = message
        else:
            self.missing.pop(uid, None)
        if (pod.get("spec") or {}).get("nodeName"):
            return
        meta = pod["metadata"]
        if missing and (current is None or (ours and current.get("message") != message)):
            condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                         "message": message, "lastProbeTime": None,
                         "lastTransitionTime": rfc3339(self.clock.now())}
            await self.client.patch(PODS.resource_id, meta["name"],
                                    {"status": {"conditions": [condition]}},
                                    namespace=meta.get("namespace", ""), patch_type="strategic",
                                    subresource="status")
        elif not missing and ours:
            # only the condition seen (a precondition): the scheduler may have written its own
            await self.client.patch(
                PODS.resource_id, meta["name"],
                {"metadata": {"resourceVersion": meta["resourceVersion"]},
                 "status": {"conditions": [{"$patch": "delete", "type": "PodScheduled"}]}},
                namespace=meta.get("namespace", ""), patch_type="strategic",
                subresource="status")

    async def _reserve_for_scheduled(self, pod: Obj, group: Obj | None,
                                     updates: dict[str, str]) -> None:
        """Same as upstream: a Pod scheduled without its allocated claims reserved (by a
        scheduler unaware of them, or by hand) gets them reserved, for its PodGroup when
        the claim is the group's."""
        namespace = pod["metadata"].get("namespace", "")
        for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
            target = self._consumer(pod, pod_claim, group, updates.get(pod_claim["name"]))
            if target is None:
                continue
            name, consumer, shared = target
            claim = self.claims.cache.get(name, namespace)
            if claim is None or not pc.allocated(claim):
                continue
            api_version, kind = (pc.POD_GROUP_API_VERSION, "PodGroup") if shared else ("v1", "Pod")
            if not pod_claim.get("resourceClaimName") and not pc.controlled_by(
                    claim, consumer, api_version, kind):
                continue
            if pc.reserved_for(claim, consumer["metadata"]["uid"]) or \
                    not pc.can_be_reserved(claim):
                continue
            claim = _copy(claim)
            claim["status"]["reservedFor"] = [*pc.reservations(claim),
                                              pc.consumer_ref(consumer, group=shared)]
            await self.client.update(RESOURCE_CLAIMS.resource_id, claim, subresource="status")

    def _consumer(self, pod: Obj, pod_claim: Obj, group: Obj | None,
                  created: str | None) -> tuple[str, Obj, bool] | None:
        """(claim name, who it is reserved for, whether that is the PodGroup) of one Pod
        claim, None while its claim is not known."""
        group_claim = pc.matching_group_claim(pod_claim, group)
        if group is not None and group_claim is not None and self.workload_claims:
            name = self._group_claim_name(group, group_claim)
            return None if not name else (name, group, True)
        if created:
            return created, pod, False
        try:
            name, _ = pc.claim_name(pod, pod_claim)
        except (pc.NotCreatedYet, ValueError):
            return None
        return None if not name else (name, pod, False)

    # ----- PodGroups ---------------------------------------------------------------------------

    async def _sync_group(self, namespace: str, name: str) -> None:
        if self.groups is None or not self.workload_claims:
            return
        group = self.groups.cache.get(name, namespace)
        if group is None or group["metadata"].get("deletionTimestamp"):
            return
        recorded = _status_names(group)
        updates: dict[str, str] = {}
        for group_claim in (group.get("spec") or {}).get("resourceClaims") or []:
            if not group_claim.get("resourceClaimTemplateName"):
                continue
            generated, why = await self._claim_for(group, group_claim,
                                                   pc.POD_GROUP_API_VERSION, "PodGroup")
            if generated is None:
                if why:
                    await self.events.event(
                        object_reference(group, api_version=pc.POD_GROUP_API_VERSION,
                                         kind="PodGroup"),
                        WARNING, CREATION_FAILED,
                        f"PodGroupResourceClaim {group_claim['name']}: {why}")
                continue
            if recorded.get(group_claim["name"], "") != generated:
                updates[group_claim["name"]] = generated
        if updates:
            statuses = {**recorded, **updates}
            await self.client.patch(POD_GROUPS.resource_id, name, {
                "metadata": {"resourceVersion": group["metadata"]["resourceVersion"]},
                "status": {"resourceClaimStatuses": [
                    {"name": k, **({"resourceClaimName": v} if v else {})}
                    for k, v in statuses.items()]}},
                namespace=namespace, subresource="status")

    # ----- claims ------------------------------------------------------------------------------

    async def _sync_claim(self, namespace: str, name: str) -> None:
        claim = self.claims.cache.get(name, namespace)
        if claim is None:
            return
        reserved = pc.reservations(claim)
        valid = [ref for ref in reserved if await self._still_reserved(namespace, ref)]
        finalizers = claim["metadata"].get("finalizers") or []
        protected = pc.DELETE_PROTECTION in finalizers
        if len(valid) < len(reserved):
            claim = _copy(claim)
            status = claim["status"]
            if valid:
                status["reservedFor"] = valid
            else:
                status.pop("reservedFor", None)
                if protected:
                    # same as upstream: the last consumer is gone, so deallocate
                    status.pop("allocation", None)
                    status.pop("devices", None)
            claim = await self.client.update(RESOURCE_CLAIMS.resource_id, claim,
                                             subresource="status")
            if protected and not pc.allocated(claim):
                await self._drop_finalizer(claim)
        elif protected and not valid and claim["metadata"].get("deletionTimestamp"):
            if pc.allocated(claim):
                claim = _copy(claim)
                claim["status"].pop("allocation", None)
                claim["status"].pop("devices", None)
                claim = await self.client.update(RESOURCE_CLAIMS.resource_id, claim,
                                                 subresource="status")
            await self._drop_finalizer(claim)
        if not valid:
            await self._delete_if_unused(claim)

    async def _still_reserved(self, namespace: str, ref: Obj) -> bool:
        """Whether a reservedFor entry is still valid: its Pod exists (same uid) and is not
        done, its PodGroup exists; entries of other consumers are kept."""
        if pc.is_pod_ref(ref):
            informer, resource = self.pods, PODS.resource_id
        elif pc.is_pod_group_ref(ref) and self.groups is not None and self.workload_claims:
            informer, resource = self.groups, POD_GROUPS.resource_id
        else:
            return True
        if ref.get("uid") in self.deleted:
            return False
        obj = informer.cache.get(ref.get("name", ""), namespace)
        if obj is None:
            # not (yet?) in the cache: make sure with the API before dropping a reservation
            try:
                obj = await self.client.get(resource, ref.get("name", ""), namespace)
            except ApiError as e:
                if e.code != 404:
                    raise
                return False
        if obj["metadata"].get("uid") != ref.get("uid"):
            return False
        return not (resource == PODS.resource_id and pc.pod_done(obj))

    async def _drop_finalizer(self, claim: Obj) -> None:
        claim = _copy(claim)
        claim["metadata"]["finalizers"] = [f for f in claim["metadata"].get("finalizers") or []
                                           if f != pc.DELETE_PROTECTION]
        await self.client.update(RESOURCE_CLAIMS.resource_id, claim, copy=False)

    async def _delete_if_unused(self, claim: Obj) -> None:
        """Same as upstream: an unreserved claim generated for a Pod that will not run any
        more (done, or replaced) is deleted now rather than when the Pod goes."""
        meta = claim["metadata"]
        if meta.get("deletionTimestamp"):
            return
        owner_uid = pc.controller_uid(claim, "v1", "Pod")
        if not owner_uid:
            return
        for ref in meta.get("ownerReferences") or []:
            if ref.get("uid") != owner_uid:
                continue
            pod = self.pods.cache.get(ref.get("name", ""), meta.get("namespace", ""))
            if pod is not None and (pod["metadata"]["uid"] != owner_uid or pc.pod_done(pod)):
                await self.client.delete(RESOURCE_CLAIMS.resource_id, meta["name"],
                                         meta.get("namespace", ""))
            return


# ----- helpers ---------------------------------------------------------------------------------


class PendingClaims:
    """Claims created but not delivered by the informer yet (upstream's mutation cache): a
    retry that runs before the informer catches up finds them instead of making another."""

    def __init__(self) -> None:
        self._by_name: dict[tuple[str, str], Obj] = {}
        self._by_owner: dict[str, set[tuple[str, str]]] = {}

    def add(self, claim: Obj) -> None:
        """Remember a claim just created."""
        key = (claim["metadata"].get("namespace", ""), claim["metadata"]["name"])
        self._by_name[key] = claim
        for uid in pc.owner_refs(claim):
            self._by_owner.setdefault(uid, set()).add(key)

    def get(self, namespace: str, name: str) -> Obj | None:
        """A remembered claim by name."""
        return self._by_name.get((namespace, name))

    def owned_by(self, uid: str) -> list[Obj]:
        """Remembered claims whose controlling owner has this uid."""
        return [self._by_name[k] for k in sorted(self._by_owner.get(uid, ()))]

    def delivered(self, namespace: str, name: str) -> None:
        """The informer has the claim now: forget it."""
        claim = self._by_name.pop((namespace, name), None)
        if claim is None:
            return
        for uid in pc.owner_refs(claim):
            keys = self._by_owner.get(uid)
            if keys is not None:
                keys.discard((namespace, name))
                if not keys:
                    del self._by_owner[uid]

    def __len__(self) -> int:
        return len(self._by_name)


def _template_missing(template: str) -> str:
    """Same as upstream's error text for a template that does not exist."""
    return (f'resource claim template "{template}": '
            f'resourceclaimtemplate.resource.k8s.io "{template}" not found')


def _status_names(owner: Obj) -> dict[str, str | None]:
    """`status.resourceClaimStatuses` as {claim name in the owner: generated claim name}."""
    return {s["name"]: s.get("resourceClaimName")
            for s in (owner.get("status") or {}).get("resourceClaimStatuses") or []
            if s.get("name")}


def _copy(claim: Obj) -> Obj:
    """A copy to write: metadata and status copied one level (the client copies the rest)."""
    return {**claim, "metadata": dict(claim["metadata"]),
            "status": dict(claim.get("status") or {})}


def _pod_condition(pod: Obj, type_: str) -> Obj | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == type_:
            return dict(condition)
    return None


def _reported_by_us(condition: Obj) -> bool:
    """Whether a PodScheduled condition is one this controller wrote (a missing claim)."""
    message = str(condition.get("message") or "")
    return (condition.get("status") == "False" and condition.get("reason") == "Unschedulable"
            and message.endswith(" not found") and "resourceclaim" in message)


def _event_message(pod: Obj, why: str) -> str:
    """Same as upstream for templates: `PodResourceClaim <name>: <why>`."""
    for pod_claim in (pod.get("spec") or {}).get("resourceClaims") or []:
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            if pod_claim.get(key) and f'"{pod_claim[key]}"' in why:
                return f"PodResourceClaim {pod_claim['name']}: {why}"
    return why


def _template_index(owner: Obj) -> list[str]:
    ns = owner["metadata"].get("namespace", "")
    return [f"{ns}/{t}" for t in pc.template_names(owner)]


def _pod_group_index(pod: Obj) -> list[str]:
    name = pc.pod_group_name(pod)
    return [f"{pod['metadata'].get('namespace', '')}/{name}"] if name else []


def _owner_index(claim: Obj) -> list[str]:
    return list(pc.owner_refs(claim))


def _consumer_index(claim: Obj) -> list[str]:
    return [str(r["uid"]) for r in pc.reservations(claim) if r.get("uid")]
