"""The kubelet API of an emulate process (`kubelet_emu.kubelet_api`) as the API server's proxy
(`fakeapi.http.kubeletproxy`) reaches it: over real TLS with the data dir's PKI (the
kube-apiserver-kubelet-client cert, the CA it is verified by), a log request's options arrive
whole, exec carries stdin, output and the exit code, and refusals are a kubelet's (404 for a
pod it doesn't run, 401 without a certificate, upstream's dial error when nothing listens)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from fakeapi.auth.tls import ensure_pki, kubelet_client_context, kubelet_serving_context
from fakeapi.http.kubeletproxy import KubeletEndpoint, endpoint_streams
from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest
from fakeapi.machinery.errors import ApiError
from kubelet_emu.kubelet_api import KubeletApiServer
from tests.support.podstreams import LINES, WAITING, RecordingStreams

Obj = dict[str, Any]
POD: Obj = {"metadata": {"namespace": "ns", "name": "p"}, "spec": {"nodeName": "n1"}}
STRANGER: Obj = {"metadata": {"namespace": "ns", "name": "elsewhere"},
                 "spec": {"nodeName": "n2"}}


@pytest.fixture
async def kubelet(tmp_path: Path) -> AsyncIterator[tuple[KubeletApiServer, RecordingStreams, Path]]:
    pki = ensure_pki(tmp_path / "pki")
    streams = RecordingStreams()
    pods = {("ns", "p"): POD, ("ns", "elsewhere"): STRANGER}
    server = KubeletApiServer(
        pods=lambda ns, name: pods.get((ns, name)), streams={"n1": streams},
        tls=kubelet_serving_context(tmp_path / "kubelet", ("127.0.0.1",),
                                    pki.ca_cert.read_bytes()))
    await server.start("127.0.0.1", 0)
    yield server, streams, tmp_path / "pki"
    await server.stop()


def endpoint(server: KubeletApiServer, pki_dir: Path | None) -> KubeletEndpoint:
    node = {"status": {"addresses": [{"type": "Hostname", "address": "n1"},
                                     {"type": "InternalIP", "address": "127.0.0.1"}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": server.port}}}}
    streams = endpoint_streams(node, kubelet_client_context(
        ensure_pki(pki_dir) if pki_dir else None))
    assert streams is not None
    return streams


async def read(streams: KubeletEndpoint, pod: Obj, request: LogRequest) -> bytes:
    return b"".join([chunk async for chunk in streams.logs(pod, request)])


@pytest.mark.parametrize("request_", [
    LogRequest(container="c", tail_lines=2),
    LogRequest(container="c", follow=True, timestamps=True, tail_lines=2),
    LogRequest(container="c", previous=True, limit_bytes=10, since_seconds=30, tail_lines=2),
])
async def test_a_log_request_reaches_the_kubelet_whole(
        kubelet: tuple[KubeletApiServer, RecordingStreams, Path], request_: LogRequest) -> None:
    server, streams, pki = kubelet
    assert await read(endpoint(server, pki), POD, request_) == b"".join(LINES[-2:])
    assert streams.requests == [request_]


@pytest.mark.parametrize(("command", "stdin", "result"), [
    (("echo", "hi"), None, ExecResult(stdout=b"hi")),
    (("cat", "-"), b" and more", ExecResult(stdout=b"- and more")),
    (("fail",), None, ExecResult(stderr=b"boom\n", exit_code=3)),
])
async def test_exec_carries_stdin_output_and_the_exit_code(
        kubelet: tuple[KubeletApiServer, RecordingStreams, Path], command: tuple[str, ...],
        stdin: bytes | None, result: ExecResult) -> None:
    server, streams, pki = kubelet
    request = ExecRequest(container="c", command=command, stdin=stdin)
    assert await endpoint(server, pki).exec(POD, request) == result
    assert streams.requests == [request]


@pytest.mark.parametrize(("pod", "container", "code", "reason", "message"), [
    ({"metadata": {"namespace": "ns", "name": "gone"}}, "c", 404, "NotFound",
     'pod "gone" does not exist'),
    (STRANGER, "c", 404, "NotFound", 'pod "elsewhere" does not exist'),
    (POD, WAITING, 400, "BadRequest",
     f'container "{WAITING}" in pod "p" is waiting to start: ContainerCreating'),
])
async def test_a_kubelet_refusal_is_the_servers_status(
        kubelet: tuple[KubeletApiServer, RecordingStreams, Path], pod: Obj, container: str,
        code: int, reason: str, message: str) -> None:
    server, _, pki = kubelet
    with pytest.raises(ApiError) as e:
        await read(endpoint(server, pki), pod, LogRequest(container=container))
    assert (e.value.code, e.value.reason, e.value.message) == (code, reason, message)


async def test_without_a_client_certificate_the_kubelet_refuses(
        kubelet: tuple[KubeletApiServer, RecordingStreams, Path]) -> None:
    server, streams, _ = kubelet
    with pytest.raises(ApiError) as e:
        await read(endpoint(server, None), POD, LogRequest(container="c"))
    assert (e.value.code, e.value.message) == (401, "Unauthorized")
    assert streams.requests == []


async def test_a_kubelet_nobody_listens_for_is_upstreams_dial_error(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port just free: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    streams = KubeletEndpoint(host="127.0.0.1", port=port,
                              tls=kubelet_client_context(ensure_pki(tmp_path)))
    with pytest.raises(ApiError) as e:
        await read(streams, POD, LogRequest(container="c", follow=True))
    url = f"https://127.0.0.1:{port}/containerLogs/ns/p/c?follow=true"
    assert (e.value.code, e.value.reason, e.value.message) == (
        500, "", f'Get "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused')


@pytest.mark.parametrize(("status", "expected"), [
    ({}, None),
    ({"daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}, None),
    ({"addresses": [{"type": "Hostname", "address": "n1"}],
      "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}}}, "n1:10250"),
    ({"addresses": [{"type": "Hostname", "address": "n1"},
                    {"type": "ExternalIP", "address": "203.0.113.9"},
                    {"type": "InternalIP", "address": "::1"}],
      "daemonEndpoints": {"kubeletEndpoint": {"Port": 4}}}, "[::1]:4"),
])
def test_the_endpoint_is_the_preferred_address_and_the_advertised_port(
        status: Obj, expected: str | None) -> None:
    streams = endpoint_streams({"status": status}, None)
    assert (streams.address if streams else None) == expected
