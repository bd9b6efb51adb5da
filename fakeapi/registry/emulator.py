"""Strategies of the emulator's kinds (`fakeapi.schema.emulator`): the faults' spec fields are
checked with upstream-shaped causes and what a fault targets never changes; the Clock's
status is always the server's own reading of its clock, and `advance` moves a virtual one."""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.clock import SettleTimeout, VirtualClock, clock_mode
from fakeapi.machinery.durations import DurationError, format_duration, parse_duration
from fakeapi.machinery.errors import ApiError, Cause, bad_request, field_required
from fakeapi.machinery.field import immutable, invalid, not_supported, show
from fakeapi.machinery.timestamps import rfc3339_micro
from fakeapi.registry.context import RequestContext
from fakeapi.registry.rest import Obj, SpecStrategy, StrategyEnv, TimedStrategy
from fakeapi.registry.validation import common
from fakeapi.schema.emulator import (
    CLOCK_ADVANCE,
    CLOCK_NAME,
    DEVICE_MODES,
    GROUP,
    NODE_MODES,
    VERSION,
)


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


def clock_status(env: StrategyEnv) -> Obj:
    """What a Clock's status says: the injected clock's mode and its reading now."""
    return {"now": rfc3339_micro(env.clock.now()), "mode": clock_mode(env.clock)}


class ClockStrategy(SpecStrategy):
    """The one Clock, `cluster`: whoever writes it, its status is the clock's own reading
    (only `advance` moves the clock; the row serves no write verb over HTTP)."""

    def prepare_for_create(self, obj: Obj, ctx: RequestContext) -> None:
        """The status is the clock's."""
        obj["status"] = clock_status(self.env)

    def prepare_for_update(self, new: Obj, old: Obj, ctx: RequestContext) -> None:
        """The status is the clock's (a restart on another --clock mode writes it so)."""
        new["status"] = clock_status(self.env)

    def validate_spec(self, obj: Obj) -> list[Cause]:
        """There is one clock."""
        name = obj["metadata"].get("name")
        return [] if name == CLOCK_NAME else [not_supported("metadata.name", name,
                                                             [CLOCK_NAME])]


class ClockAdvanceStrategy(TimedStrategy):
    """`clocks/cluster/advance` (a ClockAdvance): move the virtual clock on by a Go duration,
    firing every timer due on the way at its own time and settling after each; the status
    written then (the clock's new reading) is the advance's event in the log, by its caller."""

    body_kind = CLOCK_ADVANCE

    def seconds(self, body: Obj) -> float:
        """The body's duration in seconds (400 for a wrong kind, a missing, malformed or
        negative duration)."""
        for field, want in (("apiVersion", f"{GROUP}/{VERSION}"), ("kind", CLOCK_ADVANCE)):
            if body.get(field) not in (None, "", want):
                raise bad_request(f"{CLOCK_ADVANCE}: {field} must be {show(want)}, not "
                                  f"{show(body[field])}")
        text = body.get("duration")
        if text is None or text == "":
            raise bad_request(f"{CLOCK_ADVANCE}: duration is required: a Go duration such "
                              "as 30s, 5m or 1.5h")
        if not isinstance(text, str):
            raise bad_request(f"{CLOCK_ADVANCE}: duration must be a string in Go duration "
                              f"syntax (30s, 5m, 1.5h), not {show(text)}")
        try:
            ns = parse_duration(text)
        except DurationError as e:
            raise bad_request(f"{CLOCK_ADVANCE}: {e}") from None
        if ns < 0:
            raise bad_request(f"{CLOCK_ADVANCE}: a clock can't go back: duration {show(text)} "
                              f"({format_duration(ns)}) is negative")
        return ns / 1e9

    async def run(self, current: Obj, body: Obj, ctx: RequestContext) -> None:
        """Check the body and the clock, then advance (under dryRun: only check)."""
        seconds = self.seconds(body)
        clock = self.env.clock
        if not isinstance(clock, VirtualClock):
            raise bad_request(f"the cluster runs on the {clock_mode(clock)} clock, which "
                              "can't be advanced: start the server with --clock virtual (or "
                              "--clock virtual:auto)")
        if ctx.dry_run:
            return
        try:
            await clock.advance(seconds)
        except SettleTimeout as e:
            raise ApiError(504, "Timeout", f"the cluster did not settle while the clock "
                           f"advanced ({e}); the clock stands at "
                           f"{rfc3339_micro(clock.now())}") from None

    def apply(self, current: Obj, body: Obj, ctx: RequestContext) -> Obj:
        """The clock's new reading."""
        current["status"] = clock_status(self.env)
        return current
