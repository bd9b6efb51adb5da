"""sed and awk for the container shell, in the subset demo scripts use.

sed: `-n`, `-e`, `-E`/`-r`, `-i`; addresses (a line, `$`, `/re/`, ranges); the commands
`s///` (flags g, p, N, I), `p`, `d`, `q`. awk: `-F`, `-v`; `BEGIN`/`END`; patterns
(`/re/`, expressions); `print`, `printf`, assignments, `next`; fields, NF, NR, arithmetic,
comparisons, `~`, `&&`, `||`, `!` and concatenation. Anything else is refused by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kubelet_emu.shell_base import (
    IO,
    CommandError,
    UtilShell,
    lines_of,
    read_inputs,
    split_options,
    unsupported,
    write_lines,
)


def bre(pattern: str) -> str:
    """A POSIX basic regular expression in Python's syntax (`\\(`, `\\{`, `\\|`, `\\+` are the
    operators; bare `( ) { } | + ?` are literal)."""
    out = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out += nxt if nxt in "|+?(){}" else "\\" + nxt
            i += 2
            continue
        out += "\\" + c if c in "+?|(){}" else c
        i += 1
    return out


# ----- sed ---------------------------------------------------------------------------------

def _sed_regex(text: str, extended: bool, flags: int = 0) -> re.Pattern[str]:
    try:
        return re.compile(text if extended else bre(text), flags)
    except re.error:
        raise CommandError(f"sed: -e expression: invalid regular expression '{text}'",
                           1) from None


def _delimited(script: str, i: int) -> tuple[list[str], int]:
    """The parts of `s/a/b/` (any delimiter) from i (at the delimiter)."""
    delim = script[i]
    parts: list[str] = []
    current = ""
    i += 1
    while i < len(script) and len(parts) < 2:
        c = script[i]
        if c == "\\" and i + 1 < len(script):
            current += c + script[i + 1] if script[i + 1] != delim else delim
            i += 2
            continue
        if c == delim:
            parts.append(current)
            current = ""
        else:
            current += c
        i += 1
    if len(parts) < 2:
        raise CommandError("sed: -e expression #1: unterminated `s' command", 1)
    return parts, i


class _SedCommand:
    def __init__(self) -> None:
        self.start: Callable[[int, str, bool], bool] | None = None
        self.end: Callable[[int, str, bool], bool] | None = None
        self.active = False
        self.name = ""
        self.regex: re.Pattern[str] | None = None
        self.replacement = ""
        self.count = 1
        self.print = False

    def applies(self, number: int, line: str, last: bool) -> bool:
        if self.start is None:
            return True
        if self.end is None:
            return self.start(number, line, last)
        if self.active:
            if self.end(number, line, last):
                self.active = False
            return True
        if self.start(number, line, last):
            self.active = True
            return True
        return False


def _sed_address(script: str, i: int, extended: bool
                 ) -> tuple[Callable[[int, str, bool], bool] | None, int]:
    if i < len(script) and script[i].isdigit():
        m = re.match(r"[0-9]+", script[i:])
        assert m
        n = int(m.group(0))
        return (lambda number, line, last: number == n), i + m.end()
    if i < len(script) and script[i] == "$":
        return (lambda number, line, last: last), i + 1
    if i < len(script) and script[i] == "/":
        end = i + 1
        while end < len(script) and script[end] != "/":
            end += 2 if script[end] == "\\" else 1
        rx = _sed_regex(script[i + 1:end], extended)
        return (lambda number, line, last: rx.search(line) is not None), end + 1
    return None, i


def _sed_parse(script: str, extended: bool) -> list[_SedCommand]:
    commands = []
    i = 0
    while i < len(script):
        while i < len(script) and script[i] in " \t\n;":
            i += 1
        if i >= len(script):
            break
        cmd = _SedCommand()
        cmd.start, i = _sed_address(script, i, extended)
        if cmd.start is not None and i < len(script) and script[i] == ",":
            cmd.end, i = _sed_address(script, i + 1, extended)
        name = script[i] if i < len(script) else ""
        cmd.name = name
        i += 1
        if name == "s":
            (pattern, replacement), i = _delimited(script, i)
            m = re.match(r"[gpiI0-9]*", script[i:])
            flags = m.group(0) if m else ""
            i += len(flags)
            cmd.regex = _sed_regex(pattern, extended, re.I if "I" in flags or "i" in flags
                                   else 0)
            cmd.replacement = re.sub(r"\\([0-9])|&", lambda g: f"\\g<{g.group(1) or 0}>",
                                     replacement.replace("\\n", "\n"))
            digits = re.sub(r"[^0-9]", "", flags)
            cmd.count = 0 if "g" in flags else int(digits or 1)
            cmd.print = "p" in flags
        elif name not in ("p", "d", "q", "="):
            raise unsupported(f"sed command '{name}'")
        commands.append(cmd)
    return commands


def sed(sh: UtilShell, args: list[str], io: IO) -> int:
    """sed (see the module docstring)."""
    opts, rest = split_options(args, "ef")
    if "f" in opts:
        raise unsupported("sed -f")
    scripts = [opts["e"]] if "e" in opts else rest[:1]
    files = rest if "e" in opts else rest[1:]
    if not scripts:
        io.error("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...")
        return 1
    commands = _sed_parse(";".join(scripts), "E" in opts or "r" in opts)
    text, status = read_inputs(sh, "sed", files, io)
    lines = lines_of(text)
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        deleted = False
        for cmd in commands:
            if not cmd.applies(number, line, last):
                continue
            if cmd.name == "s" and cmd.regex is not None:
                line, n = cmd.regex.subn(cmd.replacement, line, count=cmd.count)
                if n and cmd.print:
                    out.append(line)
            elif cmd.name == "p":
                out.append(line)
            elif cmd.name == "=":
                out.append(str(number))
            elif cmd.name == "d":
                deleted = True
                break
            elif cmd.name == "q":
                if "n" not in opts:
                    out.append(line)
                _sed_write(sh, io, out, files, "i" in opts)
                return status
        if not deleted and "n" not in opts:
            out.append(line)
    _sed_write(sh, io, out, files, "i" in opts)
    return status


def _sed_write(sh: UtilShell, io: IO, out: list[str], files: list[str], in_place: bool) -> None:
    if in_place and len(files) == 1:
        sh.fs.write(sh.path(files[0]), "".join(line + "\n" for line in out))
    else:
        write_lines(io, out)


# ----- awk ---------------------------------------------------------------------------------

_AWK_TOKEN = re.compile(r'\s*(?:(?P<num>[0-9]+(?:\.[0-9]+)?)|(?P<str>"(?:\\.|[^"\\])*")|'
                        r'(?P<re>/(?:\\.|[^/\\])+/)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|'
                        r'(?P<op>\+\+|--|[-+*/%]=|==|!=|<=|>=|&&|\|\||!~|[-+*/%<>!~=(),;{}$?:]|'
                        r'\n))')


class _Awk:
    """An awk program parsed to closures over the record and the variables."""

    def __init__(self, program: str, variables: dict[str, Any]) -> None:
        self.toks: list[tuple[str, str]] = []
        pos = 0
        program = program.strip()
        while pos < len(program):
            m = _AWK_TOKEN.match(program, pos)
            if m is None or m.end() == pos:
                raise unsupported(f"awk syntax near '{program[pos:pos + 10].strip()}'")
            kind = m.lastgroup or "op"
            text = m.group(kind)
            # a / after an operand divides; elsewhere it starts a regex
            if kind == "re" and self.toks and (self.toks[-1][0] in ("num", "str", "name") or
                                               self.toks[-1][1] == ")"):
                kind, text = "op", "/"
                m = re.compile(r"\s*/").match(program, pos)
                assert m
            self.toks.append((kind, text))
            pos = m.end()
        self.pos = 0
        self.vars = variables
        self.fields: list[str] = []
        self.out: list[str] = []
        self.rules: list[tuple[str, Callable[[], bool] | None, Callable[[], None] | None]] = []
        while self.pos < len(self.toks):
            if self.peek() in (";", "\n"):
                self.pos += 1
                continue
            self.rules.append(self.rule())

    def peek(self) -> str:
        return self.toks[self.pos][1] if self.pos < len(self.toks) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.pos >= len(self.toks) or (expected and self.toks[self.pos][1] != expected):
            raise unsupported(f"awk syntax near '{self.peek() or 'end'}'")
        self.pos += 1
        return self.toks[self.pos - 1]

    def rule(self) -> tuple[str, Callable[[], bool] | None, Callable[[], None] | None]:
        if self.peek() in ("BEGIN", "END"):
            when = self.take()[1]
            return when, None, self.block()
        cond = None
        if self.peek() != "{":
            expr = self.expr()
            cond = lambda: _truth(expr())  # noqa: E731
        action = self.block() if self.peek() == "{" else None
        return "", cond, action

    def block(self) -> Callable[[], None]:
        self.take("{")
        statements = []
        while self.peek() != "}":
            if self.peek() in (";", "\n"):
                self.pos += 1
                continue
            statements.append(self.statement())
        self.take("}")

        def run() -> None:
            for s in statements:
                s()
        return run

    def statement(self) -> Callable[[], None]:
        word = self.peek()
        if word in ("print", "printf"):
            self.pos += 1
            args = []
            while self.peek() not in (";", "\n", "}", ""):
                args.append(self.expr())
                if self.peek() == ",":
                    self.pos += 1
            if word == "print":
                sep = lambda: str(self.vars.get("OFS", " "))  # noqa: E731
                return lambda: self.out.append(sep().join(
                    _text(a()) for a in args) if args else self.record())
            return lambda: self.out.append(_awk_printf([_text(a()) for a in args]))
        if word == "next":
            self.pos += 1

            def skip() -> None:
                raise _Next
            return skip
        if word in ("if", "while", "for", "function", "getline", "delete", "split", "exit"):
            raise unsupported(f"awk {word}")
        expr = self.expr()
        return lambda: None if expr() is None else None

    def record(self) -> str:
        return self.fields[0] if self.fields else ""

    # expressions, lowest precedence first

    def expr(self) -> Callable[[], Any]:
        kind, text = self.toks[self.pos] if self.pos < len(self.toks) else ("", "")
        if kind == "name" and self.pos + 1 < len(self.toks) and \
                self.toks[self.pos + 1][1] in ("=", "+=", "-=", "*=", "/=", "%="):
            self.pos += 1
            op = self.take()[1]
            value = self.expr()

            def assign() -> Any:
                v = value()
                if op != "=":
                    v = _arith(op[0], _num(self.vars.get(text, "")), _num(v))
                self.vars[text] = v
                return v
            return assign
        return self.logical()

    def logical(self) -> Callable[[], Any]:
        left = self.comparison()
        while self.peek() in ("&&", "||"):
            op = self.take()[1]
            right = self.comparison()
            left = (lambda a, b: lambda: int(_truth(a()) and _truth(b())))(left, right) \
                if op == "&&" else (lambda a, b: lambda: int(_truth(a()) or _truth(b())))(
                    left, right)
        return left

    def comparison(self) -> Callable[[], Any]:
        left = self.concat()
        if self.peek() in ("==", "!=", "<", "<=", ">", ">=", "~", "!~"):
            op = self.take()[1]
            right = self.concat()
            return lambda: _compare(op, left(), right())
        return left

    def concat(self) -> Callable[[], Any]:
        parts = [self.additive()]
        while self.pos < len(self.toks) and (self.toks[self.pos][0] in ("num", "str", "name")
                                             or self.peek() in ("$", "(", "!", "-")):
            if self.peek() == "-":
                break
            parts.append(self.additive())
        if len(parts) == 1:
            return parts[0]
        return lambda: "".join(_text(p()) for p in parts)

    def additive(self) -> Callable[[], Any]:
        left = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            right = self.term()
            left = (lambda a, b, o: lambda: _arith(o, _num(a()), _num(b())))(left, right, op)
        return left

    def term(self) -> Callable[[], Any]:
        left = self.unary()
        while self.peek() in ("*", "/", "%"):
            op = self.take()[1]
            right = self.unary()
            left = (lambda a, b, o: lambda: _arith(o, _num(a()), _num(b())))(left, right, op)
        return left

    def unary(self) -> Callable[[], Any]:
        if self.peek() == "!":
            self.pos += 1
            inner = self.unary()
            return lambda: int(not _truth(inner()))
        if self.peek() == "-":
            self.pos += 1
            inner = self.unary()
            return lambda: -_num(inner())
        return self.primary()

    def primary(self) -> Callable[[], Any]:
        kind, text = self.take()
        if kind == "num":
            value = float(text)
            return lambda: value
        if kind == "str":
            literal = _awk_string(text)
            return lambda: literal
        if kind == "re":
            rx = re.compile(text[1:-1])
            return lambda: int(rx.search(self.record()) is not None)
        if text == "(":
            inner = self.expr()
            self.take(")")
            return inner
        if text == "$":
            index = self.primary()
            return lambda: self.field(int(_num(index())))
        if kind == "name":
            if self.peek() == "(":
                return self.call(text)
            special = {"NF": lambda: len(self.fields) - 1}
            if text in special:
                return special[text]
            return lambda: self.vars.get(text, "")
        raise unsupported(f"awk syntax near '{text}'")

    def call(self, name: str) -> Callable[[], Any]:
        self.take("(")
        args = []
        while self.peek() != ")":
            args.append(self.expr())
            if self.peek() == ",":
                self.pos += 1
        self.take(")")
        functions: dict[str, Callable[[list[Any]], Any]] = {
            "length": lambda a: len(_text(a[0]) if a else self.record()),
            "toupper": lambda a: _text(a[0]).upper(), "tolower": lambda a: _text(a[0]).lower(),
            "substr": lambda a: _text(a[0])[max(int(_num(a[1])) - 1, 0):][
                :int(_num(a[2])) if len(a) > 2 else None],
            "int": lambda a: float(int(_num(a[0]))),
            "index": lambda a: _text(a[0]).find(_text(a[1])) + 1,
        }
        if name not in functions:
            raise unsupported(f"awk function {name}()")
        fn = functions[name]
        return lambda: fn([a() for a in args])

    def field(self, k: int) -> str:
        return self.fields[k] if 0 <= k < len(self.fields) else ""


class _Next(Exception):
    """awk's `next`."""


def _num(v: Any) -> float:
    if isinstance(v, float | int):
        return float(v)
    m = re.match(r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", str(v))
    return float(m.group(0)) if m else 0.0


def _text(v: Any) -> str:
    if isinstance(v, float):
        return str(int(v)) if v == int(v) and abs(v) < 1e16 else f"{v:.6g}"
    return str(v)


def _truth(v: Any) -> bool:
    return bool(v) if isinstance(v, float | int) else v != ""


def _looks_numeric(v: Any) -> bool:
    return isinstance(v, float | int) or re.fullmatch(
        r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*", str(v)) is not None


def _compare(op: str, a: Any, b: Any) -> int:
    if op in ("~", "!~"):
        hit = re.search(_text(b), _text(a)) is not None
        return int(hit == (op == "~"))
    x: Any
    y: Any
    x, y = (_num(a), _num(b)) if _looks_numeric(a) and _looks_numeric(b) else (_text(a),
                                                                               _text(b))
    return int({"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y, ">": x > y,
                ">=": x >= y}[op])


def _arith(op: str, a: float, b: float) -> float:
    if op in "/%" and b == 0:
        raise CommandError("awk: division by zero", 2)
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0,
            "%": a % b if b else 0.0}[op]


def _awk_string(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def _awk_printf(args: list[str]) -> str:
    if not args:
        return ""
    fmt, values = args[0], iter(args[1:])

    def convert(m: re.Match[str]) -> str:
        if m.group(0) == "%%":
            return "%"
        value = next(values, "")
        kind = m.group(0)[-1]
        if kind in "di":
            return (m.group(0)[:-1] + "d") % int(_num(value))
        if kind in "feg":
            return m.group(0) % _num(value)
        return (m.group(0)[:-1] + "s") % value
    return "\x00" + re.sub(r"%[-+ 0#]*[0-9]*(?:\.[0-9]+)?[disfegcx%]", convert, fmt)


def awk(sh: UtilShell, args: list[str], io: IO) -> int:
    """awk (see the module docstring)."""
    opts, rest = split_options(args, "Fvf")
    if "f" in opts:
        raise unsupported("awk -f")
    if not rest:
        io.error("usage: awk [-F fs][-v var=value][prog | -f progfile][file ...]")
        return 2
    variables: dict[str, Any] = {"OFS": " "}
    if "v" in opts:
        name, _, value = opts["v"].partition("=")
        variables[name] = value
    prog = _Awk(rest[0], variables)
    text, status = read_inputs(sh, "awk", rest[1:], io)
    sep = opts.get("F")
    for when, _, action in prog.rules:
        if when == "BEGIN" and action:
            action()
    for number, line in enumerate(lines_of(text), 1):
        variables["NR"] = float(number)
        parts = (line.split() if sep in (None, " ") else
                 re.split(re.escape(sep) if sep and len(sep) == 1 else sep or " ", line))
        prog.fields = [line, *parts]
        try:
            for when, cond, action in prog.rules:
                if when or (cond is not None and not cond()):
                    continue
                if action is None:
                    prog.out.append(line)
                else:
                    action()
        except _Next:
            continue
    for when, _, action in prog.rules:
        if when == "END" and action:
            action()
    io.out.write(_join_awk(prog.out))
    return status


def _join_awk(out: list[str]) -> str:
    """print ends its line; printf (marked with a NUL) writes exactly its text."""
    return "".join(o[1:] if o.startswith("\x00") else o + "\n" for o in out)
