"""The ServiceAccount controller: a `default` ServiceAccount in every namespace, recreated
when deleted, as kube-controller-manager's serviceaccount controller does."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import NAMESPACES, SERVICE_ACCOUNTS
from fakeapi.runtime.component import ComponentContext, Controller

Obj = dict[str, Any]
DEFAULT = "default"


class ServiceAccountController(Controller[str]):
    """Keys are namespace names."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.namespaces = self.watch(NAMESPACES.resource_id)
        self.accounts = self.watch(SERVICE_ACCOUNTS.resource_id, self._account_gone)

    @staticmethod
    def _account_gone(type_: str, obj: Obj, old: Obj | None) -> list[str]:
        meta = obj["metadata"]
        return [meta.get("namespace", "")] if meta["name"] == DEFAULT else []

    async def reconcile(self, key: str) -> None:
        """Create `default` in an active namespace that lacks it."""
        ns = self.namespaces.cache.get(key)
        if ns is None or ns["metadata"].get("deletionTimestamp") or (
                (ns.get("status") or {}).get("phase") == "Terminating"):
            return
        if self.accounts.cache.get(DEFAULT, key) is not None:
            return
        try:
            await self.client.create(SERVICE_ACCOUNTS.resource_id,
                                     {"metadata": {"name": DEFAULT}}, key)
        except ApiError as e:
            if e.code not in (409, 403, 404):  # exists, or the namespace is going away
                raise
