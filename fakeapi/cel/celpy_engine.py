"""The second engine: cel-python (`celpy`), pure Python, for where cel-expr-python won't install.

celpy parses and interprets but does not type-check. This engine converts celpy's parse
tree into the same `Node` tree the other engine decodes, so the static checks (device
fields, undeclared names, literal validators, typed-field comparisons, result type), the
cost estimate and domain padding are shared. Evaluation runs celpy's interpreter with the
Kubernetes libraries and the strings/lists/sets extensions from `fakeapi.cel.library`,
`cel.bind` and namespaced functions (`sets.contains`) added. What celpy can't do (optional
types, two-variable comprehensions, most compile-time type errors) is listed in the README.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import celpy.celtypes as ct
import lark
import lark.exceptions
from celpy import evaluation as ev
from celpy.celparser import CELParseError, CELParser

from fakeapi.cel import analysis, model
from fakeapi.cel.ast import CheckedAst, Node, walk
from fakeapi.cel.library import (
    DRA_INCLUDES,
    FORMAT_NAMES,
    KUBERNETES,
    LIST_INDEX,
    LISTS_EXT,
    SETS_EXT,
    STRINGS_EXT,
    Function,
    Overload,
    format_errors,
    pick,
    same,
    to_string,
)
from fakeapi.cel.model import CelError, DeviceInput, Features, Program, eval_error
from fakeapi.cel.values import CIDR, IP, URL, LibraryError, NamedFormat, Semver

NAME = "cel-python"

_NAMESPACES = ("cel", "sets", "lists", "strings", "ip", "format", "optional", "math")
_MACROS = ("all", "exists", "exists_one", "map", "filter")
_BUILTINS = ("size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double",
             "string", "bytes", "bool", "duration", "timestamp", "dyn", "type", "has",
             "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear",
             "getMonth", "getHours", "getMilliseconds", "getMinutes", "getSeconds")


# ----- values between celpy and the library ------------------------------------------------

def to_plain(v: Any) -> Any:
    """A celpy value as plain Python (Kubernetes values pass through)."""
    if isinstance(v, ct.BoolType):
        return bool(v)
    if isinstance(v, ct.IntType | ct.UintType):
        return int(v)
    if isinstance(v, ct.DoubleType):
        return float(v)
    if isinstance(v, ct.StringType):
        return str(v)
    if isinstance(v, ct.BytesType):
        return bytes(v)
    if isinstance(v, ct.ListType | list):
        return [to_plain(x) for x in v]
    if isinstance(v, ct.MapType | dict):
        return {to_plain(k): to_plain(x) for k, x in v.items()}
    return v


def to_cel(v: Any) -> Any:
    """Plain Python as celpy values (Kubernetes values stay opaque objects)."""
    if isinstance(v, bool):
        return ct.BoolType(v)
    if isinstance(v, int):
        return ct.IntType(v)
    if isinstance(v, float):
        return ct.DoubleType(v)
    if isinstance(v, str):
        return ct.StringType(v)
    if isinstance(v, bytes):
        return ct.BytesType(v)
    if isinstance(v, list):
        return ct.ListType([to_cel(x) for x in v])
    if isinstance(v, dict):
        return ct.MapType({to_cel(k): to_cel(x) for k, x in v.items()})
    return v


class _DomainMap(ct.MapType):
    """Same as upstream's newStringInterfaceMapWithDefault: an unknown domain is `{}`."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return ct.MapType.__getitem__(self, key)
        except KeyError:
            return ct.MapType()


def _device(device: DeviceInput) -> Any:
    found = device.prepared.get(NAME)
    if found is None:
        d = device.data
        found = device.prepared[NAME] = ct.MapType({
            ct.StringType("driver"): ct.StringType(d["driver"]),
            ct.StringType("attributes"): _DomainMap(to_cel(d["attributes"])),
            ct.StringType("capacity"): _DomainMap(to_cel(d["capacity"])),
            ct.StringType("allowMultipleAllocations"): ct.BoolType(d["allowMultipleAllocations"]),
        })
    return found


# ----- the function table -------------------------------------------------------------------

def _dispatcher(name: str, overloads: list[Overload]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        values = [to_plain(a) for a in args]
        o = pick(overloads, values)
        if o is None:
            return ev.CELEvalError("no such overload", TypeError, ())
        try:
            return to_cel(o.impl(*values))
        except LibraryError as e:
            return ev.CELEvalError(str(e), LibraryError, ())
    call.__name__ = name
    return call


def _equality(negate: bool) -> Callable[[Any, Any], Any]:
    """CEL's heterogeneous equality (`"a" == 1` is false, `1 == 1.0` true), which celpy lacks."""
    def call(a: Any, b: Any) -> Any:
        for v in (a, b):
            if isinstance(v, ev.CELEvalError):
                return v
        return ct.BoolType(same(to_plain(a), to_plain(b)) != negate)
    return call


def _ordering(name: str, base: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Same as upstream's CrossTypeNumericComparisons: int, uint and double compare."""
    def call(a: Any, b: Any) -> Any:
        x, y = to_plain(a), to_plain(b)
        if (isinstance(x, int | float) and isinstance(y, int | float)
                and not isinstance(x, bool) and not isinstance(y, bool)):
            return ct.BoolType({"_<_": x < y, "_<=_": x <= y, "_>_": x > y,
                                "_>=_": x >= y}[name])
        return base(a, b)
    return call


def _string_fn(*args: Any) -> Any:
    if len(args) == 1 and isinstance(args[0], Semver | IP | CIDR | URL | ct.BoolType | list):
        return ct.StringType(to_string(to_plain(args[0])))
    return ev.base_functions["string"](*args)


def _format_validate(fmt: Any, text: Any) -> Any:
    if not isinstance(fmt, NamedFormat):
        return ev.CELEvalError("no such overload", TypeError, ())
    errors = format_errors(fmt, str(text))
    return _Optional(to_cel(errors) if errors else None)


def _format_named(name: Any) -> Any:
    return _Optional(NamedFormat(str(name)) if str(name) in FORMAT_NAMES else None)


class _Optional:
    """Just enough of an optional for the format library: hasValue, value, orValue."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _opt_method(kind: str) -> Callable[..., Any]:
    def call(opt: Any, *args: Any) -> Any:
        if not isinstance(opt, _Optional):
            return ev.CELEvalError("no such overload", TypeError, ())
        if kind == "hasValue":
            return ct.BoolType(opt.value is not None)
        if kind == "value":
            if opt.value is None:
                return ev.CELEvalError("optional.none() dereference", ValueError, ())
            return opt.value
        return opt.value if opt.value is not None else args[0]
    return call


@functools.lru_cache(maxsize=8)
def _functions(features: Features) -> dict[str, Any]:
    table: dict[str, list[Overload]] = {}
    fns: list[Function] = [*KUBERNETES, *LIST_INDEX, *STRINGS_EXT, *LISTS_EXT, *SETS_EXT]
    if features.list_attributes:
        fns.append(DRA_INCLUDES)
    for fn in fns:
        table.setdefault(fn.name, []).extend(fn.overloads)
    out: dict[str, Any] = {name: _dispatcher(name, ovs) for name, ovs in table.items()}
    out["string"] = _string_fn
    out["_==_"], out["_!=_"] = _equality(False), _equality(True)
    for op in ("_<_", "_<=_", "_>_", "_>=_"):
        out[op] = _ordering(op, ev.base_functions[op])
    for name in FORMAT_NAMES:
        out[f"format.{name}"] = lambda n=name: NamedFormat(n)
    out["format.named"] = _format_named
    out["validate"] = _format_validate
    for kind in ("hasValue", "value", "orValue"):
        out[kind] = _opt_method(kind)
    return out


# ----- the evaluator: celpy's, plus cel.bind and namespaced functions ----------------------

class _Evaluator(ev.Evaluator):
    """celpy's interpreter with `cel.bind(x, init, body)` and `ns.function(args)` calls."""

    def sub_evaluator(self, ast: lark.Tree) -> ev.Evaluator:
        return _Evaluator(ast, activation=self.activation)

    def member_index(self, tree: lark.Tree) -> Any:
        container, index = self.visit_children(tree)
        if isinstance(container, list) and isinstance(index, int) \
                and not isinstance(index, bool) and not -1 < index < len(container):
            return ev.CELEvalError(f"index '{index}' out of range in list size "
                                   f"'{len(container)}'", IndexError, ())
        return super().member_index(tree)

    def member_dot_arg(self, tree: lark.Tree) -> Any:
        namespace = _namespace(tree.children[0])
        if namespace is None and str(tree.children[1]) == "min" and len(tree.children) == 2:
            target = self.visit(tree.children[0])  # celpy's own `min` is a macro; ours isn't
            if isinstance(target, ev.CELEvalError):
                return target
            return self.activation.resolve_function("min")(target)
        if namespace is None:
            return super().member_dot_arg(tree)
        method = str(tree.children[1])
        args = list(tree.children[2].children) if len(tree.children) > 2 else []
        if namespace == "cel" and method == "bind":
            var = _ident_name(args[0])
            init = self.visit(args[1])
            if isinstance(init, ev.CELEvalError):
                return init
            return self.sub_evaluator(args[2]).evaluate({var: init})
        values = [self.visit(a) for a in args]
        for v in values:
            if isinstance(v, ev.CELEvalError):
                return v
        try:
            fn = self.activation.resolve_function(f"{namespace}.{method}")
        except KeyError:
            return ev.CELEvalError(f"undeclared reference to '{namespace}.{method}'", KeyError,
                                   ())
        return fn(*values)


def _namespace(member: Any) -> str | None:
    """The namespace name when `member` is just one of the namespace identifiers."""
    node = member
    while isinstance(node, lark.Tree) and node.data in ("member", "primary") \
            and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, lark.Tree) and node.data == "ident" and str(node.children[0]) in \
            _NAMESPACES:
        return str(node.children[0])
    return None


def _ident_name(tree: Any) -> str:
    idents = list(tree.find_data("ident")) if isinstance(tree, lark.Tree) else []
    return str(idents[0].children[0]) if idents else ""


# ----- the parse tree as a Node tree ----------------------------------------------------------

_BINARY = {
    "relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
    "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in",
    "addition_add": "_+_", "addition_sub": "_-_", "multiplication_mul": "_*_",
    "multiplication_div": "_/_", "multiplication_mod": "_%_",
}


class _Converter:
    """celpy's lark tree → `Node`s with cel-go's operator names and source offsets."""

    def __init__(self) -> None:
        self.positions: dict[int, int] = {}
        self.next_id = 0
        self.unsupported: list[tuple[Node, str]] = []

    def node(self, kind: str, at: Any, **kw: Any) -> Node:
        self.next_id += 1
        n = Node(self.next_id, kind, **kw)
        self.positions[n.id] = _offset(at)
        return n

    def convert(self, t: Any) -> Node:
        data = t.data
        kids = [c for c in t.children if c is not None]
        if data in ("member", "primary", "paren_expr") or (
                data in ("expr", "conditionalor", "conditionaland", "relation", "addition",
                         "multiplication", "unary") and len(kids) == 1):
            return self.convert(kids[0])
        if data == "expr":
            return self.node("call", kids[0], name="_?_:_",
                             args=[self.convert(k) for k in kids])
        if data in ("conditionalor", "conditionaland"):
            name = "_||_" if data == "conditionalor" else "_&&_"
            return self.node("call", kids[0], name=name, args=[self.convert(k) for k in kids])
        if data in ("relation", "addition", "multiplication"):
            op = kids[0]
            return self.node("call", _Operator(op), name=_BINARY[op.data],
                             args=[self.convert(op.children[0]), self.convert(kids[1])])
        if data == "unary":
            name = "!_" if kids[0].data == "unary_not" else "-_"
            return self.node("call", t, name=name, args=[self.convert(kids[1])])
        if data == "member_dot":
            return self.node("select", kids[1], name=str(kids[1]), target=self.convert(kids[0]))
        if data == "member_dot_arg":
            return self.method(t, kids)
        if data == "member_index":
            return self.node("call", t, name="_[_]",
                             args=[self.convert(kids[0]), self.convert(kids[1])])
        if data == "literal":
            return self.node("const", t, value=to_plain(_literal(t)))
        if data in ("ident", "dot_ident"):
            return self.node("ident", t, name=str(kids[0]))
        if data in ("ident_arg", "dot_ident_arg"):
            args = [self.convert(a) for a in (kids[1].children if len(kids) > 1 else [])]
            if str(kids[0]) == "has" and len(args) == 1 and args[0].kind == "select":
                args[0].test_only = True
                return args[0]
            return self.node("call", t, name=str(kids[0]), args=args)
        if data == "list_lit":
            return self.node("list", t, args=[self.convert(a) for a in
                                              (kids[0].children if kids else [])])
        if data == "map_lit":
            items = [self.convert(a) for a in (kids[0].children if kids else [])]
            return self.node("struct", t, entries=list(zip(items[::2], items[1::2],
                                                           strict=True)))
        if data == "member_object":
            n = self.node("struct", t, name="message")
            self.unsupported.append((n, "message construction is not supported"))
            return n
        raise ValueError(f"unexpected parse node {data}")  # pragma: no cover

    def method(self, t: Any, kids: list[Any]) -> Node:
        name = str(kids[1])
        args = list(kids[2].children) if len(kids) > 2 else []
        namespace = _namespace(kids[0])
        if namespace == "cel" and name == "bind" and len(args) == 3:
            var = _ident_name(args[0])
            n = self.node("comprehension", kids[1], name="cel.bind")
            n.comp = {"iter_var": "#unused", "range": self.node("list", t), "accu_var": var,
                      "init": self.convert(args[1]), "cond": self.node("const", t, value=False),
                      "step": self.node("ident", t, name=var), "result": self.convert(args[2])}
            return n
        if namespace is not None:
            return self.node("call", kids[1], name=f"{namespace}.{name}",
                             args=[self.convert(a) for a in args])
        target = self.convert(kids[0])
        if name in _MACROS and args:
            if len(args) != 2:
                n = self.node("call", kids[1], name=name, target=target)
                self.unsupported.append((n, "two-variable comprehensions are not supported by "
                                            "the cel-python engine"))
                return n
            var = _ident_name(args[0])
            n = self.node("comprehension", kids[1], name=name)
            body = self.convert(args[1])
            n.comp = {"iter_var": var, "range": target, "accu_var": "__result__",
                      "init": self.node("const", t, value=name == "all"),
                      "cond": self.node("const", t, value=True), "step": body,
                      "result": self.node("ident", t, name="__result__")}
            return n
        return self.node("call", kids[1], name=name, target=target,
                         args=[self.convert(a) for a in args])


class _Operator:
    """Where a binary operator's symbol is: just before the end of its left-operand tree."""

    def __init__(self, op: Any) -> None:
        symbol = _BINARY[op.data].strip("_").replace("@in", "in")
        self.offset = op.meta.end_pos - len(symbol) if not op.meta.empty else 0


def _offset(at: Any) -> int:
    if isinstance(at, _Operator):
        return at.offset
    if isinstance(at, lark.Token):
        return (at.start_pos or 0) - (1 if at.type == "IDENT" else 0)
    meta = getattr(at, "meta", None)
    return getattr(meta, "start_pos", 0) if meta is not None and not meta.empty else 0


def _literal(t: Any) -> Any:
    return ev.Evaluator(t, ev.Activation()).literal(t)


# ----- compile -----------------------------------------------------------------------------

_parse_lock = threading.Lock()
_PARSER: CELParser | None = None


def _parse(expression: str) -> Any:
    global _PARSER
    with _parse_lock:
        if _PARSER is None:
            _PARSER = CELParser(tree_class=lark.Tree)
        return _PARSER.parse(expression)


class _CelpyProgram:
    """The parse tree and the evaluator bound to the environment's functions."""

    def __init__(self, tree: Any, features: Features) -> None:
        self.evaluator = _Evaluator(tree, ev.Activation(functions=_functions(features)))
        self.lock = threading.Lock()


def _converted(expression: str) -> tuple[Any, _Converter, CheckedAst] | list[CelError]:
    """Parse and convert to the shared tree; (parse tree, converter, AST) or the errors."""
    try:
        tree = _parse(expression)
    except CELParseError as e:
        offset = _line_offset(expression, e.line or 1, e.column or 1)
        return [CelError("compilation failed: " + analysis.format_at(
            expression, offset, "Syntax error: " + _syntax_reason(e)))]
    conv = _Converter()
    try:
        root = conv.convert(tree)
    except (ValueError, AttributeError, IndexError) as e:
        return [CelError(f"compilation failed: {e}")]
    known = {n.id: t for n in walk(root) if (t := _static_type(n)) != "dyn"}
    return tree, conv, CheckedAst(root, conv.positions, expression, known)


def _issues(ast: CheckedAst, expression: str, issues: list[tuple[Node, str]]
            ) -> list[CelError]:
    """The issues in source order as one `compilation failed` error (none: no error)."""
    if not issues:
        return []
    issues.sort(key=lambda i: ast.offset(i[0]))
    return [CelError("compilation failed: " + "\n".join(
        analysis.format_issue(ast, expression, n, m) for n, m in issues))]


def compile_program(expression: str, purpose: str, features: Features) -> Program | list[CelError]:
    """Parse and check statically; a Program or the errors."""
    converted = _converted(expression)
    if isinstance(converted, list):
        return converted
    tree, conv, ast = converted
    root = ast.root
    fields = analysis.device_fields(features)
    functions = _functions(features)
    errors = _issues(ast, expression, [
        *conv.unsupported, *analysis.field_issues(ast, fields), *analysis.literal_issues(ast),
        *_undeclared(root, functions), *_operand_mismatches(root)])
    if errors:
        return errors
    return analysis.finish(ast, purpose=purpose, features=features,
                           output_type=_static_type(root), handle=_CelpyProgram(tree, features),
                           engine=NAME)


def _syntax_reason(e: CELParseError) -> str:
    """cel-go's wording for the two syntax errors lark reports."""
    cause = e.__context__
    if isinstance(cause, lark.exceptions.UnexpectedToken):
        token = cause.token
        return f"mismatched input '{'<EOF>' if token.type == '$END' else token.value}'"
    if isinstance(cause, lark.exceptions.UnexpectedCharacters):
        return f"token recognition error at: '{cause.char}'"
    return "invalid syntax"


def _line_offset(expression: str, line: int, column: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(expression) if c == "\n"]
    return starts[min(line, len(starts)) - 1] + column - 1


def _undeclared(root: Node, functions: dict[str, Any], declared: tuple[str, ...] = ("device",)
                ) -> Iterator[tuple[Node, str]]:
    """Same as cel-go's checker: unknown identifiers and functions don't compile."""
    known = set(functions) | set(_BUILTINS)

    def visit(node: Node, scope: frozenset[str]) -> Iterator[tuple[Node, str]]:
        if node.kind == "ident" and node.name not in scope and node.name not in declared:
            yield node, f"undeclared reference to '{node.name}' (in container '')"
        if node.kind == "call" and node.name not in known and not node.name.startswith("_") \
                and node.name not in ("@in", "!_", "-_"):
            yield node, f"undeclared reference to '{node.name}' (in container '')"
        if node.kind == "comprehension":
            c = node.comp
            yield from visit(c["range"], scope)
            yield from visit(c["init"], scope)
            inner = scope | {c["iter_var"], c["accu_var"]}
            for key in ("cond", "step", "result"):
                yield from visit(c[key], inner)
            return
        if node.target is not None:
            yield from visit(node.target, scope)
        for a in node.args:
            yield from visit(a, scope)
        for k, v in node.entries:
            if k is not None:
                yield from visit(k, scope)
            yield from visit(v, scope)

    yield from visit(root, frozenset())


_FIELD_TYPES = {"driver": "string", "allowMultipleAllocations": "bool",
                "attributes": "map(string, map(string, dyn))",
                "capacity": "map(string, map(string, kubernetes.Quantity))"}
_BOOL_CALLS = {"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_&&_", "_||_", "!_", "@in",
               "matches", "startsWith", "endsWith", "contains", "includes", "isSemver",
               "isQuantity", "isGreaterThan", "isLessThan", "has", "all", "exists",
               "exists_one", "isIP", "isCIDR", "isURL", "sets.contains", "sets.equivalent",
               "sets.intersects"}
_RESULT_TYPES = {"semver": "kubernetes.Semver", "quantity": "kubernetes.Quantity",
                 "ip": "net.IP", "cidr": "net.CIDR", "url": "kubernetes.URL",
                 "size": "int", "compareTo": "int", "string": "string", "int": "int",
                 "lowerAscii": "string", "upperAscii": "string"}


def _static_type(node: Node) -> str:
    """The type cel-go's checker would give, where it is knowable without declarations."""
    if node.kind == "const":
        v = node.value
        return {bool: "bool", int: "int", float: "double", str: "string",
                bytes: "bytes", type(None): "null_type"}.get(type(v), "dyn")
    if node.kind == "select":
        if node.test_only:
            return "bool"
        if analysis.is_device_field(node):
            return _FIELD_TYPES[node.name]
        if (node.target is not None and node.target.kind == "call" and node.target.name == "_[_]"
                and analysis.is_device_field(node.target.args[0], ("capacity",))):
            return "kubernetes.Quantity"
        return "dyn"
    if node.kind == "call":
        if node.name in _BOOL_CALLS:
            return "bool"
        if node.name == "_?_:_":
            a, b = _static_type(node.args[1]), _static_type(node.args[2])
            return a if a == b else "dyn"
        return _RESULT_TYPES.get(node.name, "dyn")
    if node.kind == "comprehension":
        return "bool" if node.name in ("all", "exists", "exists_one") else (
            _static_type(node.comp["result"]) if node.name == "cel.bind" else "dyn")
    if node.kind == "list":
        kinds = {_static_type(a) for a in node.args}
        return f"list({kinds.pop()})" if len(kinds) == 1 else "list(dyn)"
    if node.kind == "struct":
        return "map(dyn, dyn)"
    return "dyn"


_SCALARS = {"int", "uint", "double", "string", "bool", "bytes", "null_type",
            "kubernetes.Semver", "kubernetes.Quantity", "net.IP", "net.CIDR", "kubernetes.URL"}
_NUMBERS = {"int", "uint", "double"}
_ORDERING = {"_<_", "_<=_", "_>_", "_>=_"}
_OPERATORS = {"_==_", "_!=_", "_+_", "_-_", "_*_", "_/_", "_%_"} | _ORDERING


def _operand_mismatches(root: Node) -> Iterator[tuple[Node, str]]:
    """`device.driver == 1`, `1 + "a"`: both operand types known, no overload matches."""
    for node in walk(root):
        if node.kind != "call" or node.name not in _OPERATORS or len(node.args) != 2:
            continue
        a, b = (_static_type(x) for x in node.args)
        if a == b or not {a, b} <= _SCALARS:
            continue
        if node.name in _ORDERING and {a, b} <= _NUMBERS:
            continue  # same as upstream's CrossTypeNumericComparisons
        yield node, f"found no matching overload for '{node.name}' applied to '({a}, {b})'"


# ----- evaluate ----------------------------------------------------------------------------

def evaluate(program: Program, device: DeviceInput) -> Any:
    """Evaluate for one device; plain Python with the value types of `fakeapi.cel.values`."""
    return _evaluated(program._expr, {"device": _device(device)})


def _evaluated(compiled: _CelpyProgram, activation: dict[str, Any]) -> Any:
    """Run a compiled program on celpy values; the plain result, or `CelEvalError`."""
    with compiled.lock:
        try:
            result = compiled.evaluator.evaluate(activation)
        except ev.CELEvalError as e:
            raise eval_error(_runtime_message(e)) from None
        except (RecursionError, ZeroDivisionError, OverflowError, TypeError) as e:
            raise eval_error(_runtime_message(ev.CELEvalError(str(e), type(e), ()))) from None
    if isinstance(result, _Optional):
        raise eval_error("optional values are not supported by the cel-python engine")
    if isinstance(result, ev.CELEvalError):
        raise eval_error(_runtime_message(result))
    return to_plain(result)


def _runtime_message(e: ev.CELEvalError) -> str:
    """cel-go wording for celpy's runtime errors."""
    message = str(e.args[0]) if e.args else "evaluation error"
    cause = e.args[1] if len(e.args) > 1 else None
    detail = e.args[2] if len(e.args) > 2 else ()
    if message.startswith("no such member in mapping: "):
        return "no such key: " + message.split(": ", 1)[1].strip("'")
    if message == "no such key" and detail:
        return f"no such key: {to_plain(detail[0])}"
    if cause is ZeroDivisionError or "division by zero" in message or "modulo" in message:
        return "modulus by zero" if "modulo" in message else "division by zero"
    if message == "return error for overflow" or "overflow" in message.lower():
        return "integer overflow"
    if message in ("no such overload", "no such overload on dyn") or cause is TypeError:
        return "no such overload"
    return message



# ----- the admission environment (ValidatingAdmissionPolicy) ---------------------------------


def compile_admission(expression: str, variables: tuple[str, ...]
                      ) -> model.AdmissionProgram | list[CelError]:
    """Parse and check an expression over dynamically typed `variables` (unknown names and
    functions don't compile; types are checked only where constants show them)."""
    converted = _converted(expression)
    if isinstance(converted, list):
        return converted
    tree, conv, ast = converted
    errors = _issues(ast, expression, [
        *conv.unsupported, *_undeclared(ast.root, _functions(model.DEFAULT_FEATURES), variables),
        *_operand_mismatches(ast.root)])
    if errors:
        return errors
    return model.AdmissionProgram(expression=expression, output_type=_static_type(ast.root),
                                  engine=NAME, _expr=_CelpyProgram(tree, model.DEFAULT_FEATURES))


def evaluate_admission(program: model.AdmissionProgram, activation: dict[str, Any]) -> Any:
    """Evaluate with plain JSON values for the variables; the plain result."""
    return _evaluated(program._expr, {k: to_cel(v) for k, v in activation.items()})
