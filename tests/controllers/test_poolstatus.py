"""`controllers.poolstatus.compute` over the cases of tests/data/controllers/poolstatus/.

A case file gives a request `spec`, `slices`, `rules` and `claims` in a short form (expanded
here into stored objects) and either the full `expect`ed status or, per entry of `cases`,
overrides and `expect_pool`: fields of the one pool (a null value: the field is absent).
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from controllers import poolstatus

CASES = Path(__file__).resolve().parent.parent / "data" / "controllers" / "poolstatus"
Obj = dict[str, Any]


def _slice(entry: Obj, driver: str) -> Obj:
    spec: Obj = {"driver": entry.get("driver", driver),
                 "pool": {"name": entry["pool"], "generation": entry.get("generation", 1),
                          "resourceSliceCount": entry.get("count", 1)},
                 "devices": [d if isinstance(d, dict) else {"name": d}
                             for d in entry.get("devices") or []],
                 **(entry.get("spec") or {})}
    if entry.get("node"):
        spec["nodeName"] = entry["node"]
    else:
        spec["allNodes"] = True
    return {"metadata": {"name": entry["name"]}, "spec": spec}


def _claim(i: int, results: list[Obj], driver: str) -> Obj:
    return {"metadata": {"name": f"claim-{i}", "namespace": "default"},
            "status": {"allocation": {"devices": {"results": [
                {"request": "r", "driver": driver, **r} for r in results]}}}}


def _rule(i: int, entry: Obj) -> Obj:
    return {"metadata": {"name": f"rule-{i}"},
            "spec": {"deviceSelector": entry.get("deviceSelector"),
                     "taint": {"key": "example.com/k", "effect": entry["effect"]}}}


def _compute(case: Obj) -> Obj:
    spec = case["spec"]
    driver = spec["driver"]
    return poolstatus.compute(poolstatus.Inputs(
        spec=spec, slices=[_slice(s, driver) for s in case.get("slices") or []],
        claims=[_claim(i, c, driver) for i, c in enumerate(case.get("claims") or [])],
        rules=[_rule(i, r) for i, r in enumerate(case.get("rules") or [])]))


def _cases() -> list[Any]:
    out = []
    for path in sorted(CASES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        variants = data.pop("cases", None) or [{}]
        for variant in variants:
            case = {**data, **{k: v for k, v in variant.items() if k != "name"}}
            label = path.stem + (f": {variant['name']}" if "name" in variant else "")
            out.append(pytest.param(case, id=label))
    return out


@pytest.mark.parametrize("case", _cases())
def test_pool_status(case: Obj) -> None:
    got = _compute(case)
    if "expect" in case:
        assert got == case["expect"]
        return
    [pool] = got["pools"]
    assert got["poolCount"] == 1
    for field, want in case["expect_pool"].items():
        if want is None:
            assert field not in pool, pool
        else:
            assert pool.get(field) == want, (field, pool)


@pytest.mark.parametrize("value,binary,text", [
    (Fraction(0), True, "0"),
    (Fraction(30 * 2**30), True, "30Gi"),
    (Fraction(1536), True, "1536"),
    (Fraction(512), True, "512"),
    (Fraction(2000), False, "2k"),
    (Fraction(1500), False, "1500"),
    (Fraction(1, 2), False, "500m"),
    (Fraction(1, 2), True, "500m"),
    (Fraction(3 * 10**9), False, "3G"),
    (Fraction(-2048), True, "-2Ki"),
    (Fraction(1, 3 * 10**9), False, "1n"),
])
def test_quantities_print_as_upstream_canonicalizes_them(value: Fraction, binary: bool,
                                                          text: str) -> None:
    assert poolstatus.format_quantity(value, binary=binary) == text


def test_a_sum_keeps_the_format_of_its_first_term() -> None:
    amount = poolstatus.Amount()
    amount.add("512Mi")
    amount.add("1536M")
    assert str(amount) == str(poolstatus.format_quantity(amount.value, binary=True))
    other = poolstatus.Amount()
    other.add("2G")
    assert str(other.minus(amount)) == "0"  # never negative
