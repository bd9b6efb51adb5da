"""The CEL environment of CustomResourceDefinition validation rules (`x-kubernetes-
validations`): `self` is the value a rule sits on, `oldSelf` its stored value (transition
rules), with the standard library and the strings, optional-types and `cel.bind` extensions.

Kept apart from the DRA environment (`fakeapi.cel`), whose variables and libraries differ;
same engine (cel-expr-python), and the same shape of interface: `compile_rule()` returns a
`RuleProgram` or a `CelError`-like message, `evaluate_rule()` raises `RuleError`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from typing import Any

from cel_expr_python import cel as _cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

_T = _cel.Type
_lock = threading.Lock()


class RuleError(Exception):
    """A rule's runtime error, or a result of the wrong type."""


@dataclasses.dataclass(frozen=True)
class CompileError:
    """Why a rule does not compile (upstream's `compilation failed: ...` detail)."""

    detail: str


@dataclasses.dataclass(frozen=True, eq=False)
class RuleProgram:
    """A compiled rule; `transition` when it reads `oldSelf` (checked on updates only)."""

    expression: str
    transition: bool
    _expr: Any = dataclasses.field(repr=False)


@functools.lru_cache(maxsize=1)
def _env() -> Any:
    return _cel.NewEnv(variables={"self": _T.DYN, "oldSelf": _T.DYN},
                       extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(),
                                   ext_optional.ExtOptional()])


def _message(text: str) -> str:
    """The engine's error text without its status decorations (cel-go's wording)."""
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    return re.sub(r"\s*\[[A-Z_]+\]$", "", text)


_TYPES = {"BOOL": "bool", "STRING": "string", "DYN": "dyn", "INT": "int", "UINT": "uint",
          "DOUBLE": "double", "BYTES": "bytes", "NULL": "null_type"}


@functools.lru_cache(maxsize=4096)
def compile_rule(expression: str, result: str = "bool") -> RuleProgram | CompileError:
    """Compile a rule (`result="string"`: a messageExpression); a `RuleProgram`, or the
    error upstream reports (a syntax or type error, or an expression of another type)."""
    try:
        with _lock:
            expr = _env().compile(expression)
    except RuntimeError as e:
        return CompileError("compilation failed: " + _message(str(e)))
    name = expr.return_type().name().strip()
    out = _TYPES.get(name, name.lower())
    if out not in (result, "dyn"):
        return CompileError(f"must evaluate to a {result}, not {out}")
    return RuleProgram(expression=expression, transition="oldSelf" in expression, _expr=expr)


def evaluate_rule(program: RuleProgram, value: Any, old: Any = None) -> bool | str:
    """What a rule says for `value` (and `old` for a transition rule): a bool for a rule, a
    string for a messageExpression; RuleError otherwise."""
    data = {"self": value}
    if program.transition:
        data["oldSelf"] = old
    result = program._expr.eval(data=data)
    if result.type() == _T.ERROR:
        text = str(result.value())
        found = re.match(r'^NOT_FOUND: Key not found in map : "(.*)"$', text)
        raise RuleError(f"no such key: {found.group(1)}" if found else _message(text))
    plain = result.plain_value()
    if not isinstance(plain, (bool, str)):
        raise RuleError(f"CEL result of type {type(plain).__name__} could not be converted "
                        "to bool")
    return plain
