"""`controllers.poolstatus.compute` over the cases of tests/data/controllers/poolstatus/.

A case file gives a request `spec`, `slices`, `rules` and `claims` in a short form (expanded
here into stored objects) and either the full `expect`ed status or, per entry of `cases`,
overrides and `expect_pool`: fields of the one pool (a null value: the field is absent).
"""

from __future__ import annotations

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
