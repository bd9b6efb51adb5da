"""`fakeapi.machinery.quantity` against upstream's quantity test tables
(tests/data/quantity/upstream.yaml), plus the arithmetic the callers use."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.machinery.quantity import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    FORMAT_WRONG,
    SUFFIX_WRONG,
    Quantity,
    binary,
    is_quantity,
    parse,
    parse_quantity,
    quantity_error,
)

TABLES = yaml.safe_load((Path(__file__).resolve().parent.parent / "data" / "quantity"
                         / "upstream.yaml").read_text())
ERRORS = {"format": FORMAT_WRONG, "suffix": SUFFIX_WRONG}


def rows(section: str) -> list[Any]:
    return [pytest.param(r, id=str(r.get("input", r.get("expect")))) for r in TABLES[section]]


def nano_ceiling(value: Fraction) -> Fraction:
    """Upstream's parse-time rounding: up (away from zero) to nano precision."""
    nanos = value * 10**9
    return Fraction(math.ceil(abs(nanos)) * (1 if value >= 0 else -1), 10**9)


@pytest.mark.parametrize("sign", ["", "-", "+"])
@pytest.mark.parametrize("row", rows("parse"))
def test_parse_as_upstream(row: dict[str, Any], sign: str) -> None:
    q = parse(sign + row["input"])
    want = Fraction(row.get("differs", row)["value"])
    got = q.value if "differs" in row else nano_ceiling(q.value)
    assert got == (-want if sign == "-" else want)
    assert q.format == row["format"]
    assert quantity_error(sign + row["input"]) is None and is_quantity(sign + row["input"])


@pytest.mark.parametrize("row", rows("invalid"))
def test_invalid_quantities_fail_with_upstreams_error(row: dict[str, Any]) -> None:
    with pytest.raises(ValueError) as err:
        parse_quantity(row["input"])
    assert str(err.value) == ERRORS[row["error"]]
    assert quantity_error(row["input"]) == ERRORS[row["error"]]
    assert not is_quantity(row["input"])


@pytest.mark.parametrize("row", rows("string"))
def test_string_as_upstream(row: dict[str, Any]) -> None:
    q = Quantity(Fraction(row["value"]), row["format"])
    assert str(q) == row["expect"]
    if q.value:
        assert str(-q) == "-" + row["expect"]
    assert str(parse(row["expect"])) == row["expect"]
    if "alternate" in row:
        assert str(parse(row["alternate"])) == row["expect"]


@pytest.mark.parametrize("row", rows("emit"))
def test_parse_then_emit_as_upstream(row: dict[str, Any]) -> None:
    assert str(parse(row["input"])) == row["expect"]
    assert str(parse("-" + row["input"])) == "-" + row["expect"]


@pytest.mark.parametrize("row", rows("canonical"))
def test_reserialize_as_upstream(row: dict[str, Any]) -> None:
    assert str(parse(row["input"])) == row["canonical"]


@pytest.mark.parametrize(("value", "fmt", "text"), [
    (Fraction(3, 7), DECIMAL_SI, "428571429n"),  # rounded up to nano precision
    (Fraction(3, 7), DECIMAL_EXPONENT, "428571429e-9"),
    (Fraction(3, 7), BINARY_SI, "428571429n"),
    (Fraction(1, 10**10), DECIMAL_EXPONENT, "1e-9"),
    (Fraction(1, 10**10), DECIMAL_SI, "1n"),
    (Fraction(-1, 10**10), DECIMAL_SI, "-1n"),  # away from zero
    (Fraction(1, 3 * 10**9), DECIMAL_SI, "1n"),
    (Fraction(10**21), DECIMAL_SI, "1000E"),  # upstream drops the suffix here (prints "1")
    (Fraction(10**21), DECIMAL_EXPONENT, "1e21"),
    (Fraction(2**70), BINARY_SI, "1024Ei"),
    (Fraction(1536), BINARY_SI, "1536"),
    (Fraction(1536, 1000), BINARY_SI, "1536m"),
    (Fraction(-2048), BINARY_SI, "-2Ki"),
    (Fraction(-1024), BINARY_SI, "-1Ki"),
    (Fraction(-1023), BINARY_SI, "-1023"),
    (Fraction(0), BINARY_SI, "0"),
    (Fraction(512), BINARY_SI, "512"),
    (Fraction(1, 2), BINARY_SI, "500m"),
    (Fraction(1, 2), DECIMAL_SI, "500m"),
    (Fraction(30 * 2**30), BINARY_SI, "30Gi"),
    (Fraction(2000), DECIMAL_SI, "2k"),
    (Fraction(1500), DECIMAL_SI, "1500"),
    (Fraction(3 * 10**9), DECIMAL_SI, "3G"),
])
def test_values_beyond_the_tables(value: Fraction, fmt: str, text: str) -> None:
    assert str(Quantity(value, fmt)) == text


@pytest.mark.parametrize("text", ["100m", "1Gi"])
def test_adding_or_subtracting_zero_keeps_the_suffix(text: str) -> None:
    """Upstream's TestQuantityAddZeroPreservesSuffix and TestQuantitySubZeroPreservesSuffix."""
    value, zero = parse(text), parse("0")
    assert str(value.add(zero)) == text
    assert str(zero.add(value)) == text
    assert str(value.sub(zero)) == text
    assert str(zero.sub(value)) == str(-value)


def test_a_sum_keeps_the_format_of_its_first_nonzero_term() -> None:
    assert str(parse("512Mi").add(parse("1536M"))) == "2024288Ki"
    assert str(parse("2G").add(parse("1Gi"))) == "3073741824"
    assert str(parse("0").add(parse("1Gi")).add(parse("1Ki"))) == "1048577Ki"


def test_quantities_compare_by_value() -> None:
    assert parse("1Gi") == parse("1024Mi") and hash(parse("1Gi")) == hash(parse("1024Mi"))
    assert parse("1k") == parse("1e3") and parse("1k") != parse("1001")
    assert parse("100m") < parse("1") <= parse("1000m") < parse("1Ki") > parse("1k")
    assert parse("-5").sign() == -1 and parse("0").sign() == 0 and parse("1n").sign() == 1


def test_integer_values_round_up() -> None:
    assert parse("3").int_value() == 3 and parse("2500m").int_value() == 3
    assert binary(6 * 2**30) == parse("6Gi") and str(binary(6 * 2**30)) == "6Gi"
    assert str(binary(4)) == "4"


def test_json_numbers_parse_as_their_text() -> None:
    assert parse(5) == parse("5") and parse(1.5).value == Fraction(3, 2)
    assert str(parse(1e-10)) == "1e-9"
