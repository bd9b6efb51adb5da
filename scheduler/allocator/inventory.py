"""The scheduler's device cache: ResourceSlices, DeviceClasses and DeviceTaintRules, kept up
to date incrementally from informer events, with the caches that make allocation cheap."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from .claims import ClaimPlan, object_ref
from .devices import Device, Slice
from .features import AllocatorFeatures
from .pools import NodeView, gather_pools
from .selectors import Expression

Obj = Mapping[str, Any]

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
"""Same as upstream's ResourceDeviceClassPrefix: the implicit extended resource of a class."""

_PLAN_CACHE_SIZE = 4096
_VIEW_CACHE_SIZE = 8192


class CompiledClass:
    """A DeviceClass with its selectors compiled."""

    __slots__ = ("name", "wire", "selectors", "configs", "extended_resource_name", "created")

    def __init__(self, wire: Obj) -> None:
        meta = wire.get("metadata") or {}
        spec = wire.get("spec") or {}
        self.wire = wire
        self.name: str = meta.get("name") or ""
        self.selectors = tuple(
            Expression(((s or {}).get("cel") or {}).get("expression"), f"class {self.name}", i)
            for i, s in enumerate(spec.get("selectors") or []))
        self.configs: list[Obj] = [c or {} for c in spec.get("config") or []]
        self.extended_resource_name: str = spec.get("extendedResourceName") or ""
        self.created: str = meta.get("creationTimestamp") or ""


class Inventory:
    """Slices, classes and taint rules as the allocator sees them.

    Feed it informer events (`set_*` on add/update, `remove_*` on delete). Each slice is
    parsed once per resourceVersion; the devices a node can use are gathered once per node
    and reused until a slice or taint rule changes; each CEL selector runs once per device
    version; a claim's spec is parsed once.
    """

    def __init__(self, *, features: AllocatorFeatures | None = None) -> None:
        self.features = features if features is not None else AllocatorFeatures()
        self._slices: dict[str, Slice] = {}
        self._by_node: dict[str, set[str]] = {}
        self._shared: set[str] = set()
        self._by_pool: dict[tuple[str, str], set[str]] = {}
        self._classes: dict[str, CompiledClass] = {}
        self._rules: dict[str, Obj] = {}
        self._views: OrderedDict[str, NodeView] = OrderedDict()
        self._plans: OrderedDict[Any, tuple[Obj, ClaimPlan]] = OrderedDict()

    # ----- slices -----------------------------------------------------------------------

    def set_slice(self, obj: Obj) -> None:
        """Add or replace a ResourceSlice (a wire dict, treated as read-only)."""
        meta = obj.get("metadata") or {}
        name = meta.get("name") or ""
        old = self._slices.get(name)
        if old is not None and (old.wire is obj or meta.get("resourceVersion") and (
                old.wire.get("metadata") or {}).get("resourceVersion") == meta[
                "resourceVersion"]):
            return  # the same version again (an informer resync)
        parsed = Slice(obj)
        if old is not None:
            self._unindex(old)
            parsed.keep_cel_results(old)
        self._slices[name] = parsed
        if parsed.node_name:
            self._by_node.setdefault(parsed.node_name, set()).add(name)
        else:
            self._shared.add(name)
        self._by_pool.setdefault((parsed.driver, parsed.pool), set()).add(name)
        self._apply_rules(parsed.devices)
        self._changed(old, parsed)

    def remove_slice(self, name: str) -> None:
        """Forget a ResourceSlice."""
        old = self._slices.pop(name, None)
        if old is not None:
            self._unindex(old)
            self._changed(old)

    def _unindex(self, s: Slice) -> None:
        if s.node_name:
            names = self._by_node.get(s.node_name)
            if names is not None:
                names.discard(s.name)
                if not names:
                    del self._by_node[s.node_name]
        else:
            self._shared.discard(s.name)
        pool = self._by_pool.get((s.driver, s.pool))
        if pool is not None:
            pool.discard(s.name)
            if not pool:
                del self._by_pool[(s.driver, s.pool)]

    def device(self, driver: str, pool: str, name: str) -> Obj | None:
        """A published device's wire dict (from the pool's newest generation), or None."""
        found: tuple[int, Obj] | None = None
        for slice_name in sorted(self._by_pool.get((driver, pool), ())):
            s = self._slices[slice_name]
            if found is not None and s.generation <= found[0]:
                continue
            for d in s.devices:
                if d.name == name:
                    found = (s.generation, d.wire)
                    break
        return found[1] if found is not None else None

    # ----- classes ----------------------------------------------------------------------

    def set_class(self, obj: Obj) -> None:
        """Add or replace a DeviceClass."""
        entry = CompiledClass(obj)
        self._classes[entry.name] = entry

    def remove_class(self, name: str) -> None:
        """Forget a DeviceClass."""
        self._classes.pop(name, None)

    def device_class(self, name: str) -> CompiledClass | None:
        """The class of that name, if any."""
        return self._classes.get(name)

    def extended_resource_class(self, resource: str) -> CompiledClass | None:
        """The class backing an extended resource name: the class named by the implicit
        `deviceclass.resource.kubernetes.io/<class>` name, else the class whose
        `extendedResourceName` it is (on a clash the newest class wins, ties going to the
        smaller name, as upstream's resolver decides)."""
        if resource.startswith(DEVICE_CLASS_PREFIX):
            found = self._classes.get(resource[len(DEVICE_CLASS_PREFIX):])
            if found is not None:
                return found
        best: CompiledClass | None = None
        for c in self._classes.values():
            if c.extended_resource_name != resource:
                continue
            if best is None or (c.created, best.name) > (best.created, c.name):
                best = c
        return best

    # ----- taint rules ------------------------------------------------------------------

    def set_taint_rule(self, obj: Obj) -> None:
        """Add or replace a DeviceTaintRule."""
        self._rules[(obj.get("metadata") or {}).get("name") or ""] = obj
        self._reapply_rules()

    def remove_taint_rule(self, name: str) -> None:
        """Forget a DeviceTaintRule."""
        if self._rules.pop(name, None) is not None:
            self._reapply_rules()

    def _reapply_rules(self) -> None:
        for s in self._slices.values():
            self._apply_rules(s.devices)
        self._changed()

    def _apply_rules(self, devices: tuple[Device, ...]) -> None:
        """Same as upstream's tracker.applyPatches: a rule's taint is appended to the taints
        of every device its selector (driver, pool, device; unset means any) matches."""
        if not self._rules or not self.features.device_taint_rules:
            for d in devices:
                d.taints = d.own_taints
            return
        for d in devices:
            extra = []
            for rule in self._rules.values():
                spec = rule.get("spec") or {}
                sel = spec.get("deviceSelector") or {}
                if ((sel.get("driver") or d.driver) == d.driver
                        and (sel.get("pool") or d.pool) == d.pool
                        and (sel.get("device") or d.name) == d.name and spec.get("taint")):
                    extra.append(spec["taint"])
            d.taints = d.own_taints + tuple(extra) if extra else d.own_taints

    # ----- what the allocator reads -----------------------------------------------------

    def _changed(self, *slices: Slice | None) -> None:
        """Drop the node views a change may affect: only the node's own when the changed
        slices belong to pools that live on that one node (what a kubelet plugin publishes),
        every view otherwise (network-attached and multi-node pools, taint rules)."""
        nodes: set[str] = set()
        for s in slices:
            if s is None:
                continue
            if not s.node_name or any(self._slices[n].node_name != s.node_name
                                      for n in self._by_pool.get((s.driver, s.pool), ())):
                nodes.clear()
                break
            nodes.add(s.node_name)
        if not nodes:
            self._views.clear()
        for n in nodes:
            self._views.pop(n, None)

    def view(self, node_name: str, labels: Mapping[str, str]) -> NodeView:
        """The pools and candidate devices of one node, gathered again only after a change
        that concerns the node (or its labels)."""
        view = self._views.get(node_name)
        if view is not None and (view.labels is labels or view.labels == labels):
            return view
        names = self._by_node.get(node_name, set()) | self._shared
        view = gather_pools(node_name, labels, (self._slices[n] for n in sorted(names)),
                            _PoolSlices(self), self.features)
        self._views[node_name] = view
        if len(self._views) > _VIEW_CACHE_SIZE:
            self._views.popitem(last=False)
        return view

    def plan(self, claim: Obj) -> ClaimPlan:
        """The parsed spec of a claim: keyed by UID (the spec is immutable), or by object
        identity for claims that have none yet (the extended-resource claim)."""
        meta = claim.get("metadata") or {}
        uid = meta.get("uid")
        key: Any = (uid, object_ref(claim)) if uid else id(claim)
        hit = self._plans.get(key)
        if hit is not None and (uid or hit[0] is claim):
            return hit[1]
        plan = ClaimPlan(claim)
        self._plans[key] = (claim, plan)
        if len(self._plans) > _PLAN_CACHE_SIZE:
            self._plans.popitem(last=False)
        return plan


class _PoolSlices(Mapping[tuple[str, str], list[Slice]]):
    """All slices of a pool, looked up lazily (only multi-node pools need them)."""

    def __init__(self, inventory: Inventory) -> None:
        self._inv = inventory

    def __getitem__(self, key: tuple[str, str]) -> list[Slice]:
        return [self._inv._slices[n] for n in sorted(self._inv._by_pool.get(key, ()))]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._inv._by_pool)

    def __len__(self) -> int:
        return len(self._inv._by_pool)
