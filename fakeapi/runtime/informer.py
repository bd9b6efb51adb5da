"""Shared informers: one list+watch per kind, an indexed cache, handlers for every reader.

The Python counterpart of client-go's shared informer. However many components read a kind,
one watch feeds one cache; each change is delivered to every registered handler (which
should only enqueue keys). A watch that falls out of the log's window (410 Expired) is
resumed by a relist, which delivers the difference as ADDED/MODIFIED/DELETED so handlers
never miss a change. Objects in the cache and in handler calls are shared and read-only.

The client is any `fakeapi.client.ApiClient`: the in-process one, or a `RemoteClient` over
HTTPS to any API server, whose watches carry bookmarks (they move the revision the next watch
resumes from) and whose 410 answers come back as ERROR events.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import Callable, Iterable
from typing import Any

from fakeapi.client import ApiClient
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.watchtypes import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED

Obj = dict[str, Any]
Handler = Callable[[str, Obj, "Obj | None"], None]
"""`handler(type, obj, old)`: type ADDED/MODIFIED/DELETED, `old` the previous version."""
IndexFunc = Callable[[Obj], Iterable[str]]

log = logging.getLogger(__name__)


def object_key(obj: Obj) -> str:
    """`namespace/name`, or `name` for a cluster-scoped object (client-go's key function)."""
    meta = obj["metadata"]
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


def namespace_index(obj: Obj) -> list[str]:
    """Index values by namespace."""
    return [obj["metadata"].get("namespace", "")]


class Cache:
    """Objects of one kind by key, with named secondary indexes."""

    def __init__(self) -> None:
        self._objects: dict[str, Obj] = {}
        self._index_funcs: dict[str, IndexFunc] = {"namespace": namespace_index}
        self._indexes: dict[str, dict[str, set[str]]] = {"namespace": {}}

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Add a secondary index (built at once over what is cached)."""
        if name in self._index_funcs:
            if self._index_funcs[name] is not func:
                raise ValueError(f"index {name!r} already defined differently")
            return
        self._index_funcs[name] = func
        self._indexes[name] = {}
        for key, obj in self._objects.items():
            self._index(name, key, obj)

    def _index(self, name: str, key: str, obj: Obj) -> None:
        index = self._indexes[name]
        for value in self._index_funcs[name](obj):
            index.setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, func in self._index_funcs.items():
            index = self._indexes[name]
            for value in func(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def put(self, obj: Obj) -> Obj | None:
        """Store `obj`; returns the version it replaced."""
        key = object_key(obj)
        old = self._objects.get(key)
        if old is not None:
            self._unindex(key, old)
        self._objects[key] = obj
        for name in self._index_funcs:
            self._index(name, key, obj)
        return old

    def remove(self, obj: Obj) -> Obj | None:
        """Forget the object with `obj`'s key; returns what was cached."""
        key = object_key(obj)
        old = self._objects.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def get(self, name: str, namespace: str = "") -> Obj | None:
        """One cached object."""
        return self._objects.get(f"{namespace}/{name}" if namespace else name)

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Cached objects (of one namespace when given), in key order."""
        if namespace is None:
            return [self._objects[k] for k in sorted(self._objects)]
        return self.by_index("namespace", namespace)

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        """Objects whose index `name` has `value`, in key order."""
        return [self._objects[k] for k in sorted(self._indexes[name].get(value, ()))]

    def keys(self) -> builtins.list[str]:
        """Every cached key, sorted."""
        return sorted(self._objects)

    def items(self) -> builtins.list[tuple[str, Obj]]:
        """(key, object) pairs, in key order."""
        return sorted(self._objects.items())

    def __len__(self) -> int:
        return len(self._objects)


class Informer:
    """List+watch of one resource into a Cache, fanned out to handlers."""

    def __init__(self, *, client: ApiClient, resource: str) -> None:
        self.client = client
        self.resource = resource
        self.cache = Cache()
        self.revision = 0
        """The newest revision this informer has delivered."""
        self.synced = False
        self.relists = 0
        self._synced_event = asyncio.Event()
        self._handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> None:
        """Deliver every later change to `handler` (and what is cached now, as ADDED)."""
        self._handlers.append(handler)
        for obj in self.cache.list():
            self._call(handler, ADDED, obj, None)

    async def wait_synced(self) -> None:
        """Return once the first list has been delivered."""
        await self._synced_event.wait()

    def busy(self) -> bool:
        """Whether committed changes of this resource are not delivered yet."""
        return not self.synced or self.revision < self.client.latest_revision(self.resource)

    def ready(self) -> bool:
        """Whether the first list has been delivered."""
        return self.synced

    def not_ready_reason(self) -> str:
        """Why not ready: the list is not delivered (again, after a 410)."""
        return "not synced: the list is not delivered yet"

    async def run(self) -> None:
        """List, then watch from the list's revision; relist when the watch expires.

        Restarted (after a crash), it resumes watching where it stopped, and relists only
        if that revision has expired meanwhile.
        """
        while True:
            if not self.synced:
                items, revision = await self.client.snapshot(self.resource)
                self._replace(items, revision)
            await self._watch()
            self.relists += 1
            self.synced = False
            log.info("informer %s: watch expired at %d, relisting", self.resource,
                     self.revision)

    async def _watch(self) -> None:
        """Deliver watch events until the watch expires (410); other errors raise."""
        while True:
            async for type_, obj in self.client.watch(
                    self.resource, resource_version=str(self.revision), copy=False):
                if type_ == ERROR:
                    if obj.get("code") == 410:
                        return
                    raise ApiError(int(obj.get("code") or 500), str(obj.get("reason", "")),
                                   str(obj.get("message", "")))
                if type_ in (ADDED, MODIFIED, DELETED):
                    self._deliver(type_, obj)
                elif type_ == BOOKMARK:  # caught up: a later watch resumes from here
                    self.revision = max(self.revision,
                                        int(obj["metadata"]["resourceVersion"]))

    def _deliver(self, type_: str, obj: Obj) -> None:
        old = self.cache.remove(obj) if type_ == DELETED else self.cache.put(obj)
        self.revision = int(obj["metadata"]["resourceVersion"])
        for handler in self._handlers:
            try:  # (inlined `_call`: this is the per-event hot path)
                handler(type_, obj, old)
            except Exception:
                self._failed(handler, type_, obj)

    def _replace(self, items: list[Obj], revision: int) -> None:
        """A fresh list: deliver what changed since the cache was last filled."""
        fresh = {object_key(o) for o in items}
        for gone in [o for k, o in self.cache.items() if k not in fresh]:
            self.cache.remove(gone)
            for handler in self._handlers:
                self._call(handler, DELETED, gone, gone)
        for obj in items:
            old = self.cache.put(obj)
            if old is None or old["metadata"]["resourceVersion"] != \
                    obj["metadata"]["resourceVersion"]:
                for handler in self._handlers:
                    self._call(handler, ADDED if old is None else MODIFIED, obj, old)
        self.revision = revision
        self.synced = True
        self._synced_event.set()

    def _call(self, handler: Handler, type_: str, obj: Obj, old: Obj | None) -> None:
        try:
            handler(type_, obj, old)
        except Exception:
            self._failed(handler, type_, obj)

    def _failed(self, handler: Handler, type_: str, obj: Obj) -> None:
        """Log a handler's exception: one broken handler must not starve the others."""
        log.exception("informer %s: handler %r failed on %s %s", self.resource, handler,
                      type_, object_key(obj))


class Informers:
    """The shared informer factory: one Informer per resource, started when first asked for
    once the factory runs."""

    def __init__(self, *, client: ApiClient) -> None:
        self.client = client
        self._informers: dict[str, Informer] = {}
        self._start: Callable[[Informer], None] | None = None

    def get(self, resource: str) -> Informer:
        """The shared informer of `resource` (a resource id such as `pods`)."""
        informer = self._informers.get(resource)
        if informer is None:
            self.client.kind(resource)  # 404 now for a resource that is not served
            informer = self._informers[resource] = Informer(client=self.client,
                                                            resource=resource)
            if self._start is not None:
                self._start(informer)
        return informer

    def start(self, start: Callable[[Informer], None]) -> None:
        """Run every informer through `start` (now, and each one created later)."""
        self._start = start
        for informer in list(self._informers.values()):
            start(informer)

    def all(self) -> list[Informer]:
        """Every informer created so far."""
        return list(self._informers.values())

    def busy(self) -> bool:
        """Whether any informer has changes not delivered yet."""
        return any(i.busy() for i in self._informers.values())
