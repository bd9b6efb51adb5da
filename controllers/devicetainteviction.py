"""The device-taint eviction controller (DRADeviceTaints, DRADeviceTaintRules), after
kube-controller-manager's pkg/controller/devicetainteviction.

A NoExecute taint on an allocated device (the device's own, or a DeviceTaintRule's) evicts
the scheduled Pods that use the claim, unless the claim's allocation tolerates it:
`tolerationSeconds` delays the eviction from the taint's `timeAdded` (on the injected
clock), a toleration without it keeps the Pod. Eviction is upstream's: a `DisruptionTarget`
condition, a `DeviceTaintManagerEviction` Event, then a deletion (which the Pod's kubelet
finishes when it has one). Each DeviceTaintRule gets an `EvictionInProgress` condition
saying what it did: pods pending eviction, done, not started, or, for `effect: None`, what
it would do; updated at most every 10 seconds while an eviction runs.

Keys are `("pod", namespace, name)` and `("rule", "", name)`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

import fakeapi.kube.resourceclaim as pc
from controllers.devicetaints import rule_selects, rule_taint
from fakeapi.kube import taints
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.kinds import DEVICE_TAINT_RULES, PODS, RESOURCE_CLAIMS, RESOURCE_SLICES
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, EventRecorder, object_reference
from fakeapi.runtime.informer import Informer

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str, str]
CONDITION = "EvictionInProgress"
BY_POOL = "devicetainteviction:pool"
SLICES_BY_POOL = "devicetainteviction:slice-pool"
"""Informer indexes of this controller: allocated claims and slices by `driver/pool`."""
RULE_STATUS_PERIOD = 10.0
"""Same as upstream ruleStatusPeriod: seconds between rule status updates while evicting."""
EVICTION_REASON = "DeviceTaintManagerEviction"
DISRUPTION = {"type": "DisruptionTarget", "status": "True",
              "reason": "DeletionByDeviceTaintManager",
              "message": "Device Taint manager: deleting due to NoExecute taint"}
"""Same as upstream: the condition a Pod gets before it is deleted."""


@dataclasses.dataclass(frozen=True)
class Eviction:
    """When a Pod (or a claim's users) must go, and the rules that cause it."""

    when: dt.datetime
    rules: frozenset[str]
    """Names of the DeviceTaintRules among the reasons (a slice's own taint has none)."""

    def join(self, other: Eviction | None) -> Eviction:
        """The earlier time, all the reasons."""
        if other is None:
            return self
        return Eviction(min(self.when, other.when), self.rules | other.rules)


class DeviceTaintEvictionController(Controller[Key]):
    """Evicts the users of devices with an untolerated NoExecute taint; reports on rules."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.events = EventRecorder(client=self.client, clock=self.clock, component=ctx.name)
        self.pods = self.watch(PODS.resource_id, self._pod_changed)
        self.claims = self.watch(RESOURCE_CLAIMS.resource_id, self._claim_changed)
        self.slices = self.watch(RESOURCE_SLICES.resource_id, self._slice_changed)
        served = {k.resource_id for k in self.client.resources()}
        rules = DEVICE_TAINT_RULES.resource_id
        self.rules: Informer | None = (self.watch(rules, self._rule_changed)
                                       if rules in served else None)
        self.pods.cache.add_index(pc.CLAIMS_INDEX, pc.claims_index)
        self.claims.cache.add_index(BY_POOL, _allocated_pools)
        self.slices.cache.add_index(SLICES_BY_POOL, _slice_pool)
        self.evicted: dict[str, int] = {}
        """Rule uid → pods evicted because of it since the controller started."""
        self.pending: set[tuple[str, str]] = set()
        """Pods waiting for their eviction time (a cancel gets an Event)."""
        self.deleting: set[str] = set()
        """Uids of Pods deleted here whose deletion the informer has not delivered yet."""

    # ----- informer handlers: changes → keys ------------------------------------------------

    def _pod_changed(self, type_: str, pod: Obj, old: Obj | None) -> list[Key]:
        meta = pod["metadata"]
        if type_ == "DELETED":
            self.pending.discard((meta.get("namespace", ""), meta["name"]))
            self.deleting.discard(meta["uid"])
            return []
        if meta.get("deletionTimestamp"):
            self.deleting.discard(meta["uid"])  # going: no longer counted as pending anyway
        if old is not None and _claim_view(old) == _claim_view(pod):
            return []  # e.g. the condition this controller added
        return [("pod", meta.get("namespace", ""), meta["name"])]

    def _claim_changed(self, type_: str, claim: Obj, old: Obj | None) -> list[Key]:
        return self._users(claim) + (self._users(old) if old is not None else [])

    def _slice_changed(self, type_: str, slice_: Obj, old: Obj | None) -> list[Key]:
        if old is not None and _no_execute(old) == _no_execute(slice_):
            return []
        pool = _slice_pool(slice_)[0]
        return [k for c in self.claims.cache.by_index(BY_POOL, pool) for k in self._users(c)]

    def _rule_changed(self, type_: str, rule: Obj, old: Obj | None) -> list[Key]:
        keys: list[Key] = []
        if type_ == "DELETED":
            self.evicted.pop(rule["metadata"].get("uid", ""), None)
        elif old is None or old.get("spec") != rule.get("spec"):
            keys.append(("rule", "", rule["metadata"]["name"]))
        if old is not None and old.get("spec") == rule.get("spec"):
            return keys
        for claim in self.claims.cache.list():
            if any(_selected(r, claim) for r in (rule, old) if r is not None):
                keys += self._users(claim)
        return keys

    def _users(self, claim: Obj) -> list[Key]:
        ns = claim["metadata"].get("namespace", "")
        users = self.pods.cache.by_index(pc.CLAIMS_INDEX, f"{ns}/{claim['metadata']['name']}")
        return [("pod", ns, p["metadata"]["name"]) for p in users]

    # ----- what must go, and when --------------------------------------------------------------

    def _rule_list(self) -> list[Obj]:
        return self.rules.cache.list() if self.rules is not None else []

    def _device(self, driver: str, pool: str, name: str) -> Obj | None:
        """A published device of the pool's newest generation."""
        slices = self.slices.cache.by_index(SLICES_BY_POOL, f"{driver}/{pool}")
        if not slices:
            return None
        newest = max(int(((s.get("spec") or {}).get("pool") or {}).get("generation") or 0)
                     for s in slices)
        for s in slices:
            spec = s.get("spec") or {}
            if int((spec.get("pool") or {}).get("generation") or 0) != newest:
                continue
            for device in spec.get("devices") or []:
                if device.get("name") == name:
                    return dict(device)
        return None

    def claim_eviction(self, claim: Obj, rules: Iterable[Obj] | None = None) -> Eviction | None:
        """Same as upstream claimEvictionTime: the earliest `timeAdded + tolerationSeconds`
        of the NoExecute taints on the claim's devices that its results do not tolerate for
        ever; None when nothing evicts its users."""
        allocation = (claim.get("status") or {}).get("allocation") or {}
        rule_objs = list(self._rule_list() if rules is None else rules)
        eviction: Eviction | None = None
        for result in (allocation.get("devices") or {}).get("results") or []:
            driver, pool, name = (result.get("driver", ""), result.get("pool", ""),
                                  result.get("device", ""))
            found: list[tuple[Obj, str]] = []
            device = self._device(driver, pool, name)
            if device is not None:
                found += [(t, "") for t in device.get("taints") or []]
            found += [(rule_taint(r), r["metadata"]["name"]) for r in rule_objs
                      if rule_selects(r, driver, pool, name)]
            for taint, rule in found:
                if taint.get("effect") != taints.NO_EXECUTE:
                    continue
                start = (parse_time(taint["timeAdded"]) if taint.get("timeAdded")
                         else self.clock.now())
                try:
                    delay = taints.toleration_seconds(result.get("tolerations") or [], taint)
                except LookupError:
                    delay = 0.0
                if delay is None:
                    continue  # tolerated for ever
                evict = Eviction(start + dt.timedelta(seconds=delay),
                                 frozenset({rule}) if rule else frozenset())
                eviction = evict.join(eviction)
        return eviction

    def pod_eviction(self, pod: Obj, rules: Iterable[Obj] | None = None) -> Eviction | None:
        """Same as upstream podEvictionTime: a scheduled Pod goes at the earliest eviction of
        the allocated claims reserved for it (or for its PodGroup)."""
        spec = pod.get("spec") or {}
        meta = pod["metadata"]
        if not spec.get("nodeName") or meta.get("deletionTimestamp") or pc.pod_done(pod):
            return None
        ns = meta.get("namespace", "")
        group = pc.pod_group_name(pod)
        eviction: Eviction | None = None
        for pod_claim in spec.get("resourceClaims") or []:
            try:
                name, must_own = pc.claim_name(pod, pod_claim)
            except (pc.NotCreatedYet, ValueError):
                continue
            claim = self.claims.cache.get(name, ns) if name else None
            if claim is None or not pc.allocated(claim):
                continue
            if must_own and pc.controller_uid(claim, "v1", "Pod") != meta["uid"] and not (
                    group and pc.controller_uid(claim, pc.POD_GROUP_API_VERSION, "PodGroup")):
                continue  # same as upstream IsForPod (or the Pod's group's generated claim)
            if not (pc.reserved_for(claim, meta["uid"]) or any(
                    pc.is_pod_group_ref(r) and r.get("name") == group
                    for r in pc.reservations(claim))):
                continue  # not the Pod using this claim
            evict = self.claim_eviction(claim, rules)
            if evict is not None:
                eviction = evict.join(eviction)
        return eviction

    # ----- reconcile ---------------------------------------------------------------------------

    async def reconcile(self, key: Key) -> None:
        """Evict a Pod whose time has come (or wait for it); update a rule's condition."""
        kind, namespace, name = key
        if kind == "rule":
            await self._sync_rule(name)
            return
        pod = self.pods.cache.get(name, namespace)
        eviction = None if pod is None else self.pod_eviction(pod)
        if pod is None or eviction is None:
            if (namespace, name) in self.pending:
                self.pending.discard((namespace, name))
                if pod is not None:
                    await self.events.event(_pod_ref(pod), NORMAL, EVICTION_REASON,
                                            "Cancelling deletion")
            return
        for rule in eviction.rules:
            self.queue.add(("rule", "", rule))  # pods pending: the rule's status may change
        delay = (eviction.when - self.clock.now()).total_seconds()
        if delay > 0:
            self.pending.add((namespace, name))
            self.queue.add_after(key, delay)
            return
        self.pending.discard((namespace, name))
        await self._evict(pod, eviction)

    async def _evict(self, pod: Obj, eviction: Eviction) -> None:
        """Same as upstream addConditionAndDeletePod: condition, Event, deletion."""
        meta = pod["metadata"]
        ns = meta.get("namespace", "")
        try:
            current = await self.client.get(PODS.resource_id, meta["name"], ns)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        if current["metadata"]["uid"] != meta["uid"] or current["metadata"].get(
                "deletionTimestamp"):
            return  # replaced, or already going
        await self.events.event(_pod_ref(current), NORMAL, EVICTION_REASON,
                                "Marking for deletion")
        conditions = (current.get("status") or {}).get("conditions") or []
        if not any(all(c.get(k) == v for k, v in DISRUPTION.items()) for c in conditions):
            condition = {**DISRUPTION, "lastTransitionTime": rfc3339(self.clock.now())}
            await self.client.patch(PODS.resource_id, meta["name"],
                                    {"status": {"conditions": [condition]}}, namespace=ns,
                                    patch_type="strategic", subresource="status")
        try:
            await self.client.delete(PODS.resource_id, meta["name"], ns)
        except ApiError as e:
            if e.code != 404:
                raise
            return
        if self.pods.cache.get(meta["name"], ns) is not None:
            self.deleting.add(meta["uid"])
        log.info("%s: evicted pod %s/%s", self.name, ns, meta["name"])
        for name in eviction.rules:
            rule = self.rules.cache.get(name) if self.rules is not None else None
            if rule is not None:
                uid = rule["metadata"]["uid"]
                self.evicted[uid] = self.evicted.get(uid, 0) + 1
                self.queue.add_after(("rule", "", name), RULE_STATUS_PERIOD)

    # ----- DeviceTaintRule status --------------------------------------------------------------

    async def _sync_rule(self, name: str) -> None:
        rule = self.rules.cache.get(name) if self.rules is not None else None
        if rule is None:
            return
        meta = rule["metadata"]
        existing = next((c for c in (rule.get("status") or {}).get("conditions") or []
                         if c.get("type") == CONDITION), None)
        now = self.clock.now()
        if existing is not None and existing.get("observedGeneration") == meta.get("generation"):
            since = (now - parse_time(existing["lastTransitionTime"])).total_seconds()
            if since < RULE_STATUS_PERIOD:
                self.queue.add_after(("rule", "", name), RULE_STATUS_PERIOD - since)
                return
        condition = self._rule_condition(rule)
        if existing is not None and {k: v for k, v in existing.items()
                                     if k != "lastTransitionTime"} == condition:
            return
        condition["lastTransitionTime"] = rfc3339(now)
        others = [c for c in (rule.get("status") or {}).get("conditions") or []
                  if c.get("type") != CONDITION]
        await self.client.update(DEVICE_TAINT_RULES.resource_id, {**rule, "status": {
            **(rule.get("status") or {}), "conditions": [*others, condition]}},
            subresource="status")

    def _rule_condition(self, rule: Obj) -> Obj:
        """Same as upstream's EvictionInProgress condition and messages."""
        meta = rule["metadata"]
        effect = rule_taint(rule).get("effect")
        condition: Obj = {"type": CONDITION, "status": "False", "reason": "",
                          "message": "", "observedGeneration": meta.get("generation", 1)}
        evicted = self.evicted.get(meta.get("uid", ""), 0)
        if effect == taints.NO_EXECUTE:
            pods, namespaces = self._pending_for(rule, self._rule_list())
            if pods:
                condition.update(status="True", reason="PodsPendingEviction", message=(
                    f"{_count(pods, 'pod needs', 'pods need')} to be evicted in "
                    f"{_namespaces(namespaces)}."))
            else:
                condition["reason"] = "Completed" if evicted else "NotStarted"
        elif effect == "None":
            simulated = {**rule, "spec": {**rule["spec"], "taint": {
                **rule_taint(rule), "effect": taints.NO_EXECUTE}}}
            rules = [r for r in self._rule_list() if r["metadata"]["name"] != meta["name"]]
            pods, namespaces = self._pending_for(simulated, [*rules, simulated])
            published, allocated = self._selected_devices(rule)
            condition.update(reason="NoEffect", message=(
                f"{_count(published, 'published device', 'published devices')} selected. "
                f"{_count(allocated, 'allocated device', 'allocated devices')} selected. "
                f"{_count(pods, 'pod', 'pods')} would be evicted in "
                f"{_namespaces(namespaces, trailing=' ')}if the effect was NoExecute. This "
                "information will not be updated again. Recreate the DeviceTaintRule to "
                "trigger an update."))
        else:
            condition.update(reason="OtherEffect",
                             message="Eviction only happens for the NoExecute effect.")
        if evicted:
            condition["message"] = " ".join(filter(None, [
                condition["message"],
                f"{_count(evicted, 'pod', 'pods')} evicted since starting the controller."]))
        return condition

    def _pending_for(self, rule: Obj, rules: list[Obj]) -> tuple[int, int]:
        """(pods, namespaces) that must go because of this rule."""
        name = rule["metadata"]["name"]
        namespaces: set[str] = set()
        pods = 0
        for pod in self.pods.cache.list():
            if pod["metadata"]["uid"] in self.deleting:
                continue  # evicted already
            eviction = self.pod_eviction(pod, rules)
            if eviction is not None and name in eviction.rules:
                pods += 1
                namespaces.add(pod["metadata"].get("namespace", ""))
        return pods, len(namespaces)

    def _selected_devices(self, rule: Obj) -> tuple[int, int]:
        """(published devices, allocated devices) the rule selects."""
        published = 0
        for s in self.slices.cache.list():
            spec = s.get("spec") or {}
            pool = (spec.get("pool") or {}).get("name", "")
            published += sum(rule_selects(rule, spec.get("driver", ""), pool, d.get("name", ""))
                             for d in spec.get("devices") or [])
        allocated = 0
        for claim in self.claims.cache.list():
            allocation = (claim.get("status") or {}).get("allocation") or {}
            allocated += sum(rule_selects(rule, r.get("driver", ""), r.get("pool", ""),
                                          r.get("device", ""))
                             for r in (allocation.get("devices") or {}).get("results") or [])
        return published, allocated


# ----- helpers ---------------------------------------------------------------------------------


def _pod_ref(pod: Obj) -> Obj:
    return object_reference(pod, api_version="v1", kind="Pod")


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _namespaces(n: int, trailing: str = "") -> str:
    return f"1 namespace{trailing}" if n == 1 else f"{n} different namespaces{trailing}"


def _claim_view(pod: Obj) -> tuple[Any, ...]:
    """What of a Pod decides its eviction (upstream: nodeName and claim statuses)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    return (spec.get("nodeName"), spec.get("resourceClaims"),
            status.get("resourceClaimStatuses"), status.get("phase"),
            pod["metadata"].get("deletionTimestamp"))


def _no_execute(slice_: Obj) -> list[Any]:
    return [(d.get("name"), t) for d in (slice_.get("spec") or {}).get("devices") or []
            for t in d.get("taints") or [] if t.get("effect") == taints.NO_EXECUTE]


def _selected(rule: Obj, claim: Obj) -> bool:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return any(rule_selects(rule, r.get("driver", ""), r.get("pool", ""), r.get("device", ""))
               for r in (allocation.get("devices") or {}).get("results") or [])


def _allocated_pools(claim: Obj) -> list[str]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return sorted({f"{r.get('driver', '')}/{r.get('pool', '')}"
                   for r in (allocation.get("devices") or {}).get("results") or []})


def _slice_pool(slice_: Obj) -> list[str]:
    spec = slice_.get("spec") or {}
    return [f"{spec.get('driver', '')}/{(spec.get('pool') or {}).get('name', '')}"]
