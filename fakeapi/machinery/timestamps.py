"""Kubernetes timestamps on the wire: `metav1.Time` (RFC 3339, whole seconds, `Z`) and
`metav1.MicroTime` (six fraction digits), formatted, parsed, and checked as Go's
`time.Parse` checks them (with its error messages) for the schema decoder.
"""

from __future__ import annotations

import datetime as dt
import functools

RFC3339 = "2006-01-02T15:04:05Z07:00"
"""Go's layout of `metav1.Time`."""
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
"""Go's layout of `metav1.MicroTime`."""

_ONE_SECOND = dt.timedelta(seconds=1)
_LAST_START = dt.datetime.max.replace(microsecond=0, tzinfo=dt.UTC)
# The UTC second formatted last, [start, end), and its text (starts empty: end < start).
_last_second = (_LAST_START, _LAST_START - _ONE_SECOND, "")


def rfc3339(t: dt.datetime) -> str:
    """Kubernetes `metav1.Time` wire form: second precision, `Z` suffix.

    Every write stamps the clock's current second (often twice), so the last UTC second
    formatted is remembered: two comparisons cost far less than `strftime`.
    """
    global _last_second
    if t.tzinfo is not dt.UTC:  # other zones (and their folds) take the plain path
        return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    start, end, text = _last_second
    if start <= t < end:
        return text
    start = t.replace(microsecond=0)
    text = start.strftime("%Y-%m-%dT%H:%M:%SZ")
    if start < _LAST_START:  # (the very last second has no end to remember)
        _last_second = (start, start + _ONE_SECOND, text)
    return text


def rfc3339_micro(t: dt.datetime) -> str:
    """Kubernetes `metav1.MicroTime` wire form (managedFields use second precision; leases this)."""
    return t.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(value: str) -> dt.datetime:
    """An aware datetime from an RFC 3339 wire timestamp (one without a zone is UTC);
    ValueError if it is not one."""
    ts = dt.datetime.fromisoformat(value)
    return ts if ts.tzinfo else ts.replace(tzinfo=dt.UTC)


def parse_time_or_none(value: object) -> dt.datetime | None:
    """`parse_time` of a wire field that may be absent or malformed: None then."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def canonical_time(text: str, layout: str) -> str:
    """Same as upstream's round trip through metav1.Time: UTC, `Z`, whole seconds
    (MicroTime keeps six fraction digits)."""
    try:
        t = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return text  # valid for Go but not for Python (e.g. leap second): keep as sent
    return rfc3339_micro(t) if layout == RFC3339_MICRO else rfc3339(t.astimezone(dt.UTC))


def _go_quote(s: str) -> str:
    """The quoting of Go's time.Parse errors."""
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def time_error(value: str, layout: str = RFC3339) -> str | None:
    """Go time.Parse's error for `value` against RFC3339 (or RFC3339Micro); None if valid."""

    def fail(elem_value: str, elem_layout: str) -> str:
        return (f"parsing time {_go_quote(value)} as {_go_quote(layout)}: cannot parse "
                f"{_go_quote(elem_value)} as {_go_quote(elem_layout)}")

    def out_of_range(what: str) -> str:
        return f"parsing time {_go_quote(value)}: {what} out of range"

    def num(s: str, fixed: bool) -> tuple[int, str] | None:
        if not s[:1].isdigit() or not s[:1].isascii():
            return None
        if not s[1:2].isdigit() or not s[1:2].isascii():
            return None if fixed else (int(s[0]), s[1:])
        return int(s[:2]), s[2:]

    rest = value
    if len(rest) < 4 or not rest[:4].isdigit() or not rest[:4].isascii():
        return fail(rest, "2006")
    year, rest = int(rest[:4]), rest[4:]
    fields: list[int] = []
    for lit, elem, fixed, lo, hi, what in (
            ("-", "01", True, 1, 12, "month"), ("-", "02", True, 1, 31, ""),
            ("T", "15", False, 0, 23, "hour"), (":", "04", True, 0, 59, "minute"),
            (":", "05", True, 0, 59, "second")):
        if not rest.startswith(lit):
            return fail(rest, lit)
        rest = rest[len(lit):]
        got = num(rest, fixed)
        if got is None:
            return fail(rest, elem)
        n, rest = got
        if what and not lo <= n <= hi:
            return out_of_range(what)
        fields.append(n)
    micro = layout == RFC3339_MICRO
    if micro:
        if len(rest) < 7:
            return fail(rest, ".000000")
        if rest[0] not in ".," or not rest[1:7].isdigit() or not rest[1:7].isascii():
            return fail(rest, ".000000")
        rest = rest[7:]
    elif len(rest) >= 2 and rest[0] in ".," and rest[1].isdigit():
        n = 2
        while n < len(rest) and rest[n].isdigit():
            n += 1
        rest = rest[n:]
    if rest.startswith("Z"):
        rest = rest[1:]
    else:
        if (len(rest) < 6 or rest[3] != ":" or rest[0] not in "+-"
                or num(rest[1:3], True) is None or num(rest[4:6], True) is None):
            return fail(rest, "Z07:00")
        rest = rest[6:]
    if rest:
        return f"parsing time {_go_quote(value)}: extra text: {_go_quote(rest)}"
    month, day = fields[0], fields[1]
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > _DAYS[month - 1] + (1 if month == 2 and leap else 0):
        return out_of_range("day")
    return None
