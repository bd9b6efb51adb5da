"""An emulated container's process: what it prints, when it exits, what SIGTERM does.

A command the shell interpreter can read (`bash -c "export; trap 'exit 0' TERM; sleep 9999 &
wait"`, `sleep 3600`, `sh -c 'exit 0'`) runs as that script on the emulated clock. Any other
program is a service: it prints the container's view (its environment and the
device-metadata files mounted for it) when it uses devices, runs until stopped (or for the
pod's `emulator.fakeapi.dev/run-seconds`) and exits 0 on SIGTERM.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import kubelet_emu.shell as shell

TERM_KILLED = 137
"""The exit status of a container killed at the end of its grace period (128 + SIGKILL)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Progress:
    """What a process did since it was last resumed."""

    output: tuple[shell.Output, ...] = ()
    exit_code: int | None = None
    """Set once it has exited."""
    wake_after: float | None = None
    """Seconds until it must be resumed again (None: only a signal moves it)."""


class Process:
    """One run of a container's command (see the module docstring)."""

    def __init__(self, *, script: str | None, sh: shell.Shell, view: list[str],
                 run_seconds: float | None = None) -> None:
        self.shell = sh
        self.script = script
        self.view = view
        self.run_seconds = run_seconds
        self._steps: Iterator[shell.Step] | None = None
        self._service_started = False
        self.exit_code: int | None = None

    @property
    def interpreted(self) -> bool:
        """Whether the command runs in the shell interpreter (else: a service)."""
        return self.script is not None

    def resume(self) -> Progress:
        """Run until the process blocks or exits."""
        if self.exit_code is not None:
            return Progress(exit_code=self.exit_code)
        if self.script is None:
            if self._service_started:
                return self._exit(0, ())
            self._service_started = True
            out = tuple(shell.Output(line) for line in self.view)
            return Progress(output=out, wake_after=self.run_seconds)
        if self._steps is None:
            self._steps = self.shell.run(self.script)
        return self._drain(self._steps)

    def _drain(self, steps: Iterator[shell.Step]) -> Progress:
        out: list[shell.Output] = []
        for step in steps:
            if isinstance(step, shell.Output):
                out.append(step)
            elif isinstance(step, shell.Sleep):
                return Progress(output=tuple(out), wake_after=step.seconds)
            else:
                return self._exit(step.code, out)
        return self._exit(self.shell.status, out)

    def _exit(self, code: int, out: tuple[shell.Output, ...] | list[shell.Output]) -> Progress:
        self.exit_code = code
        return Progress(output=tuple(out), exit_code=code)

    def terminate(self) -> Progress | None:
        """SIGTERM: the process's answer, or None when it ignores the signal (a shell as
        PID 1 without a TERM trap, or `sleep`): it is then killed at the grace period's end."""
        if self.exit_code is not None:
            return Progress(exit_code=self.exit_code)
        if self.script is None:
            return self._exit(0, ())
        steps, handled = shell.terminate(self.shell)
        if not handled:
            return None
        progress = self._drain(steps)
        if progress.exit_code is None:  # the trap itself blocks: it still ends the script
            return self._exit(self.shell.status, progress.output)
        return progress

    def kill(self) -> Progress:
        """SIGKILL."""
        return self._exit(TERM_KILLED, ())
