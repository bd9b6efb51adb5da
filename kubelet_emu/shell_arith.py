"""bash arithmetic (`$((...))`, `((...))`, `let`): 64-bit integers, C's operators with
bash's precedence, variables by name, assignment and ++/--."""

from __future__ import annotations

import re
from collections.abc import Callable

from kubelet_emu.shell_base import CommandError

_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|[0-9]+#[0-9a-zA-Z]+|[0-9]+|[A-Za-z_][A-Za-z0-9_]*|"
                    r"\+\+|--|<<=|>>=|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|"
                    r"[-+*/%<>=!~&|^?:(),])")
_BINARY = [  # lowest first
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", "<=", ">", ">="),
    ("<<", ">>"), ("+", "-"), ("*", "/", "%"), ("**",),
]
_ASSIGN_OPS = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")


def _wrap(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


class _Arithmetic:
    """Evaluates one expression over the shell's variables (`get`/`set` by name)."""

    def __init__(self, expr: str, *, get: Callable[[str], str | None],
                 set_: Callable[[str, str], None]) -> None:
        self.expr = expr
        self.get = get
        self.set = set_
        self.toks: list[str] = []
        pos = 0
        text = expr.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self.error(text[pos:].strip())
            self.toks.append(m.group(1))
            pos = m.end()
        self.pos = 0

    def error(self, token: str, what: str = "syntax error: operand expected") -> CommandError:
        return CommandError(f"{self.expr.strip()}: {what} (error token is \"{token}\")",
                            fatal=True)

    def value(self) -> int:
        """The expression's value (0 for an empty one)."""
        if not self.toks:
            return 0
        v = self.comma()
        if self.pos < len(self.toks):
            raise self.error(" ".join(self.toks[self.pos:]), "syntax error in expression")
        return v

    def peek(self) -> str:
        return self.toks[self.pos] if self.pos < len(self.toks) else ""

    def take(self) -> str:
        tok = self.peek()
        if not tok:
            raise self.error("")
        self.pos += 1
        return tok

    def comma(self) -> int:
        v = self.assign()
        while self.peek() == ",":
            self.pos += 1
            v = self.assign()
        return v

    def assign(self) -> int:
        tok = self.peek()
        if re.fullmatch(r"[A-Za-z_]\w*", tok) and self.pos + 1 < len(self.toks) and \
                self.toks[self.pos + 1] in _ASSIGN_OPS:
            self.pos += 1
            op = self.take()
            rhs = self.assign()
            v = rhs if op == "=" else self.binary(op[:-1], self.var(tok), rhs)
            self.set(tok, str(v))
            return v
        return self.ternary()

    def ternary(self) -> int:
        cond = self.level(0)
        if self.peek() != "?":
            return cond
        self.pos += 1
        yes = self.assign()
        if self.take() != ":":
            raise self.error(self.peek(), "expected `:'")
        no = self.assign()
        return yes if cond else no

    def level(self, n: int) -> int:
        if n == len(_BINARY):
            return self.unary()
        left = self.level(n + 1)
        while self.peek() in _BINARY[n]:
            op = self.take()
            if op == "&&" and not left:
                self._skip(n + 1)
                left = 0
                continue
            if op == "||" and left:
                self._skip(n + 1)
                left = 1
                continue
            right = self.level(n + 1) if op != "**" else self.level(n)
            left = self.binary(op, left, right)
        return left

    def _skip(self, n: int) -> None:
        """Parse the short-circuited side without its assignments."""
        saved = self.set
        self.set = lambda name, value: None
        try:
            self.level(n)
        finally:
            self.set = saved

    def binary(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%") and b == 0:
            raise self.error(str(b), "division by 0")
        result = {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
            "/": lambda: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
            "%": lambda: abs(a) % abs(b) * (1 if a >= 0 else -1),
            "**": lambda: a ** b if b >= 0 else 0, "<<": lambda: a << (b & 63),
            ">>": lambda: a >> (b & 63), "&": lambda: a & b, "|": lambda: a | b,
            "^": lambda: a ^ b, "<": lambda: int(a < b), "<=": lambda: int(a <= b),
            ">": lambda: int(a > b), ">=": lambda: int(a >= b), "==": lambda: int(a == b),
            "!=": lambda: int(a != b), "&&": lambda: int(bool(a and b)),
            "||": lambda: int(bool(a or b)),
        }[op]()
        return _wrap(result)

    def unary(self) -> int:
        tok = self.take()
        if tok in ("+", "-", "!", "~"):
            v = self.unary()
            return {"+": v, "-": _wrap(-v), "!": int(not v), "~": ~v}[tok]
        if tok in ("++", "--"):
            name = self.take()
            v = self.var(name) + (1 if tok == "++" else -1)
            self.set(name, str(v))
            return v
        if tok == "(":
            v = self.comma()
            if self.take() != ")":
                raise self.error(self.peek(), "missing `)'")
            return v
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            v = self.var(tok)
            if self.peek() in ("++", "--"):
                self.set(tok, str(v + (1 if self.take() == "++" else -1)))
            return v
        return self.number(tok)

    def number(self, tok: str) -> int:
        try:
            if "#" in tok:
                base, digits = tok.split("#", 1)
                return _wrap(int(digits, int(base)))
            if tok.lower().startswith("0x"):
                return _wrap(int(tok, 16))
            if len(tok) > 1 and tok.startswith("0"):
                return _wrap(int(tok, 8))
            return _wrap(int(tok))
        except ValueError:
            raise self.error(tok, "value too great for base") from None

    def var(self, name: str) -> int:
        text = (self.get(name) or "").strip()
        if not text:
            return 0
        if re.fullmatch(r"-?[0-9]+", text):
            return _wrap(int(text))
        return _Arithmetic(text, get=self.get, set_=self.set).value()


def evaluate(expr: str, get: Callable[[str], str | None],
             set_: Callable[[str, str], None]) -> int:
    """The value of an arithmetic expression whose `$` expansions are already done."""
    return _Arithmetic(expr, get=get, set_=set_).value()
