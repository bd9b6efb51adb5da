"""OpenAPI v2 (`GET /openapi/v2`), in JSON and in the protobuf form kubectl asks for, derived
from the same 1.37 schemas and kind table as OpenAPI v3.

kubectl reads v2 for `explain --output=plaintext-openapiv2`, `get --raw /openapi/v2`, and (up
to 1.28) for client-side validation and the strategic merge patch of `apply`: all of them
look models up by `x-kubernetes-group-version-kind` in `definitions`, so the document holds
the definitions of every served kind (custom resources included) and a path per served
group/version's resources. The protobuf form is gnostic's `openapi_v2.Document`
(`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), whose vendor extensions
carry their values as YAML text (JSON is YAML).
"""

from __future__ import annotations

import functools
import struct
from typing import Any

import orjson

from fakeapi import KUBERNETES_VERSION
from fakeapi.http.openapi import (
    _component_roots,
    _refs,
    convert_schema,
    custom_definitions,
    definition_names,
    schema_closure,
)
from fakeapi.machinery.protowire import delimited as _bytes
from fakeapi.machinery.protowire import key as _key
from fakeapi.machinery.protowire import varint as _varint
from fakeapi.registry.kinds import KindTable
from fakeapi.registry.rest import Kind
from fakeapi.schema.schemas import get_schemas

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTOBUF_TYPES = (PROTOBUF, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
DEFINITIONS_PREFIX = "#/definitions/"

JSON = dict[str, Any]


def to_v2(node: Any) -> Any:
    """One schema node in Swagger 2.0 form: `#/$defs/X` refs become `#/definitions/X` (kept
    beside their siblings), nullable type lists their one type; extensions are kept."""
    return convert_schema(node, DEFINITIONS_PREFIX, wrap_refs=False)


def _paths(kinds: KindTable) -> JSON:
    """One GET per served resource (collection and item), tagged with its kind."""
    paths: JSON = {}
    for k in kinds.kinds:
        prefix = f"/apis/{k.group}/{k.version}" if k.group else f"/api/{k.version}"
        ns = "/namespaces/{namespace}" if k.namespaced else ""
        gvk = {"group": k.group, "kind": k.kind, "version": k.version}
        name, _ = definition_names(get_schemas(), k)
        if name is None or "get" not in k.verbs:
            continue
        paths[f"{prefix}{ns}/{k.plural}/{{name}}"] = {"get": {
            "operationId": f"read{k.kind}", "produces": ["application/json"],
            "responses": {"200": {"description": "OK",
                                  "schema": {"$ref": DEFINITIONS_PREFIX + name}}},
            "x-kubernetes-action": "get", "x-kubernetes-group-version-kind": gvk}}
    return dict(sorted(paths.items()))


def document(kinds: KindTable) -> JSON:
    """The Swagger 2.0 document of every served kind."""
    return _document(kinds.kinds)


@functools.lru_cache(maxsize=8)
def _document(kinds: tuple[Kind, ...]) -> JSON:
    schemas = get_schemas()
    custom: JSON = {}
    for k in kinds:
        if k.custom_schema:
            custom.update(custom_definitions(k))
    names = schema_closure([*_component_roots(schemas, kinds), *_refs(custom)], schemas)
    definitions = {name: to_v2(schemas.definitions[name]) for name in names}
    definitions.update({name: to_v2(d) for name, d in custom.items()})
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": KUBERNETES_VERSION},
            "paths": _paths(KindTable(kinds)), "definitions": dict(sorted(definitions.items()))}


@functools.lru_cache(maxsize=8)
def rendered(kinds: tuple[Kind, ...], protobuf: bool) -> bytes:
    """The serialized document (built once per kind table)."""
    doc = _document(kinds)
    return encode_document(doc) if protobuf else orjson.dumps(doc)


# ----- gnostic openapi_v2 protobuf ---------------------------------------------------------


def _str(number: int, text: str) -> bytes:
    return _bytes(number, text.encode()) if text else b""


def _int(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(value) if value else b""


def _double(number: int, value: float) -> bytes:
    return _key(number, 1) + struct.pack("<d", float(value))


def _any(value: Any) -> bytes:
    """gnostic Any: the value as YAML text (field 2)."""
    return _str(2, orjson.dumps(value).decode())


def _named_any(number: int, name: str, value: Any) -> bytes:
    return _bytes(number, _str(1, name) + _bytes(2, _any(value)))


_INT_FIELDS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15,
               "maxProperties": 17, "minProperties": 18}


def encode_schema(schema: JSON) -> bytes:
    """One gnostic Schema message."""
    out = bytearray()
    out += _str(1, schema.get("$ref", ""))
    out += _str(2, str(schema.get("format") or ""))
    out += _str(3, str(schema.get("title") or ""))
    out += _str(4, str(schema.get("description") or ""))
    if "default" in schema:
        out += _bytes(5, _any(schema["default"]))
    for key, number in (("maximum", 7), ("minimum", 9)):
        if isinstance(schema.get(key), (int, float)):
            out += _double(number, schema[key])
    for key, number in _INT_FIELDS.items():
        if isinstance(schema.get(key), int):
            out += _int(number, schema[key])
    out += _str(13, str(schema.get("pattern") or ""))
    for name in schema.get("required") or []:
        out += _str(19, str(name))
    for value in schema.get("enum") or []:
        out += _bytes(20, _any(value))
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        out += _bytes(21, _bytes(1, encode_schema(extra)))
    elif isinstance(extra, bool):
        out += _bytes(21, _key(2, 0) + _varint(int(extra)))
    kind = schema.get("type")
    if kind:
        out += _bytes(22, b"".join(_str(1, t) for t in ([kind] if isinstance(kind, str)
                                                        else kind)))
    if isinstance(schema.get("items"), dict):
        out += _bytes(23, _bytes(1, encode_schema(schema["items"])))
    for sub in schema.get("allOf") or []:
        out += _bytes(24, encode_schema(sub))
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        out += _bytes(25, b"".join(_bytes(1, _str(1, name) + _bytes(2, encode_schema(s)))
                                   for name, s in props.items()))
    for key, value in schema.items():
        if key.startswith("x-"):
            out += _named_any(31, key, value)
    return bytes(out)


def _operation(op: JSON) -> bytes:
    """A gnostic Operation: its id, produces, responses and vendor extensions."""
    out = bytearray(_str(5, op.get("operationId", "")))
    for media in op.get("produces") or []:
        out += _str(6, media)
    responses = b""
    for code, response in (op.get("responses") or {}).items():
        body = _str(1, response.get("description", ""))
        if "schema" in response:
            body += _bytes(2, _bytes(1, encode_schema(response["schema"])))
        # ResponseValue{response=1}; NamedResponseValue{name=1, value=2}
        responses += _bytes(1, _str(1, code) + _bytes(2, _bytes(1, body)))
    out += _bytes(9, responses)  # Responses{response_code=1}
    for key, value in op.items():
        if key.startswith("x-"):
            out += _named_any(13, key, value)
    return bytes(out)


def encode_document(doc: JSON) -> bytes:
    """gnostic `openapi_v2.Document`: swagger, info, paths and definitions."""
    out = bytearray(_str(1, doc["swagger"]))
    info = doc["info"]
    out += _bytes(2, _str(1, info["title"]) + _str(2, info["version"]))
    paths = b""
    for path, item in doc["paths"].items():
        get = _bytes(2, _operation(item["get"])) if "get" in item else b""  # PathItem.get
        paths += _bytes(2, _str(1, path) + _bytes(2, get))  # Paths.path: NamedPathItem
    out += _bytes(8, paths)
    definitions = b"".join(_bytes(1, _str(1, name) + _bytes(2, encode_schema(schema)))
                           for name, schema in doc["definitions"].items())
    out += _bytes(9, definitions)
    return bytes(out)


def wants_protobuf(accept: str | None) -> bool:
    """Whether an Accept header asks for the protobuf form (kubectl's discovery client)."""
    return any(media.split(";")[0].strip() in PROTOBUF_TYPES
               for media in (accept or "").split(","))
