"""The DRA CEL expression table (tests/data/cel/expressions.yaml) on every engine.

Each case holds upstream 1.37's result. Where an engine can't match upstream, the case's
`differs` entry says what the engine does instead and why; the test asserts that, so a
difference that goes away (or changes) fails until the table is updated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi import cel

TABLE = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "data" / "cel" / "expressions.yaml").read_text())
DEVICES = {name: cel.device_input(d["driver"], d) for name, d in TABLE["devices"].items()}
README = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text().split())
OUTCOMES = ("value", "compile_error", "runtime_error")


def _cases() -> list[Any]:
    out = []
    for i, case in enumerate(TABLE["cases"]):
        for engine in cel.ENGINES:
            marks = [pytest.mark.xfail(reason="engine not installed", run=False, strict=False)] \
                if engine not in cel.available_engines() else []
            tag = " (differs)" if engine in case.get("differs", {}) else ""
            out.append(pytest.param(case, engine, id=f"{i:03d}-{engine}{tag}", marks=marks))
    return out


def _expected(case: dict[str, Any], engine: str) -> dict[str, Any]:
    differs = case.get("differs", {}).get(engine)
    if differs is None:
        return {k: case[k] for k in OUTCOMES if k in case}
    assert differs.get("reason"), "a difference needs its reason"
    return {k: differs[k] for k in OUTCOMES if k in differs}


@pytest.mark.parametrize(("case", "engine"), _cases())
def test_expression(case: dict[str, Any], engine: str) -> None:
    expected = _expected(case, engine)
    assert len(expected) == 1, f"one outcome per case: {expected}"
    features = cel.Features(**case.get("features", {}))
    purpose = cel.DERIVED if case.get("purpose") == "derived" else cel.SELECTOR
    program = cel.compile(case["expr"], purpose=purpose, features=features, engine=engine,
                          stored=case.get("stored", False))
    if "compile_error" in expected:
        assert isinstance(program, list), f"compiled, expected {expected['compile_error']!r}"
        assert expected["compile_error"] in program[0].detail
        assert program[0].kind == "invalid"
        return
    assert isinstance(program, cel.Program), program[0].detail
    assert program.engine == engine
    device = DEVICES[case.get("device", "gpu")]
    run = cel.evaluate if purpose == cel.DERIVED else cel.matches
    if "runtime_error" in expected:
        with pytest.raises(cel.CelEvalError) as info:
            run(program, device)
        assert expected["runtime_error"] in str(info.value)
        return
    assert run(program, device) == expected["value"]


def test_the_table_is_big_enough_and_the_readme_lists_every_difference() -> None:
    assert len(TABLE["cases"]) >= 60
    for case in TABLE["cases"]:
        for engine, differs in case.get("differs", {}).items():
            assert engine in cel.ENGINES
            assert differs["reason"] in README, f"README misses: {differs['reason']}"
