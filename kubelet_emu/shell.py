"""The container shell: what an emulated container runs when its command is a shell script
(`bash -c "..."`) or a program the shell knows (`sleep 3600`, `echo hi`), so it prints
what the real one would (`kubectl logs` then shows the dra-example-driver's
`declare -x GPU_DEVICE_0="gpu-0"` lines) and exits when the real one would.

A script is a generator of steps: output lines, sleeps (on the emulated clock) and the
exit. The modules behind it: `shell_parse` (bash source to a tree), `shell_expand` and
`shell_arith` (words and `$((...))`), `shell_exec` (running the tree), `shell_state` (the
variables and the builtins that change them), `shell_cond` (`test`, `[`, `[[ ]]`),
`shell_utils` and `shell_text` (the programs). What the shell lacks fails with one message
naming it, ending in "not supported by fakeapi's container shell".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from kubelet_emu.shell_base import Exit, FileSystem, Output, Sleep, Step
from kubelet_emu.shell_exec import Shell, known_commands
from kubelet_emu.shell_state import declare

__all__ = ["SHELLS", "Exit", "FileSystem", "Output", "Shell", "Sleep", "Step", "declare",
           "environment_lines", "script_of", "terminate"]

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})


def script_of(argv: list[str]) -> str | None:
    """The script an exec-form command runs: `sh -c SCRIPT [NAME ARGS...]`, or a command
    line this interpreter knows (`sleep 3600`, `echo hi`); None for any other program."""
    if not argv:
        return None
    program = argv[0].rsplit("/", 1)[-1]
    if program in SHELLS:
        if "-c" in argv[1:]:
            i = argv.index("-c")
            return argv[i + 1] if i + 1 < len(argv) else ""
        return None
    if program in known_commands():
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
