"""The values of the CEL interface: features, compiled programs, device inputs and errors."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from fakeapi.cel.values import LibraryError, Semver, quantity

MAX_EXPRESSION_LENGTH = 10 * 1024  # same as upstream CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # same as upstream CELSelectorExpressionMaxCost (estimated and runtime)
SELECTOR = "selector"
DERIVED = "derived"
PURPOSES = (SELECTOR, DERIVED)

NO_SUCH_KEY_HINT = (". consider using CEL optional chaining (.? followed by orValue()) or "
                    "guarding the check with has() for optional fields")
"""Same as upstream EnhanceRuntimeError: appended to every `no such key` runtime error."""


@dataclasses.dataclass(frozen=True)
class Features:
    """The gates that change the DRA CEL environment."""

    list_attributes: bool = True  # DRAListTypeAttributes: list values and includes()
    consumable_capacity: bool = True  # DRAConsumableCapacity: device.allowMultipleAllocations


DEFAULT_FEATURES = Features()
"""The 1.37 defaults: both gates on."""

STORED_FEATURES = Features(list_attributes=True, consumable_capacity=True)
"""Upstream's StoredExpressions environment ignores the gates: everything is declared."""


@dataclasses.dataclass(frozen=True)
class CelError:
    """A compile failure: `kind` is "invalid" (the user's fault) or "internal"."""

    detail: str
    kind: str = "invalid"


class CelEvalError(Exception):
    """A runtime error (missing key, overflow, bad function argument, non-bool result)."""


def eval_error(message: str) -> CelEvalError:
    """A runtime error with upstream's wording, `no such key` ones with upstream's hint."""
    if "no such key:" in message and NO_SUCH_KEY_HINT not in message:
        message += NO_SUCH_KEY_HINT
    return CelEvalError(message)


@dataclasses.dataclass(frozen=True, eq=False)
class Program:
    """A compiled, type-checked expression and what static analysis learnt about it."""

    expression: str
    purpose: str
    cost: int
    """Estimated worst-case cost (upstream compares it with `MAX_COST`)."""
    output_type: str
    domains: frozenset[str]
    """Literal domains the expression looks up in attributes/capacity (padded with {})."""
    dynamic_domains: bool
    """Whether some lookup uses a computed domain (then the driver's domain is padded too)."""
    _expr: Any = dataclasses.field(repr=False)
    engine: str = "cel-expr-python"
    """The engine that compiled it (and evaluates it)."""


@dataclasses.dataclass(frozen=True, eq=False)
class AdmissionProgram:
    """A compiled admission expression (ValidatingAdmissionPolicy: validations, messages,
    variables, match conditions) over dynamically typed variables."""

    expression: str
    output_type: str
    """The checker's result type (`bool`, `string`, `dyn`, ...)."""
    engine: str
    _expr: Any = dataclasses.field(repr=False)


@dataclasses.dataclass(frozen=True, eq=False)
class DeviceInput:
    """The `device` variable for one device, built once and reused for every expression.

    `data` is engine-neutral (semver and quantity values as `Semver`/`Quantity`); each engine
    keeps its own converted form in `prepared`, so a device converts once per engine.
    """

    driver: str
    data: dict[str, Any]
    prepared: dict[Any, Any] = dataclasses.field(default_factory=dict, repr=False)


def device_input(driver: str, device: Mapping[str, Any]) -> DeviceInput:
    """Build the CEL view of a ResourceSlice device (`spec.devices[]` entry) of `driver`.

    Attribute names without a domain get the driver as domain, like upstream.
    """
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(name, attr)
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split_name(name, driver)
        value = cap.get("value") if isinstance(cap, Mapping) else cap
        try:
            capacity.setdefault(domain, {})[ident] = quantity(str(value))
        except LibraryError as e:
            raise CelEvalError(f"capacity {name}: {e}") from None
    data: dict[str, Any] = {
        "driver": driver, "attributes": attributes, "capacity": capacity,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations"))}
    return DeviceInput(driver=driver, data=data)


def _attribute_value(name: str, attr: Mapping[str, Any]) -> Any:
    """Same as upstream getAttributeValue (lists first, then scalars)."""
    try:
        for key in ("ints", "bools", "strings"):
            if attr.get(key) is not None:
                return list(attr[key])
        if attr.get("versions") is not None:
            return [Semver.parse(v) for v in attr["versions"]]
        for key in ("int", "bool", "string"):
            if attr.get(key) is not None:
                return attr[key]
        if attr.get("version") is not None:
            return Semver.parse(attr["version"])
    except LibraryError as e:
        raise CelEvalError(f"attribute {name}: parse semantic version: {e}") from None
    raise CelEvalError(f"attribute {name}: unsupported attribute value")


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)
