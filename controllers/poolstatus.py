"""The status a ResourcePoolStatusRequest asks for, computed from slices, claims and rules.

A pure function of its inputs (wire dicts in, the request's `status` out), after KEP-5677
and the seed `dra-observability`:

- pools of the requested driver (and pool name), from the slices of each pool's newest
  generation; `nodeName` only when all of them name the same node;
- `totalDevices`; `allocatedDevices` counts each device once however many claims share
  it, admin-access results not at all; `unavailableDevices` counts devices with a
  NoSchedule or NoExecute taint, their own or a DeviceTaintRule's;
  `availableDevices = total − allocated − unavailable` (never negative);
- a pool with fewer slices than its `resourceSliceCount` gets a `PoolIncomplete:`
  validationError and no counts;
- `partitionSummary` for devices that consume shared counters and carry the partition-type
  attribute (the slice's `partitionTypeAttribute`, else the request's
  `defaultPartitionTypeAttribute`): per type the total and how many more fit the counters
  left; a missing or non-string attribute, a pool without shared counters, costs that
  differ within a type or more than 32 types give a validationError instead;
- `shareableSummary` for pools with `allowMultipleAllocations` devices;
- pools sorted by driver then pool name, `poolCount` before the `limit` cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from controllers.devicetaints import blocked
from fakeapi.machinery.quantity import Quantity, parse, parse_quantity

Obj = dict[str, Any]
DEFAULT_LIMIT = 100
"""Same as upstream ResourcePoolStatusRequestLimitDefault."""
SUMMARY_MAX = 32
"""Same as upstream: at most 32 partition types and 32 shareable capacities per pool."""
VALIDATION_ERROR_MAX = 256
"""Same as upstream: validationError is at most 256 bytes."""
INCOMPLETE = "PoolIncomplete"
PARTITION_MISSING = "PartitionTypeMissing"
PARTITION_COST = "PartitionCostMismatch"
PARTITION_OVER_CAP = "PartitionSummaryOverCap"
SHAREABLE_OVER_CAP = "ShareableSummaryOverCap"
_ZERO = Quantity(0)
"""Where a sum starts: upstream's zero Quantity, which takes the format of what is added."""


@dataclasses.dataclass(frozen=True)
class Inputs:
    """What one request is computed from: the request's spec and the cluster's objects."""

    spec: Mapping[str, Any]
    slices: Iterable[Obj]
    claims: Iterable[Obj]
    rules: Iterable[Obj] = ()


@dataclasses.dataclass
class _Pool:
    driver: str
    name: str
    generation: int
    slices: list[Obj] = dataclasses.field(default_factory=list)


def compute(inputs: Inputs) -> Obj:
    """The request's status without its conditions: `poolCount` and `pools`."""
    spec = inputs.spec
    driver = spec.get("driver", "")
    pool_filter = spec.get("poolName")
    pools: dict[str, _Pool] = {}
    for s in inputs.slices:
        s_spec = s.get("spec") or {}
        pool_spec = s_spec.get("pool") or {}
        if s_spec.get("driver") != driver or (pool_filter and pool_spec.get("name") != pool_filter):
            continue
        name, generation = pool_spec.get("name", ""), int(pool_spec.get("generation") or 0)
        pool = pools.get(name)
        if pool is None or generation > pool.generation:
            pool = pools[name] = _Pool(driver=driver, name=name, generation=generation)
        if generation == pool.generation:
            pool.slices.append(s)
    results = _results_by_pool(inputs.claims, driver)
    rules = list(inputs.rules)
    statuses = [_pool_status(pools[name], results.get(name, []), rules, spec)
                for name in sorted(pools)]
    limit = spec.get("limit") or DEFAULT_LIMIT
    return {"poolCount": len(statuses), "pools": statuses[:limit]}


def _results_by_pool(claims: Iterable[Obj], driver: str) -> dict[str, list[Obj]]:
    """Non-admin-access allocation results of the driver, per pool name."""
    out: dict[str, list[Obj]] = {}
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            continue
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("driver") == driver and not result.get("adminAccess"):
                out.setdefault(result.get("pool", ""), []).append(result)
    return out


def _pool_status(pool: _Pool, results: list[Obj], rules: list[Obj], spec: Mapping[str, Any]
                 ) -> Obj:
    pool.slices.sort(key=lambda s: s["metadata"]["name"])
    status: Obj = {"driver": pool.driver, "poolName": pool.name, "generation": pool.generation}
    nodes = {(s.get("spec") or {}).get("nodeName") or "" for s in pool.slices}
    if len(nodes) == 1 and "" not in nodes:
        status["nodeName"] = nodes.pop()
    expected = int(((pool.slices[0].get("spec") or {}).get("pool") or {}).get(
        "resourceSliceCount") or 1)
    if len(pool.slices) < expected:
        status["validationError"] = _error(
            INCOMPLETE, f"pool {pool.driver}/{pool.name} is incomplete: observed "
            f"{len(pool.slices)}/{expected} slices at generation {pool.generation}")
        return status
    devices = [(s, d) for s in pool.slices for d in (s.get("spec") or {}).get("devices") or []]
    in_use = {r.get("device", "") for r in results}
    total = len(devices)
    allocated = len(in_use)
    unavailable = sum(blocked(d, pool.driver, pool.name, rules) for _, d in devices)
    status.update({"resourceSliceCount": len(pool.slices), "totalDevices": total,
                   "allocatedDevices": allocated, "unavailableDevices": unavailable,
                   "availableDevices": max(0, total - allocated - unavailable)})
    errors: list[tuple[str, str]] = []
    partitions = _partition_summary(pool, devices, in_use, spec, errors)
    if partitions:
        status["partitionSummary"] = partitions
    shareable = _shareable_summary(devices, in_use, results, errors)
    if shareable is not None:
        status["shareableSummary"] = shareable
    if errors:
        status["validationError"] = _error(*errors[0])
    return status


def _error(prefix: str, detail: str) -> str:
    """`<Prefix>: <detail>`, cut to the field's 256 bytes."""
    text = f"{prefix}: {detail}".encode()
    return text[:VALIDATION_ERROR_MAX].decode(errors="ignore")


def _attribute(device: Obj, name: str, driver: str) -> Any:
    """A device attribute by fully qualified name, or by its bare name within the driver's
    own domain (as drivers may abbreviate their attributes)."""
    attributes = device.get("attributes") or {}
    if name in attributes:
        return attributes[name]
    domain, _, bare = name.rpartition("/")
    return attributes.get(bare) if domain == driver else None


def _costs(device: Obj) -> dict[tuple[str, str], Fraction]:
    """(counter set, counter) → amount the device consumes."""
    out: dict[tuple[str, str], Fraction] = {}
    for consumption in device.get("consumesCounters") or []:
        for counter, value in (consumption.get("counters") or {}).items():
            out[(consumption.get("counterSet", ""), counter)] = parse_quantity(value["value"])
    return out


def _partition_summary(pool: _Pool, devices: list[tuple[Obj, Obj]], in_use: set[str],
                       spec: Mapping[str, Any], errors: list[tuple[str, str]]
                       ) -> list[Obj]:
    """Per (attribute, type): the total and how many more fit the shared counters left;
    every type against the same baseline (alternatives, not a sum)."""
    default = spec.get("defaultPartitionTypeAttribute")
    groups: dict[tuple[str, str], list[Obj]] = {}
    group_cost: dict[tuple[str, str], dict[tuple[str, str], Fraction]] = {}
    for s, device in devices:
        if not device.get("consumesCounters"):
            continue  # not a partition
        attribute = (s.get("spec") or {}).get("partitionTypeAttribute") or default
        if not attribute:
            continue
        value = _attribute(device, attribute, pool.driver)
        if not isinstance(value, dict) or not isinstance(value.get("string"), str):
            errors.append((PARTITION_MISSING, f"device {device.get('name')} has no string "
                           f"attribute {attribute}"))
            return []
        key = (attribute, value["string"])
        cost = _costs(device)
        if group_cost.setdefault(key, cost) != cost:
            errors.append((PARTITION_COST, f"devices of partition type {key[1]} "
                           f"({attribute}) consume different counters"))
            return []
        groups.setdefault(key, []).append(device)
    if not groups:
        return []
    counters: dict[tuple[str, str], Fraction] = {}
    for s in pool.slices:
        for counter_set in (s.get("spec") or {}).get("sharedCounters") or []:
            for counter, value in (counter_set.get("counters") or {}).items():
                counters[(counter_set.get("name", ""), counter)] = parse_quantity(value["value"])
    if not counters:
        errors.append((PARTITION_MISSING, f"pool {pool.driver}/{pool.name} has partition "
                       "types but publishes no sharedCounters"))
        return []
    if len(groups) > SUMMARY_MAX:
        errors.append((PARTITION_OVER_CAP, f"{len(groups)} partition types, at most "
                       f"{SUMMARY_MAX}"))
        return []
    left = dict(counters)
    for _, device in devices:  # each device in use consumes its counters once
        if device.get("name") in in_use:
            for key, amount in _costs(device).items():
                left[key] = left.get(key, Fraction(0)) - amount
    summary = []
    for (attribute, type_), members in sorted(groups.items()):
        cost = group_cost[(attribute, type_)]
        budget = dict(left)
        allocatable = 0
        for device in sorted(members, key=lambda d: d.get("name", "")):
            if device.get("name") in in_use:
                continue
            if all(budget.get(k, Fraction(0)) >= v for k, v in cost.items()):
                allocatable += 1
                for k, v in cost.items():
                    budget[k] = budget.get(k, Fraction(0)) - v
        summary.append({"attribute": attribute, "type": type_, "total": len(members),
                        "allocatable": allocatable})
    return summary


def _shareable_summary(devices: list[tuple[Obj, Obj]], in_use: set[str], results: list[Obj],
                       errors: list[tuple[str, str]]) -> Obj | None:
    """Fully and partially used shareable devices, and per capacity the total, the amount
    consumed by allocations and what is left (never negative)."""
    shareable = [d for _, d in devices if d.get("allowMultipleAllocations")]
    if not shareable:
        return None
    totals: dict[str, Quantity] = {}
    for device in shareable:
        for name, capacity in (device.get("capacity") or {}).items():
            totals[name] = totals.get(name, _ZERO).add(parse(capacity["value"]))
    if len(totals) > SUMMARY_MAX:
        errors.append((SHAREABLE_OVER_CAP, f"{len(totals)} capacities, at most {SUMMARY_MAX}"))
        return None
    consumed: dict[str, Quantity] = {}
    for result in results:
        for name, value in (result.get("consumedCapacity") or {}).items():
            if name in totals:
                consumed[name] = consumed.get(name, _ZERO).add(parse(value))
    used = sum(1 for d in shareable if d.get("name") in in_use)
    summary: Obj = {"fullyAvailableDevices": len(shareable) - used,
                    "partiallyAvailableDevices": used}
    if totals:
        summary["capacity"] = [
            {"name": name, "total": str(total), "consumed": str(consumed.get(name, _ZERO)),
             "available": str(_available(total, consumed.get(name, _ZERO)))}
            for name, total in sorted(totals.items())]
    return summary


def _available(total: Quantity, consumed: Quantity) -> Quantity:
    """Total minus consumed in the total's format, never negative."""
    left = total.sub(consumed)
    return left if left.value > 0 else _ZERO
