"""CEL in the allocator: selectors and derived attributes, compiled once per expression and
evaluated once per (expression, device at its slice's version), with upstream's messages."""

from __future__ import annotations

from typing import Any

from fakeapi import cel

from .devices import Attribute, Device
from .errors import AllocationError

NO_SUCH_KEY_HINT = (". consider using CEL optional chaining (.? followed by orValue()) or "
                    "guarding the check with has() for optional fields")

STORED = cel.Features(list_attributes=True, consumable_capacity=True)
"""Same as upstream: the allocator compiles in the StoredExpressions environment, where every
gated declaration (allowMultipleAllocations, includes()) is present whatever the gates say;
an expression that got stored is evaluated, not refused."""


class Failure:
    """A cached runtime error for one device (evaluating again would fail the same way)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


class Expression:
    """One selector or derived-attribute expression, compiled in the features' environment;
    `owner` names where it comes from in upstream's messages (`class gpu`, `claim ns/c`)."""

    __slots__ = ("text", "program", "error", "owner", "index")

    def __init__(self, text: str | None, owner: str, index: int,
                 purpose: str = cel.SELECTOR) -> None:
        self.text = text or ""
        self.owner = owner
        self.index = index
        self.program: cel.Program | None = None
        self.error = ""
        if not text:
            return
        compiled = cel.compile(text, purpose=purpose, features=STORED)
        if isinstance(compiled, cel.Program):
            self.program = compiled
        else:
            self.error = "; ".join(e.detail for e in compiled)


def enhance(message: str) -> str:
    """Same as upstream's cel.EnhanceRuntimeError: a hint after `no such key` errors, once
    (the CEL layer may have added it already)."""
    if "no such key:" in message and NO_SUCH_KEY_HINT not in message:
        return message + NO_SUCH_KEY_HINT
    return message


def matches_all(expressions: tuple[Expression, ...], device: Device) -> bool:
    """Whether the device satisfies every selector; raises AllocationError with upstream's
    message for a compile or runtime error."""
    results = device.cel_results
    for expr in expressions:
        outcome = results.get(expr.text)
        if outcome is None:
            outcome = _evaluate(expr, device)
            results[expr.text] = outcome
        if outcome is True:
            continue
        if outcome is False:
            return False
        raise AllocationError(f"{expr.owner}: selector #{expr.index} on device {device.key}: "
                              f"CEL runtime error: {enhance(outcome.message)}")
    return True


def peek_all(expressions: tuple[Expression, ...], device: Device) -> bool | None:
    """Like matches_all, from the cache only: None when some result isn't known (or failed).
    Diagnostics use it to tell why a device that was skipped early would not have fitted."""
    results = device.cel_results
    for expr in expressions:
        outcome = results.get(expr.text)
        if outcome is False:
            return False
        if outcome is not True:
            return None
    return True


def _evaluate(expr: Expression, device: Device) -> bool | Failure:
    if expr.program is None:
        if not expr.text:
            raise AllocationError(f"{expr.owner}: selector #{expr.index}: CEL expression empty "
                                  "(unsupported selector type?)")
        raise AllocationError(f"{expr.owner}: selector #{expr.index}: CEL compile error: "
                              f"{expr.error}")
    try:
        return cel.matches(expr.program, device.cel_input)
    except cel.CelEvalError as e:
        return Failure(str(e))


def derived(expr: Expression, name: str, device: Device) -> Attribute | None:
    """A derived attribute's value for one device (cached); raises AllocationError for a
    runtime error, which aborts scheduling as upstream's derived attributes do."""
    outcome: Any = device.derived_results.get(expr.text)
    if outcome is None:
        if expr.program is None:
            raise AllocationError(f"{expr.owner}: derived attribute {name}: CEL compile error: "
                                  f"{expr.error}")
        try:
            value = cel.evaluate(expr.program, device.cel_input)
            outcome = Attribute.from_value(value, expr.program.output_type) or Failure(
                f"unsupported derived attribute value of type {type(value).__name__}")
        except cel.CelEvalError as e:
            outcome = Failure(str(e))
        device.derived_results[expr.text] = outcome
    if isinstance(outcome, Failure):
        raise AllocationError(f"{expr.owner}: derived attribute {name} on device {device.key}: "
                              f"CEL runtime error: {enhance(outcome.message)}")
    return outcome if isinstance(outcome, Attribute) else None
