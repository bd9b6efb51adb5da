"""The container shell's parser: bash source to a tree of commands.

Words keep their source text (quotes, `$(...)`, `${...}`, `$((...))` and backquotes
included); `shell_expand` expands them when they run. What the interpreter lacks (arrays,
`coproc`, `select`, process substitution, C-style `for ((...))`) is a `ParseError` naming it.
"""

from __future__ import annotations

import dataclasses
import re

from kubelet_emu.shell_base import NOT_SUPPORTED


class ParseError(Exception):
    """A syntax error, or a construct the interpreter lacks; `line` is where."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


# ----- nodes -------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, kw_only=True)
class Redirect:
    """`[fd]op target`: op one of < > >> <<< << (a here-document's body in `target`) >& <&."""

    fd: int
    op: str
    target: str
    quoted_heredoc: bool = False


@dataclasses.dataclass(frozen=True, kw_only=True)
class Simple:
    """A simple command: assignments, words, redirections."""

    assigns: tuple[tuple[str, str, bool], ...]  # (name, raw value, +=)
    words: tuple[str, ...]
    redirects: tuple[Redirect, ...]
    line: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Compound:
    """A compound command with the redirections written after it."""

    body: Node
    redirects: tuple[Redirect, ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pipeline:
    """`[!] a | b | c`."""

    commands: tuple[Node, ...]
    negate: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class AndOr:
    """`a && b || c`: the first pipeline, then (operator, pipeline) pairs."""

    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Sequence:
    """Lists separated by `;`, newlines or `&` (background: True)."""

    items: tuple[tuple[AndOr, bool], ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class If:
    """`if c; then b; elif c; then b; else e; fi`."""

    branches: tuple[tuple[Sequence, Sequence], ...]
    orelse: Sequence | None


@dataclasses.dataclass(frozen=True, kw_only=True)
class Loop:
    """`while c; do b; done`, or `until` (until: True)."""

    cond: Sequence
    body: Sequence
    until: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class For:
    """`for name in words; do body; done` (words None: the positional parameters)."""

    name: str
    words: tuple[str, ...] | None
    body: Sequence


@dataclasses.dataclass(frozen=True, kw_only=True)
class Case:
    """`case word in pat|pat) body;; esac`."""

    word: str
    arms: tuple[tuple[tuple[str, ...], Sequence], ...]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Group:
    """`{ list; }`, or `( list )` (subshell: True)."""

    body: Sequence
    subshell: bool


@dataclasses.dataclass(frozen=True, kw_only=True)
class FuncDef:
    """`name() { ...; }` or `function name { ...; }`."""

    name: str
    body: Node


@dataclasses.dataclass(frozen=True, kw_only=True)
class CondTest:
    """`[[ ... ]]`: its items, words and operators (&& || ! ( ) stay operators)."""

    items: tuple[str, ...]
    line: int


@dataclasses.dataclass(frozen=True, kw_only=True)
class Arith:
    """`(( expression ))`."""

    expr: str
    line: int


Node = Simple | Compound | Pipeline | AndOr | Sequence | If | Loop | For | Case | Group | \
    FuncDef | CondTest | Arith


# ----- tokens ------------------------------------------------------------------------------

@dataclasses.dataclass(kw_only=True)
class Tok:
    """A word (kind 'w'), an operator ('op'), a here-document ('doc'), `((...))` ('arith')."""

    kind: str
    text: str
    line: int
    fd: int = -1
    quoted: bool = False


OPS = ("<<<", "<<-", ";;", "&&", "||", ">>", "<<", ">&", "<&", "&>", ">|", ";", "&", "|",
       "(", ")", "<", ">", "\n")
META = set(" \t\n;&|<>()")
RESERVED = {"if", "then", "elif", "else", "fi", "do", "done", "while", "until", "for", "in",
            "case", "esac", "{", "}", "!", "[[", "]]", "function", "select", "coproc"}


class _ShellLexer:
    """Splits a script into tokens, reading here-document bodies at their newline."""

    def __init__(self, src: str) -> None:
        self.src = src
        self.i = 0
        self.line = 1
        self.pending_docs: list[Tok] = []

    def error(self, message: str) -> ParseError:
        return ParseError(message, self.line)

    def tokens(self) -> list[Tok]:
        out: list[Tok] = []
        src = self.src
        while True:
            while self.i < len(src) and src[self.i] in " \t":
                self.i += 1
            if self.i >= len(src):
                break
            c = src[self.i]
            if c == "\\" and src.startswith("\\\n", self.i):
                self.i += 2
                self.line += 1
                continue
            if c == "#":
                while self.i < len(src) and src[self.i] != "\n":
                    self.i += 1
                continue
            if src.startswith("((", self.i) and (not out or out[-1].kind == "op" or
                                                 out[-1].text in RESERVED):
                out.append(self._arith())
                continue
            if src.startswith(("<(", ">("), self.i):
                raise self.error(f"process substitution {NOT_SUPPORTED}")
            op = next((o for o in OPS if src.startswith(o, self.i)), None)
            if op is not None:
                self.i += len(op)
                tok = Tok(kind="op", text=op, line=self.line)
                if op == "\n":
                    self.line += 1
                    out.append(tok)
                    self._read_docs()
                    continue
                out.append(tok)
                if op in ("<<", "<<-"):
                    out.append(self._heredoc(strip=op == "<<-"))
                continue
            word = self._regex() if out and out[-1].text == "=~" else self._word()
            if re.fullmatch(r"[0-9]", word) and self.i < len(src) and src[self.i] in "<>":
                op = next(o for o in OPS if src.startswith(o, self.i))
                self.i += len(op)
                out.append(Tok(kind="op", text=op, line=self.line, fd=int(word)))
                if op in ("<<", "<<-"):
                    out.append(self._heredoc(strip=op == "<<-"))
                continue
            out.append(Tok(kind="w", text=word, line=self.line))
        if self.pending_docs:
            self._read_docs()
        return out

    def _arith(self) -> Tok:
        depth, j = 0, self.i + 2
        while j < len(self.src):
            if self.src.startswith("))", j) and depth == 0:
                tok = Tok(kind="arith", text=self.src[self.i + 2:j], line=self.line)
                self.line += self.src.count("\n", self.i, j)
                self.i = j + 2
                return tok
            depth += {"(": 1, ")": -1}.get(self.src[j], 0)
            j += 1
        raise self.error("unexpected EOF while looking for matching `))'")

    def _heredoc(self, *, strip: bool) -> Tok:
        while self.i < len(self.src) and self.src[self.i] in " \t":
            self.i += 1
        raw = self._word()
        delim = re.sub(r"""['"\\]""", "", raw)
        tok = Tok(kind="doc", text=delim, line=self.line, quoted=delim != raw,
                  fd=1 if strip else 0)
        self.pending_docs.append(tok)
        return tok

    def _read_docs(self) -> None:
        for tok in self.pending_docs:
            body: list[str] = []
            while True:
                if self.i >= len(self.src):
                    break
                end = self.src.find("\n", self.i)
                end = len(self.src) if end < 0 else end
                line = self.src[self.i:end]
                self.i = end + 1
                self.line += 1
                if tok.fd == 1:
                    line = line.lstrip("\t")
                if line == tok.text:
                    break
                body.append(line + "\n")
            tok.text = "".join(body)
        self.pending_docs = []

    def _regex(self) -> str:
        """The right side of `[[ a =~ re ]]`: parentheses and `|` are the regex's own."""
        start, depth = self.i, 0
        while self.i < len(self.src):
            c = self.src[self.i]
            if c in " \t\n" and depth == 0:
                break
            depth += {"(": 1, ")": -1}.get(c, 0)
            self._skip_one()
        return self.src[start:self.i]

    def _word(self) -> str:
        start = self.i
        src = self.src
        while self.i < len(src) and src[self.i] not in META:
            c = src[self.i]
            if c == "=" and src.startswith("=(", self.i) and \
                    re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?", src[start:self.i]):
                raise self.error(f"arrays {NOT_SUPPORTED}")
            self._skip_one()
        return src[start:self.i]

    def _skip_one(self) -> None:
        """Step over one unit of a word: a character, an escape, a quoted or $-part."""
        src = self.src
        c = src[self.i]
        if c == "\\":
            self.i += 2
        elif c == "'":
            end = src.find("'", self.i + 1)
            if end < 0:
                raise self.error("unexpected EOF while looking for matching `''")
            self.line += src.count("\n", self.i, end)
            self.i = end + 1
        elif c == '"':
            self.i += 1
            while self.i < len(src) and src[self.i] != '"':
                if src[self.i] in "$`\\":
                    self._skip_one()
                else:
                    self.line += src[self.i] == "\n"
                    self.i += 1
            if self.i >= len(src):
                raise self.error("unexpected EOF while looking for matching `\"'")
            self.i += 1
        elif c == "`":
            end = self.i + 1
            while end < len(src) and src[end] != "`":
                end += 2 if src[end] == "\\" else 1
            if end >= len(src):
                raise self.error("unexpected EOF while looking for matching ``'")
            self.i = end + 1
        elif c == "$" and src.startswith(("$(", "${"), self.i):
            self._skip_nested(src[self.i + 1], ")" if src[self.i + 1] == "(" else "}")
        else:
            self.line += c == "\n"
            self.i += 1

    def _skip_nested(self, open_: str, close: str) -> None:
        self.i += 2
        depth = 1
        while self.i < len(self.src):
            c = self.src[self.i]
            if c == close:
                depth -= 1
                self.i += 1
                if depth == 0:
                    return
                continue
            if c == open_:
                depth += 1
                self.i += 1
                continue
            if c == "#" and open_ == "(" and self.src[self.i - 1] in " \t\n":
                while self.i < len(self.src) and self.src[self.i] != "\n":
                    self.i += 1
                continue
            self._skip_one()
        raise self.error(f"unexpected EOF while looking for matching `{close}'")


# ----- the parser ---------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=(.*)", re.S)


class _ShellParser:
    """Recursive descent over the tokens of one script."""

    def __init__(self, src: str) -> None:
        self.toks = _ShellLexer(src).tokens()
        self.pos = 0

    def peek(self) -> Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def line(self) -> int:
        tok = self.peek()
        return tok.line if tok else (self.toks[-1].line if self.toks else 1)

    def error(self, tok: Tok | None = None) -> ParseError:
        tok = tok or self.peek()
        if tok is None:
            return ParseError("syntax error: unexpected end of file", self.line())
        text = "newline" if tok.text == "\n" else tok.text
        return ParseError(f"syntax error near unexpected token `{text}'", tok.line)

    def is_word(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "w" and tok.text in texts

    def is_op(self, *texts: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "op" and tok.text in texts

    def expect_word(self, text: str) -> None:
        if not self.is_word(text):
            raise self.error()
        self.pos += 1

    def newlines(self) -> None:
        while self.is_op("\n"):
            self.pos += 1

    def program(self) -> tuple[list[tuple[AndOr, bool]], ParseError | None]:
        """The top-level commands up to the first error, and the error (None: all parsed)."""
        items: list[tuple[AndOr, bool]] = []
        try:
            while True:
                while self.is_op("\n", ";"):
                    if self.is_op(";"):
                        raise self.error()
                    self.pos += 1
                if self.peek() is None:
                    return items, None
                node = self.and_or()
                background = self.is_op("&")
                if self.is_op(";", "&"):
                    self.pos += 1
                elif not self.is_op("\n") and self.peek() is not None:
                    raise self.error()
                items.append((node, background))
        except ParseError as e:
            return items, e

    def sequence(self, *stops: str) -> Sequence:
        """A list up to one of the reserved words `stops` (or `)`, `;;`)."""
        items: list[tuple[AndOr, bool]] = []
        self.newlines()
        while self.peek() is not None and not self.is_word(*stops) and \
                not self.is_op(")", ";;"):
            node = self.and_or()
            background = self.is_op("&")
            if self.is_op(";", "&", "\n"):
                self.pos += 1
            items.append((node, background))
            self.newlines()
        if not items:
            raise self.error()
        return Sequence(items=tuple(items))

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.is_op("&&", "||"):
            op = self.toks[self.pos].text
            self.pos += 1
            self.newlines()
            rest.append((op, self.pipeline()))
        return AndOr(first=first, rest=tuple(rest))

    def pipeline(self) -> Pipeline:
        negate = False
        if self.is_word("!"):
            negate = True
            self.pos += 1
        commands = [self.command()]
        while self.is_op("|"):
            self.pos += 1
            self.newlines()
            commands.append(self.command())
        return Pipeline(commands=tuple(commands), negate=negate)

    def command(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise self.error()
        body: Node
        if tok.kind == "arith":
            self.pos += 1
            body = Arith(expr=tok.text, line=tok.line)
        elif tok.kind == "op" and tok.text == "(":
            self.pos += 1
            inner = self.sequence()
            if not self.is_op(")"):
                raise self.error()
            self.pos += 1
            body = Group(body=inner, subshell=True)
        elif tok.kind == "w" and tok.text in ("select", "coproc"):
            raise ParseError(f"{tok.text}: {NOT_SUPPORTED}", tok.line)
        elif tok.kind == "w" and tok.text in _COMPOUND:
            self.pos += 1
            body = _COMPOUND[tok.text](self)
        elif tok.kind == "w" and tok.text == "function":
            self.pos += 1
            return self.function(self._name())
        elif tok.kind == "w" and _NAME.fullmatch(tok.text) and self.pos + 2 < len(self.toks) \
                and self.toks[self.pos + 1].text == "(" and self.toks[self.pos + 2].text == ")":
            self.pos += 3
            return self.function(tok.text)
        else:
            return self.simple()
        return Compound(body=body, redirects=self.redirects()) if self.at_redirect() else body

    def _name(self) -> str:
        tok = self.peek()
        if tok is None or tok.kind != "w" or not _NAME.fullmatch(tok.text):
            raise self.error()
        self.pos += 1
        return tok.text

    def function(self, name: str) -> FuncDef:
        if self.is_op("("):
            self.pos += 1
            if not self.is_op(")"):
                raise self.error()
            self.pos += 1
        self.newlines()
        return FuncDef(name=name, body=self.command())

    def at_redirect(self) -> bool:
        return self.is_op("<", ">", ">>", "<<<", "<<", "<<-", ">&", "<&", "&>", ">|")

    def redirects(self) -> tuple[Redirect, ...]:
        out: list[Redirect] = []
        while self.at_redirect():
            out.append(self.redirect())
        return tuple(out)

    def redirect(self) -> Redirect:
        tok = self.toks[self.pos]
        self.pos += 1
        target = self.peek()
        if target is None or target.kind not in ("w", "doc"):
            raise self.error(target)
        self.pos += 1
        op = {">|": ">", "<<-": "<<"}.get(tok.text, tok.text)
        fd = tok.fd if tok.fd >= 0 else (0 if op[0] == "<" else 1)
        return Redirect(fd=fd, op=op, target=target.text, quoted_heredoc=target.quoted)

    def simple(self) -> Simple:
        line = self.line()
        assigns: list[tuple[str, str, bool]] = []
        words: list[str] = []
        redirects: list[Redirect] = []
        while True:
            tok = self.peek()
            if tok is None:
                break
            if self.at_redirect():
                redirects.append(self.redirect())
                continue
            if tok.kind != "w":
                break
            m = _ASSIGN.fullmatch(tok.text)
            if m and not words:
                assigns.append((m.group(1), m.group(3), m.group(2) == "+"))
            else:
                words.append(tok.text)
            self.pos += 1
        if not (assigns or words or redirects):
            raise self.error()
        return Simple(assigns=tuple(assigns), words=tuple(words), redirects=tuple(redirects),
                      line=line)

    # compound commands, after their first word

    def if_(self) -> If:
        branches = []
        while True:
            cond = self.sequence("then")
            self.expect_word("then")
            body = self.sequence("elif", "else", "fi")
            branches.append((cond, body))
            if self.is_word("elif"):
                self.pos += 1
                continue
            orelse = None
            if self.is_word("else"):
                self.pos += 1
                orelse = self.sequence("fi")
            self.expect_word("fi")
            return If(branches=tuple(branches), orelse=orelse)

    def loop(self, until: bool) -> Loop:
        cond = self.sequence("do")
        return Loop(cond=cond, body=self.do_group(), until=until)

    def do_group(self) -> Sequence:
        self.newlines()
        self.expect_word("do")
        body = self.sequence("done")
        self.expect_word("done")
        return body

    def for_(self) -> For:
        if self.peek() is not None and self.toks[self.pos].kind == "arith":
            raise ParseError(f"for ((...)): {NOT_SUPPORTED}", self.line())
        name = self._name()
        words: tuple[str, ...] | None = None
        self.newlines()
        if self.is_word("in"):
            self.pos += 1
            collected = []
            while self.peek() is not None and self.toks[self.pos].kind == "w":
                collected.append(self.toks[self.pos].text)
                self.pos += 1
            words = tuple(collected)
        if self.is_op(";", "\n"):
            self.pos += 1
        return For(name=name, words=words, body=self.do_group())

    def case(self) -> Case:
        tok = self.peek()
        if tok is None or tok.kind != "w":
            raise self.error()
        self.pos += 1
        self.newlines()
        self.expect_word("in")
        arms = []
        self.newlines()
        while not self.is_word("esac"):
            if self.is_op("("):
                self.pos += 1
            patterns = []
            while True:
                pat = self.peek()
                if pat is None or pat.kind != "w":
                    raise self.error()
                patterns.append(pat.text)
                self.pos += 1
                if self.is_op("|"):
                    self.pos += 1
                    continue
                break
            if not self.is_op(")"):
                raise self.error()
            self.pos += 1
            self.newlines()
            body = Sequence(items=()) if self.is_op(";;") or self.is_word("esac") else \
                self.sequence("esac")
            arms.append((tuple(patterns), body))
            if self.is_op(";;"):
                self.pos += 1
            self.newlines()
        self.pos += 1
        return Case(word=tok.text, arms=tuple(arms))

    def brace(self) -> Group:
        body = self.sequence("}")
        self.expect_word("}")
        return Group(body=body, subshell=False)

    def cond(self) -> CondTest:
        line = self.line()
        items: list[str] = []
        while not self.is_word("]]"):
            tok = self.peek()
            if tok is None or tok.text == "\n":
                raise self.error(tok)
            items.append(tok.text)
            self.pos += 1
        self.pos += 1
        return CondTest(items=tuple(items), line=line)


_COMPOUND = {
    "if": _ShellParser.if_, "while": lambda p: p.loop(False), "until": lambda p: p.loop(True),
    "for": _ShellParser.for_, "case": _ShellParser.case, "{": _ShellParser.brace,
    "[[": _ShellParser.cond,
}


def parse(src: str) -> tuple[list[tuple[AndOr, bool]], ParseError | None]:
    """A script's top-level commands up to its first syntax error, and that error."""
    try:
        parser = _ShellParser(src)
    except ParseError as e:
        return [], e
    return parser.program()
