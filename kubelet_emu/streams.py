"""What an emulated kubelet serves for `kubectl logs` and `kubectl exec` (`fakeapi.kube.podio`).

Logs are the container's CRI log files, as the kubelet's log endpoint reads them. Exec runs
the command in the shell interpreter with the running container's environment and mounts
(so `kubectl exec POD -- env` shows the CDI environment, `cat` a device-metadata file), or
answers as a container runtime does for a program the emulator can't run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import kubelet_emu.shell as shell
from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.errors import ApiError, bad_request
from kubelet_emu.pod_records import ContainerRun, PodRecord

Obj = dict[str, Any]
FOLLOW_POLL = 0.5
"""Seconds between looks at a followed log for new lines."""
NOT_FOUND = 127  # bash's "command not found"


@dataclasses.dataclass(frozen=True)
class Container:
    """How to reach one container of a pod the kubelet runs."""

    record: PodRecord
    run: ContainerRun


class KubeletStreams:
    """The `NodeStreams` of one emulated node: logs and exec of the pods it runs."""

    def __init__(self, *, node: str, clock: Clock,
                 find: Callable[[str, str, str], Container | None],
                 read_log: Callable[[str, str, str, bool, bool], str | None]) -> None:
        self.node = node
        self.clock = clock
        self._find = find
        self._read_log = read_log

    async def logs(self, pod: Obj, request: LogRequest) -> AsyncIterator[bytes]:
        """The container's log (upstream's 400 while it hasn't started); with `follow`, new
        lines as they come until the container has exited."""
        meta = pod["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        text = self._read_log(namespace, name, request.container, request.previous,
                              request.timestamps)
        if text is None:
            if request.previous:
                raise bad_request(f'previous terminated container "{request.container}" in '
                                  f'pod "{name}" not found')
            raise bad_request(f'container "{request.container}" in pod "{name}" is waiting to '
                              "start: ContainerCreating")
        yield _cut(text, request).encode()
        if not request.follow or request.previous:
            return
        sent = len(text)
        while True:
            container = self._find(namespace, name, request.container)
            ended = container is None or container.run.exit_code is not None
            if not ended:  # an ended container's log is read once more at once: a stopped
                await self.clock.sleep(FOLLOW_POLL)  # virtual clock doesn't hold it open
            text = self._read_log(namespace, name, request.container, False,
                                  request.timestamps) or ""
            if len(text) > sent:
                yield text[sent:].encode()
                sent = len(text)
            if ended:
                return

    async def exec(self, pod: Obj, request: ExecRequest) -> ExecResult:
        """Run the command in the running container's environment."""
        meta = pod["metadata"]
        container = self._find(meta.get("namespace", ""), meta["name"], request.container)
        if container is None or container.run.process is None or (
                container.run.exit_code is not None):
            raise ApiError(400, "BadRequest", "unable to upgrade connection: container not "
                           f'found ("{request.container}")')
        running = container.run.process.shell
        script = shell.script_of(list(request.command))
        if script is None:
            program = request.command[0] if request.command else ""
            return ExecResult(stderr=f"exec: {program!r}: not run by the emulated container "
                              "(only the shell interpreter's commands are)\n".encode(),
                              exit_code=NOT_FOUND)
        sh = shell.Shell(env=dict(running.env), fs=running.fs, now=running.now)
        out: list[str] = []
        err: list[str] = []
        code = 0
        for step in sh.run(script):
            if isinstance(step, shell.Output):
                (err if step.stderr else out).append(step.text + "\n")
            elif isinstance(step, shell.Exit):
                code = step.code
                break
        else:
            code = sh.status
        return ExecResult(stdout="".join(out).encode(), stderr="".join(err).encode(),
                          exit_code=code)


def _cut(text: str, request: LogRequest) -> str:
    """tailLines and limitBytes, as the kubelet applies them."""
    if request.tail_lines is not None:
        lines = text.splitlines(keepends=True)
        text = "".join(lines[-request.tail_lines:]) if request.tail_lines > 0 else ""
    if request.limit_bytes is not None:
        text = text.encode()[:request.limit_bytes].decode(errors="ignore")
    return text
