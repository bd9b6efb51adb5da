"""`allocate`: the structured allocator's entry point (upstream's Allocator.Allocate, plus the
DeviceClass check that upstream's scheduler plugin does in PreFilter)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import scheduler.allocator.capacity as capacity
import scheduler.allocator.diagnostics as why
from fakeapi.kube.nodeselector import node_identity

from .claims import ALL, EXACT_COUNT, ClaimPlan, Request
from .constraints import AttributeConstraint, DistinctAttribute, MatchAttribute
from .diagnostics import Diagnostics
from .errors import AllocationError, ClaimUnschedulable, NodeUnschedulable
from .inventory import Inventory
from .pools import NodeView
from .results import allocation_result
from .search import MAX_RESULTS, RequestData, Search
from .selectors import matches_all
from .state import AllocatedState

Obj = Mapping[str, Any]

INVALID_POOLS = "invalid resource pools were encountered"


def allocate(*, claims: Sequence[Obj], node: Obj, inventory: Inventory,
             allocated: AllocatedState, new_share_id: Callable[[], str],
             diagnostics: Diagnostics | None = None,
             expired: Callable[[], bool] | None = None) -> list[dict[str, Any]] | None:
    """Allocate devices for all `claims` on `node`, or find that they don't fit there.

    Returns one AllocationResult wire dict per claim, in order, or None when not all of them
    can be allocated on this node. Raises NodeUnschedulable for upstream's per-node failures
    (ClaimUnschedulable, a subclass, when a request's DeviceClass does not exist) and
    AllocationError for errors that abort the scheduling attempt (AllocationTimeout, a
    subclass, when `expired()`, asked now and then during the search, says time is up).
    """
    plans = [inventory.plan(c) for c in claims]
    _check_classes(plans, inventory)
    node_name, labels = node_identity(node)
    view = inventory.view(node_name, labels)
    if diagnostics is not None:
        diagnostics.claims = [p.ref for p in plans]
    search = Search(plans=plans, view=view, state=allocated, features=inventory.features,
                    new_share_id=new_share_id, diagnostics=diagnostics, expired=expired)
    for ci, plan in enumerate(plans):
        _prepare_claim(search, ci, plan, inventory)
    found = search.run()
    if diagnostics is not None:
        diagnostics.steps = search.steps
    if not found:
        if any(p.invalid for p in view.pools):
            raise NodeUnschedulable(INVALID_POOLS)
        return None
    return [allocation_result(plan, search.data[ci], search.selected[ci], search.chosen[ci],
                              node_name, binding=inventory.features.binding_conditions)
            for ci, plan in enumerate(plans)]


def _check_classes(plans: list[ClaimPlan], inventory: Inventory) -> None:
    """Same as upstream's PreFilter: a request whose class does not exist makes the pod
    unschedulable everywhere until a DeviceClass event."""
    for plan in plans:
        for entries in plan.requests:
            if entries[0].parent is not None and not inventory.features.prioritized_list:
                continue  # the allocator's own check below reports this
            for req in entries:
                if req.class_name and inventory.device_class(req.class_name) is None:
                    raise ClaimUnschedulable(f"request {req.full_name}: device class "
                                             f"{req.class_name} does not exist")


def _prepare_claim(search: Search, ci: int, plan: ClaimPlan, inventory: Inventory) -> None:
    """Same as the first half of upstream's Allocate: feature checks, request data (with
    the devices of All requests), the claim limit, and the constraints."""
    features = inventory.features
    minimum = 0
    for ri, entries in enumerate(plan.requests):
        name = plan.names[ri]
        has_subs = entries[0].parent is not None
        if has_subs and not features.prioritized_list:
            raise AllocationError(f"claim {plan.ref}, request {name}: has subrequests, but the "
                                  "DRAPrioritizedList feature is disabled")
        if not features.consumable_capacity:
            for req in entries:
                if req.wire.get("capacity") is not None:
                    what = f"subrequest {req.name}" if has_subs else f"request {name}"
                    raise AllocationError(f"claim {plan.ref}, {what}: has capacity requests, "
                                          "but the DRAConsumableCapacity feature is disabled")
        if not features.derived_attributes:
            for req in entries:
                if req.derived:
                    raise AllocationError(f"claim {plan.ref}, request {req.full_name}: has "
                                          "derived attributes, but the DRADerivedAttributes "
                                          "feature is disabled")
        data = [_request_data(search, ci, plan, req, inventory) for req in entries]
        search.data[ci].append(data)
        minimum += min(d.num_devices for d in data)
    if minimum > MAX_RESULTS:
        raise AllocationError(f"claim {plan.ref}: number of requested devices {minimum} "
                              f"exceeds the claim limit of {MAX_RESULTS}")
    constraints: list[AttributeConstraint] = []
    for i, c in enumerate(plan.constraints):
        if c.kind == "match":
            constraints.append(MatchAttribute(requests=c.requests, attribute=c.attribute,
                                              lists=features.list_type_attributes))
        elif c.kind == "distinct":
            constraints.append(DistinctAttribute(requests=c.requests, attribute=c.attribute,
                                                 lists=features.list_type_attributes))
        else:
            raise AllocationError(f"claim {plan.ref}, constraint #{i}: empty constraint "
                                  "(unsupported constraint type?)")
    search.constraints[ci] = constraints


def _request_data(search: Search, ci: int, plan: ClaimPlan, req: Request,
                  inventory: Inventory) -> RequestData:
    """Same as upstream's validateDeviceRequest."""
    where = f"claim {plan.ref}, request {req.name}"
    if req.empty_selector is not None:
        raise AllocationError(f"{where}, selector #{req.empty_selector}: CEL expression empty "
                              "(unsupported selector type?)")
    if req.has_admin and not inventory.features.admin_access:
        raise AllocationError(f"{where}: admin access is requested, but the feature is "
                              "disabled")
    if not req.class_name:
        raise AllocationError(f"{where}: missing device class name (unsupported request "
                              "type?)")
    cls = inventory.device_class(req.class_name)
    if cls is None:
        raise AllocationError(f"{where}: could not retrieve device class {req.class_name}: "
                              f'deviceclass.resource.k8s.io "{req.class_name}" not found')
    data = RequestData(req, cls)
    if search.diag is not None:
        search.diag.request(ci, req.full_name)
        _diagnose_unusable_pools(search, ci, data)
    if req.mode == EXACT_COUNT:
        data.num_devices = req.count
    elif req.mode == ALL:
        data.all_devices = _all_devices(search, ci, data, search.view, where)
        data.num_devices = len(data.all_devices)
    else:
        raise AllocationError(f"{where}: unsupported count mode {req.mode}")
    if search.diag is not None:
        entry = search.diag.request(ci, req.full_name)
        entry.needed, entry.total = data.num_devices, len(search.devices)
    return data


def _all_devices(search: Search, ci: int, data: RequestData, view: NodeView,
                 where: str) -> list[Any]:
    """Every selectable device of the node's pools, fixed before the search; an incomplete
    or invalid pool makes that impossible, which is an error."""
    found = []
    for pool in view.pools:
        if pool.incomplete:
            raise AllocationError(f"{where}: asks for all devices, but resource pool {pool.id} "
                                  "is currently being updated")
        if pool.invalid:
            raise AllocationError(f"{where}: asks for all devices, but resource pool {pool.id} "
                                  "is currently invalid")
        for device in pool.devices:
            if not search.selectable(ci, data, device):
                continue
            if search.cc and not capacity.fits(device, data.req.capacity,
                                               search.state.capacity.get(device.key),
                                               search.allocating_capacity.get(device.key)):
                if search.diag is not None:
                    search.diag.rule_out(ci, data.req.full_name, device.key, why.CAPACITY)
                continue
            found.append((device, pool))
    return found


def _diagnose_unusable_pools(search: Search, ci: int, data: RequestData) -> None:
    """Count the devices of incomplete and invalid pools (which the search skips), unless
    their selectors would have ruled them out anyway."""
    assert search.diag is not None
    for pool in search.view.pools:
        if not (pool.incomplete or pool.invalid):
            continue
        cause = why.INCOMPLETE_POOL if pool.incomplete else why.INVALID_POOL
        for device in pool.devices:
            try:
                if not matches_all(data.class_selectors, device):
                    cause_here = why.CLASS_SELECTOR
                elif not matches_all(data.req.selectors, device):
                    cause_here = why.REQUEST_SELECTOR
                else:
                    cause_here = cause
            except AllocationError:
                cause_here = cause
            search.diag.rule_out(ci, data.req.full_name, device.key, cause_here)
