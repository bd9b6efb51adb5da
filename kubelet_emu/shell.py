"""A small interpreter of the shell commands demo containers run, so an emulated container
prints what the real one would (`kubectl logs` then shows the dra-example-driver's
`declare -x GPU_DEVICE_0="gpu-0"` lines) and exits when the real one would.

It runs the bash subset of such scripts: `;`, newlines, `&&`, `||`, pipelines, `&`, quoting
and `$VAR`/`${VAR}` expansion, and the commands export, echo, printf, env, printenv, cat,
ls, grep, sort, head, tail, wc, sleep, wait, trap, exit, true, false, cd, set, hostname,
date and `:`. Anything else is `command not found` (exit 127), as in bash. The script is a
generator of steps: output lines, sleeps (on the emulated clock) and the exit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})


@dataclasses.dataclass(frozen=True)
class Output:
    """A line written by the container (`stderr` for error messages)."""

    text: str
    stderr: bool = False


@dataclasses.dataclass(frozen=True)
class Sleep:
    """The script blocks for `seconds` (None: until signalled)."""

    seconds: float | None


@dataclasses.dataclass(frozen=True)
class Exit:
    """The script ends with this status."""

    code: int


Step = Output | Sleep | Exit


class FileSystem:
    """What the container sees of files: the mounts its CDI devices give it."""

    def __init__(self, mounts: Mapping[str, str], read: Callable[[str], str | None]) -> None:
        self.mounts = dict(mounts)  # container path -> host path
        self._read = read

    def read(self, path: str) -> str | None:
        """The text of a file, or None when it doesn't exist."""
        host = self.mounts.get(path)
        return None if host is None else self._read(host)

    def listing(self, path: str) -> list[str] | None:
        """The names under a folder (None when nothing is there)."""
        path = path.rstrip("/") or "/"
        if path in self.mounts:
            return [path.rsplit("/", 1)[-1]]
        prefix = path + "/"
        names = sorted({p[len(prefix):].split("/", 1)[0] for p in self.mounts
                        if p.startswith(prefix)})
        return names or None


# ----- tokens --------------------------------------------------------------------------

OPERATORS = ("&&", "||", ";", "&", "|", "\n")


@dataclasses.dataclass(frozen=True)
class Word:
    """A word, in parts: (text, how it was quoted: '' none, '\"' double, \"'\" single)."""

    parts: tuple[tuple[str, str], ...]


Token = Word | str


def tokenize(script: str) -> list[Token]:
    """Words and operators; comments dropped; quotes kept for expansion."""
    out: list[Token] = []
    parts: list[tuple[str, str]] = []
    buf = ""
    i, n = 0, len(script)

    def flush() -> None:
        nonlocal buf, parts
        if buf:
            parts.append((buf, ""))
            buf = ""
        if parts:
            out.append(Word(tuple(parts)))
            parts = []

    while i < n:
        c = script[i]
        if c == "\\" and i + 1 < n:
            if script[i + 1] == "\n":
                i += 2
                continue
            if buf:
                parts.append((buf, ""))
                buf = ""
            parts.append((script[i + 1], "'"))
            i += 2
        elif c == "'":
            end = script.find("'", i + 1)
            end = n if end < 0 else end
            if buf:
                parts.append((buf, ""))
                buf = ""
            parts.append((script[i + 1:end], "'"))
            i = end + 1
        elif c == '"':
            j, text = i + 1, ""
            while j < n and script[j] != '"':
                if script[j] == "\\" and j + 1 < n and script[j + 1] in '"\\$`':
                    text += "\\" + script[j + 1]
                    j += 2
                    continue
                text += script[j]
                j += 1
            if buf:
                parts.append((buf, ""))
                buf = ""
            parts.append((text, '"'))
            i = j + 1
        elif c == "#" and not buf and not parts:
            while i < n and script[i] != "\n":
                i += 1
        elif c in " \t":
            flush()
            i += 1
        elif script.startswith(("&&", "||"), i):
            flush()
            out.append(script[i:i + 2])
            i += 2
        elif c in ";&|\n":
            flush()
            out.append(c)
            i += 1
        else:
            buf += c
            i += 1
    flush()
    return out


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|([?$#0]))")


def expand(word: Word, env: Mapping[str, str], special: Mapping[str, str]) -> str:
    """A word's value: variables expanded outside single quotes, escapes resolved."""
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name:
            return env.get(name, "")
        return special.get(m.group(3), "")

    out = []
    for text, quote in word.parts:
        if quote == "'":
            out.append(text)
            continue
        value = _VAR.sub(sub, text)
        if quote == '"':
            value = re.sub(r'\\(["\\$`])', r"\1", value)
        out.append(value)
    return "".join(out)


# ----- the interpreter -------------------------------------------------------------------


def declare(name: str, value: str | None) -> str:
    """bash's `declare -x` line for an exported variable."""
    if value is None:
        return f"declare -x {name}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") \
        .replace("`", "\\`")
    return f'declare -x {name}="{escaped}"'


@dataclasses.dataclass(kw_only=True)
class Shell:
    """The state of one running script."""

    env: dict[str, str | None]
    fs: FileSystem
    now: Callable[[], str]
    traps: dict[str, str] = dataclasses.field(default_factory=dict)
    status: int = 0
    background: float = 0.0
    """Seconds until the longest background job (`sleep N &`) ends."""

    def exported(self) -> dict[str, str]:
        """The variables with a value (what `env` prints and expansion sees)."""
        return {k: v for k, v in self.env.items() if v is not None}

    def run(self, script: str) -> Iterator[Step]:
        """Run a script to its end (or a `Sleep` the caller resumes, or an `Exit`)."""
        tokens = tokenize(script)
        lists: list[list[Token]] = [[]]
        for t in tokens:
            if t in (";", "\n"):
                lists.append([])
            else:
                lists[-1].append(t)
        for statement in lists:
            exit_code = yield from self._and_or(statement)
            if exit_code is not None:
                yield Exit(exit_code)
                return
        yield Exit(self.status)

    def _and_or(self, tokens: list[Token]) -> Generator[Step, None, int | None]:
        """`a && b || c & d`: returns an exit status when the script exits."""
        i = 0
        op = ""
        while i < len(tokens):
            j = i
            while j < len(tokens) and tokens[j] not in ("&&", "||", "&"):
                j += 1
            pipeline = tokens[i:j]
            sep = str(tokens[j]) if j < len(tokens) else ""
            run = op == "" or (op == "&&" and self.status == 0) or (op == "||" and self.status)
            if run and pipeline:
                code = yield from self._pipeline(pipeline, background=sep == "&")
                if code is not None:
                    return code
            op = "" if sep == "&" else sep
            i = j + 1
        return None

    def _pipeline(self, tokens: list[Token], *,
                  background: bool) -> Generator[Step, None, int | None]:
        commands: list[list[Token]] = [[]]
        for t in tokens:
            if t == "|":
                commands.append([])
            else:
                commands[-1].append(t)
        data: list[str] | None = None
        special = {"?": str(self.status), "$": "1", "#": "0", "0": "bash"}
        for k, cmd in enumerate(commands):
            argv = [expand(w, self.exported(), special) for w in cmd if isinstance(w, Word)]
            if not argv:
                continue
            last = k == len(commands) - 1
            if argv[0] in ("sleep", "wait", "exit") and len(commands) == 1:
                code = yield from self._control(argv, background=background)
                if code is not None:
                    return code
                continue
            out, err, self.status = self._builtin(argv, data)
            for line in err:
                yield Output(line, stderr=True)
            if last:
                for line in out:
                    yield Output(line)
            data = out
        return None

    def _control(self, argv: list[str], *,
                 background: bool) -> Generator[Step, None, int | None]:
        """sleep, wait and exit: the commands that take time or end the script."""
        name = argv[0]
        if name == "exit":
            try:
                return int(argv[1]) if len(argv) > 1 else self.status
            except ValueError:
                yield Output(f"bash: line 1: exit: {argv[1]}: numeric argument required", True)
                return 2
        if name == "sleep":
            seconds = _duration(argv[1:])
            if seconds is None:
                yield Output("sleep: missing operand", stderr=True)
                self.status = 1
                return None
            if background:
                self.background = max(self.background, seconds)
            else:
                yield Sleep(seconds)
            self.status = 0
            return None
        # wait: for the background jobs
        if self.background:
            yield Sleep(self.background)
            self.background = 0.0
        self.status = 0
        return None

    def _builtin(self, argv: list[str], stdin: list[str] | None
                 ) -> tuple[list[str], list[str], int]:
        """Run one command that does not take time: (stdout lines, stderr lines, status)."""
        name, args = argv[0], argv[1:]
        handler = BUILTINS.get(name)
        if handler is None:
            return [], [f"bash: line 1: {name}: command not found"], 127
        return handler(self, args, stdin or [])


def _duration(args: list[str]) -> float | None:
    total = 0.0
    if not args:
        return None
    for a in args:
        m = re.fullmatch(r"([0-9]*\.?[0-9]+)([smhd]?)", a)
        if m is None:
            return None
        total += float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]
    return total


Result = tuple[list[str], list[str], int]


def _export(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    if not args or args == ["-p"]:
        return [declare(k, sh.env[k]) for k in sorted(sh.env)], [], 0
    for a in args:
        name, eq, value = a.partition("=")
        sh.env[name] = value if eq else sh.env.get(name, "")
    return [], [], 0


def _echo(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    newline = True
    escapes = False
    while args and args[0] in ("-n", "-e", "-ne", "-en"):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.replace("\\t", "\t").replace("\\n", "\n")
    lines = text.split("\n") if text or newline else []
    return lines, [], 0


def _printf(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    if not args:
        return [], ["printf: usage: printf [-v var] format [arguments]"], 2
    fmt = args[0].replace("\\n", "\n").replace("\\t", "\t")
    values = iter(args[1:])
    text = re.sub(r"%[sd]", lambda m: next(values, ""), fmt)
    lines = text.split("\n")
    return (lines[:-1] if text.endswith("\n") else lines), [], 0


def _env(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    values = sh.exported()
    if args:
        missing = [a for a in args if a not in values]
        return [values[a] for a in args if a in values], [], 1 if missing else 0
    return [f"{k}={v}" for k, v in values.items()], [], 0


def _cat(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    if not args:
        return list(stdin), [], 0
    out, err, status = [], [], 0
    for path in args:
        text = sh.fs.read(path)
        if text is None:
            err.append(f"cat: {path}: No such file or directory")
            status = 1
        else:
            out += text.splitlines()
    return out, err, status


def _ls(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    recursive = "-R" in args
    paths = [a for a in args if not a.startswith("-")] or ["."]
    out, err, status = [], [], 0
    for path in paths:
        names = sh.fs.listing(path)
        if names is None:
            err.append(f"ls: cannot access '{path}': No such file or directory")
            status = 2
            continue
        if not recursive:
            out += names
            continue
        todo = [path.rstrip("/")]
        while todo:
            here = todo.pop(0)
            entries = sh.fs.listing(here) or []
            out.append(f"{here}:")
            out += entries
            out.append("")
            todo += [f"{here}/{e}" for e in entries if f"{here}/{e}" not in sh.fs.mounts]
    return out, err, status


def _grep(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    flags = {a for a in args if a.startswith("-")}
    rest = [a for a in args if not a.startswith("-")]
    if not rest:
        return [], ["Usage: grep [OPTION]... PATTERNS [FILE]..."], 2
    pattern, files = rest[0], rest[1:]
    lines = stdin
    if files:
        lines = []
        for f in files:
            lines += (sh.fs.read(f) or "").splitlines()
    regex = pattern if "-E" in flags else _basic_regex(pattern)
    try:
        rx = re.compile(regex, re.I if "-i" in flags else 0)
    except re.error:
        return [], ["grep: Invalid regular expression"], 2
    matched = [line for line in lines if bool(rx.search(line)) != ("-v" in flags)]
    return matched, [], 0 if matched else 1


def _basic_regex(pattern: str) -> str:
    """A grep basic regular expression in Python's syntax (`\\|` alternation, literal + ? |)."""
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


def _sort(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    lines = sorted(stdin, reverse="-r" in args)
    if "-u" in args:
        lines = list(dict.fromkeys(lines))
    return lines, [], 0


def _count(args: list[str]) -> int:
    for i, a in enumerate(args):
        if a == "-n" and i + 1 < len(args):
            return int(args[i + 1])
        if re.fullmatch(r"-n?[0-9]+", a):
            return int(a.lstrip("-n"))
    return 10


def _head(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    return stdin[:_count(args)], [], 0


def _tail(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    n = _count(args)
    return (stdin[-n:] if n else []), [], 0


def _wc(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    return [str(len(stdin))], [], 0


def _trap(sh: Shell, args: list[str], stdin: list[str]) -> Result:
    if len(args) >= 2:
        for sig in args[1:]:
            sh.traps[sig.upper().removeprefix("SIG")] = args[0]
    return [], [], 0


def _status(code: int) -> Callable[[Shell, list[str], list[str]], Result]:
    return lambda sh, args, stdin: ([], [], code)


BUILTINS: dict[str, Callable[[Shell, list[str], list[str]], Result]] = {
    "export": _export, "echo": _echo, "printf": _printf, "env": _env, "printenv": _env,
    "cat": _cat, "ls": _ls, "grep": _grep, "sort": _sort, "head": _head, "tail": _tail,
    "wc": _wc, "trap": _trap, "true": _status(0), ":": _status(0), "false": _status(1),
    "cd": _status(0), "set": _status(0),
    "hostname": lambda sh, args, stdin: ([sh.env.get("HOSTNAME") or ""], [], 0),
    "date": lambda sh, args, stdin: ([sh.now()], [], 0),
}


def script_of(argv: list[str]) -> str | None:
    """The script an exec-form command runs: `sh -c SCRIPT`, or a command line this
    interpreter knows (`sleep 3600`, `echo hi`); None for any other program."""
    if not argv:
        return None
    program = argv[0].rsplit("/", 1)[-1]
    if program in SHELLS:
        if "-c" in argv[1:]:
            i = argv.index("-c")
            return argv[i + 1] if i + 1 < len(argv) else ""
        return None
    if program in BUILTINS or program in ("sleep", "exit"):
        return " ".join(_quote(a) for a in [program, *argv[1:]])
    return None


def _quote(arg: str) -> str:
    return "'" + arg.replace("'", "'\\''") + "'" if re.search(r"[^\w@%+=:,./-]", arg) else arg


def terminate(shell: Shell, pid1: bool = True) -> tuple[Iterator[Step], bool]:
    """What SIGTERM does: run the TERM trap (its steps, True), or nothing (False: a shell
    as PID 1 without a trap ignores TERM, as the kernel spares PID 1 unhandled signals)."""
    trap = shell.traps.get("TERM")
    if trap is None:
        return iter(()), False
    return shell.run(trap), True


def environment_lines(env: Mapping[str, Any]) -> list[str]:
    """`declare -x` lines of an environment, sorted as bash prints them."""
    return [declare(k, env[k]) for k in sorted(env)]
