"""Worst-case cost of a CEL expression, in the spirit of cel-go's `checker.CostEstimator`.

Neither engine estimates cost, so this walks the expression tree with the sizes upstream
declares for the `device` variable (attribute strings and lists of at most 64, 32 attributes
per domain) and returns an upper bound, compared with upstream's limit of 1,000,000.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from fractions import Fraction

from fakeapi.cel.ast import CheckedAst, Node

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


class Estimator:
    """Walks a tree once; `total()` is the worst-case cost."""

    def __init__(self, ast: CheckedAst) -> None:
        self.ast = ast

    def total(self) -> int:
        # `device_<field>` is how the cel-expr-python engine compiles `device.<field>`
        scope = {"device": _DEVICE, **{f"device_{k}": v for k, v in _DEVICE.fields}}
        cost, _ = self.visit(self.ast.root, scope)
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
        return self._literal(10, [], node.args, scope)

    def _struct(self, node: Node, scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        keys = [k for k, _ in node.entries if k is not None]
        return self._literal(30, keys, [v for _, v in node.entries], scope)

    def _literal(self, base: int, keys: list[Node], items: list[Node],
                 scope: dict[str, _Shape]) -> tuple[int, _Shape]:
        """A list or map literal: creation cost plus its parts; sized by its biggest item."""
        cost = base + sum(self.visit(k, scope)[0] for k in keys)
        shapes = []
        for item in items:
            c, shape = self.visit(item, scope)
            cost += c
            shapes.append(shape)
        biggest = max(shapes, key=lambda s: s.size, default=_Shape(0))
        return cost, _Shape(len(items), biggest)

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
