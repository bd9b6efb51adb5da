"""Go's duration syntax (`time.ParseDuration` and `Duration.String`), the one parser of it.

A duration is a possibly signed sequence of decimal numbers, each with an optional fraction
and a unit: `300ms`, `-1.5h`, `2h45m`; units `ns`, `us` (`µs`, `μs`), `ms`, `s`, `m`, `h`;
`0` alone needs no unit. Values are whole nanoseconds within Go's int64, and errors carry
Go's messages (`time: unknown unit "x" in duration "5x"`). The clock's `advance` takes one,
and CEL's `duration()` literals are checked with it.
"""

from __future__ import annotations

import json

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
UNITS = {"ns": NANOSECOND, "us": MICROSECOND, "µs": MICROSECOND, "μs": MICROSECOND,
         "ms": MILLISECOND, "s": SECOND, "m": MINUTE, "h": HOUR}
"""Go's unit map (U+00B5 micro sign and U+03BC Greek mu both spell microseconds)."""
_MAX = (1 << 63) - 1
_DIGITS = "0123456789"


class DurationError(ValueError):
    """Not a Go duration; the message is Go's."""


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (negative when signed `-`), as time.ParseDuration
    reads it; DurationError with Go's message otherwise."""
    invalid = DurationError(f"time: invalid duration {_quote(text)}")
    s, negative = text, False
    if s[:1] in ("-", "+"):
        negative, s = s[0] == "-", s[1:]
    if s == "0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if s[0] != "." and s[0] not in _DIGITS:
            raise invalid
        i = _span(s, 0)
        whole, s_frac = s[:i], s[i:]
        fraction = ""
        if s_frac[:1] == ".":
            j = _span(s_frac, 1)
            fraction, s_frac = s_frac[1:j], s_frac[j:]
        if not whole and not fraction:  # "." or ".s": no digits
            raise invalid
        k = 0
        while k < len(s_frac) and s_frac[k] != "." and s_frac[k] not in _DIGITS:
            k += 1
        if k == 0:
            raise DurationError(f"time: missing unit in duration {_quote(text)}")
        unit_name, s = s_frac[:k], s_frac[k:]
        unit = UNITS.get(unit_name)
        if unit is None:
            raise DurationError(f"time: unknown unit {_quote(unit_name)} in duration "
                                f"{_quote(text)}")
        value = int(whole or "0")
        if value > (1 << 63) // unit:
            raise invalid
        value *= unit
        if fraction.strip("0"):
            # Go: float64 is needed to be nanosecond accurate for fractions of hours
            value += int(int(fraction) * (unit / 10 ** len(fraction)))
        total += value
        if total > 1 << 63:
            raise invalid
    if negative:
        return -total
    if total > _MAX:
        raise invalid
    return total


def _span(s: str, start: int) -> int:
    """The end of the run of decimal digits from `start`."""
    end = start
    while end < len(s) and s[end] in _DIGITS:
        end += 1
    return end


def is_duration(text: str) -> bool:
    """Whether `text` parses as a Go duration."""
    try:
        parse_duration(text)
    except DurationError:
        return False
    return True


def format_duration(ns: int) -> str:
    """Go's Duration.String: `72h3m0.5s`, `1.5ms`, `0s` (the largest units that fit)."""
    if ns == 0:
        return "0s"
    sign, u = ("-", -ns) if ns < 0 else ("", ns)
    if u < SECOND:
        for unit, name in ((MILLISECOND, "ms"), (MICROSECOND, "µs"), (NANOSECOND, "ns")):
            if u >= unit:
                return sign + _decimal(u, unit) + name
    seconds = _decimal(u % MINUTE, SECOND) + "s"
    minutes, hours = u // MINUTE % 60, u // HOUR
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def _decimal(value: int, unit: int) -> str:
    """`value / unit` with the fraction's trailing zeros dropped (Go's fmtFrac)."""
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + str(rest).rjust(digits, "0").rstrip("0")
