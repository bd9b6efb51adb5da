"""The real kubectl v1.37 against the `fakeapi.kube.podio` hook: `kubectl logs` reads what a
registered node's streams serve, and `kubectl exec` speaks the v5.channel.k8s.io WebSocket
protocol to them (output, exit codes). The server runs in this process (the hook is an
in-process interface), on a real loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakeapi.auth.kubeconfig import write_kubeconfig
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest
from fakeapi.registry.context import RequestContext

ROOT = RequestContext(user="root", groups=("system:masters",), field_manager="test")


class Streams:
    """A kubelet stand-in: a two-line log, and commands that echo or fail."""

    async def logs(self, pod: dict[str, Any], request: LogRequest) -> AsyncIterator[bytes]:
        yield f"hello from {request.container}\n".encode()
        yield b"second line\n"

    async def exec(self, pod: dict[str, Any], request: ExecRequest) -> ExecResult:
        if request.command[:1] == ("false",):
            return ExecResult(stderr=b"it failed\n", exit_code=7)
        return ExecResult(stdout=(" ".join(request.command[1:]) + "\n").encode())


async def _kubectl(binary: str, kubeconfig: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        binary, "--kubeconfig", str(kubeconfig), *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.fixture
async def served(aiohttp_server: Any, tmp_path: Path) -> tuple[Cluster, Path]:
    cluster = Cluster(ClusterConfig())
    pods = cluster.kinds.by_id("pods")
    assert pods is not None
    cluster.registry.create(pods, "default", {"metadata": {"name": "web"}, "spec": {
        "nodeName": "gpu-node", "containers": [{"name": "app", "image": "x"}]}}, ROOT)
    cluster.component_client("kubelet", node="gpu-node").serve_pod_streams("gpu-node", Streams())
    server = await aiohttp_server(create_app(cluster))
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, server=str(server.make_url("")).rstrip("/"), pki=None)
    return cluster, kubeconfig


async def test_kubectl_logs_and_exec_reach_the_registered_node(
        served: tuple[Cluster, Path], kubectl_binary: str) -> None:
    _, kubeconfig = served
    code, out, err = await _kubectl(kubectl_binary, kubeconfig, "logs", "web")
    assert (code, out) == (0, "hello from app\nsecond line\n"), err
    code, out, err = await _kubectl(kubectl_binary, kubeconfig, "exec", "web", "--", "echo",
                                    "hi", "there")
    assert (code, out) == (0, "hi there\n"), err
    code, out, err = await _kubectl(kubectl_binary, kubeconfig, "exec", "web", "--", "false")
    assert code == 7 and "it failed" in err, (code, out, err)
    assert "command terminated with exit code 7" in err
