"""A node's pod streams as an emulated kubelet would serve them (`fakeapi.kube.podio`), for
the tests of the paths in front of them: fixed log lines (the last `tailLines` of them), an
echoing command, and the requests each was asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest
from fakeapi.machinery.errors import ApiError

Obj = dict[str, Any]
LINES = (b"line1\n", b"line2\n", b"line3\n")
WAITING = "waiting"
"""The container whose log is refused as a kubelet refuses one that hasn't started."""


class RecordingStreams:
    """`NodeStreams` with canned answers, recording every request."""

    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def logs(self, pod: Obj, request: LogRequest) -> AsyncIterator[bytes]:
        """The last `tail_lines` of LINES (all of them without)."""
        self.requests.append(request)
        if request.container == WAITING:
            raise ApiError(400, "BadRequest", f'container "{WAITING}" in pod '
                           f'"{pod["metadata"]["name"]}" is waiting to start: ContainerCreating')
        for line in LINES[-(request.tail_lines or len(LINES)):]:
            yield line

    async def exec(self, pod: Obj, request: ExecRequest) -> ExecResult:
        """`fail` exits 3 saying boom; any other command echoes its arguments and stdin."""
        self.requests.append(request)
        if request.command[0] == "fail":
            return ExecResult(stderr=b"boom\n", exit_code=3)
        return ExecResult(stdout=" ".join(request.command[1:]).encode() + (request.stdin or b""))
