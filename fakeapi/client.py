"""The in-process API client: how the scheduler, controllers and kubelets talk to the cluster.

It goes through the same registry path as HTTP requests (same validation, defaulting,
optimistic concurrency, RBAC for its identity), acts under its own identity, and returns
plain dicts that the caller owns.

Imports: the registry and the layers below it (a layer of the core).
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

from fakeapi.auth import authz
from fakeapi.auth.authn import AUTHENTICATED, UserInfo
from fakeapi.auth.rbac import Authorizer
from fakeapi.kube.podio import NodeStreams, PodIO
from fakeapi.machinery import selectors
from fakeapi.machinery.decode import json_copy
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.jsonio import dumps, loads
from fakeapi.registry.context import RequestContext
from fakeapi.registry.generic import Registry, WriteResult
from fakeapi.registry.listing import item_object, item_raw
from fakeapi.registry.rest import Kind
from fakeapi.storage.log import Event
from fakeapi.storage.watch import WatchSpec, notices

Obj = dict[str, Any]
PATCH_TYPES = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}


VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")
"""The verbs a Client call authorizes."""


def delete_options(propagation_policy: str | None, grace_period_seconds: int | None,
                   preconditions: Mapping[str, str] | None) -> Obj:
    """The DeleteOptions fields a delete call sets (none: {})."""
    options: Obj = {}
    if propagation_policy:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        options["preconditions"] = dict(preconditions)
    return options


class ObjectClient(Protocol):
    """The object calls a component makes, whichever way it reaches the API: `Client` in
    process, `fakeapi.remote_client.RemoteClient` over HTTPS (a standalone driver; `ApiClient`
    is the whole seam). Same
    argument order and meaning as `Client`'s methods; failures are `ApiError`s."""

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        """GET one object."""
        ...

    async def list(self, resource: str, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "",
                   copy: bool = True) -> builtins.list[Obj]:
        """LIST objects (all namespaces when namespace is None)."""
        ...

    async def create(self, resource: str, obj: Obj, namespace: str = "", *,
                     copy: bool = True) -> Obj:
        """CREATE; the namespace defaults to the object's."""
        ...

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     copy: bool = True) -> Obj:
        """UPDATE (PUT) the object or one subresource."""
        ...

    async def patch(self, resource: str, name: str, patch: Any, *, namespace: str = "",
                    patch_type: str = "merge", subresource: str = "",
                    force: bool = False, copy: bool = True) -> Obj:
        """PATCH with one of `PATCH_TYPES`."""
        ...

    async def delete(self, resource: str, name: str, namespace: str = "", *,
                     propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     copy: bool = True) -> Obj:
        """DELETE; the object as the server answers it."""
        ...


class ApiClient(ObjectClient, Protocol):
    """Everything a component and the shared informers use: the object calls, discovery,
    list-then-watch, POSTs to subresources and the pod-stream registration. The one seam
    between the components and an API server: `Client` in process, and
    `fakeapi.remote_client.RemoteClient` over HTTPS (`fakeapi emulate`)."""

    def resources(self) -> tuple[Kind, ...]:
        """Discovery: every kind the server serves (that the kind table knows)."""
        ...

    def kind(self, resource: str) -> ResourceType:
        """The type served under a resource id (404 `ApiError` when not served)."""
        ...

    def latest_revision(self, resource: str) -> int:
        """The newest committed change of `resource` the client knows of (0: unknown), so
        an informer behind it counts as busy for quiescence."""
        ...

    async def snapshot(self, resource: str, namespace: str | None = None, *,
                       label_selector: str = "", field_selector: str = "",
                       copy: bool = True) -> tuple[builtins.list[Obj], int]:
        """LIST, with the revision the list is consistent at (to watch from)."""
        ...

    def watch(self, resource: str, namespace: str | None = None, *,
              resource_version: str = "", label_selector: str = "",
              field_selector: str = "", timeout: float = 1e9, copy: bool = True
              ) -> AsyncIterator[tuple[str, Obj]]:
        """Watch events as (type, object) pairs, with BOOKMARKs; an expired revision is an
        ERROR event whose Status has code 410."""
        ...

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj,
                                 *, namespace: str = "", copy: bool = True) -> Obj:
        """POST a body to a subresource that takes one (`pods/NAME/binding`)."""
        ...

    def serve_pod_streams(self, node: str, streams: NodeStreams | None) -> None:
        """Serve the logs and exec of `node`'s pods through `streams` (None: stop)."""
        ...


class Client:
    """Async CRUD and watch on resources named by id (`pods`, `resourceclaims.resource.k8s.io`).

    The narrow interface every component talks through: calls take (resource, name,
    namespace) in that order, discovery is `resources()`, and nothing of the server's
    internals is reachable from it.
    """

    def __init__(self, *, registry: Registry, authorizer: Authorizer, user: str,
                 groups: tuple[str, ...] = (),
                 extra: Mapping[str, tuple[str, ...]] | None = None) -> None:
        self._registry = registry
        self._authorizer = authorizer
        self.info = UserInfo(user, groups=(*groups, AUTHENTICATED), extra=dict(extra or {}))
        ctx = RequestContext(user=user, groups=self.info.groups, extra=self.info.extra,
                             field_manager=user.rsplit(":", 1)[-1])
        self._contexts = {(verb, ""): dataclasses.replace(ctx, verb=verb) for verb in VERBS}

    def _authorize(self, verb: str, kind: Kind, namespace: str | None, name: str = "",
                   subresource: str = "") -> RequestContext:
        """RBAC for one call (403 like an HTTP client gets); the context carries the verb."""
        authz.authorize(self._authorizer, self.info, verb, kind, namespace, name, subresource)
        ctx = self._contexts.get((verb, subresource))
        if ctx is None:
            ctx = self._contexts[verb, subresource] = dataclasses.replace(
                self._contexts[verb, ""], subresource=subresource)
        return ctx

    @property
    def user(self) -> str:
        """The identity this client acts as."""
        return self.info.name

    def resources(self) -> tuple[Kind, ...]:
        """Discovery: every served kind."""
        return self._registry.kinds.kinds

    def serve_pod_streams(self, node: str, streams: NodeStreams | None) -> None:
        """Serve the logs and exec of `node`'s pods through `streams` (an emulated
        kubelet's, see `fakeapi.kube.podio`); None stops serving them."""
        pod_io = self._registry.env.services.get("pod_io")
        if not isinstance(pod_io, PodIO):
            raise ApiError(503, "ServiceUnavailable", "this server has no pod streams")
        if streams is None:
            pod_io.unregister(node)
        else:
            pod_io.register(node, streams)

    def latest_revision(self, resource: str) -> int:
        """The revision of the newest committed change of `resource` (0 if none)."""
        return self._registry.store.log.last_change(self.kind(resource).resource_id)

    def kind(self, resource: str) -> Kind:
        """The kind served under a resource id (404 when not served)."""
        kind = self._registry.kinds.by_id(resource)
        if kind is None:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource "
                           f"({resource})")
        return kind

    async def _done(self, result: WriteResult, copy: bool) -> Obj:
        if result.event is not None:  # answered once durable, as an HTTP client is
            await self._registry.store.log.durable(result.event.revision)
            if not copy and result.body is None:
                return result.event.object
        return loads(result.raw)  # a copy the caller owns

    async def get(self, resource: str, name: str, namespace: str = "") -> Obj:
        """GET one object."""
        kind = self.kind(resource)
        self._authorize("get", kind, namespace, name)
        return loads(self._registry.get(kind, namespace, name).raw)  # a copy

    async def list(self, resource: str, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "",
                   copy: bool = True) -> list[Obj]:
        """LIST objects (all namespaces when namespace is None).

        With `copy=False` the objects are the stored ones, shared and read-only: for
        components that only look (the namespace controller counts what is left).
        """
        return (await self.snapshot(resource, namespace, label_selector=label_selector,
                                    field_selector=field_selector, copy=copy))[0]

    async def snapshot(self, resource: str, namespace: str | None = None, *,
                       label_selector: str = "", field_selector: str = "",
                       copy: bool = True) -> tuple[builtins.list[Obj], int]:
        """LIST, with the revision the list is consistent at (to watch from)."""
        kind = self.kind(resource)
        self._authorize("list", kind, namespace)
        pred = selectors.predicate(label_selector, field_selector, kind.field_selectors)
        page = self._registry.list(kind, namespace, predicate=pred)
        if not copy:
            return [item_object(i) for i in page.items], page.revision
        return [loads(item_raw(i)) for i in page.items], page.revision

    async def create(self, resource: str, obj: Obj, namespace: str = "", *,
                     copy: bool = True) -> Obj:
        """CREATE; the namespace defaults to the object's.

        Every write returns the object as stored: a copy the caller owns, or with
        `copy=False` the stored object itself, shared and read-only (for components that
        only look at what they wrote)."""
        ns = namespace or obj.get("metadata", {}).get("namespace", "")
        kind = self.kind(resource)
        ctx = self._authorize("create", kind, ns)
        result = self._registry.create(kind, ns, json_copy(obj), ctx)
        return await self._done(result, copy)

    async def update(self, resource: str, obj: Obj, *, subresource: str = "",
                     copy: bool = True) -> Obj:
        """UPDATE (PUT) the whole object or one subresource; 409 on a stale resourceVersion."""
        meta = obj["metadata"]
        kind = self.kind(resource)
        ctx = self._authorize("update", kind, meta.get("namespace", ""), meta["name"],
                              subresource)
        result = self._registry.update(kind, meta.get("namespace", ""), meta["name"],
                                              json_copy(obj), ctx, subresource)
        return await self._done(result, copy)

    async def patch(self, resource: str, name: str, patch: Any, *, namespace: str = "",
                    patch_type: str = "merge", subresource: str = "",
                    force: bool = False, copy: bool = True) -> Obj:
        """PATCH with `merge`, `strategic`, `json` or `apply` (server-side apply)."""
        kind = self.kind(resource)
        ctx = self._authorize("patch", kind, namespace, name, subresource)
        if force:
            ctx = dataclasses.replace(ctx, force=True)
        result = self._registry.patch(kind, namespace, name,
                                             PATCH_TYPES[patch_type], dumps(patch), ctx,
                                             subresource)
        return await self._done(result, copy)

    async def create_subresource(self, resource: str, name: str, subresource: str, body: Obj,
                                 *, namespace: str = "", copy: bool = True) -> Obj:
        """POST a body to a subresource that takes one (`pods/NAME/binding`); returns the
        object as the subresource left it."""
        kind = self.kind(resource)
        ctx = self._authorize("create", kind, namespace, name, subresource)
        result = await self._registry.post_subresource(kind, namespace, name, subresource,
                                                       json_copy(body), ctx)
        return await self._done(result, copy)

    async def delete(self, resource: str, name: str, namespace: str = "", *,
                     propagation_policy: str | None = None,
                     grace_period_seconds: int | None = None,
                     preconditions: Mapping[str, str] | None = None,
                     copy: bool = True) -> Obj:
        """DELETE (marks objects that have finalizers); policy Background/Foreground/Orphan;
        a grace period (pods: 0 deletes at once) and uid/resourceVersion preconditions."""
        options = delete_options(propagation_policy, grace_period_seconds, preconditions)
        kind = self.kind(resource)
        ctx = self._authorize("delete", kind, namespace, name)
        result = self._registry.delete(kind, namespace, name, ctx, options or None)
        return await self._done(result, copy)

    async def watch(self, resource: str, namespace: str | None = None, *,
                    resource_version: str = "", label_selector: str = "",
                    field_selector: str = "", timeout: float = 1e9, copy: bool = True
                    ) -> AsyncIterator[tuple[str, Obj]]:
        """Watch events as (type, object) pairs; from now with synthetic ADDED when rv is ''.

        With `copy=False` the objects are the stored ones, shared and read-only: for
        components that only look (the garbage collector reads every object of every kind).
        """
        kind = self.kind(resource)
        self._authorize("watch", kind, namespace)
        pred = selectors.predicate(label_selector, field_selector, kind.field_selectors)
        spec = WatchSpec(kind=kind, namespace=namespace, resource_version=resource_version,
                         predicate=pred, timeout=timeout)
        async for batch in notices(self._registry.store, spec):
            for type_, item in batch:
                if isinstance(item, Event):
                    yield type_, loads(item.raw) if copy else item.object
                else:
                    yield type_, item

