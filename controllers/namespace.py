"""The namespace controller: empties a Terminating namespace, then finalizes it."""

from __future__ import annotations

import logging
from typing import Any

from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import NAMESPACES
from fakeapi.runtime.component import ComponentContext, Controller

log = logging.getLogger(__name__)

Obj = dict[str, Any]
FINALIZER = "kubernetes"


class NamespaceController(Controller[str]):
    """Deletes everything in a namespace being deleted, then removes its `kubernetes` finalizer.

    Keys are namespace names. A Terminating namespace is looked at again whenever an object
    in it changes or goes, so one whose contents wait for finalizers finishes as soon as the
    last of them is gone, with no polling.
    """

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.namespaces = self.watch(NAMESPACES.resource_id, self._terminating)
        self.contents = [kind for kind in self.client.resources()
                         if kind.namespaced and "list" in kind.verbs
                         and "delete" in kind.verbs]
        for kind in self.contents:
            if "watch" in kind.verbs:
                self.watch(kind.resource_id, self._content_changed)

    def _terminating(self, type_: str, ns: Obj, old: Obj | None) -> list[str]:
        meta = ns["metadata"]
        return [meta["name"]] if meta.get("deletionTimestamp") and type_ != "DELETED" else []

    def _content_changed(self, type_: str, obj: Obj, old: Obj | None) -> list[str]:
        name = obj["metadata"].get("namespace", "")
        ns = self.namespaces.cache.get(name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return []
        return [name]

    async def reconcile(self, key: str) -> None:
        """One pass: delete contents; finalize when nothing is left."""
        ns = self.namespaces.cache.get(key)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining = 0
        for kind in self.contents:
            # read-only: only counted, and name + deletionTimestamp read
            for obj in await self.client.list(kind.resource_id, key, copy=False):
                remaining += 1
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    await self.client.delete(kind.resource_id, obj["metadata"]["name"], key)
                except ApiError as e:
                    if e.code != 404:
                        raise
        if remaining:
            # the deletions (and finalizers still held) bring this namespace back here
            return
        try:
            current = await self.client.get(NAMESPACES.resource_id, key)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        finalizers = (current.get("spec") or {}).get("finalizers") or []
        if FINALIZER not in finalizers:
            return
        current.setdefault("spec", {})["finalizers"] = [f for f in finalizers if f != FINALIZER]
        await self.client.update(NAMESPACES.resource_id, current, subresource="finalize")

