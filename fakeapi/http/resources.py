"""The REST handlers of /api and /apis: a path resolves through the kind table to a kind (and
namespace, name, subresource), and the request is served as the kind's row says: the generic
store's verbs, a computed review, a POST to another object's subresource, or a streamed or
connected subresource. No handler here names a kind.
"""

from __future__ import annotations

import asyncio
import builtins
import dataclasses
import logging
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from fakeapi.auth import authn
from fakeapi.cluster import Cluster
from fakeapi.http import compression, discovery, partial, podstreams, protobuf, protobuf_out, tables
from fakeapi.http import watch as watch_http
from fakeapi.http.options import (
    USER,
    VERB,
    WriteContexts,
    check_list_options,
    check_path_name,
    delete_options,
    number_param,
    patch_option_causes,
    selection,
    wants_watch,
)
from fakeapi.http.responses import (
    JSON_TYPE,
    created_status,
    encoded_response,
    error_response,
    json_response,
    not_found_path,
    raw_response,
)
from fakeapi.http.warnings import warning_headers
from fakeapi.machinery.decode import as_go_object, decode_body
from fakeapi.machinery.errors import (
    ApiError,
    Cause,
    bad_request,
    method_not_allowed,
    too_large,
    unsupported_media_type,
)
from fakeapi.machinery.errors import invalid as invalid_error
from fakeapi.machinery.jsonio import dumps
from fakeapi.machinery.querybool import query_bool, query_flag
from fakeapi.machinery.requestinfo import HttpRequest
from fakeapi.machinery.watchtypes import DELETED
from fakeapi.patching.patch import APPLY_PATCH
from fakeapi.registry.context import RequestContext
from fakeapi.registry.conversion import raw_to_served, to_served
from fakeapi.registry.generic import WriteResult
from fakeapi.registry.kinds import NAMESPACES
from fakeapi.registry.listing import ListResult, item_object, item_raw
from fakeapi.registry.rest import (
    ConnectStrategy,
    Kind,
    PostsTo,
    Review,
    ReviewContext,
    StreamStrategy,
)
from fakeapi.storage.log import Event
from fakeapi.storage.watch import (
    WatchSpec,
    default_encoder,
    default_notice_encoder,
    start_revision,
    stream,
)

log = logging.getLogger(__name__)
RAW_BODY = web.RequestKey("raw_body", bytes)
"""A write request's body as it came (the recording keeps it)."""

MAX_BODY = 3 * 1024 * 1024
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json", "application/apply-patch+yaml")
BODY_TYPES = ("application/json", "application/yaml", protobuf.CONTENT_TYPE, "")
READS = ("GET", "HEAD", "OPTIONS")
"""The methods a read-only cluster serves (reviews besides, which store nothing)."""


class Target:
    """What a REST path names: a kind, and optionally namespace, name and subresource."""

    __slots__ = ("kind", "namespace", "name", "subresource")

    def __init__(self, *, kind: Kind, namespace: str | None, name: str,
                 subresource: str) -> None:
        self.kind = kind
        self.namespace = namespace
        self.name = name
        self.subresource = subresource


class Api:
    """The REST handlers of /api and /apis bound to one cluster: path resolution through the
    kind table, then a dispatch on the handler type the kind's row names."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.kinds = cluster.kinds
        self.registry = cluster.registry
        self.contexts = WriteContexts()
        self.watches: set[asyncio.Task[Any]] = set()
        """The open watch streams (cancelled when the app shuts down)."""

    # ----- routing -----------------------------------------------------------------------

    def resolve(self, parts: list[str]) -> Target | None:
        """Map path segments after /api/v1 or /apis/g/v to a Target (None: not served)."""
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        else:
            group, version, rest = parts[1], parts[2], parts[3:]
        namespace: str | None = None
        # same as upstream's RequestInfoFactory: `namespaces/NAME/status` (or `finalize`) is a
        # namespace's subresource, any other `namespaces/NS/...` a namespaced path
        if (len(rest) >= 3 and rest[0] == NAMESPACES.plural
                and not (len(rest) == 3 and rest[2] in NAMESPACES.subresources)):
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
        return Target(kind=kind, namespace=namespace, name=name, subresource=sub)

    async def dispatch(self, request: web.Request) -> web.StreamResponse:
        """The catch-all handler for /api and /apis (answers gzipped as upstream's are)."""
        return compression.compress(request, await self._answer_of(request))

    async def _answer_of(self, request: web.Request) -> web.StreamResponse:
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
            check_path_name(target.name)
        if legacy_watch:
            if request.method != "GET":
                raise method_not_allowed()
            return await self.watch(request, target)
        handler = target.kind.handler
        if isinstance(handler, Review):
            return await self.review(request, target, handler)
        if self.cluster.config.read_only and request.method not in READS:
            raise method_not_allowed(f"the server does not allow this method on the requested "
                                     f"resource: {self.cluster.config.read_only}")
        if isinstance(handler, PostsTo):
            return await self.post_to(request, target, handler)
        if not target.subresource and request.get(VERB, "get") not in target.kind.verbs:
            raise method_not_allowed()  # as upstream's storage that lacks the verb's interface
        method = request.method
        if not target.name:
            if method == "GET":
                if wants_watch(request.query):
                    return await self.watch(request, target)
                return self.list(request, target)
            if method == "POST":
                return await self.create(request, target)
            if method == "DELETE":
                return await self.delete_collection(request, target)
            raise method_not_allowed()
        if target.kind.namespaced and target.namespace is None:
            raise not_found_path()
        if target.subresource:
            sub = target.kind.subresources[target.subresource]
            if issubclass(sub, StreamStrategy):
                return await podstreams.serve_stream(request, self.registry, self.cluster.pod_io,
                                                     target.kind, target.namespace or "",
                                                     target.name, target.subresource)
            if issubclass(sub, ConnectStrategy):
                return await podstreams.serve_connect(request, self.registry,
                                                      self.cluster.pod_io, target.kind,
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
            return json_response(doc, headers={"Vary": "Accept"})
        found: dict[str, Any] | None
        if parts[0] == "api":
            found = discovery.api_resource_list(self.kinds, "", parts[1])
        elif len(parts) == 2:
            found = discovery.api_group(self.kinds, parts[1])
        else:
            found = discovery.api_resource_list(self.kinds, parts[1], parts[2])
        if found is None:
            raise not_found_path()
        return json_response(found)

    # ----- reads -------------------------------------------------------------------------

    def get(self, request: web.Request, t: Target) -> web.Response:
        """GET an object (or its status, or a view such as its scale), as the object, a
        Table or PartialObjectMetadata, in the media type the Accept header negotiates."""
        view = self.registry.view(t.kind, t.subresource) if t.subresource else None
        form = partial.negotiate(request.headers.get("Accept"),
                                 protobuf=view is None and _protobuf_kind(t.kind))
        partial.check(form, t.kind.kind, is_list=False)
        event = self.registry.get(t.kind, t.namespace or "", t.name)
        if view is not None:
            return encoded_response(dumps(view.view(event.object)), form.media)
        if form.partial:
            obj = partial.partial_object(event.object, form)
            return _answer(form, dumps(obj), lambda: protobuf_out.encode_partial(obj))
        if form.as_kind:
            return encoded_response(dumps(self._table(request, t.kind, [event.object], None)),
                                    form.media)
        raw = raw_to_served(event.raw, t.kind)
        return _answer(form, raw, lambda: protobuf_out.encode_object(
            orjson.loads(raw), _message(t.kind)))

    def list(self, request: web.Request, t: Target) -> web.Response:
        """LIST with selectors and limit/continue pagination."""
        q = request.query
        check_list_options(q, watch=False)
        form = partial.negotiate(request.headers.get("Accept"), protobuf=_protobuf_kind(t.kind))
        partial.check(form, t.kind.kind, is_list=True)
        limit = number_param(q, "limit", int, 0)
        page = self.registry.list(
            t.kind, t.namespace, predicate=selection(q, t.kind), limit=max(limit, 0),
            continue_token=q.get("continue", ""), resource_version=q.get("resourceVersion", ""),
            resource_version_match=q.get("resourceVersionMatch", ""))
        if form.partial:
            doc = partial.partial_list([item_object(i) for i in page.items], _list_meta(page),
                                       form)
            return _answer(form, dumps(doc), lambda: protobuf_out.encode_partial_list(doc))
        if form.as_kind:
            return encoded_response(dumps(self._table(
                request, t.kind, [item_object(i) for i in page.items], page)), form.media)
        raw = self._encode_list(t.kind, _list_meta(page),
                                [raw_to_served(item_raw(i), t.kind) for i in page.items])
        return _answer(form, raw, lambda: _protobuf_list(t.kind, raw))

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
        check_list_options(q, watch=True)
        form = partial.negotiate(request.headers.get("Accept"), watch=True)
        partial.check(form, t.kind.kind, is_list=False)
        timeout = float(number_param(q, "timeoutSeconds", int, 1800))  # int64 upstream
        predicate = selection(q, t.kind, t.name)  # a legacy /watch/.../NAME: one object
        spec = WatchSpec(kind=t.kind, namespace=t.namespace, predicate=predicate,
                         resource_version=q.get("resourceVersion", ""),
                         send_initial_events=query_bool(q, "sendInitialEvents"),
                         allow_bookmarks=query_flag(q, "allowWatchBookmarks"),
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
        elif t.kind.storage_version:
            encode = _converting_encoder(t.kind)
        response = web.StreamResponse(headers={"Content-Type": JSON_TYPE,
                                               "Cache-Control": "no-cache, private"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        task = asyncio.current_task()
        assert task is not None  # a handler always runs in a task
        self.watches.add(task)
        try:
            closed = await watch_http.send(
                request, response, stream(self.cluster.store, spec, encode, encode_notice),
                clock=self.cluster.clock, timeout=timeout,
                stall=self.cluster.config.watch_stall_timeout, farewell=_error_line)
        finally:
            self.watches.discard(task)
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
                    kind: str | None = None, target: Kind | None = None
                    ) -> tuple[Any, builtins.list[str]] | bytes:
        """The request's body, decoded as upstream decodes it (as the object of `target` when
        given: see `as_go_object`); patches stay bytes."""
        # same as upstream: a body without Content-Type is read as JSON
        ctype = request.content_type if request.headers.get("Content-Type") else ""
        if ctype not in allowed:
            raise unsupported_media_type(ctype)
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise too_large()
        raw = await _read_body(request)
        if len(raw) > MAX_BODY:
            raise too_large()
        request[RAW_BODY] = raw
        if ctype in PATCH_TYPES:
            return raw
        if ctype == protobuf.CONTENT_TYPE:
            return protobuf.decode_protobuf(raw), []
        value, dups = decode_body(raw, ctype or JSON_TYPE, kind=kind)
        if isinstance(value, dict) and target is not None:
            as_go_object(value, target.kind, target.version)
        return value, dups

    @staticmethod
    def _recorded(request: web.Request, ctx: RequestContext, subresource: str = ""
                  ) -> RequestContext:
        """The write's context with the request itself, which the recording keeps."""
        http = HttpRequest(method=request.method, path=request.raw_path,
                           content_type=request.headers.get("Content-Type", ""),
                           body=request.get(RAW_BODY, b""), groups=ctx.groups,
                           user_agent=request.headers.get("User-Agent", ""))
        return dataclasses.replace(ctx, subresource=subresource, http=http)

    async def _durable(self, result: WriteResult) -> None:
        """Wait until the version the write answers with is on disk (and so visible)."""
        if result.event is not None:
            await self.cluster.log.durable(result.event.revision)

    async def _respond(self, request: web.Request, result: WriteResult, status: int = 200,
                       kind: Kind | None = None) -> web.Response:
        """The write's answer: the object at the version the request named (`kind`)."""
        await self._durable(result)
        raw = raw_to_served(result.raw, kind) if kind and result.body is None else result.raw
        response = raw_response(raw, status)
        for value in warning_headers(result.warnings):
            response.headers.add("Warning", value)
        return response

    async def create(self, request: web.Request, t: Target) -> web.Response:
        """POST to a collection."""
        ctx = self.contexts.of(request, "CreateOptions")
        body = await self._body(request, kind=t.kind.kind, target=t.kind)
        ctx = self._recorded(request, ctx)
        async with self.cluster.inputs.turn():
            result = self.registry.create(t.kind, t.namespace or "", body, ctx)
        return await self._respond(request, result, 201, t.kind)

    async def update(self, request: web.Request, t: Target) -> web.Response:
        """PUT an object or subresource."""
        ctx = self.contexts.of(request, "UpdateOptions")
        body = await self._body(request, kind=t.kind.kind, target=t.kind)
        ctx = self._recorded(request, ctx, t.subresource or "")
        async with self.cluster.inputs.turn():
            result = self.registry.update(t.kind, t.namespace or "", t.name, body, ctx,
                                          t.subresource)
        return await self._respond(request, result, kind=t.kind)

    async def patch(self, request: web.Request, t: Target) -> web.Response:
        """PATCH with any of the four patch types."""
        ctx = self.contexts.of(request, "PatchOptions", patch_option_causes(
            request.query, request.content_type, APPLY_PATCH))
        raw = await self._body(request, PATCH_TYPES)
        assert isinstance(raw, bytes)
        ctx = self._recorded(request, ctx, t.subresource or "")
        async with self.cluster.inputs.turn():
            result = self.registry.patch(t.kind, t.namespace or "", t.name,
                                         request.content_type, raw, ctx, t.subresource)
        return await self._respond(request, result, 201 if result.created else 200, t.kind)

    async def _delete_options(self, request: web.Request, ctx: RequestContext
                              ) -> tuple[dict[str, Any], RequestContext]:
        """DeleteOptions from the body and query (see `options.delete_options`)."""
        value = None
        if request.can_read_body:
            body = await self._body(request)
            value = body[0] if isinstance(body, tuple) else None
        return delete_options(value, request.query, self._recorded(request, ctx))

    async def delete(self, request: web.Request, t: Target) -> web.Response:
        """DELETE an object."""
        options, ctx = await self._delete_options(
            request, self.contexts.of(request, "DeleteOptions"))
        async with self.cluster.inputs.turn():
            result = self.registry.delete(t.kind, t.namespace or "", t.name, ctx, options)
        deleted = result.type == DELETED
        if deleted and not t.kind.returns_deleted:
            # same as upstream: kinds without ReturnDeletedObject answer a success Status
            await self._durable(result)
            uid = result.object["metadata"].get("uid")
            details = {"name": t.name, "group": t.kind.group, "kind": t.kind.plural, "uid": uid}
            if not t.kind.group:
                del details["group"]
            return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Success", "details": details})
        return await self._respond(request, result, kind=t.kind)

    async def delete_collection(self, request: web.Request, t: Target) -> web.Response:
        """DELETE a collection (with selectors)."""
        options, ctx = await self._delete_options(
            request, self.contexts.of(request, "DeleteOptions"))
        async with self.cluster.inputs.turn():
            results = self.registry.delete_collection(
                t.kind, t.namespace, ctx, predicate=selection(request.query, t.kind),
                options=options)
        await self.cluster.log.durable()
        meta = {"resourceVersion": str(self.cluster.store.visible_revision)}
        return raw_response(self._encode_list(t.kind, meta, [raw_to_served(r.raw, t.kind)
                                                             for r in results]))

    async def review(self, request: web.Request, t: Target, handler: Review) -> web.Response:
        """POST a review kind: answered from the authorizer or the token authenticator,
        nothing stored."""
        if request.method != "POST" or t.name:
            raise method_not_allowed()
        body = await self._body(request, target=t.kind)
        value = body[0] if isinstance(body, tuple) else None
        asker = ReviewContext(user=request.get(USER, authn.ANONYMOUS),
                              namespace=t.namespace or "", authorizer=self.cluster.authorizer,
                              authenticate=self.cluster.tokens.authenticate)
        return json_response(handler.create(t.kind, value, asker), 201)

    async def post_to(self, request: web.Request, t: Target, handler: PostsTo) -> web.Response:
        """POST a kind that is another object's subresource (`namespaces/NS/bindings`: the
        pod the Binding names is bound), as the kind's row says."""
        if request.method != "POST" or t.name:
            raise method_not_allowed()
        subresource = handler.subresource
        target = self.kinds.by_id(handler.target.resource_id)
        if target is None:
            raise not_found_path()
        ctx = self.contexts.of(request, "CreateOptions")
        body = await self._body(request, target=t.kind)
        value = body[0] if isinstance(body, tuple) else None
        if not isinstance(value, dict):
            raise bad_request(f"{t.kind.kind} must be an object")
        name = (value.get("metadata") or {}).get("name") or ""
        if not name:
            raise invalid_error(t.kind.kind, "", "", [Cause("metadata.name",
                                                            "Required value: name is required",
                                                            "FieldValueRequired")])
        async with self.cluster.inputs.turn():
            result = self.registry.create_subresource(
                target, t.namespace or "", name, subresource, value,
                self._recorded(request, ctx, subresource))
        await self._durable(result)
        return json_response(created_status(), 201)

    async def create_subresource(self, request: web.Request, t: Target) -> web.Response:
        """POST to a subresource that takes a body of its own (`pods/NAME/binding`), as the
        kind's row says; answered with a success Status like upstream."""
        ctx = self.contexts.of(request, "CreateOptions")
        body = await self._body(request)
        value = body[0] if isinstance(body, tuple) else None
        if isinstance(value, dict):  # a Binding, an Eviction: as Go decodes the body's kind
            as_go_object(value, str(value.get("kind") or (t.subresource or "").title()),
                         str(value.get("apiVersion") or "").rpartition("/")[2])
        async with self.cluster.inputs.turn():
            result = await self.registry.post_subresource(
                t.kind, t.namespace or "", t.name, t.subresource,
                {} if value is None else value,
                self._recorded(request, ctx, t.subresource or ""))
        await self.cluster.log.durable()
        if result.event is None and result.type:  # an action's answer (eviction, token)
            return json_response(result.object, 201 if result.created else 200)
        return json_response(created_status(), 201)


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


def _protobuf_kind(kind: Kind) -> bool:
    """Whether the protobuf tables hold the kind's message (CRs never: upstream's 406)."""
    return protobuf_out.message_of(kind.api_version, kind.kind) is not None


def _message(kind: Kind) -> str:
    message = protobuf_out.message_of(kind.api_version, kind.kind)
    assert message is not None  # negotiated only for kinds the tables hold
    return message


def _protobuf_list(kind: Kind, raw: bytes) -> bytes:
    doc = orjson.loads(raw)
    return protobuf_out.encode_list(doc["apiVersion"], doc["kind"], doc["metadata"],
                                    doc["items"], _message(kind))


def _answer(form: partial.Form, body: bytes, as_protobuf: Callable[[], bytes]) -> web.Response:
    """The answer in the negotiated media type: `body` (JSON) or YAML of it, or the protobuf
    `as_protobuf` writes; an object with a field the protobuf tables lack is 406, never sent
    with the field left out."""
    if form.media != protobuf.CONTENT_TYPE:
        return encoded_response(body, form.media)
    try:
        return encoded_response(as_protobuf(), form.media)
    except protobuf_out.Unencodable as e:
        log.warning("cannot answer in protobuf: %s", e)
        raise ApiError(406, "NotAcceptable", "only the following media types are accepted: "
                       f"{partial.JSON}, {partial.YAML}") from None


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


def _converting_encoder(kind: Kind) -> Callable[[Event, str], bytes]:
    """Watch lines with each stored object at the version the watch names."""
    def encode(event: Event, type: str) -> bytes:
        return dumps({"type": type, "object": to_served(event.object, kind)}) + b"\n"

    return encode


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
