"""Conditions in the container shell: `test`/`[` over expanded arguments and `[[ ]]` over
words with patterns (`==` globs, `=~` regular expressions), string, integer and file tests."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from kubelet_emu.shell_base import CommandError, FileSystem, unsupported

CONDITIONAL_OPERATORS = frozenset({"&&", "||", "!", "(", ")"})
_UNARY = frozenset({"-z", "-n", "-f", "-d", "-e", "-s", "-r", "-w", "-x", "-L", "-h", "-p",
                    "-S", "-b", "-c", "-t", "-v", "-o"})
_INTEGER = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__,
            "-gt": int.__gt__, "-ge": int.__ge__}
_BINARY = frozenset({"=", "==", "!=", "<", ">", "=~", "-nt", "-ot", "-ef", *_INTEGER})


@dataclasses.dataclass(frozen=True, kw_only=True)
class Item:
    """An operand (its text, and its text as a pattern) or an operator."""

    text: str
    regex: str
    operator: bool = False


def full_match(rx: str, text: str) -> bool:
    """Whether a pattern's regex matches the whole text."""
    return re.fullmatch(rx, text, re.S) is not None


class _Eval:
    def __init__(self, items: list[Item], *, fs: FileSystem, path: Callable[[str], str],
                 bracket: bool) -> None:
        self.items = items
        self.pos = 0
        self.fs = fs
        self.path = path
        self.bracket = bracket
        self.name = "[" if bracket else "test"
        self.and_op, self.or_op = ("-a", "-o") if bracket else ("&&", "||")

    def op(self, *texts: str) -> bool:
        if self.pos >= len(self.items):
            return False
        item = self.items[self.pos]
        return item.text in texts and (item.operator or self.bracket)

    def take(self) -> Item:
        if self.pos >= len(self.items):
            raise CommandError(f"{self.name}: argument expected", 2)
        self.pos += 1
        return self.items[self.pos - 1]

    def or_(self) -> bool:
        return self.chain(self.or_op, self.and_, any)

    def and_(self) -> bool:
        return self.chain(self.and_op, self.not_, all)

    def chain(self, op: str, operand: Callable[[], bool],
              combine: Callable[[list[bool]], bool]) -> bool:
        """Operands joined by one operator (every operand is evaluated, as test does)."""
        values = [operand()]
        while self.op(op):
            self.pos += 1
            values.append(operand())
        return combine(values)

    def not_(self) -> bool:
        if self.op("!") and self.pos + 1 < len(self.items):
            self.pos += 1
            return not self.not_()
        return self.primary()

    def primary(self) -> bool:
        if self.op("(") and self.pos + 1 < len(self.items):
            self.pos += 1
            value = self.or_()
            if not self.op(")"):
                raise CommandError(f"{self.name}: `)' expected", 2)
            self.pos += 1
            return value
        first = self.take()
        nxt = self.items[self.pos] if self.pos < len(self.items) else None
        if nxt is not None and nxt.text in _BINARY and not nxt.operator:
            self.pos += 1
            return self.binary(first, nxt.text, self.take())
        if first.text in _UNARY and nxt is not None and not (
                self.bracket and nxt.text in (")", "-a", "-o") and self.pos + 1 < len(self.items)):
            self.pos += 1
            return self.unary(first.text, nxt.text)
        return first.text != ""

    def unary(self, op: str, arg: str) -> bool:
        if op == "-z":
            return arg == ""
        if op == "-n":
            return arg != ""
        if op in ("-v", "-o", "-t"):
            raise unsupported(f"{self.name} {op}")
        path = self.path(arg) if arg else ""
        if not path:
            return False
        if op == "-f":
            return self.fs.read(path) is not None and not self.fs.is_dir(path)
        if op == "-d":
            return self.fs.is_dir(path)
        if op == "-s":
            return bool(self.fs.read(path)) or self.fs.is_dir(path)
        if op in ("-e", "-r", "-w", "-x"):
            return self.fs.exists(path)
        return False  # no links, pipes, sockets or devices on the emulated filesystem

    def binary(self, left: Item, op: str, right: Item) -> bool:
        if op in _INTEGER:
            return _INTEGER[op](self.integer(left.text), self.integer(right.text))
        if op in ("=", "=="):
            return left.text == right.text if self.bracket else full_match(right.regex,
                                                                           left.text)
        if op == "!=":
            return left.text != right.text if self.bracket else not full_match(right.regex,
                                                                               left.text)
        if op == "<":
            return left.text < right.text
        if op == ">":
            return left.text > right.text
        if op == "=~":
            try:
                return re.search(right.text, left.text) is not None
            except re.error:
                raise CommandError(f"{right.text}: invalid regular expression", 2) from None
        raise unsupported(f"{self.name} {op}")

    def integer(self, text: str) -> int:
        try:
            return int(text.strip())
        except ValueError:
            raise CommandError(f"{self.name}: {text}: integer expression expected", 2) from None


def _run(ev: _Eval) -> int:
    if not ev.items:
        return 1
    value = ev.or_()
    if ev.pos < len(ev.items):
        raise CommandError(f"{ev.name}: too many arguments", 2)
    return 0 if value else 1


def test(args: list[str], fs: FileSystem, path: Callable[[str], str], *, bracket: bool) -> int:
    """`test ARGS` / `[ ARGS ]`: 0 true, 1 false (2 for an error, which is raised)."""
    items = [Item(text=a, regex=re.escape(a)) for a in args]
    ev = _Eval(items, fs=fs, path=path, bracket=True)
    ev.name = "[" if bracket else "test"
    if len(args) == 1:
        return 0 if args[0] else 1
    return _run(ev)


def conditional(items: list[Item], fs: FileSystem, path: Callable[[str], str]) -> int:
    """`[[ ... ]]`: 0 true, 1 false."""
    return _run(_Eval(items, fs=fs, path=path, bracket=False))
