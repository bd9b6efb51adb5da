"""The namespace controller: empties a Terminating namespace, then finalizes it."""

from __future__ import annotations

import asyncio
import logging

from controllers.workqueue import work
from fakeapi.client import Client
from fakeapi.errors import ApiError

log = logging.getLogger(__name__)


class NamespaceController:
    """Deletes everything in a namespace being deleted, then removes its `kubernetes` finalizer."""

    def __init__(self, *, client: Client) -> None:
        self.client = client

    async def run(self) -> None:
        """Watch namespaces; retry Terminating ones until their contents are gone."""
        queue: asyncio.Queue[str] = asyncio.Queue()

        async def feed() -> None:
            async for _type, ns in self.client.watch("namespaces"):
                if ns["metadata"].get("deletionTimestamp"):
                    queue.put_nowait(ns["metadata"]["name"])

        feeder = asyncio.create_task(feed())
        try:
            await work(queue, self.reconcile)
        finally:
            feeder.cancel()

    async def reconcile(self, name: str) -> bool:
        """One pass: delete contents; finalize when nothing is left. True when finalized."""
        remaining = 0
        for kind in self.client.cluster.kinds.kinds:
            if not kind.namespaced or "list" not in kind.verbs:
                continue
            # read-only: only counted, and name + deletionTimestamp read
            for obj in await self.client.list(kind.resource_id, name, copy=False):
                remaining += 1
                if obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    await self.client.delete(kind.resource_id, obj["metadata"]["name"], name)
                except ApiError as e:
                    if e.code != 404:
                        log.warning("namespace %s: deleting %s: %s", name, kind.resource_id, e)
        if remaining:
            # objects with finalizers are still going: look again when anything changes
            return False
        try:
            ns = await self.client.get("namespaces", name)
        except ApiError:
            return True
        ns.setdefault("spec", {})["finalizers"] = [
            f for f in ns["spec"].get("finalizers") or [] if f != "kubernetes"]
        await self.client.update("namespaces", ns, subresource="finalize")
        return True
