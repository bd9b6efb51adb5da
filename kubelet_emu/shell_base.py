"""What the container shell's modules share: the steps a script yields (output, sleeps, the
exit), the errors that end a command or the script, and the container's filesystem."""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Callable, Mapping
from typing import Protocol

NOT_SUPPORTED = "not supported by fakeapi's container shell"
"""The words every refusal of a bash feature the interpreter lacks ends with."""


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


class ShellExit(Exception):
    """`exit N` (or a fatal error): the script ends with `code`."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class CommandError(Exception):
    """A command fails with a message on stderr and a status (a bad substitution, a
    division by zero, an unsupported feature); `fatal` ends the script, as bash does for
    expansion errors in a non-interactive shell."""

    def __init__(self, message: str, status: int = 1, *, fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.fatal = fatal


def unsupported(what: str, status: int = 2) -> CommandError:
    """The one error for a feature the interpreter does not have."""
    return CommandError(f"{what}: {NOT_SUPPORTED}", status)


class FileSystem:
    """What the container sees of files: the mounts its CDI devices give it (read from the
    host), and the files and folders its own commands write (kept in memory)."""

    def __init__(self, mounts: Mapping[str, str], read: Callable[[str], str | None]) -> None:
        self.mounts = dict(mounts)  # container path -> host path
        self._read = read
        self.files: dict[str, str] = {}
        self.dirs: set[str] = {"/", "/tmp", "/root", "/etc", "/var", "/bin", "/usr"}

    def read(self, path: str) -> str | None:
        """The text of a file, or None when it doesn't exist."""
        if path in self.files:
            return self.files[path]
        host = self.mounts.get(path)
        return None if host is None else self._read(host)

    def write(self, path: str, text: str, *, append: bool = False) -> bool:
        """Write (or append to) a file; False when its folder does not exist."""
        if path == "/dev/null":
            return True
        if self.is_dir(path) or not self.is_dir(posixpath.dirname(path)):
            return False
        self.files[path] = (self.read(path) or "") + text if append else text
        return True

    def remove(self, path: str) -> bool:
        """Delete a written file or an empty folder; False when there is none."""
        if self.files.pop(path, None) is not None:
            return True
        if path in self.dirs and not self.listing(path):
            self.dirs.discard(path)
            return True
        return False

    def mkdir(self, path: str) -> bool:
        """Create a folder in an existing one; False when its parent is missing."""
        if not self.is_dir(posixpath.dirname(path)) or path in self.files:
            return False
        self.dirs.add(path)
        return True

    def is_dir(self, path: str) -> bool:
        """Whether a folder is there (made, or holding a file or a mount)."""
        path = path.rstrip("/") or "/"
        if path in self.dirs:
            return True
        prefix = path + "/"
        return any(p.startswith(prefix) for p in (*self.mounts, *self.files, *self.dirs))

    def exists(self, path: str) -> bool:
        """Whether a file or folder is there."""
        return path in self.files or path in self.mounts or self.is_dir(path)

    def listing(self, path: str) -> list[str] | None:
        """The names under a folder, or the file's own name (None when nothing is there)."""
        path = path.rstrip("/") or "/"
        if path in self.mounts or path in self.files:
            return [path.rsplit("/", 1)[-1]]
        prefix = "/" if path == "/" else path + "/"
        names = sorted({p[len(prefix):].split("/", 1)[0]
                        for p in (*self.mounts, *self.files, *self.dirs)
                        if p.startswith(prefix) and p != prefix})
        return names if names or self.is_dir(path) else None


# ----- standard streams ------------------------------------------------------------------

PIPE_LIMIT = 1 << 20
"""Characters a pipe or command substitution holds; a writer past it gets SIGPIPE, as if
its reader had closed (pipeline stages run one after another: `yes | head` must end)."""


class BrokenPipe(Exception):
    """The reader is gone: the writing command ends with 141 (128 + SIGPIPE)."""


class Writer:
    """Where a command's output goes."""

    def write(self, text: str) -> None:
        """Write text (any number of lines, possibly a partial one)."""
        raise NotImplementedError


class Buffer(Writer):
    """A pipe or a command substitution: text kept for the reader."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0

    def write(self, text: str) -> None:
        """Keep the text, or raise BrokenPipe past the limit."""
        self.size += len(text)
        if self.size > PIPE_LIMIT:
            raise BrokenPipe
        self.parts.append(text)

    def text(self) -> str:
        """Everything written."""
        return "".join(self.parts)


class LogWriter(Writer):
    """The container's stdout or stderr: complete lines become `Output` steps."""

    def __init__(self, pending: list[Output], *, stderr: bool) -> None:
        self.pending = pending
        self.stderr = stderr
        self.partial = ""

    def write(self, text: str) -> None:
        """Complete lines to the log; a partial one waits for its end."""
        *lines, self.partial = (self.partial + text).split("\n")
        self.pending += [Output(line, stderr=self.stderr) for line in lines]

    def flush(self) -> None:
        """The last line without a newline, at the end of the script."""
        if self.partial:
            self.pending.append(Output(self.partial, stderr=self.stderr))
            self.partial = ""


class FileWriter(Writer):
    """A file on the emulated filesystem (`>` truncated it when opened)."""

    def __init__(self, fs: FileSystem, path: str) -> None:
        self.fs = fs
        self.path = path

    def write(self, text: str) -> None:
        """Append to the file."""
        self.fs.write(self.path, text, append=True)


@dataclasses.dataclass(kw_only=True)
class IO:
    """A command's standard streams (`read` takes what it reads off `stdin`)."""

    stdin: str
    out: Writer
    err: Writer

    def print(self, text: str) -> None:
        """A line to stdout."""
        self.out.write(text + "\n")

    def error(self, text: str) -> None:
        """A line to stderr."""
        self.err.write(text + "\n")


# ----- what the programs share ------------------------------------------------------------

class UtilShell(Protocol):
    """What a utility sees of the shell."""

    fs: FileSystem
    cwd: str

    def now(self) -> str:
        """The emulated clock's time, RFC 3339."""

    def exported(self) -> dict[str, str]:
        """The environment."""

    def get(self, name: str) -> str | None:
        """A variable."""

    def path(self, name: str) -> str:
        """An absolute path."""


def split_options(args: list[str], with_value: str = "") -> tuple[dict[str, str], list[str]]:
    """Short options (`-n 5`, `-n5`, `-vi`; letters in `with_value` take a value) and
    operands, as getopt reads them."""
    opts: dict[str, str] = {}
    rest: list[str] = []
    it = iter(args)
    for a in it:
        if a == "--":
            rest += list(it)
            break
        if len(a) < 2 or not a.startswith("-") or a[1].isdigit():
            rest.append(a)
            continue
        for k, letter in enumerate(a[1:], 1):
            if letter in with_value:
                opts[letter] = a[k + 1:] if k + 1 < len(a) else next(it, "")
                break
            opts[letter] = ""
    return opts, rest


def read_inputs(sh: UtilShell, name: str, files: list[str], io: IO) -> tuple[str, int]:
    """The text of the files (stdin for none or `-`), and 1 if one was missing."""
    if not files:
        return io.stdin, 0
    parts, status = [], 0
    for f in files:
        if f == "-":
            parts.append(io.stdin)
            continue
        path = sh.path(f)
        text = sh.fs.read(path)
        if text is None:
            reason = "Is a directory" if sh.fs.is_dir(path) else "No such file or directory"
            io.error(f"{name}: {f}: {reason}")
            status = 1
            continue
        parts.append(text)
    return "".join(parts), status


def lines_of(text: str) -> list[str]:
    """Lines without their newlines."""
    return text.splitlines()


def write_lines(io: IO, lines: list[str]) -> None:
    """Lines to stdout."""
    if lines:
        io.out.write("\n".join(lines) + "\n")
