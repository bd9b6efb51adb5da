"""Strategies of the emulator's fault kinds (`fakeapi.schema.emulator`): the spec's fields are
checked with upstream-shaped causes, and what a fault targets never changes."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause, field_required
from fakeapi.machinery.field import immutable, invalid, not_supported
from fakeapi.registry.rest import Obj, SpecStrategy
from fakeapi.registry.validation import common
from fakeapi.schema.emulator import DEVICE_MODES, NODE_MODES


def _duration(spec: Obj) -> list[Cause]:
    value = spec.get("durationSeconds")
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        return [invalid("spec.durationSeconds", value, "must be greater than or equal to 1")]
    return []


def _mode(spec: Obj, modes: tuple[str, ...]) -> list[Cause]:
    mode = spec.get("mode")
    if mode is None or mode in modes:
        return []
    return [not_supported("spec.mode", mode, list(modes))]


def _required(spec: Any, fields: tuple[str, ...]) -> list[Cause]:
    if not isinstance(spec, dict):
        return [field_required("spec")]
    return [field_required(f"spec.{f}") for f in fields if not spec.get(f)]


def _targets_unchanged(new: Obj, old: Obj, fields: tuple[str, ...]) -> list[Cause]:
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    return [immutable(f"spec.{f}", new_spec.get(f)) for f in fields
            if new_spec.get(f) != old_spec.get(f)]


class DeviceFaultStrategy(SpecStrategy):
    """A DeviceFault names a node, a driver and a device; mode and duration are checked."""

    TARGET = ("nodeName", "driver", "device")

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new fault."""
        causes = _required(obj.get("spec"), self.TARGET)
        if causes:
            return causes
        spec = obj["spec"]
        return (common.node_name(spec["nodeName"], "spec.nodeName")
                + common.driver_name(spec["driver"], "spec.driver")
                + common.dns_label(spec["device"], "spec.device")
                + _mode(spec, DEVICE_MODES) + _duration(spec))

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """The target stays; the rest is checked again."""
        return self.validate_spec(new) + _targets_unchanged(new, old, self.TARGET)


class NodeFaultStrategy(SpecStrategy):
    """A NodeFault names a node; mode and duration are checked."""

    TARGET = ("nodeName",)

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """A new fault."""
        causes = _required(obj.get("spec"), self.TARGET)
        if causes:
            return causes
        spec = obj["spec"]
        return (common.node_name(spec["nodeName"], "spec.nodeName") + _mode(spec, NODE_MODES)
                + _duration(spec))

    def validate_spec_update(self, new: Obj, old: Obj) -> list[Cause]:
        """The node stays; the rest is checked again."""
        return self.validate_spec(new) + _targets_unchanged(new, old, self.TARGET)
