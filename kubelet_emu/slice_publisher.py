"""The fake drivers' ResourceSlice publishing: each driver's pool on each node, as its
kubelet plugin's resourceslice controller keeps it (split into several slices past the
per-slice limits; a manual edit is overwritten and bumps the pool's generation); keys are
(node, driver). `kubelet_emu.slices` plans the writes, `sync_pool` makes them (also for a
driver run as a standalone plugin, `kubelet_emu.standalone`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import kubelet_emu.slices as slices
from fakeapi.client import ObjectClient
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import RESOURCE_SLICES
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.inventory import DriverPool
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.settings import PLUGIN_ACCOUNT

Obj = dict[str, Any]
PoolKey = tuple[str, str]
"""(node, driver)."""
POOL_INDEX = "pool"
"""The slices-by-pool index (`<node>/<driver>`)."""


SLICES = RESOURCE_SLICES.resource_id


def _pool_key(obj: Obj) -> list[str]:
    spec = obj.get("spec") or {}
    return [f"{spec.get('nodeName') or ''}/{spec.get('driver') or ''}"]


class SlicePublisher(Controller[PoolKey]):
    """Publishes the fake drivers' pools (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.slice_informer = self.watch(SLICES, self._slice_keys)
        self.slice_informer.cache.add_index(POOL_INDEX, _pool_key)

    def _slice_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[PoolKey]:
        spec = obj.get("spec") or {}
        state = self.nodes.by_name.get(spec.get("nodeName") or "")
        if state is not None and spec.get("driver") in state.inventories:
            return [(state.name, spec["driver"])]
        return []

    def node_added(self, name: str) -> None:
        """Publish every pool of a node the kubelet now runs."""
        state = self.nodes.by_name.get(name)
        for driver in state.inventories if state is not None else ():
            self.queue.add((name, driver))

    async def reconcile(self, key: PoolKey) -> None:
        """Make the driver's published pool on the node match its inventory."""
        name, driver = key
        state = self.nodes.by_name.get(name)
        if state is None or driver not in state.inventories:
            return
        if self.slice_informer.revision < state.written_at.get(driver, 0):
            return  # our last write is on its way to the cache; its event brings us back
        inv = state.inventories[driver]
        published = self.slice_informer.cache.by_index(POOL_INDEX, f"{name}/{driver}")
        written, last = await sync_pool(self.nodes.client(PLUGIN_ACCOUNT, name), inv, published,
                                        state.written.get(driver),
                                        {"metadata": {"name": name, "uid": state.uid}})
        state.written[driver] = written
        if last:
            state.written_at[driver] = last


async def sync_pool(client: ObjectClient, inv: DriverPool, published: Sequence[Obj],
                    written: Mapping[str, str] | None, owner: Obj | None
                    ) -> tuple[dict[str, str], int]:
    """Make one pool's published slices match its inventory (`slices.plan` over what is
    published and what this publisher `written` last): updates, creates (owned by the
    `owner` Node) and deletes. Returns the slices now published (name → resourceVersion) and
    the revision of the last write (0: nothing to write)."""
    plan = slices.plan(inv, published, written)
    if plan.empty:
        return {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in published}, 0
    out: dict[str, str] = {}
    last = 0
    for current, spec in plan.updates:
        stored = await client.update(SLICES, {**current, "spec": spec,
                                              "metadata": {**current["metadata"]}})
        out[stored["metadata"]["name"]] = stored["metadata"]["resourceVersion"]
        last = max(last, int(stored["metadata"]["resourceVersion"]))
    for spec in plan.creates:
        stored = await client.create(SLICES, slices.new_slice(inv, spec, owner))
        out[stored["metadata"]["name"]] = stored["metadata"]["resourceVersion"]
        last = max(last, int(stored["metadata"]["resourceVersion"]))
    for gone in plan.deletes:
        try:
            deleted = await client.delete(SLICES, gone["metadata"]["name"])
            last = max(last, int(deleted["metadata"]["resourceVersion"]))
        except ApiError as e:
            if e.code != 404:
                raise
    return out, last
