"""Resource quantities as the allocator needs them: exact values that remember their format,
and upstream's canonical spelling (`resource.Quantity.String()`) for values it writes back."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import NamedTuple

from fakeapi.machinery.quantity import parse_quantity

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T",
                     15: "P", 18: "E"}


class Quantity(NamedTuple):
    """An exact value and the format upstream keeps from the text it was parsed from."""

    value: Fraction
    format: str

    def __str__(self) -> str:
        return format_quantity(self.value, self.format)

    def int_value(self) -> int:
        """Same as upstream's Quantity.Value(): the value rounded up to an integer."""
        return math.ceil(self.value)


@functools.lru_cache(maxsize=4096)
def parse(text: str | int) -> Quantity:
    """Parse a wire quantity (a string, or a JSON number); ValueError if it is none."""
    text = str(text)
    value = parse_quantity(text)
    stripped = text.rstrip("0123456789+-.")
    if stripped.endswith("i"):
        fmt = BINARY_SI
    elif stripped[-1:] in ("e", "E"):
        fmt = DECIMAL_EXPONENT
    else:
        fmt = DECIMAL_SI
    return Quantity(value, fmt)


def binary(value: int | Fraction) -> Quantity:
    """Same as upstream's resource.NewQuantity(value, BinarySI)."""
    return Quantity(Fraction(value), BINARY_SI)


def format_quantity(value: Fraction, fmt: str) -> str:
    """Same as upstream's Quantity.CanonicalizeBytes: binary suffixes only for exact multiples
    of 1024 at or beyond ±1024, otherwise the decimal mantissa with an exponent that is a
    multiple of three (`1500`, `1k`, `500m`), the exponent spelled `e6` in DecimalExponent."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if fmt == BINARY_SI and value >= 1024 and value.denominator == 1:
        n, k = int(value), 0
        while n % 1024 == 0 and k < len(_BINARY_SUFFIXES) - 1:
            n //= 1024
            k += 1
        return f"{sign}{n}{_BINARY_SUFFIXES[k]}"
    exponent = 0
    while value.denominator != 1 and exponent > -30:
        value *= 10
        exponent -= 1
    mantissa = math.ceil(value)  # beyond 30 decimals upstream rounds up too
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt != DECIMAL_EXPONENT and exponent in _DECIMAL_SUFFIXES:
        return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
    return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
