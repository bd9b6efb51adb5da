"""Field errors in the shapes of upstream's `k8s.io/apimachinery/pkg/util/validation/field`.

Each constructor returns a `Cause` whose message is what `field.Error.ErrorBody()` prints
(`Invalid value: "x": detail`, `Too many: 33: must have at most 32 items`, ...) and whose
reason is the matching `FieldValue*` cause type. Paths are plain strings built with `child`,
`index` and `key` the way `field.Path` prints them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from fakeapi.machinery.errors import Cause

IMMUTABLE = "field is immutable"  # same as upstream apimachinery FieldImmutableErrorMsg


class Raw(str):
    """A value upstream prints with `%s` (a `fmt.Stringer`), i.e. without quotes."""


def child(path: str, *names: str) -> str:
    """`spec.devices` from `spec` + `devices`."""
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


def index(path: str, i: int) -> str:
    """`requests[3]`."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """`attributes[gpu.example.com/model]` (upstream prints map keys unquoted)."""
    return f"{path}[{k}]"


def show(value: Any) -> str:
    """A bad value as upstream's ErrorBody prints it."""
    if value is None:
        return '"null"'
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return str(value)
    # Upstream falls back to Go's %#v for structs; compact JSON is the readable equivalent.
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def invalid(path: str, value: Any, detail: str) -> Cause:
    """`field.Invalid`."""
    return Cause(path, f"Invalid value: {show(value)}: {detail}", "FieldValueInvalid")


def required(path: str, detail: str = "") -> Cause:
    """`field.Required`."""
    return Cause(path, "Required value" + (f": {detail}" if detail else ""),
                 "FieldValueRequired")


def forbidden(path: str, detail: str) -> Cause:
    """`field.Forbidden`."""
    return Cause(path, f"Forbidden: {detail}", "FieldValueForbidden")


def too_long(path: str, max_length: int) -> Cause:
    """`field.TooLong` (the value itself is never printed)."""
    unit = "byte" if max_length == 1 else "bytes"
    return Cause(path, f"Too long: may not be more than {max_length} {unit}",
                 "FieldValueTooLong")


def too_many(path: str, actual: int, max_items: int) -> Cause:
    """`field.TooMany`."""
    unit = "item" if max_items == 1 else "items"
    return Cause(path, f"Too many: {actual}: must have at most {max_items} {unit}",
                 "FieldValueTooMany")


def duplicate(path: str, value: Any) -> Cause:
    """`field.Duplicate`."""
    return Cause(path, f"Duplicate value: {show(value)}", "FieldValueDuplicate")


def not_supported(path: str, value: Any, valid: Iterable[str]) -> Cause:
    """`field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`."""
    shown = ", ".join(json.dumps(v) for v in valid)
    return Cause(path, f"Unsupported value: {show(value)}: supported values: {shown}",
                 "FieldValueNotSupported")


def not_found(path: str, value: Any) -> Cause:
    """`field.NotFound`."""
    return Cause(path, f"Not found: {show(value)}", "FieldValueNotFound")


def internal(path: str, detail: str) -> Cause:
    """`field.InternalError`."""
    return Cause(path, f"Internal error: {detail}", "InternalError")


def immutable(path: str, value: Any) -> Cause:
    """Upstream's hand-written ValidateImmutableField: `Invalid value: ...: field is immutable`."""
    return invalid(path, value, IMMUTABLE)


def immutable_forbidden(path: str) -> Cause:
    """Upstream's declarative `+k8s:immutable` (`Forbidden: field is immutable`)."""
    return forbidden(path, IMMUTABLE)
