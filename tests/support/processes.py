"""Child processes: a real `fakeapi serve` and `fakeapi emulate`, reading a child's output
line by line, and a command run with its stderr on a terminal (what a progress bar needs to
show)."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tests.support.paths import ROOT


class LineReader:
    """Reads a child process's output lines on a thread, so that a test can wait for the line
    it expects (with a deadline) instead of sleeping for a fixed time."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._eof = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def wait_for(self, done: Callable[[list[str]], bool], timeout: float = 30) -> list[str]:
        """Block until `done(lines so far)` holds; fail at the deadline or at end of output."""
        with self._changed:
            self._changed.wait_for(lambda: done(self.lines) or self._eof, timeout)
            if not done(self.lines):
                state = "output ended" if self._eof else f"nothing after {timeout} s"
                raise AssertionError(f"{state}; lines so far: {self.lines}")
            return list(self.lines)

    def rest(self, timeout: float = 30) -> list[str]:
        """Every line, once the output has ended (the process has exited or closed it)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"output still open after {timeout} s"
        return list(self.lines)


@dataclasses.dataclass
class ChildProcess:
    """A running fakeapi child process."""

    proc: subprocess.Popen[str]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        """Signal the process and wait for it to exit; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)


@dataclasses.dataclass
class ServerProcess(ChildProcess):
    """A running `fakeapi serve` child process."""

    url: str
    kubeconfig: Path
    data_dir: Path


@dataclasses.dataclass
class EmulateProcess(ChildProcess):
    """A running `fakeapi emulate` child process; its stderr is read as it comes."""

    ready: str
    """Its ready line."""
    data_dir: Path
    errors: LineReader

    def field(self, key: str) -> str:
        """A `key=value` of the ready line (`identity`, `kubelet`, `health`)."""
        return self.ready.partition(f" {key}=")[2].split()[0]


def fakeapi_command(*args: str) -> list[str]:
    """The argv of a `fakeapi` command run from the source tree."""
    return [sys.executable, "-m", "fakeapi.cli", *args]


def start_emulate(kubeconfig: Path, data_dir: Path, *extra: str) -> EmulateProcess:
    """Start `fakeapi emulate` against a kubeconfig's server and wait for its ready line."""
    proc = subprocess.Popen(fakeapi_command("emulate", "--kubeconfig", str(kubeconfig),
                                            "--data-dir", str(data_dir), *extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    errors = LineReader(proc.stderr)
    line = proc.stdout.readline()
    if not line.startswith("fakeapi emulate ready against "):
        proc.kill()
        raise RuntimeError(f"emulate failed to start: {line}{errors.rest()}")
    return EmulateProcess(proc, line.strip(), data_dir, errors)


def start_server(data_dir: Path, *extra: str, http: bool = False) -> ServerProcess:
    """Start a server on a free loopback port and wait for its ready line."""
    args = fakeapi_command("serve", "--port", "0", "--data-dir", str(data_dir), *extra)
    if http:
        args.append("--http")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if not line.startswith("fakeapi ready at "):
        proc.kill()
        raise RuntimeError(f"server failed to start: {line}{proc.stderr.read()}")
    url, _, kubeconfig = line.removeprefix("fakeapi ready at ").strip().partition(" kubeconfig=")
    return ServerProcess(proc, url, Path(kubeconfig), data_dir)


def stderr_on_a_terminal(argv: list[str], timeout: float = 60) -> tuple[int, bytes]:
    """Run `argv` with its stderr on a pseudo-terminal 100 columns wide (stdout discarded);
    its exit code and everything it wrote there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(argv, cwd=ROOT, stderr=follower, stdout=subprocess.DEVNULL)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        seen += chunk
    code = proc.wait(timeout)
    os.close(leader)
    return code, seen
