"""The default engine: cel-expr-python (Google's cel-cpp), which type-checks like cel-go.

cel-cpp brings the standard library, `cel.bind`, optional types, two-variable comprehensions
and the strings (v2), lists and sets extensions natively; the Kubernetes libraries are Python
callbacks from `fakeapi.cel.library`. cel-cpp can't carry opaque Python values, so the
Kubernetes types travel as one-entry maps of distinct key/value types (a semver is
`map(int, string)`, a quantity `map(bool, string)`, ...), renamed back in messages.

Upstream declares `device` as an object with typed fields, so `device.driver == 1` fails to
compile there. cel-cpp can only declare maps without protobuf descriptors; so `device.driver`
is compiled as the variable `device_driver` (same length: positions in messages stay right),
typed like upstream's field, and the activation passes each field the expression uses.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from cel_expr_python import cel as _cel

from fakeapi.cel import analysis
from fakeapi.cel.ast import CheckedAst, decode, walk
from fakeapi.cel.library import (
    DRA_INCLUDES,
    FORMAT_NAMES,
    KUBERNETES,
    Function,
    Overload,
    pick,
)
from fakeapi.cel.model import (
    AdmissionProgram,
    CelError,
    DeviceInput,
    Features,
    Program,
    eval_error,
)
from fakeapi.cel.values import CIDR, IP, URL, LibraryError, NamedFormat, Semver
from fakeapi.machinery.quantity import Quantity

NAME = "cel-expr-python"

_T = _cel.Type

# ----- the Kubernetes types as tagged maps -------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _semver(text: str) -> Semver:
    return Semver.parse(text)


@functools.lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    return Quantity(Fraction(text))


def _text(raw: Any) -> str:
    return bytes(raw).decode() if isinstance(raw, bytes | bytearray) else str(raw)


_TAGS: dict[str, tuple[Any, type, Callable[[Any], Any], Callable[[Any], Any]]] = {
    # kind: (engine type, value class, encode value -> tag, decode tag -> value)
    "Semver": (_T.Map(_T.INT, _T.STRING), Semver, lambda v: {0: str(v)},
               lambda t: _semver(t[0])),
    "Quantity": (_T.Map(_T.BOOL, _T.STRING), Quantity, lambda v: {True: str(v.value)},
                 lambda t: _quantity(t[True])),
    "IP": (_T.Map(_T.INT, _T.BYTES), IP, lambda v: {0: str(v).encode()},
           lambda t: IP.parse(_text(t[0]))),
    "CIDR": (_T.Map(_T.BOOL, _T.BYTES), CIDR, lambda v: {True: str(v).encode()},
             lambda t: CIDR.parse(_text(t[True]))),
    "URL": (_T.Map(_T.STRING, _T.BYTES), URL, lambda v: {"u": str(v).encode()},
            lambda t: URL(_text(t["u"]))),
    "Format": (_T.Map(_T.BOOL, _T.List(_T.STRING)), NamedFormat, lambda v: {True: [v.name]},
               lambda t: NamedFormat(t[True][0])),
}
_ENGINE_NAMES = {  # the engine's spelling of each tag type, and upstream's name for it
    "map(int, string)": "kubernetes.Semver", "map(bool, string)": "kubernetes.Quantity",
    "map(int, bytes)": "net.IP", "map(bool, bytes)": "net.CIDR",
    "map(string, bytes)": "kubernetes.URL", "map(bool, list(string))": "kubernetes.NamedFormat",
}
_BY_CLASS = {cls: encode for _, cls, encode, _ in _TAGS.values()}
_PRIMITIVE = {"string": _T.STRING, "int": _T.INT, "uint": _T.UINT, "double": _T.DOUBLE,
              "bool": _T.BOOL, "bytes": _T.BYTES, "dyn": _T.DYN}


def _engine_type(kind: str) -> Any:
    if kind in _PRIMITIVE:
        return _PRIMITIVE[kind]
    if kind in _TAGS:
        return _TAGS[kind][0]
    if kind.startswith("list("):
        return _T.List(_engine_type(kind[5:-1]))
    if kind.startswith("map("):
        k, v = kind[4:-1].split(", ", 1)
        return _T.Map(_engine_type(k), _engine_type(v))
    raise ValueError(f"unknown kind {kind}")


def to_engine(value: Any) -> Any:
    """A library result (or device value) as the engine carries it."""
    encode = _BY_CLASS.get(type(value))
    if encode is not None:
        return encode(value)
    if isinstance(value, list):
        return [to_engine(v) for v in value]
    if isinstance(value, dict):
        return {k: to_engine(v) for k, v in value.items()}
    return value


def from_engine(value: Any) -> Any:
    """An engine result as plain Python with the value types of `fakeapi.cel.values`."""
    if isinstance(value, dict):
        if len(value) == 1:
            (key, inner), = value.items()
            for kind, (_, _, _, decode_tag) in _TAGS.items():
                if _tag_shape(kind, key, inner):
                    return decode_tag(value)
        return {k: from_engine(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_engine(v) for v in value]
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _tag_shape(kind: str, key: Any, inner: Any) -> bool:
    is_bool = isinstance(key, bool)
    text = isinstance(inner, str)
    raw = isinstance(inner, bytes | bytearray)
    return {
        "Semver": key == 0 and not is_bool and text, "Quantity": is_bool and text,
        "IP": key == 0 and not is_bool and raw, "CIDR": is_bool and raw,
        "URL": key == "u" and raw, "Format": is_bool and isinstance(inner, list),
    }[kind]


def _runtime_kind(kind: str) -> str:
    """What the engine's runtime dispatches on: tags and maps are all `map`, lists `list`."""
    if kind in _TAGS or kind.startswith("map("):
        return "map"
    return "list" if kind.startswith("list(") else kind


def _callback(overloads: list[Overload]) -> Callable[..., Any]:
    """One implementation for the overloads the runtime can't tell apart: decode the tags,
    pick the overload by the values."""
    def call(*args: Any) -> Any:
        values = [from_engine(a) for a in args]
        o = pick(overloads, values)
        if o is None:
            raise ValueError("no such overload")
        try:
            return to_engine(o.impl(*values))
        except LibraryError as e:
            raise ValueError(str(e)) from None
    return call


def _declare(fn: Function) -> Any:
    groups: dict[tuple[Any, ...], list[Overload]] = {}
    for o in fn.overloads:
        groups.setdefault((o.member, *map(_runtime_kind, o.params)), []).append(o)
    decls = []
    for o in fn.overloads:
        group = groups[(o.member, *map(_runtime_kind, o.params))]
        impl = {"impl": _callback(group)} if group[0] is o else {}
        decls.append(_cel.Overload(o.id, _engine_type(o.result),
                                   [_engine_type(p) for p in o.params], is_member=o.member,
                                   **impl))
    return _cel.FunctionDecl(fn.name, decls)


def _format_constants() -> list[Any]:
    out = []
    for name in FORMAT_NAMES:
        value = {True: [name]}
        out.append(_cel.FunctionDecl(f"format.{name}", [_cel.Overload(
            f"format.{name}", _TAGS["Format"][0], [], impl=lambda v=value: v)]))
    return out


# ----- environments ------------------------------------------------------------------------

_EXTENSIONS = """name: dra
extensions:
  - name: optional
  - name: bindings
  - name: strings
    version: 2
  - name: lists
    version: 2
  - name: sets
  - name: two-var-comprehensions
"""

_DEVICE_VARS = {
    "driver": _T.STRING,
    "attributes": _T.Map(_T.STRING, _T.Map(_T.STRING, _T.DYN)),
    "capacity": _T.Map(_T.STRING, _T.Map(_T.STRING, _TAGS["Quantity"][0])),
    "allowMultipleAllocations": _T.BOOL,
}


@functools.lru_cache(maxsize=8)
def _env(features: Features) -> Any:
    fields = analysis.device_fields(features)
    variables = {"device": _T.Map(_T.STRING, _T.DYN)}
    variables.update({f"device_{f}": _DEVICE_VARS[f] for f in fields})
    decls = [_declare(f) for f in KUBERNETES] + _format_constants()
    if features.list_attributes:
        decls.append(_declare(DRA_INCLUDES))
    return _cel.NewEnv(config=_cel.NewEnvConfigFromYaml(_EXTENSIONS), variables=variables,
                       functions=decls)


_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    return _cel.NewEnv(config=_cel.NewEnvConfigFromYaml(_EXTENSIONS))


# ----- compile -----------------------------------------------------------------------------


class _CppProgram:
    """The engine's expression and the activation variables it reads."""

    def __init__(self, expr: Any, variables: tuple[str, ...]) -> None:
        self.expr = expr
        self.variables = variables


def compile_program(expression: str, purpose: str, features: Features) -> Program | list[CelError]:
    """Parse, rewrite typed device fields, type-check, validate; a Program or the errors."""
    env = _env(features)
    fields = analysis.device_fields(features)
    try:
        with _lock:
            parsed = decode(_parser().compile(expression, disable_check=True).serialize())
    except RuntimeError as e:
        return [CelError("compilation failed: " + engine_message(str(e)))]
    reserved = [n for n in walk(parsed.root) if n.kind == "ident" and n.name in _RESERVED]
    if reserved and not _binds_reserved(parsed):
        return [CelError("compilation failed: " + "\n".join(analysis.format_issue(
            parsed, expression, n, f"undeclared reference to '{n.name}' (in container '')")
            for n in reserved))]
    rewritten = _typed_fields(parsed, expression, fields) if not reserved else expression
    try:
        with _lock:
            expr = env.compile(rewritten)
    except RuntimeError as e:
        return [CelError("compilation failed: " + _restore(engine_message(str(e)), rewritten,
                                                            expression))]
    try:
        ast = decode(expr.serialize())
    except (ValueError, IndexError, KeyError) as e:  # pragma: no cover - engine contract
        return [CelError(f"unexpected compilation error: {e}", "internal")]
    issues = [analysis.format_issue(ast, expression, node, message)
              for node, message in (*analysis.field_issues(ast, fields),
                                    *analysis.literal_issues(ast))]
    if issues:
        return [CelError("compilation failed: " + "\n".join(_rename(i) for i in issues))]
    ast.source = expression  # the user's text, not the rewritten one
    return analysis.finish(ast, purpose=purpose, features=features,
                           output_type=_rename(_type_name(expr.return_type().name())),
                           handle=_CppProgram(expr, _variables(ast)), engine=NAME)


_RESERVED = frozenset(f"device_{f}" for f in _DEVICE_VARS)


def _binds_reserved(parsed: CheckedAst) -> bool:
    """Whether a comprehension names its variable like one of ours (then it shadows ours)."""
    return any(n.kind == "comprehension" and _RESERVED & {
        n.comp.get(k) for k in ("iter_var", "iter_var2", "accu_var")} for n in walk(parsed.root))


def _typed_fields(parsed: CheckedAst, expression: str, fields: tuple[str, ...]) -> str:
    """`device.driver` → `device_driver` wherever it is a plain field selection."""
    chars = list(expression)
    for node in walk(parsed.root):
        if not analysis.is_device_field(node, fields) or node.test_only:
            continue
        assert node.target is not None
        dot, start = parsed.offset(node), parsed.offset(node.target)
        if (expression[start:dot] == "device" and expression[dot] == "."
                and expression[dot + 1:dot + 1 + len(node.name)] == node.name):
            chars[dot] = "_"
    return "".join(chars)


def _restore(message: str, rewritten: str, original: str) -> str:
    """Put the user's source lines back into an issue printed for the rewritten text."""
    for new, old in zip(rewritten.split("\n"), original.split("\n"), strict=True):
        if new != old:
            message = message.replace(" | " + new, " | " + old)
    return re.sub(r"\bdevice_(driver|attributes|capacity|allowMultipleAllocations)\b",
                  r"device.\1", message) if "undeclared reference" not in message else message


def _variables(ast: CheckedAst) -> tuple[str, ...]:
    names = {n.name for n in walk(ast.root) if n.kind == "ident"
             and (n.name == "device" or n.name.startswith("device_"))}
    return tuple(sorted(names))


def _type_name(engine: str) -> str:
    """cel-go spelling of an engine type name (`MAP<INT, STRING>` → `map(int, string)`)."""
    engine = engine.strip()
    for prefix, name in (("LIST<", "list"), ("MAP<", "map")):
        if engine.startswith(prefix) and engine.endswith(">"):
            inner = _split_type_args(engine[len(prefix):-1])
            return f"{name}({', '.join(_type_name(p) for p in inner)})"
    if engine.endswith(">") and "<" in engine:  # optional_type<dyn>
        head, _, args = engine[:-1].partition("<")
        return f"{head}({', '.join(_type_name(p) for p in _split_type_args(args))})"
    return {"BOOL": "bool", "INT": "int", "UINT": "uint", "DOUBLE": "double",
            "STRING": "string", "BYTES": "bytes", "DYN": "dyn", "NULL": "null_type",
            "TIMESTAMP": "google.protobuf.Timestamp",
            "DURATION": "google.protobuf.Duration"}.get(engine, engine.lower())


def _split_type_args(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return parts


def _rename(text: str) -> str:
    for engine, kube in _ENGINE_NAMES.items():
        text = text.replace(engine, kube)
    return text


def engine_message(text: str) -> str:
    """Strip cel-cpp's status decorations so the text reads like cel-go's issues.String()."""
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    text = re.sub(r"\s*\[[A-Z_]+\]$", "", text)
    return _rename(text)


# ----- evaluate ----------------------------------------------------------------------------


def _prepared(device: DeviceInput) -> dict[str, Any]:
    found = device.prepared.get(NAME)
    if found is None:
        found = device.prepared[NAME] = to_engine(device.data)
    return found


def evaluate(program: Program, device: DeviceInput) -> Any:
    """Evaluate for one device; the result with the value types of `fakeapi.cel.values`."""
    compiled: _CppProgram = program._expr
    data = _prepared(device)
    missing = [d for d in program.domains if d not in data["attributes"]
               or d not in data["capacity"]]
    if program.dynamic_domains:
        missing.append(device.driver)
    if missing:
        data = {**data, "attributes": dict(data["attributes"]), "capacity": dict(data["capacity"])}
        for d in missing:
            data["attributes"].setdefault(d, {})
            data["capacity"].setdefault(d, {})
    activation = {v: data if v == "device" else data[v[7:]] for v in compiled.variables}
    try:
        result = compiled.expr.eval(data=activation)
    except RuntimeError as e:  # a few engine errors (iteration budget) raise instead
        raise eval_error(runtime_message(str(e))) from None
    if result.type() == _T.ERROR:
        raise eval_error(runtime_message(str(result.value())))
    return from_engine(result.plain_value())


_RUNTIME = (
    (re.compile(r'^NOT_FOUND: Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"^UNKNOWN: No matching overloads found.*"), "no such overload"),
    (re.compile(r"^\w+: divide by zero$"), "division by zero"),
    (re.compile(r"^\w+: modulus by zero$"), "modulus by zero"),
    (re.compile(r"^\w+: integer overflow$"), "integer overflow"),
    (re.compile(r"^UNKNOWN: Index error: index=(-?\d+) size=(\d+)$"),
     r"index '\1' out of range in list size '\2'"),
    (re.compile(r"^INTERNAL: Iteration budget exceeded.*"),
     "operation cancelled: actual cost limit exceeded"),
)


def runtime_message(text: str) -> str:
    """cel-go wording for the engine's runtime errors."""
    for pattern, replacement in _RUNTIME:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return engine_message(text)


# ----- the admission environment (ValidatingAdmissionPolicy) ---------------------------------


@functools.lru_cache(maxsize=16)
def _admission_env(variables: tuple[str, ...]) -> Any:
    decls = [_declare(f) for f in KUBERNETES] + _format_constants()
    return _cel.NewEnv(config=_cel.NewEnvConfigFromYaml(_EXTENSIONS),
                       variables={name: _T.DYN for name in variables}, functions=decls)


def compile_admission(expression: str, variables: tuple[str, ...]
                      ) -> AdmissionProgram | list[CelError]:
    """Parse and type-check an expression over dynamically typed `variables`."""
    try:
        with _lock:
            expr = _admission_env(variables).compile(expression)
    except RuntimeError as e:
        return [CelError("compilation failed: " + engine_message(str(e)))]
    return AdmissionProgram(expression=expression, engine=NAME, _expr=expr,
                            output_type=_rename(_type_name(expr.return_type().name())))


def evaluate_admission(program: AdmissionProgram, activation: dict[str, Any]) -> Any:
    """Evaluate with plain JSON values for the variables; the plain result."""
    try:
        result = program._expr.eval(data={k: to_engine(v) for k, v in activation.items()})
    except RuntimeError as e:
        raise eval_error(runtime_message(str(e))) from None
    if result.type() == _T.ERROR:
        raise eval_error(runtime_message(str(result.value())))
    return from_engine(result.plain_value())
