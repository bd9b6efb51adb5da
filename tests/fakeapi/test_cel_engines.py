"""The CEL interface's engine choice, compile cache, environments and device inputs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypedDict

import pytest

from fakeapi import cel
from fakeapi.cel import engines

GPU = {"attributes": {"type": {"string": "gpu"}, "v": {"version": "1.2.3"}},
       "capacity": {"memory": {"value": "80Gi"}}}


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    """Each test starts on the default engine with an empty cache."""
    cel.set_default_engine(None)
    cel.cache.clear()
    yield
    cel.set_default_engine(None)
    cel.cache.clear()


def test_a_second_compile_is_a_cache_hit_returning_the_same_program() -> None:
    first = cel.compile('device.driver == "a"')
    again = cel.compile('device.driver == "a"')
    assert isinstance(first, cel.Program) and again is first
    assert (cel.cache.hits, cel.cache.misses) == (1, 1)


class CompileOptions(TypedDict, total=False):
    """Options of `cel.compile` besides the expression."""

    purpose: str
    features: cel.Features
    engine: str | None


@pytest.mark.parametrize("other", [
    {"purpose": cel.DERIVED},
    {"features": cel.Features(list_attributes=False)},
    {"engine": engines.CEL_PYTHON},
])
def test_the_cache_key_is_expression_purpose_features_and_engine(other: CompileOptions) -> None:
    expression = 'device.attributes["a"].b == 1'
    base = cel.compile(expression, engine=engines.CEL_EXPR_PYTHON)
    variant = cel.compile(expression, **other)
    assert isinstance(base, cel.Program) and isinstance(variant, cel.Program)
    assert variant is not base
    assert cel.cache.misses == 2


def test_stored_expressions_share_one_environment_whatever_the_gates() -> None:
    a = cel.compile("device.allowMultipleAllocations", stored=True,
                    features=cel.Features(consumable_capacity=False))
    b = cel.compile("device.allowMultipleAllocations", stored=True)
    assert isinstance(a, cel.Program) and a is b


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    cache = engines.CompileCache(size=2)
    cache.put(("a",), 1)
    cache.put(("b",), 2)
    assert cache.get(("a",)) == 1  # a is now the most recent
    cache.put(("c",), 3)
    assert cache.get(("b",)) is None and cache.get(("a",)) == 1 and len(cache) == 2


def test_errors_are_cached_and_handed_out_as_fresh_lists() -> None:
    first = cel.compile("device.driver == 1")
    second = cel.compile("device.driver == 1")
    assert isinstance(first, list) and first == second and first is not second
    assert cel.cache.hits == 1


def test_the_environment_variable_picks_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(engines.ENV_VAR, engines.CEL_PYTHON)
    program = cel.compile("true")
    assert isinstance(program, cel.Program) and program.engine == engines.CEL_PYTHON
    assert cel.set_default_engine(engines.CEL_EXPR_PYTHON) == engines.CEL_EXPR_PYTHON
    program = cel.compile("true")
    assert isinstance(program, cel.Program) and program.engine == engines.CEL_EXPR_PYTHON


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(cel.EngineUnavailable, match="unknown CEL engine 'cel-rust'"):
        cel.set_default_engine("cel-rust")
    with pytest.raises(cel.EngineUnavailable):
        cel.compile("true", engine="cel-rust")
    assert cel.default_engine() == engines.CEL_EXPR_PYTHON
    assert cel.available_engines() == cel.ENGINES


def test_an_unknown_purpose_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown purpose"):
        cel.compile("true", purpose="sorting")


@pytest.mark.parametrize("engine", cel.ENGINES)
def test_one_device_input_serves_every_engine_and_program(engine: str) -> None:
    device = cel.device_input("gpu.example.com", GPU)
    for expression in ('device.attributes["gpu.example.com"].type == "gpu"',
                       'device.attributes["gpu.example.com"].v.isLessThan(semver("2.0.0"))'):
        program = cel.compile(expression, engine=engine)
        assert isinstance(program, cel.Program)
        assert cel.matches(program, device) is True
    assert engine in device.prepared  # converted once for the engine, then reused
    assert device.data["attributes"]["gpu.example.com"]["v"] == cel.Semver(1, 2, 3)


@pytest.mark.parametrize(("device", "error"), [
    ({"attributes": {"v": {"version": "1.2"}}},
     "attribute v: parse semantic version: No Major.Minor.Patch elements found"),
    ({"attributes": {"x": {}}}, "attribute x: unsupported attribute value"),
    ({"capacity": {"memory": {"value": "lots"}}}, "capacity memory: quantities must match"),
])
def test_a_device_that_cel_cant_represent_is_a_runtime_error(device: dict[str, object],
                                                            error: str) -> None:
    with pytest.raises(cel.CelEvalError, match=error):
        cel.device_input("gpu.example.com", device)


@pytest.mark.parametrize("engine", cel.ENGINES)
def test_a_computed_domain_pads_the_drivers_domain(engine: str) -> None:
    bare = cel.device_input("nic.example.com", {})
    program = cel.compile("device.attributes[device.driver].size() == 0", engine=engine)
    assert isinstance(program, cel.Program) and program.dynamic_domains
    assert cel.matches(program, bare) is True
