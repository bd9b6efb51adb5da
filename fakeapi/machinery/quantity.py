"""Exact parsing of Kubernetes resource quantities (`80Gi`, `500m`, `1e3`) into fractions.

Same grammar as upstream's `resource.ParseQuantity`: a signed decimal number followed by a
binary-SI suffix (Ki..Ei), a decimal-SI suffix (n, u, m, k, M, G, T, P, E) or a decimal
exponent (`e3`, `E-2`). Values are exact `Fraction`s so comparisons never round.
"""

from __future__ import annotations

import re
from fractions import Fraction

_NUMBER = re.compile(r"^([+-]?)([0-9]*\.?[0-9]*)(.*)$")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: dict[str, Fraction | int] = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")
MAX_EXPONENT = 1000  # guards against `1e999999999`; upstream caps far lower in practice


def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string; ValueError if it is not one."""
    if not isinstance(text, str) or not text or text != text.strip():
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    m = _NUMBER.match(text)
    if m is None or m.group(2) in ("", "."):
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    sign, digits, suffix = m.groups()
    if digits.count(".") > 1:
        raise ValueError("unable to parse quantity's suffix")
    value = Fraction(digits)
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    else:
        e = _EXPONENT.match(suffix)
        if e is None or abs(int(e.group(1))) > MAX_EXPONENT:
            raise ValueError("unable to parse quantity's suffix")
        value *= Fraction(10) ** int(e.group(1))
    return -value if sign == "-" else value


def is_quantity(text: object) -> bool:
    """Whether `text` parses as a quantity."""
    try:
        parse_quantity(text)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return False
    return True


def canonical(value: Fraction) -> str:
    """A stable spelling of an exact value (equal values, equal strings)."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator}"


def from_canonical(text: str) -> Fraction:
    """Inverse of `canonical`."""
    return Fraction(text)
