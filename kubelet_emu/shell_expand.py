"""Word expansion in the container shell, in bash's order: tilde, parameters (`$X`, `${X}`,
`${X:-d}` and the other `${...}` forms), `$((...))`, `$(...)` and backquotes, then field
splitting of what was unquoted, pathname globs on the emulated filesystem, quote removal.

Expansion is a generator because a command substitution runs commands, which may sleep
on the emulated clock; it yields those steps and returns the expanded text.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import re
from collections.abc import Generator
from typing import Protocol

from kubelet_emu.shell_arith import evaluate
from kubelet_emu.shell_base import CommandError, FileSystem, Step


class Scope(Protocol):
    """What expansion reads and writes of the running shell."""

    fs: FileSystem
    cwd: str

    def get(self, name: str) -> str | None:
        """A variable, a positional parameter ("1") or a special one ("?", "#", "$")."""

    def set(self, name: str, value: str) -> None:
        """Assign a variable."""

    def positional(self) -> list[str]:
        """$1 ... $N."""

    def substitute(self, script: str) -> Generator[Step, None, str]:
        """Run a command substitution; its standard output."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Frag:
    """A piece of an expanded word: `quoted`, or from an expansion (`split`: subject to
    field splitting), or literal unquoted text; `brk` is the field break of "$@"."""

    text: str
    quoted: bool = False
    split: bool = False
    brk: bool = False


Expansion = Generator[Step, None, list[Frag]]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]|[?$#@*!0-]")
_BRACE = re.compile(r"(#?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?$#@*!-])(.*)", re.S)


def fragments(raw: str, sc: Scope, *, dquote: bool = False) -> Expansion:
    """The pieces of a word's source text, expanded."""
    out: list[Frag] = []
    i, n = 0, len(raw)
    lit = ""

    def flush() -> None:
        nonlocal lit
        if lit:
            out.append(Frag(text=lit, quoted=dquote))
            lit = ""

    if not dquote and raw.startswith("~") and (len(raw) == 1 or raw[1] == "/"):
        out.append(Frag(text=sc.get("HOME") or "/root", quoted=True))
        i = 1
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if dquote and nxt not in '$`"\\\n':
                lit += c
                i += 1
                continue
            flush()
            if nxt != "\n":
                out.append(Frag(text=nxt, quoted=True))
            i += 2
        elif c == "'" and not dquote:
            flush()
            end = raw.index("'", i + 1)
            out.append(Frag(text=raw[i + 1:end], quoted=True))
            i = end + 1
        elif c == '"' and not dquote:
            flush()
            end = _closing_quote(raw, i)
            inner = yield from fragments(raw[i + 1:end], sc, dquote=True)
            out += inner or [Frag(text="", quoted=True)]
            i = end + 1
        elif c == "`":
            flush()
            end = i + 1
            while raw[end] != "`":
                end += 2 if raw[end] == "\\" else 1
            script = re.sub(r"\\([$`\\])", r"\1", raw[i + 1:end])
            text = yield from sc.substitute(script)
            out.append(Frag(text=text.rstrip("\n"), quoted=dquote, split=not dquote))
            i = end + 1
        elif c == "$" and i + 1 < n:
            flush()
            frags, i = yield from _dollar(raw, i, sc, dquote)
            out += frags
        else:
            lit += c
            i += 1
    flush()
    return out


def _closing_quote(raw: str, i: int) -> int:
    j = i + 1
    while raw[j] != '"':
        if raw[j] == "\\":
            j += 2
        elif raw.startswith(("$(", "${"), j) or raw[j] == "`":
            j = _skip_dollar(raw, j)
        else:
            j += 1
    return j


def _skip_dollar(raw: str, j: int) -> int:
    """The index after a `$(...)`, `${...}` or backquoted part starting at j."""
    if raw[j] == "`":
        j += 1
        while raw[j] != "`":
            j += 2 if raw[j] == "\\" else 1
        return j + 1
    close = ")" if raw[j + 1] == "(" else "}"
    open_ = raw[j + 1]
    depth, j = 1, j + 2
    while depth:
        c = raw[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" and open_ == "(":
            j = raw.index("'", j + 1) + 1
            continue
        if c == '"':
            j = _closing_quote(raw, j) + 1
            continue
        depth += (c == open_) - (c == close)
        j += 1
    return j


def _dollar(raw: str, i: int, sc: Scope, dquote: bool
            ) -> Generator[Step, None, tuple[list[Frag], int]]:
    if raw.startswith("$((", i):
        end = _skip_dollar(raw, i)
        if raw[end - 2] == ")":
            expr = yield from expand_one(raw[i + 3:end - 2], sc, dquote=True)
            value = evaluate(expr, sc.get, sc.set)
            return [Frag(text=str(value), quoted=dquote, split=not dquote)], end
    if raw.startswith("$(", i):
        end = _skip_dollar(raw, i)
        text = yield from sc.substitute(raw[i + 2:end - 1])
        return [Frag(text=text.rstrip("\n"), quoted=dquote, split=not dquote)], end
    if raw.startswith("${", i):
        end = _skip_dollar(raw, i)
        frags = yield from _brace(raw[i + 2:end - 1], sc, dquote)
        return frags, end
    m = _NAME.match(raw, i + 1)
    if m is None:
        return [Frag(text="$", quoted=dquote)], i + 1
    return _param(m.group(0), sc, dquote), m.end()


def _param(name: str, sc: Scope, dquote: bool) -> list[Frag]:
    if name in ("@", "*"):
        args = sc.positional()
        if name == "*" or not dquote:
            sep = (sc.get("IFS") or " ")[:1] if dquote else " "
            return [Frag(text=sep.join(args), quoted=dquote, split=not dquote)]
        out: list[Frag] = []
        for k, a in enumerate(args):
            if k:
                out.append(Frag(text="", brk=True))
            out.append(Frag(text=a, quoted=True))
        return out
    value = sc.get(name)
    if value is None and sc.get("-u") is not None and name not in "?$#!0-":
        raise CommandError(f"{name}: unbound variable", fatal=True)
    return [Frag(text=value or "", quoted=dquote, split=not dquote)]


def _brace(body: str, sc: Scope, dquote: bool) -> Generator[Step, None, list[Frag]]:
    m = _BRACE.fullmatch(body)
    if m is None:
        raise CommandError(f"${{{body}}}: bad substitution", fatal=True)
    length, name, rest = m.groups()
    if length:
        if rest:
            raise CommandError(f"${{{body}}}: bad substitution", fatal=True)
        value = sc.get(name) if name not in "@*" else None
        count = len(sc.positional()) if name in "@*" else len(value or "")
        return [Frag(text=str(count), quoted=dquote, split=not dquote)]
    if not rest:
        return _param(name, sc, dquote)
    value = sc.get(name) if name not in "@*" else " ".join(sc.positional()) or None
    op = re.match(r":?[-=+?]|##?|%%?|//?|:", rest)
    if op is None:
        raise CommandError(f"${{{body}}}: bad substitution", fatal=True)
    word = rest[op.end():]
    kind = op.group(0)
    if kind in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
        unset = value is None or (kind.startswith(":") and value == "")
        if kind.endswith("+"):
            if unset:
                return []
            return (yield from fragments(word, sc, dquote=dquote))
        if not unset:
            return [Frag(text=value or "", quoted=dquote, split=not dquote)]
        if kind.endswith("?"):
            message = yield from expand_one(word, sc)
            raise CommandError(f"{name}: {message or 'parameter null or not set'}", fatal=True)
        if kind.endswith("="):
            text = yield from expand_one(word, sc)
            sc.set(name, text)
            return [Frag(text=text, quoted=dquote, split=not dquote)]
        return (yield from fragments(word, sc, dquote=dquote))
    value = value or ""
    if kind == ":":
        offset, _, span = word.partition(":")
        start = evaluate(offset, sc.get, sc.set) if offset.strip() else 0
        start = max(len(value) + start, 0) if start < 0 else start
        sliced = value[start:]
        if span:
            count = evaluate(span, sc.get, sc.set)
            sliced = sliced[:count] if count >= 0 else sliced[:max(len(sliced) + count, 0)]
        return [Frag(text=sliced, quoted=dquote, split=not dquote)]
    if kind in ("#", "##", "%", "%%"):
        rx = yield from pattern(word, sc)
        return [Frag(text=_trim(value, rx, kind), quoted=dquote, split=not dquote)]
    pat, _, rep = word.partition("/")
    anchored = pat[:1] if pat[:1] in ("#", "%") else ""
    rx = yield from pattern(pat[len(anchored):], sc)
    replacement = yield from expand_one(rep, sc)
    regex = ("^" if anchored == "#" else "") + rx + ("$" if anchored == "%" else "")
    count = 0 if kind == "//" else 1
    text = re.sub(regex, lambda _: replacement, value, count=count, flags=re.S) if rx else value
    return [Frag(text=text, quoted=dquote, split=not dquote)]


def _trim(value: str, rx: str, kind: str) -> str:
    """${X#p} ${X##p} ${X%p} ${X%%p}: the shortest or longest matching prefix or suffix."""
    spans = range(len(value) + 1)
    if kind.startswith("#"):
        cuts = [k for k in spans if re.fullmatch(rx, value[:k], re.S)]
        if not cuts:
            return value
        return value[(max(cuts) if kind == "##" else min(cuts)):]
    cuts = [k for k in spans if re.fullmatch(rx, value[k:], re.S)]
    if not cuts:
        return value
    return value[:(min(cuts) if kind == "%%" else max(cuts))]


def expand_one(raw: str, sc: Scope, *, dquote: bool = False) -> Generator[Step, None, str]:
    """A word expanded without field splitting or globs (assignments, redirections,
    `case` words, `[[ ]]` operands); "$@" joins with spaces."""
    frags = yield from fragments(raw, sc, dquote=dquote)
    return "".join(" " if f.brk else f.text for f in frags)


def pattern(raw: str, sc: Scope) -> Generator[Step, None, str]:
    """A word as a glob pattern, in Python's regex syntax: quoted parts match literally."""
    frags = yield from fragments(raw, sc)
    out = []
    for f in frags:
        if f.quoted:
            out.append(re.escape(f.text))
        else:
            out.append(glob_regex(f.text))
    return "".join(out)


def glob_regex(glob: str) -> str:
    """A shell glob (`*`, `?`, `[...]`) as a regex body."""
    return fnmatch.translate(glob).removeprefix("(?s:").removesuffix(")\\Z")


def fields(raw_words: tuple[str, ...] | list[str], sc: Scope) -> Generator[Step, None, list[str]]:
    """Words expanded to the arguments of a command: split on IFS where unquoted, globs
    matched against the emulated filesystem."""
    out: list[str] = []
    ifs = sc.get("IFS")
    seps = " \t\n" if ifs is None else ifs
    for raw in raw_words:
        frags = yield from fragments(raw, sc)
        words: list[list[Frag]] = []
        current: list[Frag] = []
        started = False
        for f in frags:
            if f.brk:
                words.append(current)
                current, started = [], False
                continue
            if not f.split or not seps:
                current.append(f)
                started = started or f.quoted or bool(f.text)
                continue
            parts = re.split("[" + re.escape(seps) + "]+", f.text)
            for k, part in enumerate(parts):
                if k:
                    if started:
                        words.append(current)
                    current, started = [], False
                if part:
                    current.append(Frag(text=part, split=True))
                    started = True
        if started or any(f.quoted for f in current):
            words.append(current)
        for word in words:
            out += _glob(word, sc)
    return out


def _glob(word: list[Frag], sc: Scope) -> list[str]:
    text = "".join(f.text for f in word)
    if not any(not f.quoted and re.search(r"[*?[]", f.text) for f in word):
        return [text]
    rx = "".join(re.escape(f.text) if f.quoted else glob_regex(f.text) for f in word)
    folder, _, _ = text.rpartition("/")
    base = folder if text.startswith("/") else posixpath.join(sc.cwd, folder)
    names = sc.fs.listing(base or "/") or []
    prefix = folder + "/" if "/" in text else ""
    hits = [prefix + name for name in names
            if re.fullmatch(rx, prefix + name, re.S) and not name.startswith(".")]
    return sorted(hits) or [text]
