"""The fake drivers' controllers with the BindingConditions plugin (a profile's
`controllerPlugins: [BindingConditions]`): in a claim allocated with devices of such a
driver on an emulated node, each binding condition of those devices is set True in
`status.devices`, with the node's plugin identity; keys are (node, driver, claim key)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fakeapi.registry.kinds import RESOURCE_CLAIMS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.informer import object_key
from kubelet_emu.node_state import EmulatedNodes
from kubelet_emu.plugin import Claim

Obj = dict[str, Any]
CLAIMS = RESOURCE_CLAIMS.resource_id
BindingKey = tuple[str, str, str]
"""(node, driver, namespace/name of the claim)."""


class BindingConditionsController(Controller[BindingKey]):
    """Satisfies the binding conditions of the fake drivers that do (see the module
    docstring)."""

    workers = 2

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.claim_informer = self.watch(CLAIMS, self._binding_keys)

    def _binding_keys(self, type_: str, claim: Obj, old: Obj | None) -> Iterable[BindingKey]:
        """A key for each driver of ours whose controller satisfies binding conditions still
        unmet in the claim."""
        if type_ == "DELETED":
            return []
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        keys: list[BindingKey] = []
        for node, driver in sorted({(r.get("pool", ""), r.get("driver", "")) for r in results
                                    if r.get("bindingConditions")}):
            state = self.nodes.by_name.get(node)
            plugin = state.fakes.get(driver) if state is not None else None
            if plugin is not None and plugin.satisfies_binding_conditions and \
                    plugin.unsatisfied_bindings(status):
                keys.append((node, driver, object_key(claim)))
        return keys

    async def reconcile(self, key: BindingKey) -> None:
        """Let the driver's controller set the binding conditions of the claim."""
        node, driver, claim_key = key
        state = self.nodes.by_name.get(node)
        plugin = state.fakes.get(driver) if state is not None else None
        namespace, _, name = claim_key.partition("/")
        claim = self.claim_informer.cache.get(name, namespace)
        if plugin is None or claim is None:
            return
        await plugin.satisfy_binding_conditions(Claim(namespace=namespace, name=name,
                                                      uid=claim["metadata"]["uid"]))
