"""Encode objects, lists and PartialObjectMetadata as `application/vnd.kubernetes.protobuf`.

The inverse of `fakeapi.http.protobuf`, over the same field tables: the magic `k8s\\x00`, a
`runtime.Unknown` envelope (typeMeta, raw), and the object's message in `raw`. A value the
tables can't place (a kind without a table, a field they don't list) raises `Unencodable`
rather than being dropped: the caller answers 406, so a client never reads an object with
fields silently missing.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Callable
from typing import Any

import orjson

from fakeapi.http.protobuf import KINDS, MAGIC, MESSAGES, MessageField
from fakeapi.machinery import protowire as pw
from fakeapi.machinery.timestamps import parse_time

_LIST_META = {1: "selfLink", 2: "resourceVersion", 3: "continue", 4: "remainingItemCount"}
"""meta/v1 ListMeta's field numbers (every XList message: 1 metadata, 2 items)."""
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class Unencodable(ValueError):
    """An object has a kind or a field the protobuf tables don't hold."""


def message_of(api_version: str, kind: str) -> str | None:
    """The table's top-level message of a kind (None: not encodable here)."""
    return KINDS.get((api_version, kind))


def _scalar(field: MessageField, value: Any) -> bytes:
    if field.type == "bool":
        if not isinstance(value, bool):
            raise Unencodable(f"{field.name}: not a bool")
        return pw.varint(int(value))
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unencodable(f"{field.name}: not an integer")
    return pw.varint(value)


def _time(value: Any) -> bytes:
    if value is None:
        return b""  # the zero metav1.Time: an empty message, as Go marshals it
    when = parse_time(str(value))
    seconds = (when - _EPOCH) // datetime.timedelta(seconds=1)
    out = pw.key(1, pw.VARINT) + pw.varint(seconds) if seconds else b""
    if when.microsecond:
        out += pw.key(2, pw.VARINT) + pw.varint(when.microsecond * 1000)
    return out


def _int_or_string(value: Any) -> bytes:
    if isinstance(value, str):
        return (pw.key(1, pw.VARINT) + pw.varint(1) + pw.key(2, pw.VARINT) + pw.varint(0)
                + pw.delimited(3, value.encode()))
    return pw.key(1, pw.VARINT) + pw.varint(0) + pw.key(2, pw.VARINT) + pw.varint(int(value))


def _map_value(kind: str, value: Any) -> bytes:
    if kind == "bytes":
        return base64.b64decode(str(value))
    if kind == "quantity":
        return pw.delimited(1, str(value).encode())
    return str(value).encode()


_DELIMITED: dict[str, Callable[[MessageField, Any], bytes]] = {
    "string": lambda f, v: str(v).encode(),
    "bytes": lambda f, v: base64.b64decode(str(v)),
    "msg": lambda f, v: _message(v, f.ref),
    "time": lambda f, v: _time(v),
    "microtime": lambda f, v: _time(v),
    "quantity": lambda f, v: pw.delimited(1, str(v).encode()),
    "intorstr": lambda f, v: _int_or_string(v),
    "fieldsv1": lambda f, v: pw.delimited(1, orjson.dumps(v)),
    "rawext": lambda f, v: pw.delimited(1, orjson.dumps(v)),
}


def _field(number: int, field: MessageField, value: Any) -> bytes:
    if field.type == "map":
        if not isinstance(value, dict):
            raise Unencodable(f"{field.name}: not a map")
        return b"".join(pw.delimited(number, pw.delimited(1, str(k).encode())
                                     + pw.delimited(2, _map_value(field.ref, value[k])))
                        for k in sorted(value))
    items = value if field.repeated else [value]
    if field.repeated and not isinstance(value, list):
        raise Unencodable(f"{field.name}: not a list")
    if field.type in ("int32", "int64", "bool"):
        return b"".join(pw.key(number, pw.VARINT) + _scalar(field, v) for v in items)
    encode = _DELIMITED[field.type]
    return b"".join(pw.delimited(number, encode(field, v)) for v in items
                    if v is not None or field.type in ("time", "microtime"))


def _message(value: Any, message: str) -> bytes:
    """One message of the table from its JSON dict (keys in field-number order)."""
    if not isinstance(value, dict):
        raise Unencodable(f"{message}: not an object")
    table = MESSAGES[message]
    left = dict(value)
    parts: list[tuple[int, bytes]] = []
    for number, field in table.items():
        if field.type == "inline":
            names = {f.name for f in MESSAGES[field.ref].values()}
            inner = {k: left.pop(k) for k in list(left) if k in names}
            parts.append((number, pw.delimited(number, _message(inner, field.ref))))
        elif field.name in left:
            parts.append((number, _field(number, field, left.pop(field.name))))
    if left:
        raise Unencodable(f"{message} has no field {sorted(left)[0]!r} in the protobuf tables")
    return b"".join(data for _, data in sorted(parts, key=lambda p: p[0]))


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = pw.delimited(1, api_version.encode()) + pw.delimited(2, kind.encode())
    return MAGIC + pw.delimited(1, type_meta) + pw.delimited(2, raw)


def encode_object(obj: dict[str, Any], message: str) -> bytes:
    """A whole object (its `apiVersion` and `kind` go in the envelope)."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return _envelope(str(obj.get("apiVersion", "")), str(obj.get("kind", "")),
                     _message(body, message))


def _list_meta(meta: dict[str, Any]) -> bytes:
    out = b""
    for number, name in _LIST_META.items():
        if name in meta:
            value = meta[name]
            out += (pw.key(number, pw.VARINT) + pw.varint(int(value)) if number == 4
                    else pw.delimited(number, str(value).encode()))
    return out


def encode_list(api_version: str, kind: str, meta: dict[str, Any],
                items: list[dict[str, Any]], message: str) -> bytes:
    """An XList: its ListMeta and each item's message (items carry no apiVersion/kind)."""
    raw = pw.delimited(1, _list_meta(meta)) + b"".join(
        pw.delimited(2, _message({k: v for k, v in item.items()
                                  if k not in ("apiVersion", "kind")}, message))
        for item in items)
    return _envelope(api_version, kind, raw)


def encode_partial(obj: dict[str, Any]) -> bytes:
    """A PartialObjectMetadata (field 1: ObjectMeta)."""
    return _envelope(str(obj["apiVersion"]), str(obj["kind"]),
                     pw.delimited(1, _message(obj.get("metadata", {}), "ObjectMeta")))


def encode_partial_list(doc: dict[str, Any]) -> bytes:
    """A PartialObjectMetadataList (1: ListMeta, 2: each item's PartialObjectMetadata)."""
    raw = pw.delimited(1, _list_meta(doc.get("metadata", {}))) + b"".join(
        pw.delimited(2, pw.delimited(1, _message(item.get("metadata", {}), "ObjectMeta")))
        for item in doc.get("items", []))
    return _envelope(str(doc["apiVersion"]), str(doc["kind"]), raw)
