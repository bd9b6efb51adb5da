"""The hook through which emulated kubelets serve pods' logs and exec: what kube-apiserver
proxies to a node's kubelet, the server asks of the `NodeStreams` registered for that node.

The core knows no kubelet: a component registers one `NodeStreams` per node it runs with
its client, `client.serve_pod_streams(node, streams)`, and `serve_pod_streams(node, None)`
when it stops serving the node. Without one, the server asks the kubelet API the Node
advertises (a kubelet of another process, `fakeapi emulate`), and where it advertises none
`pods/NAME/log` and `exec` answer the clear one-shot errors a real cluster gives while no
kubelet runs the pod.
"""

from __future__ import annotations

import dataclasses
import ssl
from collections.abc import AsyncIterator
from typing import Any, Protocol

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LogRequest:
    """The PodLogOptions of one `pods/NAME/log` request."""

    container: str
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExecRequest:
    """The PodExecOptions of one `pods/NAME/exec` request."""

    container: str
    command: tuple[str, ...]
    stdin: bytes | None = None
    tty: bool = False


@dataclasses.dataclass(frozen=True)
class ExecResult:
    """What a command wrote and how it ended."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0


class NodeStreams(Protocol):
    """What an emulated kubelet serves for the pods of its node."""

    def logs(self, pod: Obj, request: LogRequest) -> AsyncIterator[bytes]:
        """The container's log as chunks (open-ended while `follow` and the pod runs)."""
        ...

    async def exec(self, pod: Obj, request: ExecRequest) -> ExecResult:
        """Run a command in the container."""
        ...


class PodIO:
    """Node name → the `NodeStreams` of the kubelet that runs it."""

    def __init__(self) -> None:
        self._nodes: dict[str, NodeStreams] = {}
        self.kubelet_tls: ssl.SSLContext | None = None
        """How the server reaches the kubelet API of a node not registered here (its client
        certificate; `fakeapi.http.kubeletproxy`), set by the listener."""

    def register(self, node: str, streams: NodeStreams) -> None:
        """Serve the logs and exec of `node`'s pods through `streams`."""
        self._nodes[node] = streams

    def unregister(self, node: str) -> None:
        """Stop serving `node` (its kubelet went away)."""
        self._nodes.pop(node, None)

    def streams(self, node: str) -> NodeStreams | None:
        """The kubelet serving `node`, if any."""
        return self._nodes.get(node)
