"""The state of a running container shell (variables, exported or not, function locals,
positional parameters, options, traps, the working folder) and the builtins that change it:
export, unset, local, set, shift, read, trap, cd, pwd, let."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable

from kubelet_emu.shell_arith import evaluate
from kubelet_emu.shell_base import IO, CommandError, FileSystem, unsupported

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def declare(name: str, value: str | None) -> str:
    """bash's `declare -x` line for an exported variable."""
    if value is None:
        return f"declare -x {name}"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") \
        .replace("`", "\\`")
    return f'declare -x {name}="{escaped}"'


@dataclasses.dataclass(kw_only=True)
class State:
    """Variables and settings of one shell; `env` holds the exported variables (None: exported
    without a value), `variables` the others."""

    env: dict[str, str | None]
    fs: FileSystem
    now: Callable[[], str]
    traps: dict[str, str] = dataclasses.field(default_factory=dict)
    status: int = 0
    variables: dict[str, str] = dataclasses.field(default_factory=dict)
    args: list[str] = dataclasses.field(default_factory=list)
    options: set[str] = dataclasses.field(default_factory=set)
    cwd: str = "/"
    frames: list[dict[str, tuple[str | None, str | None]]] = \
        dataclasses.field(default_factory=list)
    """Per function call: each local's (variable, exported) values before it."""
    last_job: int = 0

    def exported(self) -> dict[str, str]:
        """The exported variables with a value (what `env` prints and programs see)."""
        return {k: v for k, v in self.env.items() if v is not None}

    def positional(self) -> list[str]:
        """$1 ... $N."""
        return list(self.args)

    def get(self, name: str) -> str | None:
        """A variable's value, a positional or special parameter; None when unset."""
        if name.isdigit():
            k = int(name)
            return "bash" if k == 0 else (self.args[k - 1] if k <= len(self.args) else None)
        special = {"?": lambda: str(self.status), "$": lambda: "1",
                   "#": lambda: str(len(self.args)), "!": lambda: str(self.last_job or ""),
                   "-": lambda: "".join(sorted(o for o in self.options if len(o) == 1))}
        if name in special:
            return special[name]()
        if name == "-u":
            return "" if "u" in self.options else None
        if name == "PWD":
            return self.cwd
        if name in self.variables:
            return self.variables[name]
        return self.env.get(name)

    def set(self, name: str, value: str) -> None:
        """Assign a variable (an exported one stays exported)."""
        if name in self.env or "a" in self.options:
            self.env[name] = value
            self.variables.pop(name, None)
        else:
            self.variables[name] = value

    def unset(self, name: str) -> None:
        """Remove a variable."""
        self.variables.pop(name, None)
        self.env.pop(name, None)

    def path(self, name: str) -> str:
        """A path made absolute from the working folder."""
        return posixpath.normpath(posixpath.join(self.cwd, name)) if name else self.cwd

    def arith(self, expr: str) -> int:
        """An arithmetic expression over the variables."""
        return evaluate(expr, self.get, self.set)

    def local(self, name: str) -> None:
        """Save a variable for the function's return (`local`)."""
        if not self.frames:
            raise CommandError("local: can only be used in a function")
        frame = self.frames[-1]
        if name not in frame:
            frame[name] = (self.variables.get(name), self.env.get(name))
            if name in self.env:
                del self.env[name]

    def pop_frame(self) -> None:
        """A function returns: its locals get their values back."""
        for name, (plain, exported) in self.frames.pop().items():
            self.variables.pop(name, None)
            self.env.pop(name, None)
            if plain is not None:
                self.variables[name] = plain
            if exported is not None:
                self.env[name] = exported


Builtin = Callable[[State, list[str], IO], int]


def _assign_args(sh: State, args: list[str], io: IO, *, export: bool) -> int:
    status = 0
    for a in args:
        name, eq, value = a.partition("=")
        if not _NAME.fullmatch(name):
            io.error(f"bash: export: `{a}': not a valid identifier")
            status = 1
            continue
        if export:
            current = sh.variables.pop(name, None)
            sh.env[name] = value if eq else (sh.env.get(name) if current is None else current)
        else:
            sh.local(name)
            if eq:
                sh.variables[name] = value
    return status


def _export(sh: State, args: list[str], io: IO) -> int:
    args = [a for a in args if a != "--"]
    if not args or args == ["-p"]:
        for k in sorted(sh.env):
            io.print(declare(k, sh.env[k]))
        return 0
    if args[0] == "-n":
        for name in args[1:]:
            value = sh.env.pop(name, None)
            if value is not None:
                sh.variables[name] = value
        return 0
    return _assign_args(sh, args, io, export=True)


def _local(sh: State, args: list[str], io: IO) -> int:
    return _assign_args(sh, [a for a in args if not a.startswith("-")], io, export=False)


def _declare(sh: State, args: list[str], io: IO) -> int:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    names = [a for a in args if not a.startswith("-")]
    if "x" in flags or (not names and "p" in flags):
        return _export(sh, names, io)
    if sh.frames:
        return _local(sh, names, io)
    for a in names:
        name, eq, value = a.partition("=")
        sh.set(name, value if eq else sh.get(name) or "")
    return 0


def _unset(sh: State, args: list[str], io: IO) -> int:
    for name in args:
        if name not in ("-v", "-f"):
            sh.unset(name)
    return 0


def _set(sh: State, args: list[str], io: IO) -> int:
    if not args:
        for k, v in sorted({**sh.exported(), **sh.variables}.items()):
            io.print(f"{k}={v}")
        return 0
    while args:
        a = args.pop(0)
        if a == "--":
            sh.args = args
            return 0
        if a in ("-o", "+o") and args:
            option = args.pop(0)
            if option not in ("errexit", "nounset", "pipefail", "allexport"):
                raise unsupported(f"set -o {option}")
            letter = {"errexit": "e", "nounset": "u", "allexport": "a"}.get(option, option)
            (sh.options.add if a == "-o" else sh.options.discard)(letter)
            continue
        if a[:1] in "-+" and len(a) > 1:
            for letter in a[1:]:
                if letter not in "euaxv":
                    raise unsupported(f"set {a[0]}{letter}")
                (sh.options.add if a[0] == "-" else sh.options.discard)(letter)
            continue
        sh.args = [a, *args]
        return 0
    return 0


def _shift(sh: State, args: list[str], io: IO) -> int:
    n = int(args[0]) if args else 1
    if n > len(sh.args):
        return 1
    sh.args = sh.args[n:]
    return 0


def _read(sh: State, args: list[str], io: IO) -> int:
    names: list[str] = []
    raw = False
    it = iter(args)
    for a in it:
        if a == "-r":
            raw = True
        elif a in ("-p", "-t"):
            next(it, None)  # a prompt goes to a terminal, which a container has not
        elif a.startswith("-"):
            raise unsupported(f"read {a}")
        else:
            names.append(a)
    names = names or ["REPLY"]
    stdin = io.stdin
    if not stdin:
        for name in names:
            sh.set(name, "")
        return 1
    line, newline, rest = stdin.partition("\n")
    if not raw:
        line = re.sub(r"\\(.)", r"\1", line)
    _consume(io, len(stdin) - len(rest))
    ifs = sh.get("IFS")
    seps = " \t\n" if ifs is None else ifs
    if names == ["REPLY"]:
        sh.set("REPLY", line)
    else:
        fields = [line.strip(seps)] if len(names) == 1 or not seps else \
            re.split("[" + re.escape(seps) + "]+", line.strip(seps), maxsplit=len(names) - 1)
        for k, name in enumerate(names):
            sh.set(name, fields[k] if k < len(fields) else "")
    return 0 if newline else 1


def _consume(io: IO, count: int) -> None:
    """Take what `read` used from a shared input (a loop's `done < file` or pipe)."""
    io.stdin = io.stdin[count:]


def _trap(sh: State, args: list[str], io: IO) -> int:
    if not args:
        for sig, action in sh.traps.items():
            io.print(f"trap -- '{action}' SIG{sig}" if sig != "EXIT" else
                     f"trap -- '{action}' EXIT")
        return 0
    if len(args) == 1:
        args = ["-", *args]
    action, signals = args[0], args[1:]
    for sig in signals:
        name = sig.upper().removeprefix("SIG")
        name = {"0": "EXIT", "15": "TERM", "2": "INT", "1": "HUP"}.get(name, name)
        if action == "-":
            sh.traps.pop(name, None)
        else:
            sh.traps[name] = action
    return 0


def _cd(sh: State, args: list[str], io: IO) -> int:
    target = sh.path(args[0] if args else (sh.get("HOME") or "/"))
    if not sh.fs.is_dir(target):
        io.error(f"bash: cd: {args[0] if args else target}: No such file or directory")
        return 1
    sh.cwd = target
    return 0


def _pwd(sh: State, args: list[str], io: IO) -> int:
    io.print(sh.cwd)
    return 0


def _let(sh: State, args: list[str], io: IO) -> int:
    value = 0
    for expr in args:
        value = sh.arith(expr)
    return 0 if value else 1


BUILTINS: dict[str, Builtin] = {
    "export": _export, "local": _local, "declare": _declare, "typeset": _declare,
    "unset": _unset, "set": _set, "shift": _shift, "read": _read, "trap": _trap,
    "cd": _cd, "pwd": _pwd, "let": _let,
}
