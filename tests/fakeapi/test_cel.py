"""The DRA CEL environment (fakeapi.cel): compile errors, cost estimates and evaluation.

Every test runs on each engine (the `engine` fixture makes it the process default).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi import cel

SEEDS = Path(__file__).resolve().parent.parent / "data" / "seeds"
DRIVER = "gpu.example.com"
DEVICE = cel.device_input(DRIVER, {
    "name": "gpu-0",
    "attributes": {
        "type": {"string": "gpu"},
        "driverVersion": {"version": "1.2.3"},
        "numa": {"int": 1},
        "ecc": {"bool": True},
        "dra.example.com/models": {"strings": ["model-a", "model-b"]},
        "versions": {"versions": ["1.0.0", "2.0.0-rc.1"]},
    },
    "capacity": {"memory": {"value": "80Gi"}},
    "allowMultipleAllocations": True,
})
NUMS = "[" + ",".join(str(i) for i in range(100)) + "]"


@pytest.fixture(autouse=True, params=cel.ENGINES)
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test with this engine as the default."""
    if request.param not in cel.available_engines():
        pytest.skip(f"{request.param} is not installed")
    cel.set_default_engine(request.param)
    yield request.param
    cel.set_default_engine(None)


def _seed_expressions() -> list[str]:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expression"), str):
                found.append(node["expression"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for path in sorted(SEEDS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            walk(doc)
    return found


@pytest.mark.parametrize("expression", _seed_expressions())
def test_seed_expressions_compile_cheaply(expression: str) -> None:
    purpose = cel.SELECTOR if "==" in expression else cel.DERIVED
    program = cel.compile(expression, purpose=purpose)
    assert isinstance(program, cel.Program), program
    assert program.cost < 1000


@pytest.mark.parametrize(("expression", "error"), [
    ("device.driver ==", "Syntax error: mismatched input '<EOF>'"),
    ("driver == 'x'", "undeclared reference to 'driver'"),
    ("device.vendor == 'x'", "undefined field 'vendor'"),
    ('1 + "a"', "found no matching overload for '_+_' applied to '(int, string)'"),
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ('quantity("1Gi")', "must evaluate to bool or the unknown type, not kubernetes.Quantity"),
    ("device.attributes", "not map(string, map(string, dyn))"),
])
def test_compile_errors(expression: str, error: str) -> None:
    result = cel.compile(expression)
    assert isinstance(result, list) and len(result) == 1
    assert result[0].kind == "invalid"
    assert error in result[0].detail


def test_compile_error_points_at_the_source() -> None:
    errors = cel.compile("device.driver == 'a' &&\ndevice.vendor == 'b'")
    assert isinstance(errors, list)
    [error] = errors
    assert error.detail == ("compilation failed: ERROR: <input>:2:7: undefined field 'vendor'\n"
                            " | device.vendor == 'b'\n | ......^")


@pytest.mark.parametrize(("expression", "purpose", "ok"), [
    ('device.attributes["gpu.example.com"].numa', cel.DERIVED, True),
    ('device.attributes["gpu.example.com"].numa == 1', cel.DERIVED, True),
    ('semver("1.0.0")', cel.DERIVED, True),
    ('["a", "b"]', cel.DERIVED, True),
    ('{"a": 1}', cel.DERIVED, False),
    ('device.capacity["gpu.example.com"].memory', cel.DERIVED, False),
    ("1.5", cel.DERIVED, False),
])
def test_derived_attribute_result_types(expression: str, purpose: str, ok: bool) -> None:
    assert isinstance(cel.compile(expression, purpose=purpose), cel.Program) is ok


@pytest.mark.parametrize(("features", "expression", "ok"), [
    (cel.Features(), '"a".includes("a")', True),
    (cel.Features(list_attributes=False), '"a".includes("a")', False),
    (cel.Features(), "device.allowMultipleAllocations", True),
    (cel.Features(consumable_capacity=False), "device.allowMultipleAllocations", False),
])
def test_gates_shape_the_environment(features: cel.Features, expression: str, ok: bool) -> None:
    assert isinstance(cel.compile(expression, features=features), cel.Program) is ok


@pytest.mark.parametrize(("expression", "limit_ok"), [
    ('device.driver == "gpu.example.com"', True),
    ("device.attributes.all(d, device.attributes[d].all(k, true))", True),
    (f"{NUMS}.all(x, {NUMS}.all(y, x + y >= 0))", True),
    (f"{NUMS}.all(x, {NUMS}.all(y, {NUMS}.all(z, x + y + z >= 0)))", False),
    ('device.attributes["x"].s.split(",").exists(p, p == "a")', True),
])
def test_cost_estimate_against_the_limit(expression: str, limit_ok: bool) -> None:
    assert (cel.estimate_cost(expression) <= cel.MAX_COST) is limit_ok


@pytest.mark.parametrize(("expression", "expected"), [
    ('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].type == "gpu"',
     True),
    ('device.attributes["gpu.example.com"].type == "tpu"', False),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("1Ti"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))', True),
    ('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3")', True),
    ('device.attributes["gpu.example.com"].driverVersion.minor() == 2', True),
    ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
    ('device.attributes["dra.example.com"].models.includes("model-b")', True),
    ('device.attributes["dra.example.com"].models.includes("model-c")', False),
    ('device.attributes["gpu.example.com"].versions.includes(semver("2.0.0-rc.1"))', True),
    ('device.attributes["gpu.example.com"].type.includes("gpu")', True),
    ('has(device.attributes["other.example.com"].x)', False),
    ('device.attributes["other.example.com"].size() == 0', True),
    ('cel.bind(g, device.attributes["gpu.example.com"], g.numa == 1 && g.ecc)', True),
    ('device.attributes[device.driver].type.upperAscii() == "GPU"', True),
    ('device.attributes["gpu.example.com"].type == 1', False),
    ("device.allowMultipleAllocations", True),
    ('quantity("1.5").add(1).asApproximateFloat() == 2.5', True),
])
def test_selector_evaluation(expression: str, expected: bool) -> None:
    program = cel.compile(expression)
    assert isinstance(program, cel.Program), program
    assert cel.matches(program, DEVICE) is expected


@pytest.mark.parametrize(("expression", "error"), [
    ('device.attributes["gpu.example.com"].missing == 1', "no such key: missing"),
    ('device.attributes["other.example.com"].x == 1', "no such key: x"),
    ('semver("banana") == semver("1.0.0")', "No Major.Minor.Patch elements found"),
])
def test_runtime_errors(expression: str, error: str) -> None:
    program = cel.compile(expression)
    assert isinstance(program, cel.Program), program
    with pytest.raises(cel.CelEvalError, match=error.replace("(", r"\(").replace(")", r"\)")):
        cel.matches(program, DEVICE)


def test_dyn_result_must_be_bool_at_runtime() -> None:
    program = cel.compile('device.attributes["gpu.example.com"].numa')
    assert isinstance(program, cel.Program) and program.output_type == "dyn"
    with pytest.raises(cel.CelEvalError, match="CEL result of type int could not be converted"):
        cel.matches(program, DEVICE)


@pytest.mark.parametrize(("expression", "value"), [
    ('device.attributes["gpu.example.com"].numa', 1),
    ('device.attributes["gpu.example.com"].driverVersion', "1.2.3"),
    ('device.attributes["dra.example.com"].models', ["model-a", "model-b"]),
])
def test_derived_values(expression: str, value: Any) -> None:
    program = cel.compile(expression, purpose=cel.DERIVED)
    assert isinstance(program, cel.Program)
    assert cel.evaluate(program, DEVICE) == value


@pytest.mark.parametrize(("a", "b", "order"), [
    ("1.0.0", "1.0.1", -1), ("1.0.0-alpha", "1.0.0", -1), ("1.0.0-alpha.1", "1.0.0-alpha.beta", -1),
    ("1.0.0-2", "1.0.0-10", -1), ("2.0.0+build.1", "2.0.0", 0), ("1.10.0", "1.9.0", 1),
])
def test_semver_precedence(a: str, b: str, order: int) -> None:
    assert cel.Semver.parse(a).compare(cel.Semver.parse(b)) == order
