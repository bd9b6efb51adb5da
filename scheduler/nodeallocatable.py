"""DRA node-allocatable resources (KEP-5517, gate DRANodeAllocatableResources): the cpu,
memory, ... that a pod's allocated devices take from the node, as upstream's
DynamicResources plugin derives them from each device's `nodeAllocatableResources`.

Per claim (one `pod.status.nodeAllocatableResourceClaimStatuses` entry): `mapping` sums, per
resource, `consumedCapacity[capacityKey] × capacityMultiplier` of each allocated device (or
`deviceMultiplier` per device when no capacity key is set), `overhead` sums the devices'
`perPod` and `perContainer` amounts, and `containers` names the pod's containers that use
the claim. A pod's footprint on the node is its spec requests plus, per claim, the mapping
and `perPod + perContainer × containers` (upstream's PodRequests with
UseDRANodeAllocatableResourceClaimStatus; a claim used by several containers counts once).
Pure functions."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from fakeapi.machinery.quantity import Quantity, parse

Obj = dict[str, Any]
DeviceLookup = Callable[[str, str, str], Mapping[str, Any] | None]
"""(driver, pool, device) → the published device's wire dict, or None."""
GATE = "DRANodeAllocatableResources"
STATUSES = "nodeAllocatableResourceClaimStatuses"


class _Sum:
    """Per resource name: an exact sum that keeps the format of its first term."""

    def __init__(self) -> None:
        self.terms: dict[str, Quantity] = {}

    def add(self, name: str, value: Fraction, fmt: str) -> None:
        old = self.terms.get(name)
        self.terms[name] = Quantity(value + (old.value if old else 0),
                                    old.format if old else fmt)


def _quantity(text: Any, default: str = "0") -> Quantity:
    try:
        return parse(text if text is not None else default)
    except ValueError:
        return parse(default)


def claim_status(claim_name: str, allocation: Obj, containers: list[str],
                 device: DeviceLookup) -> Obj | None:
    """The claim's node-allocatable status entry, or None when none of its allocated devices
    maps a node resource. A capacity key the result consumed nothing of (a device that
    doesn't allow multiple allocations is taken whole) counts the device's full capacity."""
    mapping, per_pod, per_container = _Sum(), _Sum(), _Sum()
    found = False
    for r in (allocation.get("devices") or {}).get("results") or ():
        wire = device(r.get("driver", ""), r.get("pool", ""), r.get("device", "")) or {}
        for name, spec in (wire.get("nodeAllocatableResources") or {}).items():
            found = True
            direct = (spec or {}).get("mapping")
            if direct:
                key = direct.get("capacityKey")
                if key:
                    consumed = (r.get("consumedCapacity") or {}).get(key)
                    if consumed is None:
                        consumed = ((wire.get("capacity") or {}).get(key) or {}).get("value")
                    base = _quantity(consumed)
                    factor = _quantity(direct.get("capacityMultiplier"), "1")
                else:
                    base, factor = _quantity(direct.get("deviceMultiplier"), "1"), parse(1)
                mapping.add(name, base.value * factor.value, base.format)
            overhead = (spec or {}).get("overhead") or {}
            for field, into in (("perPod", per_pod), ("perContainer", per_container)):
                if overhead.get(field) is not None:
                    q = _quantity(overhead[field])
                    into.add(name, q.value, q.format)
    if not found:
        return None
    status: Obj = {"resourceClaimName": claim_name, "containers": containers}
    if mapping.terms:
        status["mapping"] = [{"name": n, "quantity": str(q)}
                             for n, q in sorted(mapping.terms.items())]
    names = sorted(set(per_pod.terms) | set(per_container.terms))
    if names:
        status["overhead"] = [{"name": n, **{field: str(into.terms[n]) for field, into in (
            ("perPod", per_pod), ("perContainer", per_container)) if n in into.terms}}
            for n in names]
    return status


def containers_using(pod: Obj, pod_claim_name: str) -> list[str]:
    """The names of the pod's containers (init containers first) that use the pod claim."""
    spec = pod.get("spec") or {}
    out: list[str] = []
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        refs = (c.get("resources") or {}).get("claims") or ()
        if any((r or {}).get("name") == pod_claim_name for r in refs) and c.get("name") \
                not in out:
            out.append(str(c.get("name") or ""))
    return out


def demand(statuses: Iterable[Obj]) -> dict[str, Fraction]:
    """What these status entries add to a pod's requests: per claim its mapping, its perPod
    overhead and its perContainer overhead once per container using it."""
    total: dict[str, Fraction] = {}
    for s in statuses:
        users = len(s.get("containers") or ())
        for m in s.get("mapping") or ():
            _add(total, m.get("name", ""), _quantity(m.get("quantity")).value)
        for o in s.get("overhead") or ():
            amount = (_quantity(o.get("perPod")).value
                      + _quantity(o.get("perContainer")).value * users)
            _add(total, o.get("name", ""), amount)
    return total


def status_demand(pod: Obj) -> dict[str, Fraction]:
    """What a pod's recorded `status.nodeAllocatableResourceClaimStatuses` add."""
    return demand((pod.get("status") or {}).get(STATUSES) or ())


def plus(requests: Mapping[str, Fraction], more: Mapping[str, Fraction]) -> dict[str, Fraction]:
    """Two sets of requests added up."""
    out = dict(requests)
    for name, value in more.items():
        _add(out, name, value)
    return out


def _add(into: dict[str, Fraction], name: str, value: Fraction) -> None:
    into[name] = into.get(name, Fraction(0)) + value
