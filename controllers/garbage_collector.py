"""The garbage collector: deletes dependents whose owners are gone, and finishes
Foreground and Orphan deletions (the `foregroundDeletion` and `orphan` finalizers)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controllers.workqueue import work
from fakeapi.client import Client
from fakeapi.errors import ApiError

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Ref = tuple[str, str, str]  # resource id, namespace, name
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"


class GarbageCollector:
    """Tracks ownerReferences of every object and acts when owners go away."""

    def __init__(self, *, client: Client) -> None:
        self.client = client
        self.uids: dict[str, Ref] = {}  # uid → live object
        self.dependents: dict[str, set[Ref]] = {}  # owner uid → dependents
        self.owners: dict[Ref, list[str]] = {}  # dependent → owner uids
        self.queue: asyncio.Queue[str] = asyncio.Queue()

    async def run(self) -> None:
        """Watch every served kind; process owner uids whose state changed."""
        watchers = [asyncio.create_task(self._watch(k.resource_id))
                    for k in self.client.cluster.kinds.kinds if "watch" in k.verbs]
        try:
            await work(self.queue, self.process)
        finally:
            for w in watchers:
                w.cancel()

    async def _watch(self, resource: str) -> None:
        async for type_, obj in self.client.watch(resource, copy=False):
            self.observe(resource, type_, obj)

    def observe(self, resource: str, type_: str, obj: Obj) -> None:
        """Update the indexes from one watch event and queue the uids that need work."""
        meta = obj["metadata"]
        ref = (resource, meta.get("namespace", ""), meta["name"])
        uid = meta["uid"]
        for owner in self.owners.pop(ref, []):
            deps = self.dependents.get(owner)
            if deps is not None:
                deps.discard(ref)
                if not deps:  # keep the index as small as the live ownerReferences
                    del self.dependents[owner]
        if type_ == "DELETED":
            self.uids.pop(uid, None)
            self.queue.put_nowait(uid)
            return
        self.uids[uid] = ref
        owners = [o["uid"] for o in meta.get("ownerReferences") or [] if o.get("uid")]
        if owners:
            self.owners[ref] = owners
            for owner in owners:
                self.dependents.setdefault(owner, set()).add(ref)
                if owner not in self.uids:
                    self.queue.put_nowait(owner)
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp") and (ORPHAN in finalizers or FOREGROUND in finalizers):
            self.queue.put_nowait(uid)

    async def process(self, uid: str) -> bool:
        """Act for one owner uid; False when it must be looked at again later."""
        ref = self.uids.get(uid)
        dependents = sorted(self.dependents.get(uid, ()))
        try:
            if ref is None:
                for dep in dependents:
                    await self._owner_gone(dep, uid)
                return True
            owner = await self.client.get(ref[0], ref[2], ref[1])
            finalizers = owner["metadata"].get("finalizers") or []
            if not owner["metadata"].get("deletionTimestamp"):
                return True
            if ORPHAN in finalizers:
                for dep in dependents:
                    await self._drop_reference(dep, uid)
                await self._remove_finalizer(ref, ORPHAN)
            elif FOREGROUND in finalizers:
                if dependents:
                    for dep in dependents:
                        await self._delete(dep, "Foreground")
                    return False
                # nothing awaited since the GET: `owner` is still current (and our own copy)
                await self._remove_finalizer(ref, FOREGROUND, owner)
        except ApiError as e:
            if e.code not in (404, 409):
                log.warning("garbage collector: %s: %s", uid, e)
            return e.code == 404
        return True

    async def _owner_gone(self, dep: Ref, uid: str) -> None:
        """Delete a dependent whose owners are all gone; else drop the dangling reference."""
        if all(o not in self.uids for o in self.owners.get(dep, [uid])):
            await self._delete(dep, "Background")
        else:
            await self._drop_reference(dep, uid)

    async def _delete(self, dep: Ref, policy: str) -> None:
        try:
            await self.client.delete(dep[0], dep[2], dep[1], propagation_policy=policy)
        except ApiError as e:
            if e.code != 404:
                raise

    async def _drop_reference(self, dep: Ref, uid: str) -> None:
        obj = await self.client.get(dep[0], dep[2], dep[1])
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
        if refs:
            obj["metadata"]["ownerReferences"] = refs
        else:
            obj["metadata"].pop("ownerReferences", None)
        await self.client.update(dep[0], obj)

    async def _remove_finalizer(self, ref: Ref, finalizer: str, obj: Obj | None = None) -> None:
        """Drop `finalizer` from the object at `ref` (`obj`: a current copy already read)."""
        if obj is None:
            obj = await self.client.get(ref[0], ref[2], ref[1])
        obj["metadata"]["finalizers"] = [
            f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
        await self.client.update(ref[0], obj)
