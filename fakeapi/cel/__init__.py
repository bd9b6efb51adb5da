"""The DRA CEL environment behind one small interface (compile, cost, evaluate).

Mirrors upstream's `k8s.io/dynamic-resource-allocation/cel` on the 1.37 base environment:
one variable `device` with `driver`, `attributes[domain][id]`, `capacity[domain][id]` (a
quantity) and, with consumable capacity, `allowMultipleAllocations`; the Kubernetes libraries
(semver, quantity, ip, cidr, url, regex, lists, format), `cel.bind`, optional types, the
strings, lists and sets extensions, two-variable comprehensions and, with list-type
attributes, `includes()`. An unknown domain is an empty map; a missing key is a runtime
error with upstream's hint.

What upstream 1.37 enables, and so this does: DRA compiles with the base environment at the
compatibility version 1.36 (NewExpressions, admission; the DRA declarations shaped by the
gates) or with every declaration (StoredExpressions, the allocator: `stored=True`). Both have
URLs, regex, quantity, IP, CIDR, format, semver (v1), strings (v2), sets, lists (ext v3 and
the k8s library), two-variable comprehensions, optional types, cross-type numeric
comparisons and the AST validators; DRA adds `cel.bind` and, with DRAListTypeAttributes,
`includes()`. The authz libraries need an `authorizer` variable DRA doesn't declare.

Two engines (see `engines`): cel-expr-python by default, cel-python where that one doesn't
install. Callers never see them: `compile()` returns a `Program` or `CelError`s, `matches()`
and `evaluate()` raise `CelEvalError`. Compiled programs are cached, bounded.

Imports: `fakeapi.machinery`.
"""

from __future__ import annotations

from typing import Any

from fakeapi.cel import engines
from fakeapi.cel.engines import ENGINES, EngineUnavailable
from fakeapi.cel.model import (
    DEFAULT_FEATURES,
    DERIVED,
    MAX_COST,
    MAX_EXPRESSION_LENGTH,
    NO_SUCH_KEY_HINT,
    SELECTOR,
    STORED_FEATURES,
    AdmissionProgram,
    CelError,
    CelEvalError,
    DeviceInput,
    Features,
    Program,
    device_input,
)
from fakeapi.cel.values import Semver, plain, type_name

__all__ = [
    "DERIVED", "ENGINE", "ENGINES", "MAX_COST", "MAX_EXPRESSION_LENGTH", "NO_SUCH_KEY_HINT",
    "SELECTOR", "AdmissionProgram",
    "CelError", "CelEvalError", "DeviceInput", "EngineUnavailable", "Features", "Program",
    "Semver", "available_engines", "cache", "compile", "compile_admission", "default_engine",
    "device_input", "estimate_cost", "evaluate", "evaluate_admission", "matches",
    "set_default_engine",
]

ENGINE = engines.CEL_EXPR_PYTHON
"""The default engine's name (kept from the single-engine interface)."""

cache = engines.CompileCache()
"""The process's compile cache (`cache.hits`, `cache.misses`, `len(cache)`)."""


def compile(expression: str, *, purpose: str = SELECTOR,  # noqa: A001 - the natural name
            features: Features = DEFAULT_FEATURES, engine: str | None = None,
            stored: bool = False) -> Program | list[CelError]:
    """Compile and type-check an expression; a `Program`, or the errors upstream reports.

    `stored=True` is upstream's StoredExpressions environment (the allocator's): every
    gated declaration is present whatever `features` says. Otherwise the environment is
    NewExpressions (admission's), shaped by `features`.
    """
    if purpose not in (SELECTOR, DERIVED):
        raise ValueError(f"unknown purpose {purpose!r}")
    name = engine or engines.current()
    feats = STORED_FEATURES if stored else features
    key = (expression, purpose, feats, name)
    result = cache.get(key)
    if result is None:
        result = engines.load(name).compile_program(expression, purpose, feats)
        cache.put(key, result)
    return list(result) if isinstance(result, list) else result


def estimate_cost(expression: str, *, features: Features = DEFAULT_FEATURES) -> int:
    """Worst-case cost estimate of an expression (MAX_COST + 1 when it doesn't compile)."""
    result = compile(expression, features=features)
    return result.cost if isinstance(result, Program) else MAX_COST + 1


def evaluate(program: Program, device: DeviceInput) -> Any:
    """Evaluate a program for one device; the plain result (semver/quantity as strings)."""
    return plain(engines.load(program.engine).evaluate(program, device))


def matches(program: Program, device: DeviceInput) -> bool:
    """Evaluate a selector; its result must be a bool (upstream: else a runtime error)."""
    value = engines.load(program.engine).evaluate(program, device)
    if not isinstance(value, bool):
        raise CelEvalError(f"CEL result of type {type_name(value)} could not be converted "
                           "to bool")
    return value


def compile_admission(expression: str, variables: tuple[str, ...], *,
                      engine: str | None = None) -> AdmissionProgram | list[CelError]:
    """Compile an admission expression (upstream's k8s.io/apiserver plugin/cel environment:
    the Kubernetes libraries over `variables`, each dynamically typed); an
    `AdmissionProgram`, or the errors upstream reports (`compilation failed: ...`)."""
    name = engine or engines.current()
    key = ("admission", expression, variables, name)
    result = cache.get(key)
    if result is None:
        result = engines.load(name).compile_admission(expression, variables)
        cache.put(key, result)
    return list(result) if isinstance(result, list) else result


def evaluate_admission(program: AdmissionProgram, activation: dict[str, Any]) -> Any:
    """Evaluate an admission expression with plain JSON values; the plain result
    (`CelEvalError` for a runtime error, in cel-go's words without DRA's hint)."""
    try:
        return plain(engines.load(program.engine).evaluate_admission(program, activation))
    except CelEvalError as e:
        raise CelEvalError(str(e).removesuffix(NO_SUCH_KEY_HINT)) from None


def default_engine() -> str:
    """The engine `compile()` uses when none is named."""
    return engines.current()


def set_default_engine(name: str | None) -> str:
    """Choose the process's engine (`--cel-engine`); None goes back to the default."""
    return engines.choose(name)


def available_engines() -> tuple[str, ...]:
    """The engines installed here."""
    return engines.available()
