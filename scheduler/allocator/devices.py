"""The allocator's view of ResourceSlices: each slice parsed once per resourceVersion into
devices with their attributes, capacity, counters, taints and node selection."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from fakeapi import cel
from fakeapi.kube.nodeselector import NodeSelector, NodeSelectorError
from fakeapi.machinery.quantity import Quantity, parse

Obj = Mapping[str, Any]

_CEL_FIELDS = ("attributes", "capacity", "allowMultipleAllocations")
"""What the CEL `device` variable is built from (besides the driver)."""

SCALAR_KINDS = (("int", "int"), ("bool", "bool"), ("string", "string"), ("version", "version"))
LIST_KINDS = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))


class Attribute:
    """One device attribute: its kind (int, bool, string or version) and its value, a scalar
    or (with list-type attributes) a non-empty list; `values` is the set view of either."""

    __slots__ = ("kind", "scalar", "is_list", "values")

    def __init__(self, kind: str, scalar: Any, is_list: bool, values: frozenset[Any]) -> None:
        self.kind = kind
        self.scalar = scalar
        self.is_list = is_list
        self.values = values

    @classmethod
    def from_wire(cls, attr: Obj) -> Attribute | None:
        """Same precedence as upstream's attributeAsSet: lists first, then scalars; None for
        an attribute without a value."""
        for field, kind in LIST_KINDS:
            values = attr.get(field)
            if values:
                return cls(kind, None, True, frozenset(values))
        for field, kind in SCALAR_KINDS:
            if attr.get(field) is not None:
                return cls(kind, attr[field], False, frozenset((attr[field],)))
        return None

    @classmethod
    def from_value(cls, value: Any, output_type: str) -> Attribute | None:
        """A derived attribute's CEL result as an attribute (semver results are versions)."""
        if isinstance(value, list):
            items = [cls.from_value(v, output_type.removeprefix("list(").rstrip(")"))
                     for v in value]
            kinds = {a.kind for a in items if a is not None}
            if not value or len(kinds) != 1 or None in items:
                return None
            return cls(kinds.pop(), None, True, frozenset(value))
        if isinstance(value, bool):
            return cls("bool", value, False, frozenset((value,)))
        if isinstance(value, int):
            return cls("int", value, False, frozenset((value,)))
        if isinstance(value, str):
            kind = "version" if output_type == "kubernetes.Semver" else "string"
            return cls(kind, value, False, frozenset((value,)))
        return None


class Capacity:
    """A device capacity: its value and request policy (default, validRange, validValues)."""

    __slots__ = ("value", "default", "min", "max", "step", "valid_values", "has_policy",
                 "has_range")

    def __init__(self, wire: Obj) -> None:
        self.value: Quantity = parse(wire.get("value", "0"))
        policy = wire.get("requestPolicy")
        self.has_policy = policy is not None
        policy = policy or {}
        self.default: Quantity | None = _opt(policy.get("default"))
        rng = policy.get("validRange")
        self.has_range = rng is not None
        self.min: Quantity | None = _opt((rng or {}).get("min")) if rng else None
        self.max: Quantity | None = _opt((rng or {}).get("max")) if rng else None
        self.step: Quantity | None = _opt((rng or {}).get("step")) if rng else None
        self.valid_values: list[Quantity] | None = (
            [parse(v) for v in policy["validValues"]]
            if policy.get("validValues") is not None else None)


def _selector(wire: Obj | None) -> NodeSelector | NodeSelectorError | None:
    """The parsed selector, or the error to report when a node is matched against it."""
    if wire is None:
        return None
    try:
        return NodeSelector(wire)
    except NodeSelectorError as e:
        return e


def _opt(value: Any) -> Quantity | None:
    return None if value is None else parse(value)


class Device:
    """One device of a slice, with everything the search reads precomputed. `cel_results`
    caches selector outcomes per expression for as long as the slice keeps this version."""

    __slots__ = ("name", "key", "driver", "pool", "slice", "wire", "attributes", "capacity",
                 "consumes", "own_taints", "taints", "binding_conditions",
                 "binding_failure_conditions", "binds_to_node", "multi", "node_name",
                 "all_nodes", "node_selector", "node_selector_wire", "_cel_input",
                 "cel_results", "derived_results", "fits_alone")

    def __init__(self, slice_: Slice, wire: Obj) -> None:
        self.name: str = wire.get("name") or ""
        self.driver = slice_.driver
        self.pool = slice_.pool
        self.slice = slice_
        self.key = f"{self.driver}/{self.pool}/{self.name}"
        self.wire = wire
        self.attributes: dict[str, Attribute | None] = {}
        """By fully qualified name: a bare id under the driver's domain, as written otherwise
        (so a name written in full wins over the same bare id, as upstream looks them up)."""
        written = wire.get("attributes") or {}
        for name, attr in written.items():
            if "/" not in name:
                self.attributes[f"{self.driver}/{name}"] = Attribute.from_wire(attr or {})
        for name, attr in written.items():
            if "/" in name:
                self.attributes[name] = Attribute.from_wire(attr or {})
        self.capacity: dict[str, Capacity] = {
            name: Capacity(cap or {}) for name, cap in (wire.get("capacity") or {}).items()}
        self.consumes: tuple[tuple[str, dict[str, Fraction]], ...] = tuple(
            ((c or {}).get("counterSet") or "",
             {name: parse((v or {}).get("value", "0")).value
              for name, v in ((c or {}).get("counters") or {}).items()})
            for c in wire.get("consumesCounters") or [])
        self.own_taints: tuple[Obj, ...] = tuple(t or {} for t in wire.get("taints") or [])
        self.taints = self.own_taints
        """The device's taints plus those of matching DeviceTaintRules (set by Inventory)."""
        self.binding_conditions: list[str] | None = wire.get("bindingConditions") or None
        self.binding_failure_conditions: list[str] | None = (
            wire.get("bindingFailureConditions") or None)
        self.binds_to_node = bool(wire.get("bindsToNode"))
        self.multi = bool(wire.get("allowMultipleAllocations"))
        self.node_name: str = wire.get("nodeName") or ""
        self.all_nodes = bool(wire.get("allNodes"))
        self.node_selector_wire: Obj | None = wire.get("nodeSelector")
        self.node_selector = _selector(self.node_selector_wire)
        self._cel_input: cel.DeviceInput | None = None
        self.cel_results: dict[str, Any] = {}
        self.derived_results: dict[str, Any] = {}
        self.fits_alone: bool | None = None
        """capacity.fits_alone's cached answer for this device."""

    @property
    def cel_input(self) -> cel.DeviceInput:
        """The CEL `device` variable, built on first use (raises CelEvalError for an
        attribute without a value, as upstream's conversion does)."""
        if self._cel_input is None:
            self._cel_input = cel.device_input(self.driver, self.wire)
        return self._cel_input

    def attribute(self, name: str) -> Attribute | None:
        """Same as upstream's lookupAttribute: the fully qualified name, or the bare id when
        the name's domain is the device's driver."""
        return self.attributes.get(name)


class Slice:
    """One ResourceSlice at one resourceVersion."""

    __slots__ = ("name", "driver", "pool", "generation", "slice_count", "node_name",
                 "all_nodes", "node_selector", "node_selector_wire", "per_device",
                 "per_device_set", "counter_sets", "has_counters", "devices", "wire")

    def __init__(self, wire: Obj) -> None:
        meta = wire.get("metadata") or {}
        spec = wire.get("spec") or {}
        pool = spec.get("pool") or {}
        self.wire = wire
        self.name: str = meta.get("name") or ""
        self.driver: str = spec.get("driver") or ""
        self.pool: str = pool.get("name") or ""
        self.generation = int(pool.get("generation") or 0)
        self.slice_count = int(pool.get("resourceSliceCount") or 0)
        self.node_name: str = spec.get("nodeName") or ""
        self.all_nodes = bool(spec.get("allNodes"))
        self.node_selector_wire: Obj | None = spec.get("nodeSelector")
        self.node_selector = _selector(self.node_selector_wire)
        self.per_device_set = spec.get("perDeviceNodeSelection") is not None
        self.per_device = bool(spec.get("perDeviceNodeSelection"))
        self.counter_sets: tuple[tuple[str, dict[str, Fraction]], ...] = tuple(
            ((cs or {}).get("name") or "",
             {name: parse((c or {}).get("value", "0")).value
              for name, c in ((cs or {}).get("counters") or {}).items()})
            for cs in spec.get("sharedCounters") or [])
        self.has_counters = bool(self.counter_sets)
        self.devices: tuple[Device, ...] = tuple(
            Device(self, d or {}) for d in spec.get("devices") or [])

    def keep_cel_results(self, previous: Slice) -> None:
        """Carry CEL results over from the slice's previous version for devices whose CEL
        view (driver, attributes, capacity, allowMultipleAllocations) did not change, so an
        update that only touches, say, taints costs no selector evaluations."""
        if previous.driver != self.driver:
            return
        old = {d.name: d for d in previous.devices}
        for d in self.devices:
            before = old.get(d.name)
            if before is not None and all(before.wire.get(f) == d.wire.get(f) for f in
                                          _CEL_FIELDS):
                d.cel_results = before.cel_results
                d.derived_results = before.derived_results
