"""Go's duration syntax (`time.ParseDuration`): "30s", "1h30m", "1.5h", "300ms", "-2m".

A possibly signed sequence of decimal numbers, each with an optional fraction and a unit
(`ns`, `us` or `µs`, `ms`, `s`, `m`, `h`); "0" alone needs no unit. The errors are Go's
messages, so a user sees what `kubectl` or any Go tool would print for the same text.
"""

from __future__ import annotations

import re

UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
         "h": 3600.0}
"""Seconds per unit (Go accepts both the micro sign and the Greek mu)."""
_TERM = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")


class DurationError(ValueError):
    """Text that is not a Go duration; the message is Go's (`time: invalid duration "x"`)."""


def parse_duration(text: str) -> float:
    """Seconds of a Go duration string (negative when it is signed so)."""
    body = text[1:] if text[:1] in ("-", "+") else text
    if body == "0":
        return 0.0
    if not body:
        raise DurationError(f'time: invalid duration "{text}"')
    total = 0.0
    pos = 0
    while pos < len(body):
        term = _TERM.match(body, pos)
        if term is None:
            raise DurationError(f'time: invalid duration "{text}"')
        number, unit = term.groups()
        if not unit:
            raise DurationError(f'time: missing unit in duration "{text}"')
        if unit not in UNITS:
            raise DurationError(f'time: unknown unit "{unit}" in duration "{text}"')
        total += float(number) * UNITS[unit]
        pos = term.end()
    return -total if text[:1] == "-" else total
