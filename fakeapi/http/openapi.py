"""OpenAPI v3, per group/version, built from the 1.37 schemas and the kind table.

`GET /openapi/v3` lists one document per served group/version with a content hash in its URL;
`GET /openapi/v3/apis/<g>/<v>` (or `/openapi/v3/api/v1`) returns the document: the schemas
reachable from the group/version's kinds, under `components.schemas`, and the REST paths.

kubectl reads these documents for three things, so their shape follows upstream closely:
- `create`/`apply`/`edit` decide on server-side field validation if the kind's PATCH
  operation carries `x-kubernetes-group-version-kind` and a `fieldValidation` query parameter;
- client-side apply computes a strategic merge patch when the PATCH request body lists
  `application/strategic-merge-patch+json`, using the patch-strategy/merge-key extensions;
- `explain` walks `components.schemas` (refs wrapped in `allOf`, as upstream does).
"""

from __future__ import annotations

import dataclasses
import email.utils
import functools
import hashlib
import time
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from fakeapi import KUBERNETES_VERSION
from fakeapi.http.discovery import group_versions, subresource
from fakeapi.registry.custom import wire_schema
from fakeapi.registry.kinds import KindTable
from fakeapi.registry.rest import Kind
from fakeapi.schema.schemas import REF_PREFIX, Schemas, get_schemas

OPENAPI_V3_PREFIX = "/openapi/v3"
COMPONENTS_PREFIX = "#/components/schemas/"
JSON_CONTENT_TYPE = "application/json"
WATCH_CONTENT_TYPE = "application/json;stream=watch"
#: PATCH media types the server takes; SMP must be listed for kubectl's client-side apply.
PATCH_CONTENT_TYPES = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
DELETE_OPTIONS = META + "DeleteOptions"
PATCH = META + "Patch"
STATUS = META + "Status"
WATCH_EVENT = META + "WatchEvent"
API_RESOURCE_LIST = META + "APIResourceList"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"

JSON = dict[str, Any]

# ---------------------------------------------------------------------------
# schema conversion: JSON-schema `$defs` (kubernetes-validate) -> OpenAPI 3.0 components


def _single_type(t: Any) -> Any:
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        return non_null[0] if len(non_null) == 1 else non_null
    return t


def convert_schema(node: Any, ref_prefix: str = COMPONENTS_PREFIX, *,
                   wrap_refs: bool = True) -> Any:
    """One schema node in OpenAPI 3.0 form (or Swagger 2.0's, with `#/definitions/` refs
    kept beside their siblings: `wrap_refs=False`).

    `#/$defs/X` becomes `<ref_prefix>X`; nullable type lists become their one non-null type;
    in 3.0 a `$ref` with sibling keys is wrapped in `allOf` (3.0 ignores siblings of `$ref`,
    and upstream wraps the same way). Extensions (`x-kubernetes-*`) are kept.
    """
    if isinstance(node, list):
        return [convert_schema(x, ref_prefix, wrap_refs=wrap_refs) for x in node]
    if not isinstance(node, dict):
        return node
    out: JSON = {}
    for key, value in node.items():
        if key == "$ref":
            continue
        if key == "type":
            out[key] = _single_type(value)
        elif key in ("properties", "patternProperties"):
            out[key] = {name: convert_schema(s, ref_prefix, wrap_refs=wrap_refs)
                        for name, s in value.items()}
        elif key.startswith("x-kubernetes-") or key in ("enum", "required", "default"):
            out[key] = value
        else:
            out[key] = convert_schema(value, ref_prefix, wrap_refs=wrap_refs)
    ref = node.get("$ref")
    if ref is not None:
        target = {"$ref": ref_prefix + ref.removeprefix(REF_PREFIX)}
        if not out:
            return target
        out = {"allOf": [target], **out} if wrap_refs else {**target, **out}
    return out


def _is_gvk_identity_field(name: str, definition: JSON) -> bool:
    return name in ("apiVersion", "kind") and "x-kubernetes-group-version-kind" in definition


@functools.cache
def component(name: str) -> JSON:
    """The OpenAPI form of one named definition (cached; treat as read-only)."""
    definition = get_schemas().definitions[name]
    out = convert_schema(definition)
    props = out.get("properties")
    if props:
        # The JSON-schema source pins apiVersion/kind with an enum; upstream OpenAPI doesn't
        # (objects of other versions are valid input that the server converts).
        for field in ("apiVersion", "kind"):
            if field in props and _is_gvk_identity_field(field, definition):
                props[field] = {k: v for k, v in props[field].items() if k != "enum"}
    if name == INT_OR_STRING:
        out.setdefault("format", "int-or-string")
    return out


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref.removeprefix(REF_PREFIX)
        for key, value in node.items():
            if key == "properties":  # field names, even `x-kubernetes-validations` (CRDs)
                for sub in value.values():
                    yield from _refs(sub)
            elif not key.startswith("x-kubernetes-"):
                yield from _refs(value)
    elif isinstance(node, list):
        for x in node:
            yield from _refs(x)


def schema_closure(roots: Iterable[str], schemas: Schemas | None = None) -> list[str]:
    """Names of `roots` and every definition they reference, transitively, sorted."""
    definitions = (schemas or get_schemas()).definitions
    seen: set[str] = set()
    todo = [r for r in roots if r in definitions]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(r for r in _refs(definitions[name]) if r not in seen and r in definitions)
    return sorted(seen)


# ---------------------------------------------------------------------------
# parameters (our own short descriptions; names and types as upstream)

_QUERY_PARAMS: dict[str, tuple[str, str]] = {
    "allowWatchBookmarks": ("boolean", "Ask for BOOKMARK watch events (sent at the server's "
                                       "discretion). Ignored unless watching."),
    "continue": ("string", "Opaque token from a previous paginated list to fetch the next page."),
    "dryRun": ("string", "If set to All, run every stage of the request but persist nothing."),
    "fieldManager": ("string", "Name of the actor making the change, recorded in managed "
                               "fields. Required for apply patches."),
    "fieldSelector": ("string", "Only return objects whose fields match this selector."),
    "fieldValidation": ("string", "How to treat unknown or duplicate fields in the body: "
                                  "Ignore, Warn (default) or Strict (reject the request)."),
    "force": ("boolean", "Take ownership of conflicting fields on an apply patch. Must be unset "
                         "for other patch types."),
    "gracePeriodSeconds": ("integer", "Seconds to wait before deleting; 0 deletes at once."),
    "ignoreStoreReadErrorWithClusterBreakingPotential": (
        "boolean", "Delete an object even if it cannot be read back from storage."),
    "labelSelector": ("string", "Only return objects whose labels match this selector."),
    "limit": ("integer", "Return at most this many items and a continue token for the rest."),
    "orphanDependents": ("boolean", "Deprecated; use propagationPolicy. Orphan the dependents."),
    "pretty": ("string", "If 'true', indent the response."),
    "propagationPolicy": ("string", "Garbage collection of dependents: Orphan, Background or "
                                    "Foreground."),
    "resourceVersion": ("string", "Constrain which resource version the request is served "
                                  "from; for watches, the version to start after."),
    "resourceVersionMatch": ("string", "How resourceVersion applies to a list: Exact or "
                                       "NotOlderThan."),
    "sendInitialEvents": ("boolean", "With watch=true, start the stream with the current "
                                     "objects, then a BOOKMARK marking the end of them."),
    "timeoutSeconds": ("integer", "End the list or watch call after this many seconds."),
    "watch": ("boolean", "Stream add, update and delete notifications instead of listing."),
}

LIST_PARAMS = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit",
               "resourceVersion", "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds",
               "watch")
WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation")
PATCH_PARAMS = (*WRITE_PARAMS, "force")
DELETE_PARAMS = ("dryRun", "gracePeriodSeconds",
                 "ignoreStoreReadErrorWithClusterBreakingPotential", "orphanDependents",
                 "propagationPolicy")
DELETE_COLLECTION_PARAMS = tuple(sorted(
    {*DELETE_PARAMS, *LIST_PARAMS} - {"allowWatchBookmarks", "watch"}))


def query_param(name: str) -> JSON:
    """One query parameter object (schema with `uniqueItems` as upstream emits it)."""
    typ, description = _QUERY_PARAMS[name]
    return {"description": description, "in": "query", "name": name,
            "schema": {"type": typ, "uniqueItems": True}}


def _path_param(name: str, description: str) -> JSON:
    return {"description": description, "in": "path", "name": name, "required": True,
            "schema": {"type": "string", "uniqueItems": True}}


_NAMESPACE_PARAM = _path_param("namespace", "the namespace the objects live in")


# ---------------------------------------------------------------------------
# operations and paths


def _camel_group(group: str) -> str:
    if not group:
        return "Core"
    return "".join(p[:1].upper() + p[1:] for p in group.removesuffix(".k8s.io").split("."))


def _tag(group: str, version: str) -> str:
    camel = _camel_group(group)
    return f"{camel[:1].lower()}{camel[1:]}_{version}"


def _ref(name: str) -> JSON:
    return {"$ref": COMPONENTS_PREFIX + name}


def _content(name: str, *media_types: str) -> JSON:
    return {mt: {"schema": _ref(name)} for mt in media_types or (JSON_CONTENT_TYPE,)}


def _responses(name: str, codes: Iterable[int], *media_types: str) -> JSON:
    text = {200: "OK", 201: "Created", 202: "Accepted"}
    out: JSON = {str(c): {"content": _content(name, *media_types), "description": text[c]}
                 for c in codes}
    out["401"] = {"description": "Unauthorized"}
    return out


@dataclasses.dataclass(frozen=True)
class _OpContext:
    """What every operation of one kind (or subresource) shares."""

    group: str
    version: str
    gvk: JSON
    body: str  # definition name of the object read/written
    op_stem: str  # e.g. "ResourceV1NamespacedResourceClaim"


def _operation(ctx: _OpContext, *, op_id: str, action: str, description: str,
               params: Iterable[str] = (), request: JSON | None = None,
               responses: JSON) -> JSON:
    op: JSON = {"description": description, "operationId": op_id}
    plist = [query_param(p) for p in params]
    if plist:
        op["parameters"] = plist
    if request is not None:
        op["requestBody"] = request
    op["responses"] = responses
    op["tags"] = [_tag(ctx.group, ctx.version)]
    op["x-kubernetes-action"] = action
    op["x-kubernetes-group-version-kind"] = ctx.gvk
    return op


def _body(name: str, required: bool = True) -> JSON:
    body: JSON = {"content": {"*/*": {"schema": _ref(name)}}}
    if required:
        body["required"] = True
    return body


def _patch_body() -> JSON:
    return {"content": {mt: {"schema": _ref(PATCH)} for mt in PATCH_CONTENT_TYPES},
            "required": True}


def _method_ops(ctx: _OpContext, verbs: Iterable[str], suffix: str, what: str) -> JSON:
    """Item-level operations (`/{name}` or `/{name}/<sub>`) for the given verbs."""
    item = ctx.body
    ops: JSON = {}
    verbs = set(verbs)
    if "get" in verbs:
        ops["get"] = _operation(ctx, op_id=f"read{ctx.op_stem}{suffix}", action="get",
                                description=f"get {what}", responses=_responses(item, (200,)))
    if "update" in verbs:
        ops["put"] = _operation(ctx, op_id=f"replace{ctx.op_stem}{suffix}", action="put",
                                description=f"update (replace) {what}", params=WRITE_PARAMS,
                                request=_body(item), responses=_responses(item, (200, 201)))
    if "patch" in verbs:
        ops["patch"] = _operation(ctx, op_id=f"patch{ctx.op_stem}{suffix}", action="patch",
                                  description=f"patch {what}", params=PATCH_PARAMS,
                                  request=_patch_body(), responses=_responses(item, (200, 201)))
    if "create" in verbs:
        ops["post"] = _operation(ctx, op_id=f"create{ctx.op_stem}{suffix}", action="post",
                                 description=f"create {what}", params=WRITE_PARAMS,
                                 request=_body(item), responses=_responses(item, (200, 201, 202)))
    if "delete" in verbs:
        ops["delete"] = _operation(ctx, op_id=f"delete{ctx.op_stem}{suffix}", action="delete",
                                   description=f"delete {what}", params=DELETE_PARAMS,
                                   request=_body(DELETE_OPTIONS, required=False),
                                   responses=_responses(item, (200, 202)))
    return ops


def _connect_ops(ctx: _OpContext, sub_name: str, options_kind: str,
                 verbs: Iterable[str]) -> JSON:
    """GET/POST of a streamed subresource (`pods/{name}/exec`): a string response, as
    upstream's connect operations."""
    suffix = sub_name[:1].upper() + sub_name[1:]
    ops: JSON = {}
    for verb, method in (("get", "get"), ("create", "post")):
        if verb not in verbs:
            continue
        op: JSON = {"description": f"connect {method.upper()} requests to {sub_name} of the "
                    f"specified {ctx.op_stem}",
                    "operationId": f"connect{method.capitalize()}{ctx.op_stem}{suffix}",
                    "responses": {"200": {"content": {"*/*": {"schema": {"type": "string"}}},
                                          "description": "OK"},
                                  "401": {"description": "Unauthorized"}},
                    "tags": [_tag(ctx.group, ctx.version)], "x-kubernetes-action": "connect",
                    "x-kubernetes-group-version-kind": {"group": "", "kind": options_kind,
                                                        "version": "v1"}}
        ops[method] = op
    return ops


def _sorted(params: list[JSON]) -> list[JSON]:
    return sorted(params, key=lambda p: p["name"])


def _kind_paths(schemas: Schemas, kind: Kind) -> dict[str, JSON]:
    """Every REST path of one kind: collection, item, subresources, all-namespaces and watch."""
    name, list_name = definition_names(schemas, kind)
    if name is None:
        return {}
    prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
    ns = "/namespaces/{namespace}" if kind.namespaced else ""
    scope = "Namespaced" if kind.namespaced else ""
    gv_stem = _camel_group(kind.group) + kind.version[:1].upper() + kind.version[1:]
    gvk = {"group": kind.group, "kind": kind.kind, "version": kind.version}
    ctx = _OpContext(kind.group, kind.version, gvk, name, f"{gv_stem}{scope}{kind.kind}")
    verbs = set(kind.verbs)
    name_param = _path_param("name", f"the {kind.kind}'s metadata.name")
    scope_params = [_NAMESPACE_PARAM] if kind.namespaced else []
    pretty = query_param("pretty")
    list_params = [query_param(p) for p in LIST_PARAMS]
    paths: dict[str, JSON] = {}

    collection: JSON = {}
    if "list" in verbs and list_name:
        collection["get"] = _operation(
            ctx, op_id=f"list{ctx.op_stem}", action="list",
            description=f"list {kind.plural}, or watch them with watch=true", params=LIST_PARAMS,
            responses=_responses(list_name, (200,), JSON_CONTENT_TYPE, WATCH_CONTENT_TYPE))
    if "create" in verbs:
        collection["post"] = _operation(
            ctx, op_id=f"create{ctx.op_stem}", action="post",
            description=f"create {kind.kind} objects", params=WRITE_PARAMS, request=_body(name),
            responses=_responses(name, (200, 201, 202)))
    if "deletecollection" in verbs:
        collection["delete"] = _operation(
            ctx, op_id=f"deletecollection{ctx.op_stem}", action="deletecollection",
            description=f"delete every matching {kind.kind}", params=DELETE_COLLECTION_PARAMS,
            request=_body(DELETE_OPTIONS, required=False), responses=_responses(STATUS, (200,)))
    if collection:
        paths[f"{prefix}{ns}/{kind.plural}"] = {**collection,
                                                "parameters": _sorted([*scope_params, pretty])}

    item = _method_ops(ctx, verbs - {"create"}, "", f"the specified {kind.kind}")
    if item:
        paths[f"{prefix}{ns}/{kind.plural}/{{name}}"] = {
            **item, "parameters": _sorted([name_param, *scope_params, pretty])}

    for sub_name in sorted(kind.subresources):
        sub = subresource(sub_name)
        sg, sv, sk = sub.response_gvk(kind)
        body = name if (sg, sv, sk) == kind.group_version + (kind.kind,) else (
            schemas.name_for_gvk(sg, sv, sk))
        if body is None:
            if sk.endswith("Options"):  # exec, attach, portforward: upstream's connecters
                paths[f"{prefix}{ns}/{kind.plural}/{{name}}/{sub_name}"] = {
                    **_connect_ops(ctx, sub_name, sk, sub.verbs),
                    "parameters": _sorted([name_param, *scope_params])}
            continue
        sub_ctx = dataclasses.replace(ctx, gvk={"group": sg, "kind": sk, "version": sv},
                                      body=body)
        suffix = sub_name[:1].upper() + sub_name[1:]
        ops = _method_ops(sub_ctx, sub.verbs, suffix, f"{sub_name} of the specified {kind.kind}")
        if ops:
            paths[f"{prefix}{ns}/{kind.plural}/{{name}}/{sub_name}"] = {
                **ops, "parameters": _sorted([name_param, *scope_params, pretty])}

    if kind.namespaced and "list" in verbs and list_name:
        paths[f"{prefix}/{kind.plural}"] = {
            "get": _operation(
                ctx, op_id=f"list{gv_stem}{kind.kind}ForAllNamespaces", action="list",
                description=f"list {kind.plural} in all namespaces",
                responses=_responses(list_name, (200,), JSON_CONTENT_TYPE, WATCH_CONTENT_TYPE)),
            "parameters": _sorted([*list_params, pretty]),
        }

    if "watch" in verbs:
        def watch(op_id: str, action: str, description: str, params: list[JSON]) -> JSON:
            return {"get": _operation(ctx, op_id=op_id, action=action, description=description,
                                      responses=_responses(WATCH_EVENT, (200,),
                                                           JSON_CONTENT_TYPE,
                                                           WATCH_CONTENT_TYPE)),
                    "parameters": _sorted([*params, *list_params, pretty])}

        paths[f"{prefix}/watch{ns}/{kind.plural}"] = watch(
            f"watch{ctx.op_stem}List", "watchlist",
            f"stream changes to {kind.plural} (legacy path; prefer list with watch=true)",
            scope_params)
        paths[f"{prefix}/watch{ns}/{kind.plural}/{{name}}"] = watch(
            f"watch{ctx.op_stem}", "watch",
            f"stream changes to one {kind.kind} (legacy path; prefer list with watch=true "
            "and a metadata.name field selector)", [name_param, *scope_params])
        if kind.namespaced:
            paths[f"{prefix}/watch/{kind.plural}"] = watch(
                f"watch{gv_stem}{kind.kind}ListForAllNamespaces", "watchlist",
                f"stream changes to {kind.plural} in all namespaces (legacy path; prefer "
                "list with watch=true)", [])
    return paths


def definition_names(schemas: Schemas, kind: Kind) -> tuple[str | None, str | None]:
    """The definition names of a kind and its list: the 1.37 schemas' for built-in kinds,
    upstream's reversed-group names (`com.example.v1.Widget`) for custom resources."""
    if kind.custom_schema:
        stem = ".".join(reversed(kind.group.split("."))) + f".{kind.version}.{kind.kind}"
        return stem, stem + "List"
    return (schemas.name_for_gvk(kind.group, kind.version, kind.kind),
            schemas.name_for_gvk(kind.group, kind.version, kind.kind + "List"))


def custom_definitions(kind: Kind) -> dict[str, JSON]:
    """A custom resource's object and list definitions (JSON-schema `$defs` form)."""
    name, list_name = definition_names(get_schemas(), kind)
    assert name is not None and list_name is not None
    gvk = {"group": kind.group, "version": kind.version, "kind": kind.kind + "List"}
    return {name: wire_schema(kind), list_name: {
        "description": f"{kind.kind}List is a list of {kind.kind}", "type": "object",
        "required": ["items"], "x-kubernetes-group-version-kind": [gvk],
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": REF_PREFIX + name}},
            "metadata": {"$ref": REF_PREFIX + META + "ListMeta"}}}}


def _component_roots(schemas: Schemas, kinds: Iterable[Kind]) -> list[str]:
    roots = [DELETE_OPTIONS, PATCH, STATUS, WATCH_EVENT, API_RESOURCE_LIST]
    for k in kinds:
        for gvk in ((k.group, k.version, k.kind), (k.group, k.version, k.kind + "List"),
                    *(subresource(s).response_gvk(k) for s in k.subresources)):
            name = schemas.name_for_gvk(*gvk)
            if name:
                roots.append(name)
    return roots


def build_document(kinds: Iterable[Kind], group: str, version: str) -> JSON:
    """The OpenAPI v3 document (as a dict) of one group/version serving `kinds`."""
    schemas = get_schemas()
    kinds = list(kinds)
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    gv_stem = _camel_group(group) + version[:1].upper() + version[1:]
    paths: dict[str, JSON] = {
        f"{prefix}/": {"get": {
            "description": "discover the resources of this group/version",
            "operationId": f"get{gv_stem}APIResources",
            "responses": _responses(API_RESOURCE_LIST, (200,)),
            "tags": [_tag(group, version)],
        }},
    }
    custom: dict[str, JSON] = {}
    for k in kinds:
        paths.update(_kind_paths(schemas, k))
        if k.custom_schema:
            custom.update(custom_definitions(k))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": {
            **{name: component(name) for name in schema_closure(
                [*_component_roots(schemas, kinds), *_refs(custom)], schemas)},
            **{name: convert_schema(definition) for name, definition in custom.items()}
        }},
    }


# ---------------------------------------------------------------------------
# serialized documents, hashes and the index


@dataclasses.dataclass(frozen=True)
class Rendered:
    """A serialized document and its content hash (also its ETag)."""

    body: bytes
    hash: str


def content_hash(body: bytes) -> str:
    """Upper-case hex SHA-512 of a document, the form upstream puts in `?hash=` and ETag."""
    return hashlib.sha512(body).hexdigest().upper()


@functools.lru_cache(maxsize=64)
def _render(kinds: tuple[Kind, ...], group: str, version: str) -> Rendered:
    body = orjson.dumps(build_document(kinds, group, version), option=orjson.OPT_SORT_KEYS)
    return Rendered(body, content_hash(body))


def gv_path(group: str, version: str) -> str:
    """Index key of a group/version: `api/v1` or `apis/<group>/<version>`."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def parse_gv_path(path: str) -> tuple[str, str] | None:
    """(group, version) for an index key or request path below `/openapi/v3/`, else None."""
    parts = path.removeprefix(OPENAPI_V3_PREFIX).strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        return ("", parts[1])
    if len(parts) == 3 and parts[0] == "apis":
        return (parts[1], parts[2])
    return None


def rendered(kinds: KindTable, group: str, version: str) -> Rendered | None:
    """The serialized document and hash of a served group/version (built once), else None."""
    served = tuple(kinds.in_group_version(group, version))
    if not served:
        return None
    return _render(served, group, version)


def group_version_document(kinds: KindTable, group: str, version: str) -> bytes | None:
    """`GET /openapi/v3/apis/<g>/<v>` body (serialized once and cached), None if not served."""
    doc = rendered(kinds, group, version)
    return doc.body if doc else None


def document_hash(kinds: KindTable, group: str, version: str) -> str | None:
    """Content hash of a group/version's document, None if not served."""
    doc = rendered(kinds, group, version)
    return doc.hash if doc else None


def server_relative_url(group: str, version: str, doc_hash: str) -> str:
    """Where the index points clients for one document."""
    return f"{OPENAPI_V3_PREFIX}/{gv_path(group, version)}?hash={doc_hash}"


def openapi_index(kinds: KindTable) -> JSON:
    """`GET /openapi/v3`: every served group/version with its hashed document URL."""
    paths: JSON = {}
    for group, versions in group_versions(kinds).items():
        for v in versions:
            doc = rendered(kinds, group, v)
            if doc is not None:
                paths[gv_path(group, v)] = {
                    "serverRelativeURL": server_relative_url(group, v, doc.hash)}
    return {"paths": dict(sorted(paths.items()))}


# ---------------------------------------------------------------------------
# HTTP response shape (the server only copies status, headers and body)

NO_CACHE = "no-cache, private"
ONE_YEAR = 365 * 24 * 3600


@dataclasses.dataclass(frozen=True)
class Served:
    """Status, headers and body for one OpenAPI response."""

    status: int
    headers: dict[str, str]
    body: bytes = b""


def serve_index(kinds: KindTable) -> Served:
    """Response to `GET /openapi/v3` (never cached: hashes change when the kind table does)."""
    body = orjson.dumps(openapi_index(kinds))
    return Served(200, {"Content-Type": JSON_CONTENT_TYPE, "Cache-Control": NO_CACHE}, body)


def _etag_matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
    return "*" in tags or etag in tags


def serve_document(kinds: KindTable, path: str, query_hash: str | None = None,
                   if_none_match: str | None = None, now: float | None = None) -> Served | None:
    """Response to `GET /openapi/v3/<path>`; None when no such group/version is served.

    Same as upstream: with `?hash=` equal to the current hash the document is immutable
    (`Cache-Control: public, immutable`, `Expires` a year ahead); a stale hash is answered
    with a 301 to the current URL; `If-None-Match` on the ETag gets a 304.
    """
    gv = parse_gv_path(path)
    doc = rendered(kinds, *gv) if gv else None
    if gv is None or doc is None:
        return None
    if query_hash is not None and query_hash != doc.hash:
        return Served(301, {"Location": server_relative_url(*gv, doc.hash),
                            "Cache-Control": NO_CACHE})
    headers = {"Content-Type": JSON_CONTENT_TYPE, **_headers(doc.hash, query_hash, now)}
    if _etag_matches(if_none_match, headers["Etag"]):
        return Served(304, headers)
    return Served(200, headers, doc.body)


def _headers(current: str, query_hash: str | None, now: float | None) -> dict[str, str]:
    headers = {"Etag": f'"{current}"'}
    if query_hash == current:
        # real wall time, not the injected clock: HTTP caches judge `Expires` against the
        # response's `Date` header and their own clock, both real
        expires = (time.time() if now is None else now) + ONE_YEAR
        headers.update({"Cache-Control": "public, immutable", "Vary": "Accept",
                        "Expires": email.utils.formatdate(expires, usegmt=True)})
    else:
        headers["Cache-Control"] = NO_CACHE
    return headers


def cache_headers(query_hash: str | None, kinds: KindTable, group: str, version: str,
                  now: float | None = None) -> dict[str, str]:
    """Headers for a 200 with a group/version's document (ETag and caching).

    Long-lived (`public, immutable`, `Expires` a year ahead) only when `?hash=` names the
    current document; otherwise `no-cache`. `serve_document` also does upstream's redirect of
    stale hashes and If-None-Match.
    """
    current = document_hash(kinds, group, version)
    if current is None:
        return {"Cache-Control": NO_CACHE}
    return _headers(current, query_hash, now)
