"""Kubernetes resource quantities (`80Gi`, `500m`, `1e3`), as k8s.io/apimachinery's
`resource.Quantity`: exact values that remember the format they were written in, and
upstream's canonical spelling (`Quantity.String()`).

The grammar and error messages are upstream's `resource.ParseQuantity`: a signed decimal
number, then a binary-SI suffix (Ki..Ei), a decimal-SI suffix (n, u, m, k, M, G, T, P, E) or
a decimal exponent (`e3`, `E-2`). Values are exact `Fraction`s, so comparisons never round
(upstream rounds a parsed value up to nano precision and caps BinarySI ones at 2^63-1;
the canonical spelling rounds up to nano precision too, so what is printed is the same).
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

BINARY_SI = "BinarySI"
"""Format of `12Mi` (12 × 2^20)."""
DECIMAL_SI = "DecimalSI"
"""Format of `12M` (12 × 10^6) and of plain numbers."""
DECIMAL_EXPONENT = "DecimalExponent"
"""Format of `12e6`."""

FORMAT_WRONG = ("quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
"""Upstream's ErrFormatWrong."""
SUFFIX_WRONG = "unable to parse quantity's suffix"
"""Upstream's ErrSuffix."""
MAX_EXPONENT = 1000
"""Guards against `1e999999999` (upstream reads the exponent as an int32)."""

# Same as upstream's scanner (parseQuantityString): a sign, digits, `.` and digits, then
# suffix letters, a sign and digits; anything else is a format error. The digits may be
# missing altogether (`.`, `Ki`), which upstream reads as 0.
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL: dict[str, Fraction | int] = {
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T",
                     15: "P", 18: "E"}
_NANO = 10**9


@functools.lru_cache(maxsize=4096)
def quantity_error(text: str) -> str | None:
    """Why upstream's ParseQuantity rejects `text` (its message), or None when it parses."""
    m = _SCAN.fullmatch(text) if text else None
    if m is None:
        return FORMAT_WRONG
    suffix = m.group(4)
    if suffix in _DECIMAL or suffix in _BINARY or _EXPONENT.fullmatch(suffix):
        return None
    return SUFFIX_WRONG


_CHUNK = 4000
"""Digits converted at a time (Python refuses int() of more than 4300 digits at once)."""


def _digits(text: str) -> int:
    """The integer a run of decimal digits spells, however long (upstream's inf.Dec reads
    any length: a 5,000-digit value is that value, never an error or zero)."""
    if len(text) <= _CHUNK:
        return int(text or "0")
    value = 0
    for start in range(0, len(text), _CHUNK):
        chunk = text[start:start + _CHUNK]
        value = value * 10 ** len(chunk) + int(chunk)
    return value


def _scan(text: str) -> tuple[Fraction, str]:
    """The exact value and the format of a quantity string; ValueError if it is not one."""
    if not isinstance(text, str) or not text:
        raise ValueError(FORMAT_WRONG)
    m = _SCAN.fullmatch(text)
    if m is None:
        raise ValueError(FORMAT_WRONG)
    sign, whole, fraction, suffix = m.groups()
    fraction = fraction or ""
    value = Fraction(_digits(whole + fraction), 10 ** len(fraction))
    fmt = DECIMAL_SI
    if suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    elif suffix in _BINARY:
        value *= _BINARY[suffix]
        if 0 < value < 1:
            fmt = DECIMAL_SI  # same as upstream: a fraction of one is never binary
        else:
            fmt = BINARY_SI
    else:
        e = _EXPONENT.fullmatch(suffix)
        if e is None or abs(int(e.group(1))) > MAX_EXPONENT:
            raise ValueError(SUFFIX_WRONG)
        value *= Fraction(10) ** int(e.group(1))
        fmt = DECIMAL_EXPONENT
    return (-value if sign == "-" else value), fmt


def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string; ValueError (upstream's message) if it is none."""
    return _scan(text)[0]


def is_quantity(text: object) -> bool:
    """Whether `text` parses as a quantity."""
    try:
        parse_quantity(text)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return False
    return True


class Quantity:
    """An exact value and the format upstream keeps from the text it was parsed from.

    Equal and ordered by value, as upstream's Cmp (`1Gi == 1024Mi`); `str()` is upstream's
    canonical form in the kept format. Immutable: arithmetic returns a new quantity.
    """

    __slots__ = ("value", "format")

    def __init__(self, value: Fraction | int, fmt: str = DECIMAL_SI) -> None:
        self.value = value if value.__class__ is Fraction else Fraction(value)
        self.format = fmt

    @staticmethod
    def parse(text: str | int | float) -> Quantity:
        """Parse a wire quantity (a string, or a JSON number); ValueError if it is none."""
        return parse(text)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r}, {self.format})"

    def __str__(self) -> str:
        return canonical(self.value, self.format)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def __gt__(self, other: Quantity) -> bool:
        return self.value > other.value

    def __ge__(self, other: Quantity) -> bool:
        return self.value >= other.value

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.format)

    def add(self, other: Quantity) -> Quantity:
        """Same as upstream's Add: the sum in this format, or in other's when this is zero."""
        return Quantity(self.value + other.value, self.format if self.value else other.format)

    def sub(self, other: Quantity) -> Quantity:
        """Same as upstream's Sub: the difference in this format, or other's when this is 0."""
        return Quantity(self.value - other.value, self.format if self.value else other.format)

    def sign(self) -> int:
        """-1, 0 or 1."""
        return (self.value > 0) - (self.value < 0)

    def int_value(self) -> int:
        """Same as upstream's Value() for the values that occur: rounded up to an integer."""
        return -(-self.value.numerator // self.value.denominator)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Quantity:
    value, fmt = _scan(text)
    return Quantity(value, fmt)


def parse(text: str | int | float) -> Quantity:
    """A wire quantity (a string, or a JSON number) as a Quantity; ValueError if it is none."""
    return _parse_text(text if isinstance(text, str) else str(text))


def binary(value: int | Fraction) -> Quantity:
    """Same as upstream's resource.NewQuantity(value, BinarySI)."""
    return Quantity(value, BINARY_SI)


def canonical(value: Fraction, fmt: str) -> str:
    """Same as upstream's Quantity.String() (CanonicalizeBytes) of a value in a format.

    BinarySI keeps a binary suffix for whole values of at least 1024 in magnitude (`1Gi`,
    `1536Mi`, `1025`); anything else is a decimal mantissa, rounded up (away from zero) to
    nano precision, with the largest exponent that is a multiple of three and leaves it whole:
    a suffix in DecimalSI (`1500m`, `2k`; past `E` the mantissa grows, where upstream drops
    the suffix), `e<exp>` in DecimalExponent (`12e-3`)."""
    if not value:
        return "0"
    sign = "-" if value < 0 else ""
    magnitude = -value if value < 0 else value
    if magnitude.denominator == 1:
        mantissa, exponent = magnitude.numerator, 0
        if fmt == BINARY_SI and mantissa >= 1024:
            k = 0
            while not mantissa & 1023 and k < len(_BINARY_SUFFIXES) - 1:
                mantissa >>= 10
                k += 1
            return f"{sign}{mantissa}{_BINARY_SUFFIXES[k]}"
    else:
        mantissa = -(-magnitude.numerator * _NANO // magnitude.denominator)
        exponent = -9
    while not mantissa % 10:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == DECIMAL_EXPONENT:
        return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"
    if exponent > 18:
        mantissa *= 10 ** (exponent - 18)
        exponent = 18
    return f"{sign}{mantissa}{_DECIMAL_SUFFIXES[exponent]}"
