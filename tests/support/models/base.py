"""The base class and the wire scalars shared by every generated model.

Wire conventions (kept deliberately close to the JSON so a read-modify-write never loses
or reshapes anything):

- Python attributes are snake_case; the exact JSON names are the aliases. Both spellings
  are accepted on input, output always uses the JSON names.
- Unknown fields are *kept* (``extra="allow"``): an object written by a newer client (or
  with a feature-gated field this build does not model) survives parse -> dump unchanged.
  ``unknown_fields()`` in ``tests.support.models`` lists them when a caller wants to be strict.
- ``Quantity`` is the wire string ("10Gi", "500m"); a bare JSON number is turned into its
  decimal string, as the API server would print it.
- ``Time``/``MicroTime`` are the RFC 3339 wire strings; ``parse_time``/``format_time``
  convert to and from aware ``datetime`` values.
- int32/int64 are ``int``; byte strings stay base64 ``str``; RawExtension and FieldsV1 are
  plain JSON dicts.
- Field docs are attribute docstrings in the generated source (IDEs show them). They are
  not copied into pydantic's ``description`` (``use_attribute_docstrings``): that would
  parse the module sources at import and cost about half the import time.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict


def _quantity_from_wire(value: object) -> object:
    """Quantities may arrive as JSON numbers; keep them as their canonical string."""
    if isinstance(value, bool):
        return value  # let the str validator reject it
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return value


Quantity = Annotated[str, BeforeValidator(_quantity_from_wire)]
"""A resource quantity in its wire form, e.g. "10Gi", "500m" or "1"."""

Time = str
"""An RFC 3339 timestamp with second precision, e.g. "2025-01-02T03:04:05Z"."""

MicroTime = str
"""An RFC 3339 timestamp with microsecond precision."""

RawExtension = dict[str, Any]
"""Arbitrary embedded JSON (opaque driver parameters, device data)."""

FieldsV1 = dict[str, Any]
"""The structured-merge-diff field set of a managedFields entry."""

IntOrString = int | str
"""A value that is either an integer or a string (e.g. a port or a percentage)."""


def parse_time(value: str) -> datetime:
    """An aware datetime from a Time or MicroTime wire string."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def format_time(value: datetime) -> Time:
    """The Time wire string (UTC, whole seconds) of a datetime; naive values count as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(value: datetime) -> MicroTime:
    """The MicroTime wire string (UTC, microseconds) of a datetime."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class K8sModel(BaseModel):
    """Base of every generated API model: JSON-name aliases, unknown fields kept."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        serialize_by_alias=True,
        protected_namespaces=(),
    )

    API_VERSION: ClassVar[str | None] = None
    """apiVersion of a top-level kind (None for nested types)."""
    KIND: ClassVar[str | None] = None
    """kind of a top-level kind (None for nested types)."""

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict with wire names, unset fields left out.

        A top-level kind gets its apiVersion and kind filled in when they are unset
        (list items read from a List legitimately lack them, so parsing never adds them).
        """
        data = self.model_dump(by_alias=True, exclude_none=True)
        if self.KIND is not None and ("apiVersion" not in data or "kind" not in data):
            data = {"apiVersion": self.API_VERSION, "kind": self.KIND, **data}
        return data
