"""ResourceSlice publishing for one driver's pool on one node, as upstream's resourceslice
controller (k8s.io/dynamic-resource-allocation/resourceslice) does it.

Pure planning: the slices a pool needs (split past the per-slice limits, shared counters in
slices of their own) and, given what is published, the writes that bring it in line. The
pool's generation goes up whenever its published content has to change, manual edits of
the driver's slices included: like a real driver's controller, the publisher overwrites
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fakeapi.kube.resourcelimits import (
    COUNTER_SETS_MAX,
    SLICE_MAX_DEVICES,
    SLICE_MAX_DEVICES_ADVANCED,
)
from kubelet_emu.inventory import DriverPool

Obj = dict[str, Any]
API_VERSION = "resource.k8s.io/v1"


def _advanced(device: Obj) -> bool:
    """Same as upstream's limit: taints, counter consumption or list attributes cap a slice
    at 64 devices."""
    if device.get("taints") or device.get("consumesCounters"):
        return True
    return any(set(v) & {"bools", "ints", "strings", "versions"}
               for v in (device.get("attributes") or {}).values())


def _chunks(items: Sequence[Obj], size: int) -> list[list[Obj]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def desired_specs(inv: DriverPool) -> list[Obj]:
    """The specs (without the pool) of the slices the pool needs: counter sets in groups of
    8, then devices in groups of 128 (64 once any device needs the advanced limit)."""
    base = {"driver": inv.driver.name, "nodeName": inv.node}
    specs = [{**base, "sharedCounters": chunk}
             for chunk in _chunks(inv.counter_sets, COUNTER_SETS_MAX)]
    size = (SLICE_MAX_DEVICES_ADVANCED if any(_advanced(d) for d in inv.devices)
            else SLICE_MAX_DEVICES)
    specs += [{**base, "devices": chunk} for chunk in _chunks(inv.devices, size)]
    if not specs:  # a driver with no devices still publishes its (empty) pool
        specs.append({**base, "devices": []})
    return specs


def _without_pool(spec: Obj) -> Obj:
    return {k: v for k, v in spec.items() if k != "pool"}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Plan:
    """The writes that publish a pool: updates (name → spec), creates and deletes."""

    generation: int
    updates: tuple[tuple[Obj, Obj], ...] = ()
    """(published slice, its new spec)."""
    creates: tuple[Obj, ...] = ()
    deletes: tuple[Obj, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to write."""
        return not (self.updates or self.creates or self.deletes)


def plan(inv: DriverPool, published: Iterable[Obj],
         written: Mapping[str, str] | None = None) -> Plan:
    """What to write so the published slices of the pool are exactly the desired ones.

    `written` maps the names of the slices this publisher last wrote for the current
    desired content to the resourceVersions it wrote: when the published slices are exactly
    those, untouched, nothing is written (the server may have dropped gated fields, so the
    content is only compared when nothing is known, after a restart).
    """
    wanted = desired_specs(inv)
    current = sorted(published, key=lambda s: s["metadata"]["name"])
    generations = {_pool(s).get("generation", 0) for s in current}
    if written is not None:
        untouched = {s["metadata"]["name"]: s["metadata"]["resourceVersion"]
                     for s in current} == dict(written)
    else:
        have = sorted((_without_pool(s.get("spec") or {}) for s in current), key=_spec_key)
        untouched = (have == sorted(wanted, key=_spec_key)
                     and {_pool(s).get("resourceSliceCount") for s in current} == {len(wanted)}
                     and all(_pool(s).get("name") == inv.pool for s in current))
    if untouched and len(generations) == 1:
        return Plan(generation=generations.pop())
    generation = max(generations, default=0) + 1
    pool = {"name": inv.pool, "generation": generation, "resourceSliceCount": len(wanted)}
    specs = [{**spec, "pool": pool} for spec in wanted]
    reused = list(zip(current, specs, strict=False))
    return Plan(generation=generation,
                updates=tuple((s, spec) for s, spec in reused),
                creates=tuple(specs[len(reused):]),
                deletes=tuple(current[len(reused):]))


def _pool(published: Obj) -> Obj:
    return (published.get("spec") or {}).get("pool") or {}


def _spec_key(spec: Obj) -> str:
    devices = spec.get("devices") or []
    counters = spec.get("sharedCounters") or []
    first = (devices[0]["name"] if devices else "") or (counters[0]["name"] if counters else "")
    return f"{'d' if devices else 'c'}/{first}"


def new_slice(inv: DriverPool, spec: Obj, owner: Obj | None) -> Obj:
    """A slice to create: generateName `<node>-<driver>-`, owned by the Node (so the garbage
    collector removes it with the node), as upstream's controller writes it."""
    meta: Obj = {"generateName": f"{inv.node}-{inv.driver.name}-"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node",
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"], "controller": True}]
    return {"apiVersion": API_VERSION, "kind": "ResourceSlice", "metadata": meta, "spec": spec}
