"""Decode `application/vnd.kubernetes.protobuf` request bodies into JSON-shaped dicts.

kubectl's typed clients (`kubectl create namespace|configmap|role|...`) send their bodies as
Kubernetes protobuf: the magic `k8s\\x00`, then a `runtime.Unknown` envelope (typeMeta, raw,
contentEncoding, contentType) whose `raw` is the object's message. A declarative table maps each
message's field numbers to JSON names and wire types; decoding yields the dict the object's JSON
form would give. Go's JSON rules decide what shows: zero scalars of `omitempty` value fields are
dropped, while pointer fields and fields without `omitempty` (marked KEEP) show even when zero;
embedded structs always show (an unset metav1.Time becomes null, as in JSON).

The tables are `fakeapi.http.protobuf_core` (meta/v1, core/v1) and
`fakeapi.http.protobuf_groups` (the other groups), interop data derived from the upstream
k8s.io/api and k8s.io/apimachinery `generated.proto` files; the wire is read with
`fakeapi.machinery.protowire`. Unknown field numbers are skipped; malformed bytes and unknown
kinds are 400 BadRequest errors worded like the apiserver's.
"""

from __future__ import annotations

import base64
import datetime
from typing import Any

import orjson

from fakeapi.http.protobuf_core import CORE_OBJECTS, META, POD, VOLUMES, MessageField
from fakeapi.http.protobuf_groups import OTHER_GROUPS, WORKLOADS
from fakeapi.machinery import protowire as pw
from fakeapi.machinery.errors import ApiError, bad_request

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
SCHEME = "pkg/api/legacyscheme/scheme.go:30"

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_VARINT_TYPES = frozenset({"int32", "int64", "bool"})
_ZERO: tuple[Any, ...] = ("", 0, False)


MESSAGES: dict[str, dict[int, MessageField]] = {
    **META, **CORE_OBJECTS, **POD, **VOLUMES, **OTHER_GROUPS, **WORKLOADS,
}
"""Message name → field number → MessageField, for every message reachable from a served kind."""

KINDS: dict[tuple[str, str], str] = {
    **{("v1", k): k for k in (
        "Namespace", "ConfigMap", "ServiceAccount", "Pod", "Node", "Event", "Binding")},
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    **{("rbac.authorization.k8s.io/v1", k): k for k in (
        "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    **{("authorization.k8s.io/v1", k): k for k in (
        "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview")},
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): "SubjectAccessReview",
    **{("v1", k): k for k in ("Secret", "Service", "ResourceQuota", "LimitRange")},
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    **{("apps/v1", k): k for k in ("Deployment", "ReplicaSet")},
    **{("batch/v1", k): k for k in ("Job", "CronJob")},
    **{("policy/v1", k): k for k in ("PodDisruptionBudget", "Eviction")},
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): "CertificateSigningRequest",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
}
"""(apiVersion, kind) → top-level message; meta/v1 options decode under any version."""

_ANY_VERSION = ("DeleteOptions", "CreateOptions")


# ----- wire decoding ----------------------------------------------------------------------------


def _scalar(field: MessageField, value: int) -> Any:
    if field.type == "bool":
        return value != 0
    return pw.signed(value, 32 if field.type == "int32" else 64)


def _text(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "replace")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _time(raw: bytes, micro: bool) -> str | None:
    """metav1.Time/MicroTime: an empty message is the zero time (JSON null)."""
    if not raw:
        return None
    seconds = nanos = 0
    for number, wire, value in pw.read_fields(raw, "Timestamp"):
        if wire == 0 and number == 1:
            seconds = pw.signed(value, 64)
        elif wire == 0 and number == 2:
            nanos = pw.signed(value, 32)
    try:
        when = _EPOCH + datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise pw.WireError(f"proto: timestamp seconds out of range: {seconds}") from None
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d}"
            f"T{when.hour:02d}:{when.minute:02d}:{when.second:02d}")
    # same as upstream: Time keeps whole seconds only, MicroTime keeps microseconds
    return f"{text}.{max(nanos, 0) // 1000:06d}Z" if micro else f"{text}Z"


def _quantity(raw: bytes) -> str:
    text = "0"
    for number, wire, value in pw.read_fields(raw, "Quantity"):
        if number == 1 and wire == 2:
            text = _text(value)
    return text


def _int_or_string(raw: bytes) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for number, wire, value in pw.read_fields(raw, "IntOrString"):
        if number == 1 and wire == 0:
            kind = pw.signed(value, 64)
        elif number == 2 and wire == 0:
            int_val = pw.signed(value, 32)
        elif number == 3 and wire == 2:
            str_val = _text(value)
    return str_val if kind == 1 else int_val


def _raw_json(raw: bytes, message: str) -> Any:
    """RawExtension/FieldsV1: field 1 holds JSON (or, for RawExtension, nested protobuf)."""
    data = b""
    for number, wire, value in pw.read_fields(raw, message):
        if number == 1 and wire == 2:
            data = bytes(value)
    if not data:
        return None
    if data.startswith(MAGIC):
        try:
            return decode_protobuf(data)
        except ApiError as e:
            raise pw.WireError(e.message) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise pw.WireError(f"{message}: invalid JSON in raw bytes") from None


def _map_value(kind: str, raw: bytes) -> Any:
    if kind == "bytes":
        return _b64(raw)
    if kind == "quantity":
        return _quantity(raw)
    return _text(raw)


def _map_entry(field: MessageField, raw: bytes) -> tuple[str, Any]:
    key, value = "", _map_value(field.ref, b"")
    for number, wire, item in pw.read_fields(raw, "MapEntry"):
        if wire != 2 and number in (1, 2):
            raise pw.WireError(f"proto: wrong wireType = {wire} for field {field.name}")
        if number == 1:
            key = _text(item)
        elif number == 2:
            value = _map_value(field.ref, item)
    return key, value


def _convert(field: MessageField, raw: bytes) -> Any:
    """A length-delimited value of a non-scalar field, as JSON."""
    kind = field.type
    if kind == "string":
        return _text(raw)
    if kind == "bytes":
        return _b64(raw)
    if kind in ("msg", "inline"):
        return _decode(raw, field.ref)
    if kind in ("time", "microtime"):
        return _time(raw, kind == "microtime")
    if kind == "quantity":
        return _quantity(raw)
    if kind == "intorstr":
        return _int_or_string(raw)
    if kind == "fieldsv1":
        return _raw_json(raw, "FieldsV1")
    return _raw_json(raw, "RawExtension")


def _wrong_wire(field: MessageField, wire: int) -> pw.WireError:
    go_name = field.name[:1].upper() + field.name[1:] if field.name else field.ref
    return pw.WireError(f"proto: wrong wireType = {wire} for field {go_name}")


def _decode(buf: bytes, message: str) -> dict[str, Any]:
    """Decode one message of the table into its JSON dict."""
    table = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, wire, value in pw.read_fields(buf, message):
        field = table.get(number)
        if field is None:
            continue  # unknown field: skipped, as a newer client's additions would be
        if field.type in _VARINT_TYPES:
            if wire == 0:
                items = [_scalar(field, value)]
            elif wire == 2 and field.repeated:  # packed
                items = [_scalar(field, item) for item in pw.read_packed(value)]
            else:
                raise _wrong_wire(field, wire)
        elif wire != 2:
            raise _wrong_wire(field, wire)
        elif field.type == "map":
            key, item = _map_entry(field, value)
            out.setdefault(field.name, {})[key] = item
            continue
        else:
            items = [_convert(field, value)]
        if field.type == "inline":
            out.update(items[0])
        elif field.repeated:
            out.setdefault(field.name, []).extend(items)
        elif field.type == "msg" and isinstance(out.get(field.name), dict):
            out[field.name].update(items[0])  # a repeated singular message merges
        elif not field.keep and items[0] in _ZERO:
            out.pop(field.name, None)  # Go omitempty: a zero value field is left out
        else:
            out[field.name] = items[0]
    return out


def _envelope(buf: bytes) -> tuple[str, str, bytes]:
    """runtime.Unknown → (apiVersion, kind, raw)."""
    api_version = kind = ""
    raw = b""
    for number, wire, value in pw.read_fields(buf, "Unknown"):
        if wire != 2 and number in (1, 2, 3, 4):
            name = ("TypeMeta", "Raw", "ContentEncoding", "ContentType")[number - 1]
            raise pw.WireError(f"proto: wrong wireType = {wire} for field {name}")
        if number == 1:
            for inner, inner_wire, item in pw.read_fields(value, "TypeMeta"):
                if inner in (1, 2) and inner_wire != 2:
                    name = ("APIVersion", "Kind")[inner - 1]
                    raise pw.WireError(f"proto: wrong wireType = {inner_wire} for field {name}")
                if inner == 1:
                    api_version = _text(item)
                elif inner == 2:
                    kind = _text(item)
        elif number == 2:
            raw = bytes(value)
    return api_version, kind, raw


def _message_for(api_version: str, kind: str) -> str | None:
    if kind in _ANY_VERSION:
        return kind
    return KINDS.get((api_version, kind))


def decode_protobuf(raw: bytes, *, into: str | None = None) -> dict[str, Any]:
    """Decode a Kubernetes protobuf body into the dict its JSON form would give.

    `into` names the kind the endpoint expects, for the error wording (defaults to the kind in
    the envelope). Raises ApiError 400 BadRequest for malformed bytes or an unknown kind.
    """
    if not raw:
        raise bad_request("empty data")
    if not raw.startswith(MAGIC):
        expected = " ".join(str(c) for c in MAGIC)
        raise bad_request("provided data does not appear to be a protobuf message, "
                          f"expected prefix [{expected}]")
    if len(raw) == len(MAGIC):
        raise bad_request("empty body")
    try:
        api_version, kind, payload = _envelope(bytes(raw[len(MAGIC):]))
    except pw.WireError as e:
        raise bad_request(e.message) from None
    type_meta = (f"runtime.TypeMeta{{APIVersion:{orjson.dumps(api_version).decode()}, "
                 f"Kind:{orjson.dumps(kind).decode()}}}")
    if not kind:
        raise bad_request(f"Object 'Kind' is missing in '{type_meta}'")
    if not api_version:
        raise bad_request(f"Object 'apiVersion' is missing in '{type_meta}'")
    version = api_version.rpartition("/")[2]
    prefix = f'{kind} in version "{version}" cannot be handled as a {into or kind}: '
    message = _message_for(api_version, kind)
    if message is None:
        raise bad_request(f'{prefix}no kind "{kind}" is registered for version '
                          f'"{api_version}" in scheme "{SCHEME}"')
    try:
        body = _decode(payload, message)
    except pw.WireError as e:
        raise bad_request(prefix + e.message) from None
    except RecursionError:
        raise bad_request(prefix + "proto: message nested too deeply") from None
    return {"apiVersion": api_version, "kind": kind, **body}


__all__ = ["CONTENT_TYPE", "KINDS", "MAGIC", "MESSAGES", "MessageField", "decode_protobuf"]
