"""The depth-first search with backtracking (upstream's allocateOne and allocateDevice).

Claims in order, then requests in spec order, one device slot at a time; the first complete
solution wins. Within a request the next slot starts after the previous device, so the
search tries combinations, not permutations. A `firstAvailable` request tries its
subrequests in order and keeps one only if the whole rest of the search succeeds with it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import scheduler.allocator.capacity as capacity
import scheduler.allocator.diagnostics as why
from fakeapi.kube.taints import untolerated
from fakeapi.machinery.quantity import Quantity

from .claims import ClaimPlan, Request
from .constraints import AttributeConstraint
from .devices import Attribute, Device
from .diagnostics import Diagnostics
from .errors import AllocationError, AllocationTimeout
from .features import AllocatorFeatures
from .inventory import CompiledClass
from .pools import NodeView, Pool
from .selectors import Expression, derived, matches_all, peek_all
from .state import AllocatedState

MAX_RESULTS = 32
"""Same as upstream's AllocationResultsMaxSize."""

Obj = Mapping[str, Any]


class MaxSizeExceeded(Exception):
    """Upstream's errAllocationResultMaxSizeExceeded: prune, maybe try another subrequest."""


class RequestData:
    """One request or subrequest as one allocation attempt uses it."""

    __slots__ = ("req", "cls", "class_selectors", "num_devices", "all_devices", "base", "sub",
                 "derived")

    def __init__(self, req: Request, cls: CompiledClass) -> None:
        self.req = req
        self.cls = cls
        self.class_selectors: tuple[Expression, ...] = cls.selectors
        self.num_devices = 0
        self.all_devices: list[tuple[Device, Pool]] | None = None
        self.base = req.parent or req.name
        self.sub = req.name if req.parent else ""
        self.derived = req.derived


class DeviceChoice:
    """One device chosen for one request slot."""

    __slots__ = ("data", "device", "share_id", "consumed")

    def __init__(self, *, data: RequestData, device: Device, share_id: str | None,
                 consumed: dict[str, Quantity] | None) -> None:
        self.data = data
        self.device = device
        self.share_id = share_id
        self.consumed = consumed


class Search:
    """One allocation attempt of some claims on one node."""

    def __init__(self, *, plans: list[ClaimPlan], view: NodeView, state: AllocatedState,
                 features: AllocatorFeatures, new_share_id: Callable[[], str],
                 diagnostics: Diagnostics | None,
                 expired: Callable[[], bool] | None = None) -> None:
        self.plans = plans
        self.expired = expired
        self.steps = 0
        """How often the search step ran (upstream's NumAllocateOneInvocations)."""
        self.view = view
        self.devices = view.devices
        self.device_pools = view.device_pools
        self.state = state
        self.features = features
        self.new_share_id = new_share_id
        self.diag = diagnostics
        self.cc = features.consumable_capacity
        self.in_use: Mapping[str, object] = state.dedicated
        if not self.cc and state.shared:
            # Same as the scheduler's tracker with consumable capacity off: shares count as
            # ordinary allocations.
            self.in_use = {**state.dedicated, **state.shared}
        self.data: list[list[list[RequestData]]] = [[] for _ in plans]
        self.selected: list[list[int]] = [[0] * len(p.requests) for p in plans]
        self.constraints: list[list[AttributeConstraint]] = [[] for _ in plans]
        self.chosen: list[list[DeviceChoice]] = [[] for _ in plans]
        self.allocating: dict[str, set[int]] = {}
        self.allocating_capacity: dict[str, dict[str, Fraction]] = {}
        self.consumed_counters: dict[str, dict[str, dict[str, Fraction]]] = {}

    # ----- the search -------------------------------------------------------------------

    def run(self) -> bool:
        """Whether a solution was found (then `chosen` and `selected` describe it)."""
        # Each device slot and each request adds two frames; many claims of 32 devices would
        # exceed Python's default limit, which is only ever raised here, never lowered.
        slots = sum(max(d.num_devices for d in entries) + 1
                    for claim in self.data for entries in claim) + len(self.plans)
        if 3 * slots + 200 > sys.getrecursionlimit():
            sys.setrecursionlimit(3 * slots + 200)
        try:
            return self._one(0, 0, 0, 0, False, 0)
        except MaxSizeExceeded:
            return False

    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.steps += 1
        if self.expired is not None and self.steps & 255 == 1 and self.expired():
            raise AllocationTimeout
        if ci >= len(self.plans):
            return True
        plan = self.plans[ci]
        if ri >= len(plan.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except MaxSizeExceeded:
                # Not fatal: another allocation of an earlier claim may let a subrequest
                # needing fewer devices fit.
                return False
        entries = self.data[ci][ri]
        if not in_sub and entries[0].req.parent is not None:
            all_exceeded = True
            for index in range(len(entries)):
                try:
                    done = self._one(ci, ri, index, di, True, 0)
                except MaxSizeExceeded:
                    continue
                all_exceeded = False
                if done:
                    self.selected[ci][ri] = index
                    return True
            if all_exceeded:
                raise MaxSizeExceeded
            return False
        data = entries[si]
        if data.all_devices is not None and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if len(self.chosen[ci]) + data.num_devices - di > MAX_RESULTS:
            raise MaxSizeExceeded
        if data.all_devices is not None:
            device, pool = data.all_devices[di]
            undo = self._take(ci, data, device, pool, must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, 0)
            except MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done
        return self._candidates(ci, ri, si, di, in_sub, start, data)

    def _candidates(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int,
                    data: RequestData) -> bool:
        devices, pools = self.devices, self.device_pools
        admin = data.req.admin
        in_use, allocating = self.in_use, self.allocating
        diag = self.diag
        cc = self.cc
        for i in range(start, len(devices)):
            device = devices[i]
            key = device.key
            if admin:
                users = allocating.get(key)
                if users and ci in users:
                    if diag is not None:
                        self._rule_out(ci, data, device, why.IN_USE)
                    continue
            elif key in in_use or allocating.get(key):
                if diag is not None:
                    self._rule_out(ci, data, device, why.IN_USE)
                continue
            if not self.selectable(ci, data, device):
                continue
            if cc and not self._capacity_fits(data, device):
                if diag is not None:
                    self._rule_out(ci, data, device, why.CAPACITY)
                continue
            undo = self._take(ci, data, device, pools[i], must=False)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, i + 1)
            except MaxSizeExceeded:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    # ----- one candidate ------------------------------------------------------------------

    def selectable(self, ci: int, data: RequestData, device: Device) -> bool:
        """Same as upstream's isSelectable: binding conditions only with their feature,
        class selectors, request selectors, then the per-device node selection."""
        if device.binding_conditions and not self.features.binding_conditions:
            if self.diag is not None:
                self._rule_out(ci, data, device, why.UNSUPPORTED)
            return False
        if not matches_all(data.class_selectors, device):
            if self.diag is not None:
                self._rule_out(ci, data, device, why.CLASS_SELECTOR)
            return False
        if not matches_all(data.req.selectors, device):
            if self.diag is not None:
                self._rule_out(ci, data, device, why.REQUEST_SELECTOR)
            return False
        if device.slice.per_device and device.key in self.view.mismatch:
            if self.diag is not None:
                self._rule_out(ci, data, device, why.NODE_MISMATCH)
            return False
        if data.derived:
            self._derived(data, device)  # evaluated after the selectors; errors abort
        return True

    def _capacity_fits(self, data: RequestData, device: Device) -> bool:
        key = device.key
        allocated = self.state.capacity.get(key)
        allocating = self.allocating_capacity.get(key)
        if data.req.capacity is None and allocated is None and allocating is None:
            return capacity.fits_alone(device)  # the common case: nothing requested or shared
        return bool(capacity.fits(device, data.req.capacity, allocated, allocating))

    def _take(self, ci: int, data: RequestData, device: Device, pool: Pool,
              must: bool) -> Callable[[], None] | None:
        """Same as upstream's allocateDevice: availability, counters, taints, constraints;
        on success the device is recorded and an undo function returned."""
        req = data.req
        key = device.key
        multi = self.cc and device.multi
        diag = self.diag
        if not multi and req.admin and ci in self.allocating.get(key, ()):
            return None
        if not req.admin and (key in self.in_use or self.allocating.get(key)):
            return None
        if not self.features.partitionable_devices and device.consumes:
            if diag is not None:
                self._rule_out(ci, data, device, why.UNSUPPORTED)
            return None
        skip_counters = multi and (key in self.state.capacity or key in self.allocating_capacity)
        if not skip_counters and device.consumes and not self._charge_counters(device, pool):
            if diag is not None:
                self._rule_out(ci, data, device, why.COUNTERS)
            return None
        # Upstream keeps counters charged when a taint or a constraint rejects the device
        # below (allocateDevice returns without deallocating them); so do we, since that
        # decides what later devices of the pool may still take.
        if self.features.device_taints and device.taints and untolerated(
                device.taints, req.tolerations) is not None:
            if diag is not None:
                self._rule_out(ci, data, device, why.TAINTED)
            return None
        constraints = self.constraints[ci]
        extra = self._derived(data, device) if data.derived else None
        for j, constraint in enumerate(constraints):
            if not constraint.add(data.base, data.sub, device, extra):
                if must:
                    raise AllocationError(
                        f"claim {self.plans[ci].ref}, request {req.name}: cannot add device "
                        f"{key} because a claim constraint would not be satisfied")
                for earlier in constraints[:j]:
                    earlier.remove(data.base, data.sub, device)
                if diag is not None:
                    self._rule_out(ci, data, device, why.CONSTRAINT)
                return None
        users = self.allocating.setdefault(key, set())
        if not multi:
            users.add(ci)
        share_id: str | None = None
        consumed: dict[str, Quantity] | None = None
        if self.cc:
            if not self._capacity_fits(data, device):
                # Upstream returns here without undoing the constraints and the in-use mark
                # (only reachable for All, whose devices were checked before the search).
                return None
            if multi:
                amounts = capacity.consumption(device, req.capacity)
                share_id = self.new_share_id()
                total = self.allocating_capacity.setdefault(key, {})
                for name, amount in amounts.items():
                    total[name] = total.get(name, 0) + amount.value
                consumed = amounts or None
        chosen = self.chosen[ci]
        chosen.append(DeviceChoice(data=data, device=device, share_id=share_id,
                                   consumed=consumed))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(data.base, data.sub, device)
            left = self.allocating.get(key)
            if left is not None:
                left.discard(ci)
                if not left:
                    del self.allocating[key]
            if multi:
                if consumed is not None:
                    total = self.allocating_capacity[key]
                    for name, amount in consumed.items():
                        total[name] -= amount.value
                    if all(v == 0 for v in total.values()):
                        del self.allocating_capacity[key]
            elif self.features.partitionable_devices and device.consumes:
                self._release_counters(device, pool)
            chosen.pop()
        return undo

    # ----- partitionable devices --------------------------------------------------------

    def _available(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        """Same as upstream: the pool's counter sets minus what allocated devices consume,
        on this node's slices and the pool's other ones."""
        token = (id(self.state), self.state.version)
        if pool.available is not None and pool.available[0] == token:
            return pool.available[1]
        available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
        for s in (*pool.slices, *pool.other_slices):
            for d in s.devices:
                if not d.consumes or not self.state.allocated(d.key):
                    continue
                for set_name, counters in d.consumes:
                    left = available.get(set_name)
                    if left is None:
                        continue
                    for name, value in counters.items():
                        if name in left:
                            left[name] -= value
        pool.available = (token, available)
        return available

    def _charge_counters(self, device: Device, pool: Pool) -> bool:
        available = self._available(pool)
        consumed = self.consumed_counters.setdefault(pool.id, {})
        for set_name, counters in device.consumes:
            used = consumed.setdefault(set_name, {})
            for name, value in counters.items():
                used[name] = used.get(name, 0) + value
        for set_name, counters in available.items():
            used = consumed.get(set_name) or {}
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        consumed = self.consumed_counters.get(pool.id) or {}
        for set_name, counters in device.consumes:
            used = consumed.get(set_name)
            if used is None:
                continue
            for name, value in counters.items():
                used[name] = used.get(name, 0) - value

    # ----- derived attributes and diagnostics ---------------------------------------------

    def _derived(self, data: RequestData, device: Device) -> dict[str, Attribute | None]:
        """The request's derived attributes for the device (evaluated once per device)."""
        return {name: derived(expr, name, device) for name, expr in data.derived}

    def _rule_out(self, ci: int, data: RequestData, device: Device, cause: str) -> None:
        assert self.diag is not None
        if cause == why.IN_USE:
            # A device skipped as in use before its selectors ran: if the cache already
            # knows it would not have matched anyway, report that instead.
            if peek_all(data.class_selectors, device) is False:
                cause = why.CLASS_SELECTOR
            elif peek_all(data.req.selectors, device) is False:
                cause = why.REQUEST_SELECTOR
        self.diag.rule_out(ci, data.req.full_name, device.key, cause)
