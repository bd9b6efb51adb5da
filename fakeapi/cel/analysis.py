"""Static checks on an expression tree that upstream's checker and AST validators make.

- the declared `device` object: unknown fields don't compile (cel-go's object type);
- the 1.37 base environment's AST validators: homogeneous aggregate literals, and regex,
  duration and timestamp literals that must parse;
- which literal domains an expression looks up in `device.attributes` / `device.capacity`
  (an engine pads them with empty maps: upstream returns `{}` for an unknown domain).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterator

from fakeapi.cel.ast import CheckedAst, Node, walk
from fakeapi.cel.cost import Estimator
from fakeapi.cel.model import SELECTOR, CelError, Features, Program
from fakeapi.machinery.durations import is_duration

DEVICE = "device"
DEVICE_FIELDS = ("driver", "attributes", "capacity")
MULTI_ALLOC = "allowMultipleAllocations"
DOMAIN_MAPS = ("attributes", "capacity")


def device_fields(features: Features, stored: bool = False) -> tuple[str, ...]:
    """The fields of upstream's `kubernetes.DRADevice` in this environment."""
    if features.consumable_capacity or stored:
        return DEVICE_FIELDS + (MULTI_ALLOC,)
    return DEVICE_FIELDS


def is_device_field(node: Node, fields: tuple[str, ...] = DEVICE_FIELDS + (MULTI_ALLOC,)) -> bool:
    """`device.<field>` (a select of a declared field on the `device` variable)."""
    return (node.kind == "select" and node.target is not None and node.target.kind == "ident"
            and node.target.name == DEVICE and node.name in fields)


def field_issues(ast: CheckedAst, fields: tuple[str, ...]) -> Iterator[tuple[Node, str]]:
    """Same as upstream's declared `device` object type: unknown fields don't compile."""
    for node in walk(ast.root):
        if (node.kind == "select" and node.target is not None and node.target.kind == "ident"
                and node.target.name == DEVICE and node.name not in fields):
            yield node, f"undefined field '{node.name}'"
        elif (node.kind == "call" and node.name == "_?._" and len(node.args) == 2
              and node.args[0].kind == "ident" and node.args[0].name == DEVICE
              and node.args[1].value not in fields):
            yield node, f"undefined field '{node.args[1].value}'"


def format_issue(ast: CheckedAst, expression: str, node: Node, message: str) -> str:
    """`ERROR: <input>:1:8: msg` plus the source line and a caret, as cel-go prints issues."""
    return format_at(expression, ast.offset(node), message)


def format_at(expression: str, offset: int, message: str) -> str:
    """An issue at a source offset, in cel-go's `issues.String()` shape."""
    line_start = expression.rfind("\n", 0, offset) + 1
    line_no = expression.count("\n", 0, offset) + 1
    col = offset - line_start
    line_end = expression.find("\n", offset)
    text = expression[line_start:line_end if line_end >= 0 else len(expression)]
    return f"ERROR: <input>:{line_no}:{col + 1}: {message}\n | {text}\n | {'.' * col}^"


def lookup_domains(ast: CheckedAst) -> tuple[frozenset[str], bool]:
    """Literal domains indexed in device.attributes/capacity, and whether any is computed."""
    domains: set[str] = set()
    dynamic = False
    for node in walk(ast.root):
        if node.kind == "call" and node.name in ("_[_]", "_[?_]") and len(node.args) == 2:
            if _is_domain_map(node.args[0]):
                key = node.args[1]
                if key.kind == "const" and isinstance(key.value, str):
                    domains.add(key.value)
                else:
                    dynamic = True
        elif node.kind == "call" and node.name == "_?._" and len(node.args) == 2:
            if _is_domain_map(node.args[0]) and isinstance(node.args[1].value, str):
                domains.add(node.args[1].value)
        elif node.kind == "select" and node.target is not None and _is_domain_map(node.target):
            domains.add(node.name)
        elif node.kind == "comprehension" and _is_domain_map(node.comp.get("range")):
            dynamic = True  # iterating the domains themselves: keys come from the data
    return frozenset(domains), dynamic


def _is_domain_map(node: Node | None) -> bool:
    return node is not None and (
        is_device_field(node, DOMAIN_MAPS)
        or (node.kind == "ident" and node.name in (f"{DEVICE}_{f}" for f in DOMAIN_MAPS)))


# ----- the base environment's AST validators (cel.ASTValidators in k8s 1.29+) ---------------

def literal_issues(ast: CheckedAst) -> Iterator[tuple[Node, str]]:
    """ValidateRegexLiterals, Duration/TimestampLiterals and HomogeneousAggregateLiterals."""
    for node in walk(ast.root):
        if node.kind == "call":
            yield from _literal_argument(node)
        if ast.types and node.kind in ("list", "struct") and not node.name:
            if not _inside_format(ast.root, node):
                yield from _homogeneous(ast, node)


def _literal_argument(node: Node) -> Iterator[tuple[Node, str]]:
    if not node.args or node.args[0].kind != "const" or not isinstance(node.args[0].value, str):
        return
    arg, text = node.args[0], node.args[0].value
    if node.name == "matches":
        try:
            re.compile(text)
        except re.error:
            yield arg, "invalid matches argument"
    elif node.name == "duration" and node.target is None and not is_duration(text):
        yield arg, "invalid duration argument"
    elif node.name == "timestamp" and node.target is None and not _is_timestamp(text):
        yield arg, "invalid timestamp argument"


def _is_timestamp(text: str) -> bool:
    try:
        datetime.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return False
    return "T" in text or "t" in text


def _homogeneous(ast: CheckedAst, node: Node) -> Iterator[tuple[Node, str]]:
    """Same as cel-go's homogeneousAggregateLiteralValidator: one type per literal."""
    if any(n.id not in ast.types for n in node.args) or any(
            k is None or k.id not in ast.types or v.id not in ast.types for k, v in node.entries):
        return  # an engine without a checker knows only some types: judge only what it knows
    if node.kind == "list":
        first: str | None = None
        for item in node.args:
            t = ast.type_of(item)
            if first is None:
                first = t
            elif t != first:
                yield item, f"expected type '{first}' but found '{t}'"
                return
        return
    key_t: str | None = None
    val_t: str | None = None
    for key, value in node.entries:
        if key is None:
            continue
        kt, vt = ast.type_of(key), ast.type_of(value)
        if key_t is None:
            key_t, val_t = kt, vt
            continue
        if kt != key_t:
            yield key, f"expected type '{key_t}' but found '{kt}'"
        if vt != val_t:
            yield value, f"expected type '{val_t}' but found '{vt}'"


def _inside_format(root: Node, target: Node) -> bool:
    """Whether `target` is an argument of a `format()` call (exempt, as in cel-go)."""
    for node in walk(root):
        if node.kind == "call" and node.name == "format":
            if any(n is target for a in node.args for n in walk(a)):
                return True
    return False


# ----- result types ------------------------------------------------------------------------

DERIVED_SCALARS = ("bool", "int", "string", "kubernetes.Semver")


def check_output(out: str, purpose: str, features: Features) -> str:
    """Same as upstream: selectors must be bool (or dyn); derived attributes a scalar."""
    if purpose == SELECTOR:
        if out not in ("bool", "dyn"):
            return f"must evaluate to bool or the unknown type, not {out}"
        return ""
    allowed = set(DERIVED_SCALARS) | {"dyn"}
    if features.list_attributes:
        allowed |= {f"list({s})" for s in DERIVED_SCALARS} | {"list(dyn)"}
    if out not in allowed:
        kinds = ", ".join(DERIVED_SCALARS) + (
            " or a list of these" if features.list_attributes else "")
        return f"must evaluate to one of {kinds} or the unknown type, not {out}"
    return ""


def finish(ast: CheckedAst, *, purpose: str, features: Features, output_type: str,
           handle: object, engine: str) -> Program | list[CelError]:
    """The last compile steps every engine shares: the result-type rule, domains, the cost."""
    problem = check_output(output_type, purpose, features)
    if problem:
        return [CelError(problem)]
    domains, dynamic = lookup_domains(ast)
    return Program(expression=ast.source, purpose=purpose, cost=Estimator(ast).total(),
                   output_type=output_type, domains=domains, dynamic_domains=dynamic,
                   _expr=handle, engine=engine)
