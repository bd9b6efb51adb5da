"""The garbage collector: deletes dependents whose owners are gone, and finishes
Foreground and Orphan deletions (the `foregroundDeletion` and `orphan` finalizers)."""

from __future__ import annotations

import logging
from typing import Any

from fakeapi.machinery.errors import ApiError
from fakeapi.runtime.component import ComponentContext, Controller, KeyFunc
from fakeapi.runtime.workqueue import Retry

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Ref = tuple[str, str, str]  # resource id, name, namespace (the client's argument order)
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


class GarbageCollector(Controller[str]):
    """Tracks ownerReferences of every object and acts when owners go away.

    Its work-queue keys are owner uids: an owner that disappeared (its dependents go or
    lose the reference) or that is being deleted with the orphan or foreground finalizer.
    """

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.uids: dict[str, Ref] = {}  # uid → live object
        self.dependents: dict[str, set[Ref]] = {}  # owner uid → dependents
        self.owners: dict[Ref, list[str]] = {}  # dependent → owner uids
        self.deleting: set[str] = set()
        """Uids of live objects seen being deleted with the orphan or foreground finalizer:
        the only owners a dependent's change concerns (as upstream's graph builder)."""
        for kind in self.client.resources():
            if "watch" in kind.verbs and "list" in kind.verbs:
                self.watch(kind.resource_id, self._keys_of(kind.resource_id))

    def _keys_of(self, resource: str) -> KeyFunc:
        """The key function of one resource's informer: its changes go through `observe`."""
        return lambda type_, obj, old: self.observe(resource, type_, obj)

    def observe(self, resource: str, type_: str, obj: Obj) -> list[str]:
        """Update the indexes from one change; return the owner uids that need a look."""
        meta = obj["metadata"]
        ref = (resource, meta["name"], meta.get("namespace", ""))
        uid = meta["uid"]
        # a dependent changed or went: its owners may be waiting for it (Foreground)
        todo: list[str] = []
        for owner in self.owners.pop(ref, []):
            if owner in self.deleting or owner not in self.uids:
                todo.append(owner)
            deps = self.dependents.get(owner)
            if deps is not None:
                deps.discard(ref)
                if not deps:  # keep the index as small as the live ownerReferences
                    del self.dependents[owner]
        if type_ == "DELETED":
            self.uids.pop(uid, None)
            self.deleting.discard(uid)
            todo.append(uid)
            return todo
        self.uids[uid] = ref
        owners = [o["uid"] for o in meta.get("ownerReferences") or [] if o.get("uid")]
        if owners:
            self.owners[ref] = owners
            for owner in owners:
                self.dependents.setdefault(owner, set()).add(ref)
                if owner not in self.uids:
                    todo.append(owner)
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp") and (ORPHAN in finalizers or FOREGROUND in finalizers):
            self.deleting.add(uid)
            todo.append(uid)
        else:
            self.deleting.discard(uid)
        return todo

    async def reconcile(self, key: str) -> None:
        """Act for one owner uid; `Retry` while a foreground owner waits for dependents.

        A 404 means someone else finished the job; a 409 is retried by the queue.
        """
        uid = key
        ref = self.uids.get(uid)
        dependents = sorted(self.dependents.get(uid, ()))
        try:
            if ref is None:
                for dep in dependents:
                    await self._owner_gone(dep, uid)
                return
            if uid not in self.deleting:
                return  # nothing to finish: its deletion, once seen, brings it back
            owner = await self.client.get(*ref)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        finalizers = owner["metadata"].get("finalizers") or []
        if not owner["metadata"].get("deletionTimestamp"):
            return
        if ORPHAN in finalizers:
            for dep in dependents:
                await self._drop_reference(dep, uid)
            await self._remove_finalizer(ref, ORPHAN)
        elif FOREGROUND in finalizers:
            if dependents:
                for dep in dependents:
                    await self._delete(dep, "Foreground")
                raise Retry(reason="waiting for foreground dependents")
            # nothing awaited since the GET: `owner` is still current (and our own copy)
            await self._remove_finalizer(ref, FOREGROUND, owner)

    async def _owner_gone(self, dep: Ref, uid: str) -> None:
        """Delete a dependent whose owners are all gone; else drop the dangling reference."""
        if all(o not in self.uids for o in self.owners.get(dep, [uid])):
            await self._delete(dep, "Background")
        else:
            await self._drop_reference(dep, uid)

    async def _delete(self, dep: Ref, policy: str) -> None:
        try:
            await self.client.delete(*dep, propagation_policy=policy)
        except ApiError as e:
            if e.code != 404:
                raise

    async def _drop_reference(self, dep: Ref, uid: str) -> None:
        try:
            obj = await self.client.get(*dep)
        except ApiError as e:
            if e.code == 404:
                return
            raise
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        if refs:
            obj["metadata"]["ownerReferences"] = refs
        else:
            obj["metadata"].pop("ownerReferences", None)
        await self.client.update(dep[0], obj)

    async def _remove_finalizer(self, ref: Ref, finalizer: str, obj: Obj | None = None) -> None:
        """Drop `finalizer` from the object at `ref` (`obj`: a current copy already read)."""
        if obj is None:
            obj = await self.client.get(*ref)
        obj["metadata"]["finalizers"] = [
            f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        await self.client.update(ref[0], obj)
