"""The aiohttp front end: parses REST paths and query options, calls the registry, encodes.

One catch-all route resolves `/api/v1/...` and `/apis/<group>/<version>/...` through the
kind table, so adding a kind never touches this module. Every failure is answered with
a `Status` object.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import logging
import platform
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import orjson
from aiohttp import web

from fakeapi import KUBERNETES_VERSION
from fakeapi.auth import authn, authz
from fakeapi.cluster import Cluster
from fakeapi.http import (
    discovery,
    openapi,
    openapi_v2,
    partial,
    podstreams,
    protobuf,
    tables,
)
from fakeapi.http import (
    watch as watch_http,
)
from fakeapi.http.warnings import warning_headers
from fakeapi.machinery import selectors
from fakeapi.machinery.decode import decode_body, go_quote
from fakeapi.machinery.errors import (
    ApiError,
    Cause,
    bad_request,
    method_not_allowed,
    too_large,
    unsupported_media_type,
)
from fakeapi.machinery.errors import invalid as invalid_error
from fakeapi.machinery.field import forbidden, not_supported
from fakeapi.machinery.jsonio import dumps
from fakeapi.machinery.watchtypes import DELETED
from fakeapi.registry import reviews
from fakeapi.registry.context import RequestContext
from fakeapi.registry.generic import ListResult, WriteResult, item_object, item_raw
from fakeapi.registry.kinds import Kind
from fakeapi.storage.log import Event
from fakeapi.storage.watch import (
    WatchSpec,
    default_encoder,
    default_notice_encoder,
    start_revision,
    stream,
)

log = logging.getLogger(__name__)

CLUSTER = web.AppKey("cluster", Cluster)
WATCHES = web.AppKey("watches", set[asyncio.Task[Any]])
USER = web.RequestKey("user", authn.UserInfo)
VERB = web.RequestKey("verb", str)
MAX_BODY = 3 * 1024 * 1024
JSON_TYPE = "application/json"
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")
BODY_TYPES = ("application/json", "application/yaml", protobuf.CONTENT_TYPE, "")
FIELD_VALIDATION = ("Strict", "Warn", "Ignore")
MAX_CONTEXTS = 1024
_N = TypeVar("_N", int, float)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=dumps(body), status=status, content_type=JSON_TYPE,
                        headers=headers)


def _raw(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON_TYPE, headers=headers)


def error_response(error: ApiError) -> web.Response:
    """The Status object of an error, with its HTTP code."""
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after else None
    return _json(error.to_status(), error.code, headers)


def not_found_path() -> ApiError:
    """404 for a path that names nothing served (upstream's generic NotFound)."""
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    causes=[Cause("", "404 page not found", "UnexpectedServerResponse")])


class Target:
    """What a REST path names: a kind, and optionally namespace, name and subresource."""

    __slots__ = ("kind", "namespace", "name", "subresource")

    def __init__(self, kind: Kind, namespace: str | None, name: str, subresource: str) -> None:
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.subresource = subresource


class Api:
    """Request handlers bound to one cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.kinds = cluster.kinds
        self.registry = cluster.registry
        self._contexts: dict[tuple[authn.UserInfo, str, str], RequestContext] = {}

    # ----- identity and options ----------------------------------------------------------

    def context(self, request: web.Request, options: str) -> RequestContext:
        """The caller and the write options of a request.

        `options` names the upstream options kind (CreateOptions, UpdateOptions, PatchOptions,
        DeleteOptions) that invalid dryRun/fieldValidation values are reported against, as a
        422 like upstream's Validate<Verb>Options.
        """
        q = request.query
        user = request.get(USER, authn.ANONYMOUS)
        verb = request.get(VERB, "")
        user_agent = request.headers.get("User-Agent", "")
        if not q:
            return self._context_without_options(user, verb, user_agent)
        fv = q.get("fieldValidation", "")
        dry = q.getall("dryRun", [])
        causes = _dry_run_causes(dry)
        if options != "DeleteOptions" and fv not in ("", *FIELD_VALIDATION):
            causes.append(Cause("fieldValidation", f"Unsupported value: {orjson.dumps(fv).decode()}"
                                ': supported values: "", "Ignore", "Strict", "Warn"',
                                "FieldValueNotSupported"))
        if causes:
            raise invalid_error(options, "meta.k8s.io", "", causes)
        return RequestContext(user=user.name, groups=user.groups, uid=user.uid, extra=user.extra,
                              verb=verb, field_manager=q.get("fieldManager", ""),
                              field_validation=fv or "Warn", dry_run=bool(dry),
                              user_agent=user_agent, force=q.get("force", "") in ("true", "1"))

    def _context_without_options(self, user: authn.UserInfo, verb: str,
                                 user_agent: str) -> RequestContext:
        """The context of a request without query options: built once per caller and verb."""
        key = (user, verb, user_agent)
        ctx = self._contexts.get(key)
        if ctx is None:
            if len(self._contexts) >= MAX_CONTEXTS:
                self._contexts.clear()
            ctx = self._contexts[key] = RequestContext(
                user=user.name, groups=user.groups, uid=user.uid, extra=user.extra, verb=verb,
                field_validation="Warn", user_agent=user_agent)
        return ctx

    # ----- routing -----------------------------------------------------------------------

    def resolve(self, parts: list[str]) -> Target | None:
        """Map path segments after /api/v1 or /apis/g/v to a Target (None: not served)."""
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            group, version, rest = parts[1], parts[2], parts[3:]
        namespace: str | None = None
        if (len(rest) >= 3 and rest[0] == "namespaces"
                and not (len(rest) == 3 and rest[2] in ("status", "finalize"))):
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            return None
        kind = self.kinds.by_resource(group, version, rest[0])
        if kind is None:
            return None
        if namespace is not None and not kind.namespaced:
            return None
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in kind.subresources:
            return None
        return Target(kind, namespace, name, sub)

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        """The catch-all handler for /api and /apis."""
        try:
            return await self._dispatch(request)
        except ApiError as e:
            if request.method != "GET" and e.code < 500:
                # a refusal may rest on writes not durable yet (409 AlreadyExists on a pending
                # create): answer once what it saw is durable, as etcd orders a failed txn
                try:
                    await self.cluster.log.durable()
                except ApiError as failed:
                    return error_response(failed)
            return error_response(e)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if parts[0] == "api" and len(parts) <= 2 or parts[0] == "apis" and len(parts) <= 3:
            return self.discovery(request, parts)
        prefix = 2 if parts[0] == "api" else 3
        legacy_watch = parts[prefix] == "watch"
        if legacy_watch:  # deprecated /watch/... paths, still served upstream
            parts = parts[:prefix] + parts[prefix + 1:]
        target = self.resolve(parts) if len(parts) > prefix else None
        if target is None or legacy_watch and target.subresource:
            raise not_found_path()
        if target.name:
            _check_path_name(target.name)
        if legacy_watch:
            if request.method != "GET":
                raise method_not_allowed()
            return await self.watch(request, target)
        if target.kind.resource_id in reviews.HANDLERS or (
                target.kind.resource_id == reviews.TOKEN_REVIEWS):
            return await self.review(request, target)
        if target.kind.posts_to is not None:
            return await self.post_to(request, target)
        method = request.method
        if not target.name:
            if method == "GET":
                if request.query.get("watch") in ("true", "1"):
                    return await self.watch(request, target)
                return self.list(request, target)
            if method == "POST":
                return await self.create(request, target)
            if method == "DELETE":
                return await self.delete_collection(request, target)
            raise method_not_allowed()
        if target.kind.namespaced and target.namespace is None:
            raise not_found_path()
        if target.subresource in podstreams.STREAMED:
            return await podstreams.serve(request, self.registry, self.cluster.pod_io, target.kind,
                                          target.namespace or "", target.name,
                                          target.subresource)
        if method == "GET":
            return self.get(request, target)
        if method == "PUT":
            return await self.update(request, target)
        if method == "PATCH":
            return await self.patch(request, target)
        if method == "DELETE" and not target.subresource:
            return await self.delete(request, target)
        if method == "POST" and target.subresource:
            return await self.create_subresource(request, target)
        raise method_not_allowed()

    # ----- discovery ---------------------------------------------------------------------

    def discovery(self, request: web.Request, parts: list[str]) -> web.Response:
        """/api, /api/v1, /apis, /apis/g, /apis/g/v."""
        accept = request.headers.get("Accept", "")
        if parts == ["api"] or parts == ["apis"]:
            if discovery.wants_aggregated(accept):
                doc = (discovery.aggregated_core(self.kinds) if parts == ["api"]
                       else discovery.aggregated_groups(self.kinds))
                return web.Response(body=orjson.dumps(doc), headers={
                    "Content-Type": discovery.AGGREGATED_CONTENT_TYPE, "Vary": "Accept"})
            doc = (discovery.api_versions(request.host) if parts == ["api"]
                   else discovery.api_group_list(self.kinds))
            return _json(doc, headers={"Vary": "Accept"})
        found: dict[str, Any] | None
        if parts[0] == "api":
            found = discovery.api_resource_list(self.kinds, "", parts[1])
        elif len(parts) == 2:
            found = discovery.api_group(self.kinds, parts[1])
        else:
            found = discovery.api_resource_list(self.kinds, parts[1], parts[2])
        if found is None:
            raise not_found_path()
        return _json(found)

    # ----- reads -------------------------------------------------------------------------

    def get(self, request: web.Request, t: Target) -> web.Response:
        """GET an object (or its status, or a view such as its scale), as the object, a
        Table or PartialObjectMetadata."""
        form = partial.negotiate(request.headers.get("Accept"))
        partial.check(form, t.kind.kind, is_list=False)
        event = self.registry.get(t.kind, t.namespace or "", t.name)
        view = self.registry.view(t.kind, t.subresource) if t.subresource else None
        if view is not None:
            return _json(view.view(event.object))
        if form.partial:
            return _raw(partial.encode_object(event.object, form))
        if form.as_kind:
            return _json(self._table(request, t.kind, [event.object], None))
        return _raw(event.raw)

    def _predicate(self, request: web.Request, kind: Kind) -> Callable[[dict], bool] | None:
        q = request.query
        return selectors.predicate(q.get("labelSelector", ""), q.get("fieldSelector", ""),
                                   kind.field_selectors)

    def list(self, request: web.Request, t: Target) -> web.Response:
        """LIST with selectors and limit/continue pagination."""
        q = request.query
        _check_list_options(q, watch=False)
        form = partial.negotiate(request.headers.get("Accept"))
        partial.check(form, t.kind.kind, is_list=True)
        limit = _number_param(q, "limit", int, 0)
        page = self.registry.list(
            t.kind, t.namespace, predicate=self._predicate(request, t.kind), limit=max(limit, 0),
            continue_token=q.get("continue", ""), resource_version=q.get("resourceVersion", ""),
            resource_version_match=q.get("resourceVersionMatch", ""))
        if form.partial:
            return _raw(partial.encode_list([item_object(i) for i in page.items],
                                            _list_meta(page), form))
        if form.as_kind:
            return _json(self._table(request, t.kind, [item_object(i) for i in page.items], page))
        return _raw(self._encode_list(t.kind, _list_meta(page),
                                      [item_raw(i) for i in page.items]))

    @staticmethod
    def _encode_list(kind: Kind, meta: dict[str, Any], items: builtins.list[bytes]) -> bytes:
        head = orjson.dumps({"kind": f"{kind.kind}List", "apiVersion": kind.api_version,
                             "metadata": meta})
        return head[:-1] + b',"items":[' + b",".join(items) + b"]}"

    def _table(self, request: web.Request, kind: Kind, objects: builtins.list[dict],
               page: ListResult | None, with_headers: bool = True) -> dict[str, Any]:
        try:
            include = tables.parse_include_object(request.query.get("includeObject"))
        except ValueError as e:
            raise bad_request(str(e)) from None
        version = tables.table_version_from_accept(request.headers.get("Accept")) or "v1"
        return tables.table(kind, objects, now=self.cluster.clock.now(),
                            include_object=include, table_version=version,
                            with_headers=with_headers,
                            resource_version=str(page.revision) if page else None,
                            continue_token=page.continue_token if page else None)

    async def watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        """A chunked watch stream from a revision (or from current state)."""
        q = request.query
        _check_list_options(q, watch=True)
        form = partial.negotiate(request.headers.get("Accept"))
        partial.check(form, t.kind.kind, is_list=False)
        timeout = _number_param(q, "timeoutSeconds", float, 1800.0)
        predicate = self._predicate(request, t.kind)
        if t.name:  # a legacy /watch/.../NAME path watches one object
            predicate = _and(predicate, _named(t.name))
        spec = WatchSpec(kind=t.kind, namespace=t.namespace, predicate=predicate,
                         resource_version=q.get("resourceVersion", ""),
                         send_initial_events=_bool_param(q, "sendInitialEvents"),
                         allow_bookmarks=bool(_bool_param(q, "allowWatchBookmarks")),
                         timeout=timeout,
                         bookmark_interval=self.cluster.config.bookmark_interval)
        try:
            start_revision(self.cluster.store, spec)
        except ApiError as e:
            if e.code == 400:  # a malformed resourceVersion is refused before the stream
                raise
        encode: Callable[[Event, str], bytes] = default_encoder
        encode_notice: Callable[[str, dict[str, Any]], bytes] = default_notice_encoder
        if form.partial:
            encode, encode_notice = _partial_encoders(form)
        elif form.as_kind:
            encode = self._table_encoder(request, t.kind)
        response = web.StreamResponse(headers={"Content-Type": JSON_TYPE,
                                               "Cache-Control": "no-cache, private"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        watches = request.app[WATCHES]
        task = asyncio.current_task()
        assert task is not None  # a handler always runs in a task
        watches.add(task)
        try:
            closed = await watch_http.send(
                request, response, stream(self.cluster.store, spec, encode, encode_notice),
                clock=self.cluster.clock, timeout=timeout,
                stall=self.cluster.config.watch_stall_timeout, farewell=_error_line)
        finally:
            watches.discard(task)
        if closed and closed != "timeout":
            log.info("closed a watch of %s: %s", t.kind.resource_id, closed)
        return response

    def _table_encoder(self, request: web.Request, kind: Kind) -> Callable[[Event, str], bytes]:
        first = [True]

        def encode(event: Event, type: str) -> bytes:
            table = self._table(request, kind, [event.object], None, with_headers=first[0])
            first[0] = False
            return dumps({"type": type, "object": table}) + b"\n"

        return encode

    # ----- writes ------------------------------------------------------------------------

    async def _body(self, request: web.Request, allowed: tuple[str, ...] = BODY_TYPES,
                    kind: str | None = None) -> tuple[Any, builtins.list[str]] | bytes:
        # same as upstream: a body without Content-Type is read as JSON
        ctype = request.content_type if request.headers.get("Content-Type") else ""
        if ctype not in allowed:
            raise unsupported_media_type(ctype)
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise too_large()
        raw = await _read_body(request)
        if len(raw) > MAX_BODY:
            raise too_large()
        if ctype in PATCH_TYPES:
            return raw
        if ctype == protobuf.CONTENT_TYPE:
            return protobuf.decode_protobuf(raw), []
        return decode_body(raw, ctype or JSON_TYPE, kind=kind)

    async def _durable(self, result: WriteResult) -> None:
        """Wait until the version the write answers with is on disk (and so visible)."""
        if result.event is not None:
            await self.cluster.log.durable(result.event.revision)

    async def _respond(self, request: web.Request, result: WriteResult,
                       status: int = 200) -> web.Response:
        await self._durable(result)
        response = _raw(result.raw, status)
        for value in warning_headers(result.warnings):
            response.headers.add("Warning", value)
        return response

    async def create(self, request: web.Request, t: Target) -> web.Response:
        """POST to a collection."""
        ctx = self.context(request, "CreateOptions")
        body = await self._body(request, kind=t.kind.kind)
        result = self.registry.create(t.kind, t.namespace or "", body, ctx)
        return await self._respond(request, result, 201)

    async def update(self, request: web.Request, t: Target) -> web.Response:
        """PUT an object or subresource."""
        ctx = self.context(request, "UpdateOptions")
        body = await self._body(request, kind=t.kind.kind)
        result = self.registry.update(t.kind, t.namespace or "", t.name, body, ctx,
                                      t.subresource)
        return await self._respond(request, result)

    async def patch(self, request: web.Request, t: Target) -> web.Response:
        """PATCH with any of the four patch types."""
        ctx = self.context(request, "PatchOptions")
        raw = await self._body(request, PATCH_TYPES)
        assert isinstance(raw, bytes)
        result = self.registry.patch(t.kind, t.namespace or "", t.name, request.content_type,
                                     raw, ctx, t.subresource)
        return await self._respond(request, result, 201 if result.created else 200)

    async def _delete_options(self, request: web.Request, ctx: RequestContext
                              ) -> tuple[dict[str, Any], RequestContext]:
        """DeleteOptions from the body and query; a dryRun in the body counts like the query's."""
        options: dict[str, Any] = {}
        if request.can_read_body:
            body = await self._body(request)
            value = body[0] if isinstance(body, tuple) else None
            if isinstance(value, dict):
                options = value
            elif value is not None:
                raise bad_request("DeleteOptions must be an object")
        for key in ("propagationPolicy", "gracePeriodSeconds"):
            if key in request.query:
                options[key] = request.query[key]
        if "dryRun" in options:
            causes = _dry_run_causes(options["dryRun"])
            if causes:
                raise invalid_error("DeleteOptions", "meta.k8s.io", "", causes)
            if options["dryRun"]:
                ctx = dataclasses.replace(ctx, dry_run=True)
        return options, ctx

    async def delete(self, request: web.Request, t: Target) -> web.Response:
        """DELETE an object."""
        options, ctx = await self._delete_options(
            request, self.context(request, "DeleteOptions"))
        result = self.registry.delete(t.kind, t.namespace or "", t.name, ctx, options)
        deleted = result.type == DELETED
        if deleted and not t.kind.returns_deleted:
            # same as upstream: kinds without ReturnDeletedObject answer a success Status
            await self._durable(result)
            uid = result.object["metadata"].get("uid")
            details = {"name": t.name, "group": t.kind.group, "kind": t.kind.plural, "uid": uid}
            if not t.kind.group:
                del details["group"]
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success", "details": details})
        return await self._respond(request, result)

    async def delete_collection(self, request: web.Request, t: Target) -> web.Response:
        """DELETE a collection (with selectors)."""
        options, ctx = await self._delete_options(
            request, self.context(request, "DeleteOptions"))
        results = self.registry.delete_collection(
            t.kind, t.namespace, ctx, predicate=self._predicate(request, t.kind),
            options=options)
        await self.cluster.log.durable()
        meta = {"resourceVersion": str(self.cluster.store.visible_revision)}
        return _raw(self._encode_list(t.kind, meta, [r.raw for r in results]))

    async def review(self, request: web.Request, t: Target) -> web.Response:
        """POST a review kind: answered from the authorizer, nothing stored."""
        if request.method != "POST" or t.name:
            raise method_not_allowed()
        body = await self._body(request)
        value = body[0] if isinstance(body, tuple) else None
        user = request.get(USER, authn.ANONYMOUS)
        if t.kind.resource_id == reviews.TOKEN_REVIEWS:
            return _json(reviews.token_review(t.kind, value, self.cluster.tokens.authenticate),
                         201)
        return _json(reviews.review(t.kind, value, user, self.cluster.authorizer,
                                    t.namespace or ""), 201)

    async def post_to(self, request: web.Request, t: Target) -> web.Response:
        """POST a kind that is another object's subresource (`namespaces/NS/bindings`: the
        pod the Binding names is bound), as the kind's row says."""
        if request.method != "POST" or t.name or t.kind.posts_to is None:
            raise method_not_allowed()
        resource, subresource = t.kind.posts_to
        target = self.kinds.by_id(resource)
        if target is None:
            raise not_found_path()
        ctx = self.context(request, "CreateOptions")
        body = await self._body(request)
        value = body[0] if isinstance(body, tuple) else None
        if not isinstance(value, dict):
            raise bad_request(f"{t.kind.kind} must be an object")
        name = (value.get("metadata") or {}).get("name") or ""
        if not name:
            raise invalid_error(t.kind.kind, "", "", [Cause("metadata.name",
                                                            "Required value: name is required",
                                                            "FieldValueRequired")])
        result = self.registry.create_subresource(target, t.namespace or "", name, subresource,
                                                  value, ctx)
        await self._durable(result)
        return _json({"kind": "Status", "apiVersion": "v1", "metadata": {},
                      "status": "Success", "code": 201}, 201)

    async def create_subresource(self, request: web.Request, t: Target) -> web.Response:
        """POST to a subresource that takes a body of its own (`pods/NAME/binding`), as the
        kind's row says; answered with a success Status like upstream."""
        ctx = self.context(request, "CreateOptions")
        body = await self._body(request)
        value = body[0] if isinstance(body, tuple) else None
        result = self.registry.create_subresource(t.kind, t.namespace or "", t.name,
                                                  t.subresource, {} if value is None else value,
                                                  ctx)
        await self.cluster.log.durable()
        if result.event is None and result.type:  # an action's answer (eviction, token)
            return _json(result.object, 201 if result.created else 200)
        return _json({"kind": "Status", "apiVersion": "v1", "metadata": {},
                      "status": "Success", "code": 201}, 201)


async def _read_body(request: web.Request) -> bytes:
    """The body, read to its end or until past MAX_BODY (it may arrive in several pieces)."""
    chunks = []
    size = 0
    while size <= MAX_BODY:
        chunk = await request.content.readany()
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _check_path_name(name: str) -> None:
    """Same as upstream's storage key functions (path.IsValidPathSegmentName): a name in the
    URL may not be "." or "..", nor contain "/" or "%" (400 BadRequest); nor, here, a control
    character, which no valid name holds."""
    if name in (".", ".."):
        msgs = [f"may not be '{name}'"]
    else:
        msgs = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
        if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
            msgs.append("may not contain control characters")
    if msgs:
        raise bad_request(f"Name parameter invalid: {go_quote(name)}: {';'.join(msgs)}")


def _list_meta(page: ListResult) -> dict[str, Any]:
    """A list's metadata: resourceVersion, continue and remainingItemCount when set."""
    meta: dict[str, Any] = {"resourceVersion": str(page.revision)}
    if page.continue_token:
        meta["continue"] = page.continue_token
    if page.remaining is not None:
        meta["remainingItemCount"] = page.remaining
    return meta


def _error_line(status: dict[str, Any]) -> bytes:
    return default_notice_encoder("ERROR", status)


def _partial_encoders(form: partial.Form) -> tuple[Callable[[Event, str], bytes],
                                                   Callable[[str, dict], bytes]]:
    """Watch line encoders that send PartialObjectMetadata (bookmarks included)."""

    def encode(event: Event, type: str) -> bytes:
        return (b'{"type":"' + type.encode() + b'","object":'
                + partial.encode_object(event.object, form) + b"}\n")

    def encode_notice(type: str, obj: dict) -> bytes:
        if type == "BOOKMARK":
            obj = partial.partial_object(obj, form)
        return default_notice_encoder(type, obj)

    return encode, encode_notice


def _bool_param(q: Any, name: str) -> bool | None:
    """A boolean query parameter as upstream converts it (Convert_Slice_string_To_bool): "0"
    and "false" in any case are false, anything else is true; None when absent."""
    value = q.get(name)
    if value is None:
        return None
    return not (value == "0" or value.lower() == "false")


def _named(name: str) -> Callable[[dict], bool]:
    return lambda obj: obj.get("metadata", {}).get("name") == name


def _and(first: Callable[[dict], bool] | None, second: Callable[[dict], bool]
         ) -> Callable[[dict], bool]:
    if first is None:
        return second
    return lambda obj: first(obj) and second(obj)


def _dry_run_causes(values: Any) -> list[Cause]:
    """Same as upstream: dryRun may only hold "All"."""
    if isinstance(values, list) and all(v == "All" for v in values):
        return []
    shown = ", ".join(dumps(v).decode() for v in (
        values if isinstance(values, list) else [values]))
    return [Cause("dryRun", f"Unsupported value: []string{{{shown}}}: supported "
                  'values: "All"', "FieldValueNotSupported")]


def _check_list_options(q: Any, *, watch: bool) -> None:
    """Same as upstream ValidateListOptions: resourceVersionMatch and sendInitialEvents rules
    for lists and watches (422 Invalid on ListOptions)."""
    match = q.get("resourceVersionMatch", "")
    initial = q.get("sendInitialEvents")
    cont = q.get("continue", "")
    causes: list[Cause] = []
    if watch:
        if initial is not None and match != "NotOlderThan":
            causes.append(forbidden("resourceVersionMatch", "sendInitialEvents requires "
                                          "setting resourceVersionMatch to NotOlderThan"))
        if match:
            if initial is None:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden for watch unless sendInitialEvents "
                                              "is provided"))
            if match != "NotOlderThan":
                causes.append(not_supported("resourceVersionMatch", match,
                                                  ["NotOlderThan"]))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden when continue is provided"))
    else:
        rv = q.get("resourceVersion", "")
        if match:
            if not rv:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden unless resourceVersion is provided"))
            if cont:
                causes.append(forbidden("resourceVersionMatch", "resourceVersionMatch is "
                                              "forbidden when continue is provided"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(not_supported("resourceVersionMatch", match,
                                                  ["Exact", "NotOlderThan", ""]))
            if match == "Exact" and rv == "0":
                causes.append(forbidden("resourceVersionMatch", 'resourceVersionMatch '
                                              '"exact" is forbidden for resourceVersion "0"'))
        if initial is not None:
            causes.append(forbidden("sendInitialEvents",
                                          "sendInitialEvents is forbidden for list"))
    if causes:
        raise invalid_error("ListOptions", "meta.k8s.io", "", causes)
    if not watch and cont and q.get("resourceVersion", "") not in ("", "0"):
        # same as upstream's storage layer
        raise bad_request("specifying resource version is not allowed when using continue")


def _number_param(q: Any, name: str, parse: type[_N], default: _N) -> _N:
    """A numeric query parameter, `default` when absent or empty (400 when malformed)."""
    try:
        return parse(q.get(name) or default)
    except ValueError:
        raise bad_request(f"invalid {name}: {q.get(name)!r}") from None


async def version(request: web.Request) -> web.Response:
    """GET /version."""
    major, minor, _ = KUBERNETES_VERSION.lstrip("v").split(".")
    return _json({"major": major, "minor": minor, "emulationMajor": major,
                  "emulationMinor": minor, "minCompatibilityMajor": major,
                  "minCompatibilityMinor": str(int(minor) - 1),
                  "gitVersion": KUBERNETES_VERSION + "-fakeapi", "gitCommit": "fakeapi",
                  "gitTreeState": "clean", "buildDate": "2026-11-30T00:00:00Z",
                  "goVersion": "go1.25", "compiler": "gc",
                  "platform": f"linux/{_arch()}"})


def _arch() -> str:
    machine = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


Check = tuple[str, bool, str]
"""One named health check result: (name, ok, reason)."""
Checks = Callable[[], Iterable[Check]]


def health_handlers(extra_checks: Checks | None) -> tuple[Callable[..., Any],
                                                         Callable[..., Any]]:
    """Handlers for /livez (the server itself) and /healthz, /readyz (plus `extra_checks`,
    e.g. the composition root's components), with upstream's `?verbose` and `/<check>`."""

    def checks(request: web.Request, extra: bool) -> list[Check]:
        found: list[Check] = [("ping", True, "")]
        if extra:
            found.extend(request.app[CLUSTER].health())
            if extra_checks is not None:
                found.extend(extra_checks())
        return found

    def answer(request: web.Request, extra: bool) -> web.Response:
        endpoint = request.path.strip("/").split("/")[0]
        found = checks(request, extra)
        wanted = request.match_info.get("check")
        if wanted:
            found = [c for c in found if c[0] == wanted]
            if not found:
                return web.Response(status=404, text="404 page not found\n")
        failed = [c for c in found if not c[1]]
        verbose = "verbose" in request.query or failed
        if not verbose:
            return web.Response(text="ok")
        lines = [f"[+]{name} ok" if ok else f"[-]{name} failed: {reason or 'reason withheld'}"
                 for name, ok, reason in found]
        lines.append(f"{endpoint} check {'failed' if failed else 'passed'}")
        return web.Response(status=500 if failed else 200, text="\n".join(lines) + "\n")

    async def live(request: web.Request) -> web.Response:
        return answer(request, extra=False)

    async def ready(request: web.Request) -> web.Response:
        return answer(request, extra=True)

    return live, ready


def metrics_handler(extra_metrics: Callable[[], str] | None) -> Callable[..., Any]:
    """/metrics: the gates in effect, as upstream's `kubernetes_feature_enabled` gauge, plus
    `extra_metrics` (the components' crash counts and readiness)."""

    async def metrics(request: web.Request) -> web.Response:
        text = request.app[CLUSTER].gates.metrics_text()
        if extra_metrics is not None:
            text += extra_metrics()
        return web.Response(body=text.encode(), headers={
            "Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    return metrics


def openapi_handlers(cluster: Cluster) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Handlers for /openapi/v3 and /openapi/v3/<path>."""

    def _send(served: openapi.Served) -> web.Response:
        return web.Response(status=served.status, body=served.body or None,
                            headers=served.headers)

    async def index(request: web.Request) -> web.Response:
        return _send(openapi.serve_index(cluster.kinds))

    async def document(request: web.Request) -> web.Response:
        served = openapi.serve_document(cluster.kinds, request.match_info["path"],
                                        request.query.get("hash"),
                                        request.headers.get("If-None-Match"))
        if served is None:
            return error_response(not_found_path())
        return _send(served)

    return index, document


Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]
"""An extra (method, path, handler) route outside /api and /apis, e.g. a component's
read-only report; it is authenticated and authorized like every other path."""
def openapi_v2_handler(cluster: Cluster) -> Callable[..., Any]:
    """`/openapi/v2`: protobuf when asked for (kubectl), else JSON; ETag'd like upstream."""

    async def document(request: web.Request) -> web.Response:
        protobuf = openapi_v2.wants_protobuf(request.headers.get("Accept"))
        body = openapi_v2.rendered(cluster.kinds.kinds, protobuf)
        etag = '"' + openapi.content_hash(body)[:32] + '"'
        headers = {"Etag": etag, "Vary": "Accept", "Cache-Control": "no-cache, private",
                   "Content-Type": openapi_v2.PROTOBUF_TYPES[1] if protobuf else JSON_TYPE}
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, headers=headers)

    return document


def create_app(cluster: Cluster, *, authenticator: authn.Authenticator | None = None,
               checks: Checks | None = None, metrics: Callable[[], str] | None = None,
               routes: Iterable[Route] = ()) -> web.Application:
    """The aiohttp application serving one cluster.

    Every request is authenticated (without an authenticator everyone is the unsecured
    superuser), may impersonate, and is authorized by RBAC before it is routed. `checks`,
    `metrics` and `routes` add readiness checks, metric lines and non-resource paths from
    outside the core (the composition root reports its components through them).
    """
    auth = authenticator or authn.Authenticator(fallback=authn.UNSECURED,
                                                service_accounts=cluster.tokens.authenticate)

    @web.middleware
    async def guard(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        try:
            user = authz.impersonate(cluster.authorizer, auth.authenticate(request),
                                     request.headers)
            attrs = authz.authorize_request(cluster.authorizer, user, request.method,
                                            request.path, request.query)
            request[USER] = user
            request[VERB] = attrs.verb
            return await handler(request)
        except ApiError as e:
            return error_response(e)
        except web.HTTPException as e:
            if e.status == 404:
                return error_response(not_found_path())
            if e.status == 405:
                return error_response(method_not_allowed())
            raise
        except Exception:
            log.exception("internal error on %s %s", request.method, request.path)
            return error_response(ApiError(500, "InternalError",
                                           "Internal error occurred: see the server log"))

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY + 1024)
    app[CLUSTER] = cluster
    app[WATCHES] = set()
    api = Api(cluster)
    index, document = openapi_handlers(cluster)
    app.router.add_get("/version", version)
    app.router.add_get("/version/", version)  # same as upstream (kr8s and VersionApi ask so)
    app.router.add_get("/metrics", metrics_handler(metrics))
    live, ready = health_handlers(checks)
    for path, handler in (("/livez", live), ("/healthz", ready), ("/readyz", ready)):
        app.router.add_get(path, handler)
        app.router.add_get(path + "/{check}", handler)
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    app.router.add_get("/openapi/v2", openapi_v2_handler(cluster))
    app.router.add_get("/openapi/v3", index)
    app.router.add_get("/openapi/v3/{path:.*}", document)
    # the router tries the routes of a prefix in order: the common one first
    app.router.add_route("*", "/api/{tail:.*}", api.dispatch)
    app.router.add_route("*", "/api", api.dispatch)
    app.router.add_route("*", "/apis/{tail:.*}", api.dispatch)
    app.router.add_route("*", "/apis", api.dispatch)

    async def close_watches(app: web.Application) -> None:
        cluster.log.wake_all()
        watches: set[asyncio.Task[Any]] = app[WATCHES]
        for task in tuple(watches):
            task.cancel()

    app.on_shutdown.append(close_watches)
    return app
