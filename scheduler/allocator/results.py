"""AllocationResults in upstream 1.37's shape: device results, configs, node selector."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .claims import ClaimPlan
from .errors import AllocationError
from .search import DeviceChoice, RequestData

Obj = Mapping[str, Any]
CLASS = "FromClass"
CLAIM = "FromClaim"


def allocation_result(plan: ClaimPlan, data: list[list[RequestData]], selected: list[int],
                      chosen: list[DeviceChoice], node_name: str, *, binding: bool
                      ) -> dict[str, Any]:
    """One claim's result (no allocationTimestamp: the scheduler adds it when it writes)."""
    results = [_device_result(c, binding) for c in chosen]
    devices: dict[str, Any] = {"results": results}
    configs = _configs(plan, data, selected)
    if configs:
        devices["config"] = configs
    out: dict[str, Any] = {"devices": devices}
    selector = _node_selector(plan, chosen, node_name)
    if selector is not None:
        out["nodeSelector"] = selector
    return out


def _device_result(choice: DeviceChoice, binding: bool) -> dict[str, Any]:
    req, device = choice.data.req, choice.device
    r: dict[str, Any] = {"request": req.full_name, "driver": device.driver,
                         "pool": device.pool, "device": device.name}
    if req.admin:
        r["adminAccess"] = True
    if req.tolerations:
        r["tolerations"] = copy.deepcopy(req.tolerations)
    if binding and device.binding_conditions:
        r["bindingConditions"] = list(device.binding_conditions)
        if device.binding_failure_conditions:
            r["bindingFailureConditions"] = list(device.binding_failure_conditions)
    if choice.share_id is not None:
        r["shareID"] = choice.share_id
    if choice.consumed:
        r["consumedCapacity"] = {name: str(q) for name, q in choice.consumed.items()}
    return r


def _chosen(data: list[list[RequestData]], selected: list[int], index: int) -> RequestData:
    entries = data[index]
    return entries[selected[index]] if entries[0].req.parent is not None else entries[0]


def _configs(plan: ClaimPlan, data: list[list[RequestData]],
             selected: list[int]) -> list[dict[str, Any]]:
    """Same as upstream 1.37: each class's configs once (requests: every request or `req/sub`
    that used the class), then the claim's configs that apply to a request or to the chosen
    subrequest, each once; a config that covers every request gets `requests` cleared."""
    out: list[dict[str, Any]] = []
    by_class: dict[str, tuple[int, int]] = {}
    for index in range(len(plan.requests)):
        rd = _chosen(data, selected, index)
        name = rd.cls.name
        if name in by_class:
            start, end = by_class[name]
            for i in range(start, end):
                out[i]["requests"].append(rd.req.full_name)
            continue
        start = len(out)
        for config in rd.cls.configs:
            out.append(_config(CLASS, [rd.req.full_name], config))
        by_class[name] = (start, len(out))
    chosen_names = [_chosen(data, selected, i).req.full_name for i in range(len(plan.names))]
    for config in plan.configs:
        wanted = config.get("requests") or []
        if not wanted:
            out.append(_config(CLAIM, None, config))
            continue
        if any(n in wanted or c in wanted for n, c in zip(plan.names, chosen_names,
                                                            strict=True)):
            out.append(_config(CLAIM, list(wanted), config))
    for entry in out:
        names = entry.get("requests")
        if names and all(n in names or c in names for n, c in zip(plan.names, chosen_names,
                                                                   strict=True)):
            del entry["requests"]
    return out


def _config(source: str, requests: list[str] | None, config: Obj) -> dict[str, Any]:
    entry: dict[str, Any] = {"source": source}
    if requests:
        entry["requests"] = requests
    for key, value in config.items():
        if key != "requests":
            entry[key] = copy.deepcopy(value)
    return entry


def local_node_selector(node_name: str) -> dict[str, Any]:
    """A node selector for exactly one node, by its name field."""
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


def _node_selector(plan: ClaimPlan, chosen: list[DeviceChoice], node_name: str
                   ) -> dict[str, Any] | None:
    """Same as upstream's createNodeSelector: any node-local device (or one that binds to its
    node) pins the claim to the node; otherwise the selectors of the slices (or devices) are
    merged into one term, and devices available everywhere add nothing."""
    fields: list[Obj] = []
    expressions: list[Obj] = []
    for choice in chosen:
        device = choice.device
        s = device.slice
        if s.per_device:
            name, selector = device.node_name, device.node_selector_wire
        else:
            name, selector = s.node_name, s.node_selector_wire
        if name or device.binds_to_node:
            return local_node_selector(node_name)
        if selector is None:
            continue
        terms = selector.get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(f"create NodeSelector for claim "
                                  f"{(plan.wire.get('metadata') or {}).get('name', '')}: "
                                  f"unsupported ResourceSlice.NodeSelector with {len(terms)} "
                                  "terms")
        if terms:
            _merge(fields, (terms[0] or {}).get("matchFields") or [])
            _merge(expressions, (terms[0] or {}).get("matchExpressions") or [])
    if not fields and not expressions:
        return None
    term: dict[str, Any] = {}
    if expressions:
        term["matchExpressions"] = [copy.deepcopy(dict(r)) for r in expressions]
    if fields:
        term["matchFields"] = [copy.deepcopy(dict(r)) for r in fields]
    return {"nodeSelectorTerms": [term]}


def _merge(into: list[Obj], requirements: list[Obj]) -> None:
    for r in requirements:
        values = set(r.get("values") or ())
        if not any(e.get("key") == r.get("key") and e.get("operator") == r.get("operator")
                   and set(e.get("values") or ()) == values for e in into):
            into.append(r)
