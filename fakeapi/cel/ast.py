"""The expression tree of a compiled CEL expression, decoded from cel-cpp's protobuf.

cel-expr-python hands out a compiled expression only as a serialized `CheckedExpr` (or a
`ParsedExpr` when checking is off). This module decodes just what the static checks, the
cost estimator and error positions need: nodes, source offsets and the checker's types.
Another engine can build the same `Node` tree from its own parser.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

V = TypeVar("V")


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
    types: dict[int, str] = dataclasses.field(default_factory=dict)
    """The checker's type of each node id (empty for a parsed-only expression)."""

    def type_of(self, node: Node) -> str:
        """The checked type of a node, `dyn` when unknown."""
        return self.types.get(node.id, "dyn")

    def offset(self, node: Node) -> int:
        """The node's offset in the source."""
        return self.positions.get(node.id, 0)


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


def decode(serialized: bytes) -> CheckedAst:
    """Decode a serialized `CheckedExpr` or `ParsedExpr` (optionally in a protobuf `Any`)."""
    body = serialized
    fields = list(_fields(serialized))
    parsed = False
    if fields and fields[0][0] == 1 and bytes(fields[0][2]).startswith(b"type.googleapis"):
        parsed = bytes(fields[0][2]).endswith(b"ParsedExpr")
        body = next(v for n, _, v in fields if n == 2)  # a google.protobuf.Any wrapper
    expr_field, info_field = (2, 3) if parsed else (4, 5)
    root: Node | None = None
    positions: dict[int, int] = {}
    types: dict[int, str] = {}
    source = ""
    for number, _, value in _fields(body):
        if number == expr_field:
            root = _decode_expr(value)
        elif number == info_field:
            for n, _, v in _fields(value):
                if n == 4:  # map<int64, int32> positions
                    k, p = _map_entry(v, _signed, 0)
                    positions[k] = p
                elif n == 2:
                    source = bytes(v).decode()
        elif number == 3 and not parsed:  # map<int64, Type> type_map
            k, t = _map_entry(value, decode_type, "dyn")
            types[k] = t
    if root is None:
        raise ValueError("expression without expr")
    return CheckedAst(root, positions, source, types)


def _map_entry(buf: bytes, value: Callable[[Any], V], default: V) -> tuple[int, V]:
    """One entry of a protobuf map with int64 keys."""
    key, out = 0, default
    for n, _, v in _fields(buf):
        if n == 1:
            key = _signed(v)
        elif n == 2:
            out = value(v)
    return key, out


_PRIMITIVES = {1: "bool", 2: "int", 3: "uint", 4: "double", 5: "string", 6: "bytes"}
_WELL_KNOWN = {1: "any", 2: "google.protobuf.Timestamp", 3: "google.protobuf.Duration"}


def decode_type(buf: bytes) -> str:
    """A `cel.expr.Type` as cel-go's FormatCELType spells it (`map(string, int)`)."""
    for n, _, v in _fields(buf):
        if n == 1:
            return "dyn"
        if n == 2:
            return "null_type"
        if n == 3:
            return _PRIMITIVES.get(v, "dyn")
        if n == 4:
            return f"wrapper({_PRIMITIVES.get(v, 'dyn')})"
        if n == 5:
            return _WELL_KNOWN.get(v, "dyn")
        if n == 6:
            elem = next((decode_type(x) for fn, _, x in _fields(v) if fn == 1), "dyn")
            return f"list({elem})"
        if n == 7:
            kv = {fn: decode_type(x) for fn, _, x in _fields(v)}
            return f"map({kv.get(1, 'dyn')}, {kv.get(2, 'dyn')})"
        if n == 9:
            return bytes(v).decode()
        if n == 10:
            return bytes(v).decode()
        if n == 11:
            return f"type({decode_type(v)})"
        if n == 12:
            return "*error*"
        if n == 14:
            name, params = "", []
            for fn, _, x in _fields(v):
                if fn == 1:
                    name = bytes(x).decode()
                elif fn == 2:
                    params.append(decode_type(x))
            return f"{name}({', '.join(params)})" if params else name
    return "dyn"


def _decode_const(buf: bytes) -> Any:
    for n, _, v in _fields(buf):
        if n == 1:
            return None
        if n == 2:
            return bool(v)
        if n in (3, 4):
            return _signed(v) if n == 3 else v
        if n == 5:
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
        elif n in (5, 6):  # select (operand, field, test_only) or call (target, fn, args)
            node.kind = "select" if n == 5 else "call"
            for fn, _, x in _fields(v):
                if fn == 1:
                    node.target = _decode_expr(x)
                elif fn == 2:
                    node.name = bytes(x).decode()
                elif fn == 3 and n == 5:
                    node.test_only = bool(x)
                elif fn == 3:
                    node.args.append(_decode_expr(x))
        elif n == 7:
            node.kind = "list"
            node.args = [_decode_expr(x) for fn, _, x in _fields(v) if fn == 1]
        elif n == 8:
            node.kind = "struct"
            for fn, _, x in _fields(v):
                if fn == 1:
                    node.name = bytes(x).decode()  # a message name (unused by DRA)
                elif fn == 2:
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


def walk(node: Node | None) -> Iterator[Node]:
    """Every node of a tree, parents first."""
    if node is None:
        return
    yield node
    yield from walk(node.target)
    for a in node.args:
        yield from walk(a)
    for k, v in node.entries:
        yield from walk(k)
        yield from walk(v)
    for key in ("range", "init", "cond", "step", "result"):
        if key in node.comp:
            yield from walk(node.comp[key])


