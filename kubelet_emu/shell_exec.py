"""The container shell's executor: runs the parsed tree as a generator of steps, so `sleep`
waits on the emulated clock and output is stamped when it is written.

Pipeline stages run one after another (a stage's output reaches the next when it ends),
each in a copy of the shell as bash runs them in subshells; `cmd &` runs as a job beside the
script on the same clock, `wait` waits for the jobs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Generator, Iterator

import kubelet_emu.shell_cond as shell_cond
import kubelet_emu.shell_expand as shell_expand
import kubelet_emu.shell_parse as shell_parse
import kubelet_emu.shell_utils as shell_utils
from kubelet_emu.shell_base import (
    IO,
    BrokenPipe,
    Buffer,
    CommandError,
    Exit,
    FileWriter,
    LogWriter,
    Output,
    ShellExit,
    Sleep,
    Step,
    Writer,
    unsupported,
)
from kubelet_emu.shell_parse import (
    AndOr,
    Arith,
    Case,
    Compound,
    CondTest,
    For,
    FuncDef,
    Group,
    If,
    Loop,
    Node,
    Pipeline,
    Redirect,
    Sequence,
    Simple,
)
from kubelet_emu.shell_state import BUILTINS, State

Run = Generator[Step, None, int]


class _WaitJobs:
    """The step `wait` yields to the job scheduler."""


class _Break(Exception):
    def __init__(self, levels: int, *, cont: bool) -> None:
        super().__init__(levels)
        self.levels = levels
        self.cont = cont


class _Return(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


NOT_FOUND = 127
_UNSUPPORTED_COMMANDS = ("coproc", "select", "exec", "disown", "fg", "bg", "jobs", "ulimit",
                         "kill", "mapfile", "readarray", "shopt", "getopts", "alias")


@dataclasses.dataclass(kw_only=True)
class Shell(State):
    """The state of one running script, and its execution."""

    background: float = 0.0
    """Kept for callers: seconds a `wait` still blocks (the jobs' own clock decides)."""
    functions: dict[str, Node] = dataclasses.field(default_factory=dict)
    lineno: int = 1
    loops: int = 0
    conditions: int = 0
    pending: list[Output] = dataclasses.field(default_factory=list)
    jobs: list[tuple[float, Iterator[Step | _WaitJobs]]] = dataclasses.field(
        default_factory=list)
    clock: float = 0.0
    substituted: int = 0
    """The status of the last command substitution (a bare assignment's status)."""

    # ----- the script and its jobs --------------------------------------------------------

    def run(self, script: str) -> Iterator[Step]:
        """Run a script to its end: `Output` and `Sleep` steps, then one `Exit`."""
        out = LogWriter(self.pending, stderr=False)
        err = LogWriter(self.pending, stderr=True)
        io = IO(stdin="", out=out, err=err)
        main = self._script(script, io)
        code = self.status
        for step in self._schedule(main):
            yield from self._drain()
            if isinstance(step, Exit):
                code = step.code
                break
            yield step
        out.flush()
        err.flush()
        yield from self._drain()
        yield Exit(code)

    def _drain(self) -> Iterator[Output]:
        while self.pending:
            yield self.pending.pop(0)

    def _script(self, script: str, io: IO) -> Generator[Step | _WaitJobs, None, None]:
        code = yield from self._source(script, io)
        trap = self.traps.pop("EXIT", None)
        if trap is not None:
            try:
                yield from self.text(trap, io)
            except ShellExit as e:  # only an `exit` in the trap changes the status
                code = e.code
        yield Exit(code)

    def _source(self, script: str, io: IO) -> Run:
        """Run script text in this shell: its status, or the code it exits with."""
        try:
            return (yield from self.text(script, io))
        except ShellExit as e:
            return e.code

    def text(self, script: str, io: IO) -> Run:
        """Parse and run script text (`eval`, `source`, traps): raises ShellExit on `exit`."""
        items, error = shell_parse.parse(script)
        for node, background in items:
            yield from self._item(node, background, io)
        if error is not None:
            self.lineno = error.line
            self._complain(io, error.message)
            raise ShellExit(2)
        return self.status

    def _schedule(self, main: Iterator[Step | _WaitJobs]) -> Iterator[Step]:
        """Interleave the script with its background jobs on the emulated clock."""
        for step in main:
            if isinstance(step, Output):
                yield step
                continue
            if isinstance(step, Exit):
                yield step
                return
            until = math.inf if isinstance(step, _WaitJobs) or step.seconds is None \
                else self.clock + step.seconds
            while True:
                if isinstance(step, _WaitJobs) and not self.jobs:
                    break
                wake = min((w for w, _ in self.jobs), default=math.inf)
                if wake >= until:
                    while until == math.inf:  # blocked until a signal ends the script
                        yield Sleep(None)
                    yield Sleep(until - self.clock)
                    self.clock = until
                    break
                if wake > self.clock:
                    yield Sleep(wake - self.clock)
                    self.clock = wake
                self._step_jobs()

    def _step_jobs(self) -> None:
        ready = [j for j in self.jobs if j[0] <= self.clock]
        self.jobs = [j for j in self.jobs if j[0] > self.clock]
        for _, job in ready:
            for step in job:
                if isinstance(step, Sleep):
                    self.jobs.append((math.inf if step.seconds is None
                                      else self.clock + step.seconds, job))
                    break
                if isinstance(step, _WaitJobs | Exit):
                    break

    def fork(self) -> Shell:
        """A subshell: a copy of the variables and settings, the same files and log."""
        return dataclasses.replace(
            self, env=dict(self.env), variables=dict(self.variables), args=list(self.args),
            options=set(self.options), traps=dict(self.traps), functions=dict(self.functions),
            frames=[dict(f) for f in self.frames], jobs=[], loops=0, conditions=0)

    def substitute(self, script: str) -> Generator[Step, None, str]:
        """`$(script)`: run in a subshell, its standard output."""
        sub = self.fork()
        out = Buffer()
        io = IO(stdin="", out=out, err=LogWriter(self.pending, stderr=True))
        self.substituted = yield from _in_subshell(sub.text(script, io))
        return out.text()

    # ----- lists and compound commands ----------------------------------------------------

    def _item(self, node: AndOr, background: bool, io: IO) -> Run:
        if not background:
            return (yield from self._and_or(node, io))
        sub = self.fork()
        sub.clock = self.clock
        self.last_job += 1

        def job() -> Iterator[Step | _WaitJobs]:
            try:
                yield from sub._and_or(node, io)
            except ShellExit:
                pass
            except (_Break, _Return):
                pass

        self.jobs.append((self.clock, job()))
        self.status = 0
        return 0

    def _and_or(self, node: AndOr, io: IO) -> Run:
        status = yield from self._guarded(node.first, io, condition=bool(node.rest))
        for k, (op, pipeline) in enumerate(node.rest):
            if (op == "&&") == (status == 0):
                last = k == len(node.rest) - 1
                status = yield from self._guarded(pipeline, io, condition=not last)
        return status

    def _guarded(self, pipeline: Pipeline, io: IO, *, condition: bool) -> Run:
        """A pipeline, then `set -e`: a failure outside a condition ends the script."""
        if condition or pipeline.negate:
            self.conditions += 1
        try:
            status = yield from self._pipeline(pipeline, io)
        finally:
            if condition or pipeline.negate:
                self.conditions -= 1
        if status and "e" in self.options and not self.conditions and not condition:
            raise ShellExit(status)
        return status

    def _pipeline(self, node: Pipeline, io: IO) -> Run:
        if len(node.commands) == 1:
            status = yield from self.node(node.commands[0], io)
        else:
            data = io.stdin
            statuses = []
            for k, command in enumerate(node.commands):
                last = k == len(node.commands) - 1
                buffer = Buffer()
                stage = IO(stdin=data, out=io.out if last else buffer, err=io.err)
                sub = self.fork()
                statuses.append((yield from _in_subshell(sub.node(command, stage))))
                data = buffer.text()
            status = statuses[-1]
            if "pipefail" in self.options:
                status = next((s for s in reversed(statuses) if s), 0)
        if node.negate:
            status = int(not status)
        self.status = status
        return status

    def node(self, node: Node, io: IO) -> Run:
        """Run one command of any kind: its status."""
        status = yield from self._dispatch(node, io)
        self.status = status
        return status

    def _dispatch(self, node: Node, io: IO) -> Run:
        if isinstance(node, Simple):
            return (yield from self._simple(node, io))
        if isinstance(node, Compound):
            inner = yield from self._redirected(node.redirects, io)
            if inner is None:
                return 1
            return (yield from self.node(node.body, inner))
        if isinstance(node, Sequence):
            status = 0
            for item, background in node.items:
                status = yield from self._item(item, background, io)
            return status
        if isinstance(node, Pipeline):
            return (yield from self._pipeline(node, io))
        if isinstance(node, AndOr):
            return (yield from self._and_or(node, io))
        if isinstance(node, If):
            for cond, body in node.branches:
                if (yield from self._condition(cond, io)) == 0:
                    return (yield from self.node(body, io))
            return (yield from self.node(node.orelse, io)) if node.orelse else 0
        if isinstance(node, Loop | For):
            return (yield from self._loop(node, io))
        if isinstance(node, Case):
            return (yield from self._case(node, io))
        if isinstance(node, Group):
            if not node.subshell:
                return (yield from self.node(node.body, io))
            sub = self.fork()
            try:
                return (yield from sub.node(node.body, io))
            except ShellExit as e:
                return e.code
        if isinstance(node, FuncDef):
            self.functions[node.name] = node.body
            return 0
        if isinstance(node, CondTest):
            self.lineno = node.line
            return (yield from self._cond_test(node, io))
        assert isinstance(node, Arith)
        self.lineno = node.line
        try:
            expr = yield from shell_expand.expand_one(node.expr, self, dquote=True)
            return 0 if self.arith(expr) else 1
        except CommandError as e:
            return self._failed(io, e)

    def _condition(self, cond: Sequence, io: IO) -> Run:
        self.conditions += 1
        try:
            return (yield from self.node(cond, io))
        finally:
            self.conditions -= 1

    def _loop(self, node: Loop | For, io: IO) -> Run:
        status = 0
        self.loops += 1
        try:
            if isinstance(node, For):
                words = self.positional() if node.words is None else \
                    (yield from shell_expand.fields(node.words, self))
                for word in words:
                    self.set(node.name, word)
                    status, stop = yield from self._body(node.body, io, status)
                    if stop:
                        break
                return status
            while True:
                cond = yield from self._condition(node.cond, io)
                if (cond == 0) == node.until:
                    return status
                status, stop = yield from self._body(node.body, io, status)
                if stop:
                    return status
        finally:
            self.loops -= 1

    def _body(self, body: Sequence, io: IO, status: int) -> Generator[Step, None,
                                                                      tuple[int, bool]]:
        try:
            return (yield from self.node(body, io)), False
        except _Break as b:
            if b.levels > 1:
                raise _Break(b.levels - 1, cont=b.cont) from None
            return 0, not b.cont

    def _case(self, node: Case, io: IO) -> Run:
        word = yield from shell_expand.expand_one(node.word, self)
        for patterns, body in node.arms:
            for pat in patterns:
                rx = yield from shell_expand.pattern(pat, self)
                if shell_cond.full_match(rx, word):
                    return (yield from self.node(body, io)) if body.items else 0
        return 0

    def _cond_test(self, node: CondTest, io: IO) -> Run:
        items: list[shell_cond.Item] = []
        for raw in node.items:
            if raw in shell_cond.CONDITIONAL_OPERATORS:
                items.append(shell_cond.Item(text=raw, regex=raw, operator=True))
                continue
            value = yield from shell_expand.expand_one(raw, self)
            rx = yield from shell_expand.pattern(raw, self)
            items.append(shell_cond.Item(text=value, regex=rx))
        try:
            return shell_cond.conditional(items, self.fs, self.path)
        except CommandError as e:
            return self._failed(io, e)

    # ----- simple commands --------------------------------------------------------------------

    def _simple(self, node: Simple, io: IO) -> Run:
        self.lineno = node.line
        self.substituted = 0
        try:
            argv = yield from shell_expand.fields(node.words, self)
            assigns = []
            for name, raw, append in node.assigns:
                value = yield from shell_expand.expand_one(raw, self)
                assigns.append((name, (self.get(name) or "") + value if append else value))
        except CommandError as e:
            return self._failed(io, e)
        if not argv:
            for name, value in assigns:
                self.set(name, value)
            inner = yield from self._redirected(node.redirects, io)
            return self.substituted if inner is not None else 1
        inner = yield from self._redirected(node.redirects, io)
        if inner is None:
            return 1
        saved = {name: (self.variables.get(name), self.env.get(name), name in self.env)
                 for name, _ in assigns}
        for name, value in assigns:
            self.env[name] = value
        try:
            return (yield from self._command(argv, inner))
        except CommandError as e:
            return self._failed(inner, e)
        finally:
            for name, (plain, exported, was) in saved.items():
                if argv[0] in ("export", "local", "declare", "readonly"):
                    continue
                self.env.pop(name, None)
                if was:
                    self.env[name] = exported
                if plain is not None:
                    self.variables[name] = plain

    def _failed(self, io: IO, e: CommandError) -> int:
        self._complain(io, e.message)
        if e.fatal:
            raise ShellExit(e.status)
        return e.status

    def _complain(self, io: IO, message: str) -> None:
        io.error(f"bash: line {self.lineno}: {message}")

    def _command(self, argv: list[str], io: IO) -> Run:
        name, args = argv[0], argv[1:]
        if name in self.functions:
            return (yield from self._call(name, args, io))
        control = _CONTROL.get(name)
        if control is not None:
            return (yield from control(self, args, io))
        builtin = BUILTINS.get(name)
        if builtin is not None:
            return builtin(self, args, io)
        utility = shell_utils.UTILITIES.get(name.rsplit("/", 1)[-1])
        if utility is not None:
            return utility(self, args, io)
        if name in _UNSUPPORTED_COMMANDS:
            raise unsupported(name, NOT_FOUND)
        self._complain(io, f"{name}: command not found")
        return NOT_FOUND

    def _call(self, name: str, args: list[str], io: IO) -> Run:
        saved = self.args
        self.args = list(args)
        self.frames.append({})
        loops, self.loops = self.loops, 0
        try:
            return (yield from self.node(self.functions[name], io))
        except _Return as r:
            return r.code
        finally:
            self.loops = loops
            self.pop_frame()
            self.args = saved

    def _redirected(self, redirects: tuple[Redirect, ...], io: IO
                    ) -> Generator[Step, None, IO | None]:
        """The streams after the redirections (None: one failed, its message written)."""
        if not redirects:
            return io
        streams: dict[int, Writer] = {1: io.out, 2: io.err}
        stdin = io.stdin
        for r in redirects:
            if r.op == "<<":
                stdin = r.target if r.quoted_heredoc else \
                    (yield from shell_expand.expand_one(r.target, self, dquote=True))
                continue
            target = yield from shell_expand.expand_one(r.target, self)
            if r.op == "<<<":
                stdin = target + "\n"
            elif r.op in (">&", "<&") and target.isdigit():
                if int(target) not in streams and r.op == ">&":
                    self._complain(io, f"{target}: Bad file descriptor")
                    return None
                streams[r.fd] = streams.get(int(target), io.out)
            elif r.op == "<":
                text = self.fs.read(self.path(target))
                if text is None:
                    self._complain(io, f"{target}: No such file or directory")
                    return None
                stdin = text
            else:
                path = self.path(target)
                if not self.fs.write(path, "", append=r.op == ">>"):
                    reason = "Is a directory" if self.fs.is_dir(path) else \
                        "No such file or directory"
                    self._complain(io, f"{target}: {reason}")
                    return None
                writer = FileWriter(self.fs, path)
                if r.op in ("&>", ">&"):
                    streams[1] = streams[2] = writer
                else:
                    streams[r.fd] = writer
        return IO(stdin=stdin, out=streams[1], err=streams[2])


def _in_subshell(run: Run) -> Run:
    """A subshell's status: its `exit` ends only it, and SIGPIPE is 141."""
    try:
        return (yield from run)
    except ShellExit as e:
        return e.code
    except BrokenPipe:
        return 141


# ----- the builtins that take time or change the flow ------------------------------------

def _sleep(sh: Shell, args: list[str], io: IO) -> Run:
    seconds = shell_utils.duration(args)
    if seconds is None:
        io.error("sleep: missing operand" if not args else f"sleep: invalid time interval "
                 f"'{args[0]}'")
        return 1
    if seconds:
        yield Sleep(None if math.isinf(seconds) else seconds)
    return 0


def _wait(sh: Shell, args: list[str], io: IO) -> Run:
    if sh.jobs:
        yield _WaitJobs()  # type: ignore[misc]
    return 0


def _exit(sh: Shell, args: list[str], io: IO) -> Run:
    if args and not args[0].lstrip("-").isdigit():
        sh._complain(io, f"exit: {args[0]}: numeric argument required")
        raise ShellExit(2)
    raise ShellExit(int(args[0]) % 256 if args else sh.status)
    yield


def _return(sh: Shell, args: list[str], io: IO) -> Run:
    if not sh.frames:
        sh._complain(io, "return: can only `return' from a function or sourced script")
        return 2
    raise _Return(int(args[0]) % 256 if args else sh.status)
    yield


def _loop_control(cont: bool) -> Callable[[Shell, list[str], IO], Run]:
    def control(sh: Shell, args: list[str], io: IO) -> Run:
        if not sh.loops:
            return 0
        raise _Break(min(int(args[0]) if args else 1, sh.loops), cont=cont)
        yield
    return control


def _eval(sh: Shell, args: list[str], io: IO) -> Run:
    return (yield from sh.text(" ".join(args), io))


def _source(sh: Shell, args: list[str], io: IO) -> Run:
    if not args:
        sh._complain(io, "source: filename argument required")
        return 2
    text = sh.fs.read(sh.path(args[0]))
    if text is None:
        sh._complain(io, f"{args[0]}: No such file or directory")
        return 1
    return (yield from sh.text(text, io))


def _test(sh: Shell, args: list[str], io: IO) -> Run:
    return shell_cond.test(args, sh.fs, sh.path, bracket=False)
    yield


def _bracket(sh: Shell, args: list[str], io: IO) -> Run:
    if not args or args[-1] != "]":
        sh._complain(io, "[: missing `]'")
        return 2
    return shell_cond.test(args[:-1], sh.fs, sh.path, bracket=True)
    yield


def _command_builtin(sh: Shell, args: list[str], io: IO) -> Run:
    if args and args[0] == "-v":
        found = [a for a in args[1:] if a in sh.functions or a in _CONTROL or a in BUILTINS
                 or a in shell_utils.UTILITIES]
        for a in found:
            io.print(a if a in sh.functions or a in _CONTROL or a in BUILTINS
                     else f"/usr/bin/{a}")
        return 0 if found and len(found) == len(args) - 1 else 1
    return (yield from sh._command(args, io)) if args else 0


_CONTROL = {
    "sleep": _sleep, "wait": _wait, "exit": _exit, "return": _return,
    "break": _loop_control(False), "continue": _loop_control(True), "eval": _eval,
    "source": _source, ".": _source, "test": _test, "[": _bracket,
    "command": _command_builtin,
}


def known_commands() -> frozenset[str]:
    """Every command name the shell runs itself (builtins and programs)."""
    return frozenset({*_CONTROL, *BUILTINS, *shell_utils.UTILITIES})
