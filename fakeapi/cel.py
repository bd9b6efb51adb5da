"""The DRA CEL environment behind one small interface (compile, cost, evaluate).

Mirrors upstream's `k8s.io/dynamic-resource-allocation/cel`: one variable `device` with
`driver`, `attributes[domain][id]`, `capacity[domain][id]` (a quantity) and, with consumable
capacity, `allowMultipleAllocations`; the Kubernetes `semver()`/`quantity()` libraries;
`cel.bind`; the strings extension; optional types; and, with list-type attributes,
`includes()`. An unknown domain is an empty map; a missing key is a runtime error.

The engine is cel-expr-python (Google's cel-cpp): it type-checks like cel-go, so compile errors
and the "must evaluate to bool" rule match upstream. It has no cost estimator, so this module
decodes the checked AST (a `CheckedExpr` protobuf) and estimates the worst-case cost itself,
good enough to reject pathological expressions with upstream's limit. Semver and quantity
values travel as small tagged maps because the engine can't carry opaque Python objects.
Callers never see the engine: `compile()` returns a `Program` or `CelError`s.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from cel_expr_python import cel as _cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from fakeapi.validation.quantity import canonical, from_canonical, parse_quantity

MAX_EXPRESSION_LENGTH = 10 * 1024  # same as upstream CELSelectorExpressionMaxLength
MAX_COST = 1_000_000  # same as upstream CELSelectorExpressionMaxCost (estimated and runtime)
SELECTOR = "selector"
DERIVED = "derived"

ENGINE = "cel-expr-python"


# ----- public interface ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Features:
    """The gates that change the DRA CEL environment."""

    list_attributes: bool = True  # DRAListTypeAttributes: list values and includes()
    consumable_capacity: bool = True  # DRAConsumableCapacity: device.allowMultipleAllocations


@dataclasses.dataclass(frozen=True)
class CelError:
    """A compile failure: `kind` is "invalid" (the user's fault) or "internal"."""

    detail: str
    kind: str = "invalid"


class CelEvalError(Exception):
    """A runtime error (missing key, overflow, bad function argument, non-bool result)."""


@dataclasses.dataclass(frozen=True, eq=False)
class Program:
    """A compiled, type-checked expression and what static analysis learnt about it."""

    expression: str
    purpose: str
    cost: int
    """Estimated worst-case cost (upstream compares it with `MAX_COST`)."""
    output_type: str
    domains: frozenset[str]
    """Literal domains the expression looks up in attributes/capacity (padded with {})."""
    dynamic_domains: bool
    """Whether some lookup uses a computed domain (then the driver's domain is padded too)."""
    _expr: Any = dataclasses.field(repr=False)


def compile(expression: str, *, purpose: str = SELECTOR,  # noqa: A001 - the natural name
            features: Features = Features()) -> Program | list[CelError]:
    """Compile and type-check an expression; a `Program`, or the errors upstream reports."""
    if purpose not in (SELECTOR, DERIVED):
        raise ValueError(f"unknown purpose {purpose!r}")
    result = _compile(expression, purpose, features)
    return list(result) if isinstance(result, list) else result


def estimate_cost(expression: str, *, features: Features = Features()) -> int:
    """Worst-case cost estimate of an expression (MAX_COST + 1 when it doesn't compile)."""
    result = _compile(expression, SELECTOR, features)
    return result.cost if isinstance(result, Program) else MAX_COST + 1


@dataclasses.dataclass(frozen=True, eq=False)
class DeviceInput:
    """The `device` variable for one device, built once and reused for every expression."""

    driver: str
    data: dict[str, Any]


def device_input(driver: str, device: Mapping[str, Any]) -> DeviceInput:
    """Build the CEL view of a ResourceSlice device (`spec.devices[]` entry) of `driver`.

    Attribute names without a domain get the driver as domain, like upstream.
    """
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(name, attr)
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split_name(name, driver)
        value = cap.get("value") if isinstance(cap, Mapping) else cap
        capacity.setdefault(domain, {})[ident] = _qty_tag(parse_quantity(str(value)))
    data: dict[str, Any] = {
        "driver": driver, "attributes": attributes, "capacity": capacity,
        "allowMultipleAllocations": bool(device.get("allowMultipleAllocations"))}
    return DeviceInput(driver=driver, data=data)


def evaluate(program: Program, device: DeviceInput) -> Any:
    """Evaluate a program for one device; the plain result (semver/quantity as strings)."""
    value = _eval(program, device)
    return _plain(value)


def matches(program: Program, device: DeviceInput) -> bool:
    """Evaluate a selector; its result must be a bool (upstream: else a runtime error)."""
    value = _eval(program, device)
    if not isinstance(value, bool):
        raise CelEvalError(f"CEL result of type {_py_type_name(value)} could not be converted "
                           "to bool")
    return value


# ----- values: semver and quantity as tagged maps ----------------------------------------

_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


@dataclasses.dataclass(frozen=True)
class Semver:
    """A parsed semantic version (build metadata dropped: it never affects precedence)."""

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Parse `text`; with `normalize`, accept `v1`, `1.2` and leading zeros like upstream."""
        if normalize:
            text = _normalize_semver(text)
        m = _SEMVER_RE.match(text)
        if m is None:
            raise ValueError(f"could not parse {text!r} as semver")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre)

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(self.pre) if self.pre else "")

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence."""
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:
            return 1 if not self.pre else -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else 1


def _normalize_semver(text: str) -> str:
    text = text.removeprefix("v")
    core, sep, rest = text.partition("-") if "-" in text else text.partition("+")
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    return ".".join(parts) + (sep + rest if sep else "")


def _sem_tag(v: Semver) -> dict[int, str]:
    return {0: str(v)}


def _qty_tag(v: Fraction) -> dict[str, str]:
    return {"q": canonical(v)}


def _is_sem(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and 0 in v


def _is_qty(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and "q" in v


def _sem(v: Any) -> Semver:
    return Semver.parse(v[0])


def _qty(v: Any) -> Fraction:
    return from_canonical(v["q"])


def _attribute_value(name: str, attr: Mapping[str, Any]) -> Any:
    for key in ("int", "bool", "string"):
        if key in attr:
            return attr[key]
    if "version" in attr:
        return _sem_tag(Semver.parse(attr["version"]))
    for key in ("ints", "bools", "strings"):
        if key in attr:
            return list(attr[key])
    if "versions" in attr:
        return [_sem_tag(Semver.parse(v)) for v in attr["versions"]]
    raise CelEvalError(f"attribute {name}: unsupported attribute value")


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def _plain(value: Any) -> Any:
    if _is_sem(value):
        return value[0]
    if _is_qty(value):
        return value["q"]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _py_type_name(value: Any) -> str:
    if _is_sem(value):
        return "kubernetes.Semver"
    if _is_qty(value):
        return "kubernetes.Quantity"
    return {bool: "bool", int: "int", str: "string", float: "double", list: "list",
            dict: "map", type(None): "null_type"}.get(type(value), type(value).__name__)


# ----- library functions (Python callbacks) -----------------------------------------------

def _f_semver(text: str, normalize: bool = False) -> dict[int, str]:
    try:
        return _sem_tag(Semver.parse(text, normalize))
    except ValueError:
        raise ValueError(f"semver() could not parse {text!r}: invalid semver") from None


def _f_is_semver(text: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(text, normalize)
    except ValueError:
        return False
    return True


def _f_quantity(text: str) -> dict[str, str]:
    try:
        return _qty_tag(parse_quantity(text))
    except ValueError:
        raise ValueError(f"quantity() could not parse {text!r}") from None


def _f_is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except ValueError:
        return False
    return True


def _cmp(a: Any, b: Any) -> int:
    if _is_sem(a) and _is_sem(b):
        return _sem(a).compare(_sem(b))
    if _is_qty(a) and _is_qty(b):
        x, y = _qty(a), _qty(b)
        return (x > y) - (x < y)
    raise ValueError("no such overload: comparing values of different types")


def _f_compare(a: Any, b: Any) -> int:
    return _cmp(a, b)


def _f_greater(a: Any, b: Any) -> bool:
    return _cmp(a, b) > 0


def _f_less(a: Any, b: Any) -> bool:
    return _cmp(a, b) < 0


def _f_major(a: Any) -> int:
    return _sem(a).major


def _f_minor(a: Any) -> int:
    return _sem(a).minor


def _f_patch(a: Any) -> int:
    return _sem(a).patch


def _f_is_integer(a: Any) -> bool:
    v = _qty(a)
    return v.denominator == 1 and -(2**63) <= v <= 2**63 - 1


def _f_as_integer(a: Any) -> int:
    v = _qty(a)
    if v.denominator != 1 or not -(2**63) <= v <= 2**63 - 1:
        raise ValueError("cannot convert value to integer")
    return int(v)


def _f_as_float(a: Any) -> float:
    return float(_qty(a))


def _f_sign(a: Any) -> int:
    v = _qty(a)
    return (v > 0) - (v < 0)


def _f_add(a: Any, b: Any) -> dict[str, str]:
    return _qty_tag(_qty(a) + (_qty(b) if isinstance(b, dict) else Fraction(b)))


def _f_sub(a: Any, b: Any) -> dict[str, str]:
    return _qty_tag(_qty(a) - (_qty(b) if isinstance(b, dict) else Fraction(b)))


def _f_includes(a: Any, b: Any) -> bool:
    """Same as upstream includes(): membership for a list, equality for a scalar."""
    if isinstance(a, list):
        return any(_same(x, b) for x in a)
    return _same(a, b)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    return a == b


# ----- the environment --------------------------------------------------------------------

_T = _cel.Type
_SEM = _T.Map(_T.INT, _T.STRING)
_QTY = _T.Map(_T.STRING, _T.STRING)
_O = _cel.Overload


def _decls(features: Features) -> list[Any]:
    fd = _cel.FunctionDecl
    decls = [
        fd("semver", [_O("semver_string", _SEM, [_T.STRING], impl=_f_semver),
                      _O("semver_string_bool", _SEM, [_T.STRING, _T.BOOL], impl=_f_semver)]),
        fd("isSemver", [_O("is_semver_string", _T.BOOL, [_T.STRING], impl=_f_is_semver),
                        _O("is_semver_string_bool", _T.BOOL, [_T.STRING, _T.BOOL],
                           impl=_f_is_semver)]),
        fd("quantity", [_O("quantity_string", _QTY, [_T.STRING], impl=_f_quantity)]),
        fd("isQuantity", [_O("is_quantity_string", _T.BOOL, [_T.STRING],
                             impl=_f_is_quantity)]),
        fd("major", [_O("semver_major", _T.INT, [_SEM], is_member=True, impl=_f_major)]),
        fd("minor", [_O("semver_minor", _T.INT, [_SEM], is_member=True, impl=_f_minor)]),
        fd("patch", [_O("semver_patch", _T.INT, [_SEM], is_member=True, impl=_f_patch)]),
        fd("isInteger", [_O("quantity_is_integer", _T.BOOL, [_QTY], is_member=True,
                            impl=_f_is_integer)]),
        fd("asInteger", [_O("quantity_as_integer", _T.INT, [_QTY], is_member=True,
                            impl=_f_as_integer)]),
        fd("asApproximateFloat", [_O("quantity_as_float", _T.DOUBLE, [_QTY], is_member=True,
                                     impl=_f_as_float)]),
        fd("sign", [_O("quantity_sign", _T.INT, [_QTY], is_member=True, impl=_f_sign)]),
        fd("add", [_O("quantity_add", _QTY, [_QTY, _QTY], is_member=True, impl=_f_add),
                   _O("quantity_add_int", _QTY, [_QTY, _T.INT], is_member=True, impl=_f_add)]),
        fd("sub", [_O("quantity_sub", _QTY, [_QTY, _QTY], is_member=True, impl=_f_sub),
                   _O("quantity_sub_int", _QTY, [_QTY, _T.INT], is_member=True, impl=_f_sub)]),
    ]
    for name, ret, impl in (("compareTo", _T.INT, _f_compare),
                            ("isGreaterThan", _T.BOOL, _f_greater),
                            ("isLessThan", _T.BOOL, _f_less)):
        # Both tags are maps at runtime, so one implementation serves both declarations.
        decls.append(fd(name, [
            _O(f"semver_{name}", ret, [_SEM, _SEM], is_member=True, impl=impl),
            _O(f"quantity_{name}", ret, [_QTY, _QTY], is_member=True)]))
    if features.list_attributes:
        overloads = []
        for tname, t in (("string", _T.STRING), ("int", _T.INT), ("bool", _T.BOOL),
                         ("semver", _SEM)):
            overloads.append(_O(f"{tname}_includes_{tname}", _T.BOOL, [t, t], is_member=True,
                                impl=_f_includes))
            overloads.append(_O(f"list_{tname}_includes_{tname}", _T.BOOL, [_T.List(t), t],
                                is_member=True, impl=_f_includes))
        decls.append(fd("includes", overloads))
    return decls


@functools.lru_cache(maxsize=8)
def _env(features: Features) -> Any:
    return _cel.NewEnv(
        variables={"device": _T.Map(_T.STRING, _T.DYN)},
        functions=_decls(features),
        extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(),
                    ext_optional.ExtOptional()])


_compile_lock = threading.Lock()


@functools.lru_cache(maxsize=4096)
def _compile(expression: str, purpose: str, features: Features) -> Program | list[CelError]:
    """Compile once per (expression, purpose, features); programs are immutable and shared."""
    env = _env(features)
    try:
        with _compile_lock:
            expr = env.compile(expression)
    except RuntimeError as e:
        return [CelError("compilation failed: " + _engine_message(str(e)))]
    try:
        ast = _decode_checked(expr.serialize())
    except (ValueError, IndexError, KeyError) as e:  # pragma: no cover - engine contract
        return [CelError(f"unexpected compilation error: {e}", "internal")]
    issues = list(_static_issues(ast, expression, features))
    if issues:
        return [CelError("compilation failed: " + "\n".join(issues))]
    out = _type_name(expr.return_type().name())
    if out == "dyn":
        out = _infer_device_type(ast.root)
    problem = _check_output(out, purpose, features)
    if problem:
        return [CelError(problem)]
    domains, dynamic = _lookup_domains(ast)
    return Program(expression=expression, purpose=purpose, cost=_Estimator(ast).total(),
                   output_type=out, domains=frozenset(domains), dynamic_domains=dynamic,
                   _expr=expr)


def _infer_device_type(node: Node) -> str:
    """Types the engine sees as dyn but upstream's declared `device` object knows."""
    path: list[str] = []
    while True:
        if node.kind == "select" and node.target is not None and not node.test_only:
            path.append(node.name)
            node = node.target
        elif node.kind == "call" and node.name == "_[_]" and len(node.args) == 2:
            path.append("[]")
            node = node.args[0]
        else:
            break
    if node.kind != "ident" or node.name != "device" or not path:
        return "dyn"
    path.reverse()
    known = {
        ("driver",): "string",
        ("allowMultipleAllocations",): "bool",
        ("attributes",): "map(string, map(string, dyn))",
        ("capacity",): "map(string, map(string, kubernetes.Quantity))",
        ("capacity", "[]"): "map(string, kubernetes.Quantity)",
        ("attributes", "[]"): "map(string, dyn)",
    }
    generic = tuple(p if p in ("driver", "allowMultipleAllocations", "attributes", "capacity")
                    and i == 0 else "[]" for i, p in enumerate(path))
    if generic[:1] == ("capacity",) and len(generic) == 3:
        return "kubernetes.Quantity"
    return known.get(generic, "dyn")


def _check_output(out: str, purpose: str, features: Features) -> str:
    """Same as upstream: selectors must be bool (or dyn); derived attributes a scalar."""
    if purpose == SELECTOR:
        if out not in ("bool", "dyn"):
            return f"must evaluate to bool or the unknown type, not {out}"
        return ""
    scalars = ("bool", "int", "string", "kubernetes.Semver")
    allowed = set(scalars) | {"dyn"}
    if features.list_attributes:
        allowed |= {f"list({s})" for s in scalars} | {"list(dyn)"}
    if out not in allowed:
        kinds = ", ".join(scalars) + (" or a list of these" if features.list_attributes else "")
        return f"must evaluate to one of {kinds} or the unknown type, not {out}"
    return ""


def _type_name(engine: str) -> str:
    """cel-go spelling of an engine type name (`MAP<INT, STRING>` is our Semver tag)."""
    engine = engine.strip()
    if engine == "MAP<INT, STRING>":
        return "kubernetes.Semver"
    if engine == "MAP<STRING, STRING>":
        return "kubernetes.Quantity"
    for prefix, name in (("LIST<", "list"), ("MAP<", "map")):
        if engine.startswith(prefix) and engine.endswith(">"):
            inner = _split_type_args(engine[len(prefix):-1])
            return f"{name}({', '.join(_type_name(p) for p in inner)})"
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
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _engine_message(text: str) -> str:
    """Strip cel-cpp's status decorations so the text reads like cel-go's issues.String()."""
    text = re.sub(r"^[A-Z_]+: ", "", text.strip())
    text = re.sub(r"\s*\[[A-Z_]+\]$", "", text)
    return text.replace("map(int, string)", "kubernetes.Semver").replace(
        "map(string, string)", "kubernetes.Quantity")


def _eval(program: Program, device: DeviceInput) -> Any:
    data = device.data
    missing = [d for d in program.domains if d not in data["attributes"]
               or d not in data["capacity"]]
    if program.dynamic_domains:
        missing.append(device.driver)
    if missing:
        data = {**data, "attributes": dict(data["attributes"]), "capacity": dict(data["capacity"])}
        for d in missing:
            data["attributes"].setdefault(d, {})
            data["capacity"].setdefault(d, {})
    result = program._expr.eval(data={"device": data})
    if result.type() == _T.ERROR:
        raise CelEvalError(_runtime_message(str(result.value())))
    return result.plain_value()


def _runtime_message(text: str) -> str:
    """cel-go wording for the common runtime errors (`no such key: x`)."""
    m = re.match(r'^NOT_FOUND: Key not found in map : "(.*)"$', text)
    if m:
        return f"no such key: {m.group(1)}"
    return _engine_message(text)


# ----- the checked AST (decoded from the engine's CheckedExpr protobuf) --------------------


@dataclasses.dataclass
class Node:
    """One expression node of the checked AST."""

    id: int
    kind: str  # const, ident, select, call, list, struct, comprehension
    name: str = ""  # ident name, select field, call function, comprehension iter var
    value: Any = None  # constant value
    target: Node | None = None  # select operand, call target
    args: list[Node] = dataclasses.field(default_factory=list)  # call args, list elements
    entries: list[tuple[Node | None, Node]] = dataclasses.field(default_factory=list)
    test_only: bool = False
    comp: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class CheckedAst:
    """The expression tree with the source positions needed for error messages."""

    root: Node
    positions: dict[int, int]
    source: str


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, Any]]:
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 2:
            size, i = _varint(buf, i)
            value, i = buf[i:i + size], i + size
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        yield number, wire, value


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _decode_checked(serialized: bytes) -> CheckedAst:
    body = serialized
    fields = list(_fields(serialized))
    if fields and fields[0][0] == 1 and bytes(fields[0][2]).endswith(b"CheckedExpr"):
        body = next(v for n, _, v in fields if n == 2)  # a google.protobuf.Any wrapper
    root: Node | None = None
    positions: dict[int, int] = {}
    source = ""
    for number, _, value in _fields(body):
        if number == 4:
            root = _decode_expr(value)
        elif number == 5:
            for n, _, v in _fields(value):
                if n == 4:  # map<int64, int32> positions
                    k = p = 0
                    for en, _, ev in _fields(v):
                        if en == 1:
                            k = _signed(ev)
                        elif en == 2:
                            p = _signed(ev)
                    positions[k] = p
                elif n == 2:
                    source = bytes(v).decode()
    if root is None:
        raise ValueError("checked expression without expr")
    return CheckedAst(root, positions, source)


def _decode_const(buf: bytes) -> Any:
    for n, _, v in _fields(buf):
        if n == 1:
            return None
        if n == 2:
            return bool(v)
        if n in (3, 4):
            return _signed(v) if n == 3 else v
        if n == 5:
            import struct

            return struct.unpack("<d", v)[0]
        if n == 6:
            return bytes(v).decode()
        if n == 7:
            return bytes(v)
    return None


def _decode_expr(buf: bytes) -> Node:
    node = Node(0, "const")
    for n, _, v in _fields(buf):
        if n == 2:
            node.id = _signed(v)
        elif n == 3:
            node.kind, node.value = "const", _decode_const(v)
        elif n == 4:
            node.kind = "ident"
            node.name = next((bytes(x).decode() for fn, _, x in _fields(v) if fn == 1), "")
        elif n == 5:
            node.kind = "select"
            for fn, _, x in _fields(v):
                if fn == 1:
                    node.target = _decode_expr(x)
                elif fn == 2:
                    node.name = bytes(x).decode()
                elif fn == 3:
                    node.test_only = bool(x)
        elif n == 6:
            node.kind = "call"
            for fn, _, x in _fields(v):
                if fn == 1:
                    node.target = _decode_expr(x)
                elif fn == 2:
                    node.name = bytes(x).decode()
                elif fn == 3:
                    node.args.append(_decode_expr(x))
        elif n == 7:
            node.kind = "list"
            node.args = [_decode_expr(x) for fn, _, x in _fields(v) if fn == 1]
        elif n == 8:
            node.kind = "struct"
            for fn, _, x in _fields(v):
                if fn == 2:
                    key: Node | None = None
                    val = Node(0, "const")
                    for en, _, ev in _fields(x):
                        if en == 3:
                            key = _decode_expr(ev)
                        elif en == 4:
                            val = _decode_expr(ev)
                    node.entries.append((key, val))
        elif n == 9:
            node.kind = "comprehension"
            names = {1: "iter_var", 3: "accu_var", 8: "iter_var2"}
            exprs = {2: "range", 4: "init", 5: "cond", 6: "step", 7: "result"}
            for fn, _, x in _fields(v):
                if fn in names:
                    node.comp[names[fn]] = bytes(x).decode()
                elif fn in exprs:
                    node.comp[exprs[fn]] = _decode_expr(x)
    return node


def _walk(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    yield node
    yield from _walk(node.target)
    for a in node.args:
        yield from _walk(a)
    for k, v in node.entries:
        yield from _walk(k)
        yield from _walk(v)
    for key in ("range", "init", "cond", "step", "result"):
        if key in node.comp:
            yield from _walk(node.comp[key])


_DEVICE_FIELDS = ("driver", "attributes", "capacity")


def _static_issues(ast: CheckedAst, expression: str, features: Features) -> Iterator[str]:
    """Same as upstream's declared `device` object type: unknown fields don't compile."""
    allowed = _DEVICE_FIELDS + (("allowMultipleAllocations",) if features.consumable_capacity
                                else ())
    for node in _walk(ast.root):
        if (node.kind == "select" and node.target is not None and node.target.kind == "ident"
                and node.target.name == "device" and node.name not in allowed):
            yield _format_issue(ast, expression, node.id, f"undefined field '{node.name}'")


def _format_issue(ast: CheckedAst, expression: str, node_id: int, message: str) -> str:
    """`ERROR: <input>:1:8: msg` plus the source line and a caret, as cel-go prints issues."""
    offset = ast.positions.get(node_id, 0)
    line_start = expression.rfind("\n", 0, offset) + 1
    line_no = expression.count("\n", 0, offset) + 1
    col = offset - line_start
    line_end = expression.find("\n", offset)
    text = expression[line_start:line_end if line_end >= 0 else len(expression)]
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"


def _lookup_domains(ast: CheckedAst) -> tuple[set[str], bool]:
    """Literal domains indexed in device.attributes/capacity, and whether any is computed."""
    domains: set[str] = set()
    dynamic = False
    for node in _walk(ast.root):
        if node.kind == "call" and node.name in ("_[_]", "_[?_]") and len(node.args) == 2:
            base = node.args[0]
            if (base.kind == "select" and base.name in ("attributes", "capacity")
                    and base.target is not None and base.target.kind == "ident"
                    and base.target.name == "device"):
                key = node.args[1]
                if key.kind == "const" and isinstance(key.value, str):
                    domains.add(key.value)
                else:
                    dynamic = True
        elif node.kind == "select" and node.target is not None:
            base = node.target
            if (base.kind == "select" and base.name in ("attributes", "capacity")
                    and base.target is not None and base.target.kind == "ident"
                    and base.target.name == "device"):
                domains.add(node.name)
    return domains, dynamic


# ----- cost estimation ---------------------------------------------------------------------

UNBOUNDED = 2**64  # cel-go's "unknown size": any loop over it is over every limit

_STRING_FACTOR = Fraction(1, 10)  # same as cel-go's StringTraversalCostFactor
_REGEX_FACTOR = Fraction(1, 4)  # same as cel-go's RegexStringLengthCostFactor


@dataclasses.dataclass(frozen=True)
class _Shape:
    """What the estimator knows about a value: its max size and the shape of its items."""

    size: int = UNBOUNDED
    item: _Shape | None = None
    fields: tuple[tuple[str, _Shape], ...] = ()

    def field(self, name: str) -> _Shape | None:
        for k, v in self.fields:
            if k == name:
                return v
        return self.item


_ATTR = _Shape(64)  # upstream: attribute values are at most 64 long (strings, lists)
_QTY_SHAPE = _Shape(1)
_DEVICE = _Shape(4, None, (
    ("driver", _Shape(63)),
    ("attributes", _Shape(32, _Shape(32, _ATTR))),
    ("capacity", _Shape(32, _Shape(32, _QTY_SHAPE))),
    ("allowMultipleAllocations", _Shape(1)),
))
_UNKNOWN = _Shape()


class _Estimator:
    """Worst-case cost in the spirit of cel-go's `checker.CostEstimator` (an upper bound)."""

    def __init__(self, ast: CheckedAst) -> None:
        self.ast = ast

    def total(self) -> int:
        cost, _ = self.visit(self.ast.root, {"device": _DEVICE})
        return int(min(cost, UNBOUNDED))

    def visit(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        handler: Callable[[Node, dict[str, _Shape]], tuple[int, _Shape]] = getattr(
            self, "_" + node.kind)
        return handler(node, scope)

    def _const(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        v = node.value
        size = len(v) if isinstance(v, (str, bytes)) else 1
        return 0, _Shape(size)

    def _ident(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        return 1, scope.get(node.name, _UNKNOWN)

    def _select(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        assert node.target is not None
        cost, shape = self.visit(node.target, scope)
        return cost + 1, shape.field(node.name) or _UNKNOWN

    def _list(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        cost, items = 10, []
        for a in node.args:
            c, s = self.visit(a, scope)
            cost += c
            items.append(s)
        biggest = max(items, key=lambda s: s.size, default=_Shape(0))
        return cost, _Shape(len(node.args), biggest)

    def _struct(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        cost, vals = 30, []
        for k, v in node.entries:
            if k is not None:
                cost += self.visit(k, scope)[0]
            c, s = self.visit(v, scope)
            cost += c
            vals.append(s)
        biggest = max(vals, key=lambda s: s.size, default=_Shape(0))
        return cost, _Shape(len(node.entries), biggest)

    def _comprehension(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        c = node.comp
        range_cost, range_shape = self.visit(c["range"], scope)
        init_cost, init_shape = self.visit(c["init"], scope)
        inner = dict(scope)
        if c.get("iter_var"):
            inner[c["iter_var"]] = range_shape.item or _UNKNOWN
        if c.get("iter_var2"):
            inner[c["iter_var2"]] = range_shape.item or _UNKNOWN
        inner[c.get("accu_var", "@result")] = init_shape
        cond_cost, _ = self.visit(c["cond"], inner)
        step_cost, step_shape = self.visit(c["step"], inner)
        if init_shape.size != step_shape.size and init_shape.size < UNBOUNDED:
            # accumulating (map/filter): the accumulator grows with each iteration
            grown = _Shape(min(UNBOUNDED, init_shape.size + range_shape.size),
                           step_shape.item or range_shape.item)
            inner[c.get("accu_var", "@result")] = grown
        result_cost, result_shape = self.visit(c["result"], inner)
        iterations = 0 if self._empty(c["range"]) else range_shape.size
        cost = range_cost + init_cost + iterations * (cond_cost + step_cost) + result_cost
        return min(cost, UNBOUNDED), result_shape

    @staticmethod
    def _empty(node: Node) -> bool:
        return node.kind == "list" and not node.args

    def _call(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        fn = node.name
        arg_nodes = ([node.target] if node.target is not None else []) + node.args
        visited = [self.visit(a, scope) for a in arg_nodes]
        args_cost = sum(c for c, _ in visited)
        shapes = [s for _, s in visited]
        if fn == "_?_:_":
            return visited[0][0] + max(visited[1][0], visited[2][0]), max(
                shapes[1:], key=lambda s: s.size)
        if fn in ("_&&_", "_||_", "!_", "@not_strictly_false", "@in", "_==_", "_!=_"):
            extra = 1
            if fn in ("_==_", "_!=_"):
                extra += self._traverse(min(s.size for s in shapes))
            return args_cost + extra, _Shape(1)
        if fn in ("_[_]", "_[?_]"):
            base = shapes[0]
            key = arg_nodes[1]
            item = base.field(key.value) if key.kind == "const" and isinstance(
                key.value, str) else base.item
            return args_cost + 1, item or _UNKNOWN
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            return args_cost + 1 + self._traverse(min(s.size for s in shapes)), _Shape(1)
        if fn == "_+_":
            size = min(UNBOUNDED, shapes[0].size + shapes[1].size)
            return args_cost + 1 + self._traverse(size), _Shape(size, shapes[0].item)
        if fn in ("contains", "startsWith", "endsWith", "lowerAscii", "upperAscii", "trim",
                  "replace", "split", "join", "reverse", "quote", "indexOf", "lastIndexOf",
                  "substring", "charAt", "format"):
            size = shapes[0].size if shapes else UNBOUNDED
            out = _Shape(size, _Shape(size)) if fn == "split" else _Shape(size)
            extra = sum(self._traverse(s.size) for s in shapes)
            return args_cost + 1 + extra, out
        if fn == "matches":
            return args_cost + 1 + self._traverse(shapes[0].size, _REGEX_FACTOR) * max(
                1, shapes[-1].size), _Shape(1)
        if fn == "includes":
            return min(UNBOUNDED, args_cost + 1 + shapes[0].size), _Shape(1)
        if fn in ("semver", "quantity", "isSemver", "isQuantity"):
            return args_cost + 1 + self._traverse(shapes[0].size), _Shape(1)
        if fn in ("dyn", "orValue", "optional.of", "optional.ofNonZeroValue", "value"):
            return args_cost + 1, max(shapes, key=lambda s: s.size) if shapes else _UNKNOWN
        return args_cost + 1, _Shape(1)

    @staticmethod
    def _traverse(size: int, factor: Fraction = _STRING_FACTOR) -> int:
        if size >= UNBOUNDED:
            return UNBOUNDED
        return int(-(-size * factor // 1))
