"""The generic store path every kind shares: create, get, list, update, patch, delete.

Runs the strategies and the defaulter each kind's row names in kube-apiserver's order
(`fakeapi.registry.rest`), does optimistic concurrency, metadata bookkeeping (uid,
creationTimestamp, generation, finalizers, deletion) and managedFields, then commits exactly
one event per change through `Store.commit()`.
HTTP clients and in-process components both come through here.
"""

from __future__ import annotations

import asyncio
import builtins
import datetime
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from fakeapi.auth.rbac import Authorizer
from fakeapi.machinery import names
from fakeapi.machinery.decode import check_type_meta, decode_body, json_copy, require_object
from fakeapi.machinery.errors import (
    ApiError,
    Cause,
    already_exists,
    bad_request,
    conflict,
    field_invalid,
    forbidden,
    invalid,
    method_not_allowed,
    not_found,
    unsupported_media_type,
)
from fakeapi.machinery.features import FeatureGates
from fakeapi.machinery.field import not_supported
from fakeapi.machinery.jsonio import dumps
from fakeapi.machinery.randomness import RandomBits, RandomSource
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.patching import apply as ssa
from fakeapi.patching.managedfields import record_update
from fakeapi.patching.patch import apply_patch
from fakeapi.registry import conversion, custom, custom_kinds
from fakeapi.registry.context import RequestContext
from fakeapi.registry.kinds import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, KindTable
from fakeapi.registry.listing import ListResult, item_object, list_page
from fakeapi.registry.policy_admission import AdmissionRequest, PolicyAdmission
from fakeapi.registry.rest import (
    ActionStrategy,
    ConnectStrategy,
    CreateSubresourceStrategy,
    Kind,
    StatusStrategy,
    Strategy,
    StrategyEnv,
    SubresourceStrategy,
    TimedStrategy,
    ViewStrategy,
)
from fakeapi.schema import crd, structural
from fakeapi.schema.dropfields import drop_disabled_fields
from fakeapi.schema.schemas import get_schemas, types_of
from fakeapi.storage.log import Event
from fakeapi.storage.store import Store

Obj = dict[str, Any]
APPLY_PATCH = "application/apply-patch+yaml"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
               "generation", "resourceVersion")


class WriteResult:
    """What a write produced: the stored event (or a dry-run object), and warnings.

    `type` is the event type the write committed (or would have, under dryRun); "" when it
    changed nothing.
    """

    __slots__ = ("event", "object", "created", "warnings", "type", "body")

    def __init__(self, *, event: Event | None, object: Obj, created: bool = False,
                 warnings: list[str] | None = None, type: str = "") -> None:
        self.event = event
        self.object = object
        self.created = created
        self.warnings = warnings or []
        self.type = type
        self.body: bytes | None = None
        """What to answer instead of the object (a subresource's view), when set."""

    @property
    def raw(self) -> bytes:
        """The answer's JSON: the view when set, else the object as stored."""
        if self.body is not None:
            return self.body
        return self.event.raw if self.event is not None else dumps(self.object)


def _writable_top(obj: Obj) -> Obj:
    """A copy of a stored object whose top level and first-level objects (metadata, spec,
    status) are new dicts; deeper values are still the stored ones."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in obj.items()}


class Registry:
    """CRUD for every served kind over one Store, each kind through the strategies its row
    names. Without an authorizer, RBAC over the same store is used (the strategies' checks
    need one)."""

    def __init__(self, *, store: Store, kinds: KindTable, randomness: RandomSource | None = None,
                 gates: FeatureGates | None = None, authorizer: Authorizer | None = None,
                 services: Mapping[str, Any] | None = None) -> None:
        self.store = store
        self.kinds = kinds
        self.randomness = randomness or RandomSource()
        """Generated names and UIDs: drawn per write from (seed, revision, actor)."""
        self.schemas = get_schemas()
        self.authorizer = authorizer or Authorizer.for_store(store)
        self.env = StrategyEnv(gates=gates or FeatureGates(), lookup=self._lookup,
                               now=store.clock.now, authorizer=self.authorizer,
                               scan=self._scan, services=dict(services or {}),
                               clock=store.clock)
        self._strategies: dict[str, Strategy] = {}
        self._subresources: dict[str, dict[str, SubresourceStrategy]] = {}
        for kind in kinds.stored:
            self._build_strategies(kind)
        self.policies = PolicyAdmission(scan=self._scan, lookup=self._lookup,
                                        kinds=lambda: self.kinds.kinds)
        """ValidatingAdmissionPolicy enforcement, after every strategy's own admission."""
        self._structs: dict[str, tuple[tuple[str, Obj], ...]] = {}
        self._custom_schemas: dict[str, Obj] = {}
        if kinds.by_id(CUSTOM_RESOURCE_DEFINITIONS.resource_id) is not None:
            for item in self.store.scan(CUSTOM_RESOURCE_DEFINITIONS.resource_id):
                self._serve_crd(item_object(item), deleted=False)

    def _scan(self, resource: str, namespace: str | None) -> builtins.list[Obj]:
        return [item_object(i) for i in self.store.scan(resource, namespace)]

    def _serve_crd(self, obj: Obj, *, deleted: bool) -> None:
        """Serve what a CRD defines now (nothing once it is gone): its kinds join the table,
        with their strategies; a deleted CRD's custom resources are deleted with it."""
        name = obj["metadata"]["name"]
        served = [] if deleted or obj["metadata"].get("deletionTimestamp") else (
            custom_kinds.kinds_for(obj))
        self.kinds.replace_custom(name, served)
        kind = self.kinds.by_id(name)
        if kind is None or not kind.custom_schema:
            self._strategies.pop(name, None)
            self._subresources.pop(name, None)
        else:
            self._build_strategies(kind)
        if deleted:
            for item in list(self.store.scan(name)):
                self.store.commit(DELETED, name, json_copy(item_object(item)),
                                  actor="system:apiextensions-controller")

    def _build_strategies(self, kind: Kind) -> None:
        """The strategies the kind's row names, for its objects and each subresource."""
        self._strategies[kind.resource_id] = kind.strategy(kind, self.env)
        self._subresources[kind.resource_id] = {
            name: cls(kind, self.env) for name, cls in kind.subresources.items()}

    # ----- SubresourceOps: what action subresources do to other objects ----------------------

    def delete_object(self, resource_id: str, namespace: str, name: str, ctx: RequestContext,
                      options: Obj) -> None:
        """DELETE through the generic path (an eviction's pod)."""
        kind = self.kinds.by_id(resource_id)
        assert kind is not None
        self.delete(kind, namespace, name, ctx, options)

    def update_status(self, resource_id: str, obj: Obj, ctx: RequestContext) -> None:
        """A `/status` write through the generic path (an eviction's budget)."""
        kind = self.kinds.by_id(resource_id)
        assert kind is not None
        meta = obj["metadata"]
        self._update(kind, meta.get("namespace", ""), meta["name"], json_copy(obj), ctx,
                     "status", [])

    def _lookup(self, resource: str, namespace: str, name: str) -> Obj | None:
        event = self.store.get(resource, namespace, name)
        return event.object if event is not None else None

    def _subresource(self, kind: Kind, subresource: str) -> SubresourceStrategy:
        """The strategy of a subresource the kind's row lists (404 for any other)."""
        strategy = self._subresources[kind.resource_id].get(subresource)
        if strategy is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource "
                           f"({kind.plural}/{subresource})")
        return strategy

    # ----- reads -------------------------------------------------------------------------

    def get(self, kind: Kind, namespace: str, name: str) -> Event:
        """The stored object as readers see it (durable), or 404."""
        event = self.store.read(kind.resource_id, namespace, name)
        if event is None:
            raise not_found(kind.plural, kind.group, name)
        return event

    def _current(self, kind: Kind, namespace: str, name: str) -> Event:
        """The stored object as the next write sees it (durable or not), or 404."""
        event = self.store.get(kind.resource_id, namespace, name)
        if event is None:
            raise not_found(kind.plural, kind.group, name)
        return event

    def view(self, kind: Kind, subresource: str) -> ViewStrategy | None:
        """The strategy of a subresource read and written as a kind of its own (`scale`)."""
        strategy = self._subresources.get(kind.resource_id, {}).get(subresource)
        return strategy if isinstance(strategy, ViewStrategy) else None

    def locate(self, kind: Kind, namespace: str, name: str, subresource: str,
               options: Mapping[str, str]) -> tuple[Obj, str]:
        """A streamed subresource (`pods/NAME/log`, `exec`): the stored object and the
        container the request reaches, checked as upstream (400 with upstream's text)."""
        strategy = self._subresource(kind, subresource)
        if not isinstance(strategy, ConnectStrategy):
            raise method_not_allowed()
        obj = self.get(kind, namespace, name).object
        return obj, strategy.locate(obj, options)

    def list(self, kind: Kind, namespace: str | None, *,
             predicate: Callable[[Obj], bool] | None = None, limit: int = 0,
             continue_token: str = "", resource_version: str = "",
             resource_version_match: str = "") -> ListResult:
        """One page of matching objects, consistent at the list's revision (the durable one
        unless a continue token or an exact resourceVersion names another)."""
        return list_page(self.store, kind, namespace, predicate=predicate, limit=limit,
                         continue_token=continue_token, resource_version=resource_version,
                         resource_version_match=resource_version_match)

    # ----- writes ------------------------------------------------------------------------

    def create(self, kind: Kind, namespace: str, body: Any, ctx: RequestContext) -> WriteResult:
        """POST: validate and store a new object (409 if the name is taken)."""
        obj, warnings = self._decode_object(kind, body, ctx)
        return self._create(self._stored_row(kind), namespace, conversion.to_storage(obj, kind),
                            ctx, warnings, served=kind)

    def _stored_row(self, kind: Kind) -> Kind:
        """The row a kind is stored under (itself unless it serves another version)."""
        if not kind.storage_version:
            return kind
        stored = self.kinds.by_id(kind.resource_id)
        assert stored is not None  # a served version's stored row is always in the table
        return stored

    def _create(self, kind: Kind, namespace: str, obj: Obj, ctx: RequestContext,
                warnings: builtins.list[str], *, track_fields: bool = True,
                served: Kind | None = None) -> WriteResult:
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        self._check_namespace(kind, namespace, meta)
        if meta.get("resourceVersion"):
            raise invalid(kind.kind, kind.group, meta.get("name", ""), [Cause(
                "metadata.resourceVersion",
                f"Invalid value: \"{meta['resourceVersion']}\": must be empty on create")])
        name = meta.get("name") or ""
        generate = meta.get("generateName") or ""
        # The write will be committed at the next revision (creates are synchronous).
        rng = self.randomness.for_write(self.store.revision + 1, ctx.user)
        if not name and generate:
            name = self._generated_name(kind, namespace, generate, rng)
            meta["name"] = name
        if not name:
            raise invalid(kind.kind, kind.group, "", [Cause(
                "metadata.name", "Required value: name or generateName is required",
                "FieldValueRequired")])
        causes = self._validate_meta(kind, meta)
        strategy = self._strategies[kind.resource_id]
        for f in SERVER_META:
            meta.pop(f, None)
        meta["uid"] = uuid4(rng)  # before the strategy: a Job's selector is made of it
        drop_disabled_fields(kind.drop_fields, obj, None, self.env.gates)
        kind.defaulter(obj)
        strategy.prepare_for_create(obj, ctx)
        self._fill_structs(kind, obj)
        causes += strategy.validate(obj, ctx)
        if causes:
            raise invalid(kind.kind, kind.group, name, causes)
        if self.store.get(kind.resource_id, namespace, name) is not None:
            raise already_exists(kind.plural, kind.group, name)
        now = rfc3339(self.store.clock.now())
        meta["creationTimestamp"] = now
        if kind.has_generation:
            meta["generation"] = 1
        if not meta.get("finalizers"):
            meta.pop("finalizers", None)
        if track_fields:
            meta.pop("managedFields", None)
            self._track_fields(None, obj, served or kind, ctx, now)
        strategy.admit(obj, None, ctx)
        warnings += self._admit_policies(served or kind, "CREATE", obj, None, ctx)
        return self._commit(ADDED, kind, obj, ctx, created=True, warnings=warnings)

    def update(self, kind: Kind, namespace: str, name: str, body: Any, ctx: RequestContext,
               subresource: str = "") -> WriteResult:
        """PUT: replace an object (or one subresource) with optimistic concurrency."""
        view = self.view(kind, subresource)
        if view is not None:
            return self._update_view(kind, namespace, name, view, body, ctx)
        stored = self.store.get(kind.resource_id, namespace, name)
        known = conversion.to_served(stored.object, kind) if stored is not None else None
        obj, warnings = self._decode_object(kind, body, ctx, known)
        return self._update(self._stored_row(kind), namespace, name,
                            conversion.to_storage(obj, kind), ctx, subresource, warnings,
                            served=kind)

    def _update_view(self, kind: Kind, namespace: str, name: str, view: ViewStrategy,
                     body: Any, ctx: RequestContext) -> WriteResult:
        if isinstance(body, tuple):
            body = body[0]
        if not isinstance(body, dict):
            raise bad_request(f"{view.view_kind} must be an object")
        old = self.get(kind, namespace, name).object
        result = self._update(kind, namespace, name, view.unview(body, old), ctx,
                              "scale" if kind.subresources.get("scale") else "", [])
        result.body = orjson.dumps(view.view(result.object))
        return result

    def patch(self, kind: Kind, namespace: str, name: str, patch_type: str, body: bytes,
              ctx: RequestContext, subresource: str = "") -> WriteResult:
        """PATCH of any type, including server-side apply (which may create)."""
        current = self.store.get(kind.resource_id, namespace, name)
        if kind.custom_schema and patch_type == STRATEGIC_PATCH:
            # same as upstream: custom resources take no strategic merge patch
            raise unsupported_media_type(patch_type)
        view = self.view(kind, subresource)
        if view is not None and patch_type != APPLY_PATCH:
            if current is None:
                raise not_found(kind.plural, kind.group, name)
            scale = apply_patch(patch_type, view.view(current.object), body, self._schema_of(
                "autoscaling", "v1", view.view_kind))
            return self._update_view(kind, namespace, name, view, scale, ctx)
        if patch_type == APPLY_PATCH:
            return self._apply(kind, namespace, name, current, body, ctx, subresource)
        if current is None:
            raise not_found(kind.plural, kind.group, name)
        served = conversion.to_served(current.object, kind)
        patched = apply_patch(patch_type, served, body, self._schema(kind))
        if not isinstance(patched, dict):
            raise bad_request("patched object must be a JSON object")
        patched, warnings = self._check_fields(kind, patched, ctx.field_validation, [], served)
        return self._update(self._stored_row(kind), namespace, name,
                            conversion.to_storage(patched, kind), ctx, subresource, warnings,
                            served=kind)

    def _admit_policies(self, served: Kind, operation: str, obj: Obj | None, old: Obj | None,
                        ctx: RequestContext, subresource: str = "") -> builtins.list[str]:
        """The validating admission policies' verdict on a write, objects at the request's
        version: their warnings, or the ApiError of a denial."""
        meta = (obj or old or {}).get("metadata") or {}
        return self.policies.admit(AdmissionRequest(
            kind=served, operation=operation, namespace=meta.get("namespace") or "",
            name=meta.get("name") or "", subresource=subresource,
            obj=None if obj is None else conversion.to_served(obj, served),
            old=None if old is None else conversion.to_served(old, served), ctx=ctx))

    def delete(self, kind: Kind, namespace: str, name: str, ctx: RequestContext,
               options: Obj | None = None) -> WriteResult:
        """DELETE: marks objects with finalizers, removes the rest (after the validating
        admission policies, whose warnings the answer carries)."""
        current = self._current(kind, namespace, name)
        warnings = self._admit_policies(kind, "DELETE", None, current.object, ctx)
        result = self._delete(kind, namespace, name, ctx, options)
        result.warnings = [*result.warnings, *warnings]
        return result

    def _delete(self, kind: Kind, namespace: str, name: str, ctx: RequestContext,
                options: Obj | None) -> WriteResult:
        current = self._current(kind, namespace, name)
        obj = current.object
        options = options or {}
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != obj["metadata"].get("uid"):
            raise conflict(kind.plural, kind.group, name,
                           f"Precondition failed: UID in precondition: {pre['uid']}, "
                           f"UID in object meta: {obj['metadata'].get('uid')}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != obj["metadata"][
                "resourceVersion"]:
            raise conflict(kind.plural, kind.group, name,
                           f"Precondition failed: ResourceVersion in precondition: "
                           f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                           f"{obj['metadata']['resourceVersion']}")
        strategy = self._strategies[kind.resource_id]
        strategy.admit_delete(obj, ctx)
        gc_finalizer = PROPAGATION_FINALIZERS[_propagation(name, options)]
        grace = strategy.grace_period(obj, options)
        if grace:
            graceful = self._graceful(kind, current, grace, gc_finalizer, ctx)
            if graceful is not None:
                return graceful
        replacement = strategy.on_delete(obj)
        if replacement is not None or obj["metadata"].get("finalizers") or gc_finalizer:
            if obj["metadata"].get("deletionTimestamp") and replacement is None:
                return WriteResult(event=current, object=obj)
            new = json_copy(replacement or obj)
            meta = new["metadata"]
            if gc_finalizer and gc_finalizer not in meta.get("finalizers", []):
                # same as upstream: the garbage collector finishes Orphan/Foreground deletes
                meta["finalizers"] = [*meta.get("finalizers", []), gc_finalizer]
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = rfc3339(self.store.clock.now())
                meta["deletionGracePeriodSeconds"] = 0
            if new == obj:
                return WriteResult(event=current, object=obj)
            return self._commit(MODIFIED, kind, new, ctx)
        return self._commit(DELETED, kind, json_copy(obj), ctx)

    def _graceful(self, kind: Kind, current: Event, grace: int, gc_finalizer: str | None,
                  ctx: RequestContext) -> WriteResult | None:
        """Same as upstream's BeforeDelete for a graceful deletion: deletionTimestamp is now
        plus the grace period (a shorter period moves it earlier, a longer one changes
        nothing) and the generation goes up; the object stays until its owner (a kubelet)
        deletes it with grace 0. None when the stored deletion is already due sooner."""
        obj = current.object
        meta = obj["metadata"]
        existing = meta.get("deletionGracePeriodSeconds")
        if meta.get("deletionTimestamp") and (existing is None or existing <= grace):
            return WriteResult(event=current, object=obj)
        new = json_copy(obj)
        nmeta = new["metadata"]
        nmeta["deletionTimestamp"] = rfc3339(
            self.store.clock.now() + datetime.timedelta(seconds=grace))
        nmeta["deletionGracePeriodSeconds"] = grace
        if gc_finalizer and gc_finalizer not in nmeta.get("finalizers", []):
            nmeta["finalizers"] = [*nmeta.get("finalizers", []), gc_finalizer]
        if kind.has_generation:
            nmeta["generation"] = int(nmeta.get("generation") or 0) + 1
        return self._commit(MODIFIED, kind, new, ctx)

    def create_subresource(self, kind: Kind, namespace: str, name: str, subresource: str,
                           body: Any, ctx: RequestContext) -> WriteResult:
        """POST to a subresource that takes a body of its own (`pods/NAME/binding`): the
        subresource's strategy validates the body and changes the stored object (405 for a
        subresource that isn't written that way)."""
        strategy = self._subresource(kind, subresource)
        if not isinstance(strategy, CreateSubresourceStrategy):
            raise method_not_allowed()
        if not isinstance(body, dict):
            raise bad_request(f"{strategy.body_kind} must be an object")
        causes = strategy.validate(body)
        if causes:
            raise invalid(strategy.body_kind, "", name, causes)
        current = self._current(kind, namespace, name)
        if isinstance(strategy, ActionStrategy):
            code, answer = strategy.act(current.object, body, ctx, self)
            return WriteResult(event=None, object=answer, created=code == 201,
                               type="" if ctx.dry_run else MODIFIED)
        return self._commit(MODIFIED, kind, strategy.apply(_writable_top(current.object), body,
                                                           ctx), ctx)

    async def post_subresource(self, kind: Kind, namespace: str, name: str, subresource: str,
                               body: Any, ctx: RequestContext) -> WriteResult:
        """POST to a subresource that takes a body of its own, as `create_subresource` does;
        a timed subresource's work (`TimedStrategy.run`) is awaited first and its write
        follows at once. Work and write finish even when the caller is cancelled (a client
        hanging up), so what the work did is always written."""
        strategy = self._subresource(kind, subresource)
        if not isinstance(strategy, TimedStrategy):
            return self.create_subresource(kind, namespace, name, subresource, body, ctx)
        if not isinstance(body, dict):
            raise bad_request(f"{strategy.body_kind} must be an object")
        current = self._current(kind, namespace, name)

        async def run_then_write() -> WriteResult:
            await strategy.run(current.object, body, ctx)
            return self.create_subresource(kind, namespace, name, subresource, body, ctx)

        return await asyncio.shield(run_then_write())

    def delete_collection(self, kind: Kind, namespace: str | None, ctx: RequestContext, *,
                          predicate: Callable[[Obj], bool] | None = None,
                          options: Obj | None = None) -> builtins.list[WriteResult]:
        """DELETE on a collection: delete every matching object."""
        page = self.list(kind, namespace, predicate=predicate)
        results = []
        for item in page.items:
            meta = item_object(item)["metadata"]
            try:
                results.append(self.delete(kind, meta.get("namespace", ""), meta["name"], ctx,
                                           options))
            except ApiError as e:
                if e.code != 404:
                    raise
        return results

    # ----- internals ---------------------------------------------------------------------

    def _update(self, kind: Kind, namespace: str, name: str, obj: Obj, ctx: RequestContext,
                subresource: str, warnings: builtins.list[str], *, track_fields: bool = True,
                served: Kind | None = None) -> WriteResult:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if meta.get("name") != name:
            raise bad_request(f"the name of the object ({meta.get('name')}) does not match the "
                              f"name on the URL ({name})")
        self._check_namespace(kind, namespace, meta, creating=False)
        current = self._current(kind, namespace, name)
        old = current.object
        old_meta = old["metadata"]
        rv = meta.get("resourceVersion")
        if rv and rv != old_meta["resourceVersion"]:
            raise conflict(kind.plural, kind.group, name)
        drop_disabled_fields(kind.drop_fields, obj, old, self.env.gates, subresource)
        strategy = self._strategies[kind.resource_id]
        if subresource:
            sub = self._subresource(kind, subresource)
            if not isinstance(sub, StatusStrategy):
                raise method_not_allowed()
            sub.prepare_for_update(obj, old, ctx)
            causes = sub.validate_update(obj, old, ctx)
            if causes:
                raise invalid(kind.kind, kind.group, name, causes)
            sub.admit(obj, old, ctx)
            warnings = warnings + self._admit_policies(served or kind, "UPDATE", obj, old, ctx,
                                                       subresource)
        else:
            kind.defaulter(obj)
            strategy.prepare_for_update(obj, old, ctx)
            causes = self._validate_meta(kind, meta) + strategy.validate_update(obj, old, ctx)
            if causes:
                raise invalid(kind.kind, kind.group, name, causes)
            strategy.admit(obj, old, ctx)
            warnings = warnings + self._admit_policies(served or kind, "UPDATE", obj, old, ctx)
        self._fill_structs(kind, obj)
        meta = obj["metadata"]
        for f in SERVER_META:
            if f in old_meta:
                meta[f] = old_meta[f]
            else:
                meta.pop(f, None)
        if kind.has_generation and _spec_of(obj) != _spec_of(old):
            meta["generation"] = old_meta.get("generation", 0) + 1
        if not meta.get("finalizers"):
            meta.pop("finalizers", None)
        if track_fields:
            meta["managedFields"] = old_meta.get("managedFields", [])
            self._track_fields(old, obj, served or kind, ctx, rfc3339(self.store.clock.now()),
                               subresource)
        if not meta.get("managedFields"):
            meta.pop("managedFields", None)
        if meta.get("deletionTimestamp") and not strategy.finalizers_pending(obj):
            return self._commit(DELETED, kind, obj, ctx, warnings=warnings)
        if _same(obj, old):
            return WriteResult(event=current, object=old, warnings=warnings)
        return self._commit(MODIFIED, kind, obj, ctx, warnings=warnings)

    def _apply(self, kind: Kind, namespace: str, name: str, current: Event | None, body: bytes,
               ctx: RequestContext, subresource: str) -> WriteResult:
        config, duplicates = decode_body(body, "application/yaml")
        if not isinstance(config, dict):
            raise bad_request("apply patch must be an object")
        config, warnings = self._check_fields(kind, config, ctx.field_validation, duplicates)
        check_type_meta(config, kind)
        cmeta = config.get("metadata") or {}
        if cmeta.get("name") not in (None, name):
            raise bad_request(f"the name of the object ({cmeta.get('name')}) does not match "
                              f"the name on the URL ({name})")
        if kind.namespaced and cmeta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the "
                              "namespace sent on the request")
        if not ctx.field_manager:
            raise bad_request("PATCH, application/apply-patch+yaml requires fieldManager to be "
                              "set")
        # same as upstream: defaults apply while decoding, before the apply is merged
        kind.defaulter(config)
        now = rfc3339(self.store.clock.now())
        schema = self._schema(kind)
        live = conversion.to_served(current.object, kind) if current is not None else None
        new = ssa.apply(live, config, manager=ctx.field_manager, force=ctx.force, schema=schema,
                        now=now, subresource=subresource)
        new.setdefault("metadata", {})["name"] = name
        if kind.namespaced:
            new["metadata"]["namespace"] = namespace
        new.setdefault("apiVersion", kind.api_version)
        new.setdefault("kind", kind.kind)
        new = conversion.to_storage(new, kind)
        kind = self._stored_row(kind)
        if current is None:
            return self._create(kind, namespace, new, ctx, warnings, track_fields=False)
        return self._update(kind, namespace, name, new, ctx, subresource, warnings,
                            track_fields=False)

    def _track_fields(self, old: Obj | None, obj: Obj, served: Kind, ctx: RequestContext,
                      now: str, subresource: str = "") -> None:
        """managedFields of a create, update or non-apply patch, tracked as upstream's field
        manager tracks them: at the version of the request (its apiVersion and its fields),
        whichever version the object is stored at."""
        view = {**conversion.to_served(obj, served), "metadata": dict(obj["metadata"])}
        record_update(conversion.to_served(old, served) if old is not None else None, view,
                      manager=ctx.manager, schema=self._schema(served), now=now,
                      subresource=subresource)
        managed = view["metadata"].get("managedFields")
        if managed:
            obj["metadata"]["managedFields"] = managed
        else:
            obj["metadata"].pop("managedFields", None)

    def _commit(self, type: str, kind: Kind, obj: Obj, ctx: RequestContext, *,
                created: bool = False, warnings: builtins.list[str] | None = None) -> WriteResult:
        if ctx.dry_run:
            return WriteResult(event=None, object=obj, created=created, warnings=warnings,
                               type=type)
        event = self.store.commit(type, kind.resource_id, obj, actor=ctx.user,
                                  request=ctx.recorded(self.store.log.revision + 1))
        if kind.resource_id == CUSTOM_RESOURCE_DEFINITIONS.resource_id:
            self._serve_crd(event.object, deleted=type == DELETED)
        return WriteResult(event=event, object=event.object, created=created, warnings=warnings,
                           type=type)

    def _decode_object(self, kind: Kind, body: Any, ctx: RequestContext,
                       known: Obj | None = None) -> tuple[Obj, builtins.list[str]]:
        duplicates: list[str] = []
        if isinstance(body, tuple):
            body, duplicates = body
        obj, warnings = self._check_fields(kind, require_object(body, kind),
                                           ctx.field_validation, duplicates, known)
        check_type_meta(obj, kind)
        obj.setdefault("apiVersion", kind.api_version)
        obj.setdefault("kind", kind.kind)
        return obj, warnings

    def _check_fields(self, kind: Kind, obj: Obj, mode: str,
                      duplicates: builtins.list[str], known: Obj | None = None
                      ) -> tuple[Obj, builtins.list[str]]:
        """Decode-check a body (`known`: the stored version it replaces, whose equal
        top-level fields need no second walk)."""
        if kind.custom_schema:
            return self._prune_custom(kind, obj, mode, duplicates)
        schema = self._schema(kind)
        if schema is None:
            return obj, structural.check_duplicates(duplicates, mode, kind=kind.kind,
                                                    version=kind.version)
        return structural.check(obj, schema, mode=mode, duplicates=duplicates, kind=kind.kind,
                                version=kind.version, known=known)

    def _prune_custom(self, kind: Kind, obj: Obj, mode: str,
                      duplicates: builtins.list[str]) -> tuple[Obj, builtins.list[str]]:
        """Same as upstream for custom resources: unknown fields are pruned (a warning in
        Warn mode, a 400 in Strict); the values are checked by the strategy (422)."""
        schema = custom.custom(kind).get("schema") or {}
        pruned, dropped = crd.prune(obj, schema)
        if pruned is obj:
            pruned = json_copy(obj)
        crd.apply_defaults(pruned, schema)
        if mode == "Ignore" or not (dropped or duplicates):
            return pruned, []
        messages = structural.strict_message(duplicates, dropped)
        if mode == "Strict":
            raise bad_request(f"{kind.kind} in version \"{kind.version}\" cannot be handled as "
                              f"a {kind.kind}: strict decoding error: {', '.join(messages)}")
        return pruned, messages

    def _schema(self, kind: Kind) -> Obj | None:
        if kind.custom_schema:
            found = self._custom_schemas.get(kind.custom_schema)
            if found is None:
                found = self._custom_schemas[kind.custom_schema] = custom.wire_schema(kind)
            return found
        return self.schemas.for_gvk(kind.group, kind.version, kind.kind)

    def _schema_of(self, group: str, version: str, kind: str) -> Obj | None:
        return self.schemas.for_gvk(group, version, kind)

    def _fill_structs(self, kind: Kind, obj: Obj) -> None:
        """Same as upstream's encoding: Go's omitempty never drops a struct, so a kind whose
        type has `spec`/`status` structs always sends them (`"status": {}` on a fresh claim;
        typed clients read `claim.status.allocation` without a None check)."""
        fields = self._structs.get(kind.resource_id)
        if fields is None:
            schema = self._schema(kind) or {}
            fields = self._structs[kind.resource_id] = tuple(
                (f, self._zero_fields(schema["properties"][f]) if f == "status" else {})
                for f in struct_fields(schema) if f not in kind.pointer_fields)
        for field, zeros in fields:
            if obj.get(field) is None:
                obj[field] = dict(zeros)

    def _zero_fields(self, node: Obj) -> Obj:
        """Same as Go's encoding of an empty status: its fields without omitempty (the
        schema's required scalars) as zero values (`ReplicaSetStatus{}` is
        `{"replicas": 0}`)."""
        definition = self.schemas.resolve(node)
        zeros: Obj = {}
        for name in definition.get("required") or []:
            kind = types_of(self.schemas.resolve(
                (definition.get("properties") or {}).get(name) or {}))
            for wanted, zero in (("integer", 0), ("number", 0), ("boolean", False),
                                 ("string", "")):
                if kind == {wanted}:
                    zeros[name] = zero
        return zeros

    def _check_namespace(self, kind: Kind, namespace: str, meta: Obj,
                         creating: bool = True) -> None:
        given = meta.get("namespace")
        if not kind.namespaced:
            meta.pop("namespace", None)
            return
        if given and given != namespace:
            raise bad_request("the namespace of the provided object does not match the "
                              "namespace sent on the request")
        meta["namespace"] = namespace
        if not creating:
            return
        ns = self.store.get(NAMESPACES.resource_id, "", namespace)
        if ns is None:
            raise not_found(NAMESPACES.plural, NAMESPACES.group, namespace)
        if ns.object["metadata"].get("deletionTimestamp"):
            raise forbidden(f"{kind.resource_id} \"{meta.get('name') or ''}\" is forbidden: "
                            f"unable to create new content in namespace {namespace} because "
                            "it is being terminated", name=meta.get("name") or "",
                            group=kind.group, kind=kind.plural,
                            causes=[Cause("metadata.namespace", f"namespace {namespace} is "
                                          "being terminated", "NamespaceTerminating")])

    def _validate_meta(self, kind: Kind, meta: Obj) -> builtins.list[Cause]:
        causes = names.metadata_name_causes(kind.name_rule, meta.get("name"),
                                            meta.get("generateName"))
        labels = meta.get("labels") or {}
        if not isinstance(labels, dict):
            return causes
        for key, value in labels.items():
            for m in names.label_key_errors(key):
                causes.append(field_invalid("metadata.labels", key, m))
            for m in names.label_value_errors(str(value)):
                causes.append(field_invalid("metadata.labels", value, m))
        return causes

    def _generated_name(self, kind: Kind, namespace: str, prefix: str,
                        rng: RandomBits) -> str:
        for _ in range(8):
            name = names.generate_name(prefix, rng)
            if self.store.get(kind.resource_id, namespace, name) is None:
                return name
        raise ApiError(500, "AlreadyExists", "could not generate a unique name")


def struct_fields(schema: Obj | None) -> tuple[str, ...]:
    """The top-level `spec`/`status` fields of a kind's schema that are objects (Go structs)."""
    props = (schema or {}).get("properties") or {}
    return tuple(f for f in ("spec", "status")
                 if f in props and ("$ref" in props[f] or "allOf" in props[f]))


PROPAGATION_FINALIZERS = {"Background": None, "Orphan": "orphan",
                          "Foreground": "foregroundDeletion"}


def _propagation(name: str, options: Obj) -> str:
    """The DeleteOptions propagation policy (Background by default), validated like upstream."""
    policy = options.get("propagationPolicy")
    orphan = options.get("orphanDependents")
    if policy is not None and orphan is not None:
        raise invalid("DeleteOptions", "meta.k8s.io", name, [Cause(
            "propagationPolicy", f'Invalid value: "{policy}": orphanDependents and '
            "propagationPolicy cannot both be set")])
    if policy is None:
        return "Orphan" if orphan else "Background"
    if policy not in PROPAGATION_FINALIZERS:
        raise invalid("DeleteOptions", "meta.k8s.io", name, [not_supported(
            "propagationPolicy", policy, ["Foreground", "Background", "Orphan"])])
    return str(policy)


# uuid.UUID(version=4): the version nibble is 4 and the variant bits are RFC 4122's.
_UUID4_KEEP = ~((0xC000 << 48) | (0xF000 << 64)) & ((1 << 128) - 1)
_UUID4_SET = (0x8000 << 48) | (4 << 76)


def uuid4(rng: RandomBits) -> str:
    """`str(uuid.UUID(int=rng.getrandbits(128), version=4))`, without building the object."""
    h = f"{rng.getrandbits(128) & _UUID4_KEEP | _UUID4_SET:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _spec_of(obj: Obj) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _same(new: Obj, old: Obj) -> bool:
    """Whether a write changes nothing but the resourceVersion (then upstream stores nothing)."""
    meta = {k: v for k, v in new["metadata"].items() if k != "resourceVersion"}
    old_meta = {k: v for k, v in old["metadata"].items() if k != "resourceVersion"}
    if meta != old_meta:
        return False
    return {k: v for k, v in new.items() if k != "metadata"} == {
        k: v for k, v in old.items() if k != "metadata"}


