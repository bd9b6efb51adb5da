"""Running a command with its stderr on a pseudo-terminal (what a progress bar checks)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios

from tests.support.paths import ROOT


def stderr_on_a_terminal(argv: list[str], timeout: float = 60) -> tuple[int, bytes]:
    """Run `argv` (stdout discarded) with stderr on a 100-column terminal: its exit code and
    everything it wrote there."""
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
