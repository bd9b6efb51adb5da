"""pods/log and pods/exec through the `fakeapi.kube.podio` hook: a registered node's streams serve
the log (plain text) and exec (the v5.channel.k8s.io WebSocket protocol, with the error
channel's Status); the container rules and the no-kubelet answers are upstream's."""

from __future__ import annotations

from typing import Any

import aiohttp
import orjson
import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.registry.context import RequestContext
from tests.support.podstreams import RecordingStreams

Obj = dict[str, Any]
ROOT = RequestContext(user="root", groups=("system:masters",), field_manager="test")
POD = "/api/v1/namespaces/default/pods/p"


@pytest.fixture
async def served(aiohttp_client: Any) -> tuple[Cluster, Any, RecordingStreams]:
    cluster = Cluster(ClusterConfig())
    pods = cluster.kinds.by_id("pods")
    assert pods is not None
    cluster.registry.create(pods, "default", {"metadata": {"name": "p"}, "spec": {
        "nodeName": "n1", "containers": [{"name": "a", "image": "x"},
                                         {"name": "b", "image": "x"}]}}, ROOT)
    streams = RecordingStreams()
    cluster.component_client("kubelet", node="n1").serve_pod_streams("n1", streams)
    return cluster, await aiohttp_client(create_app(cluster)), streams


async def test_the_log_comes_from_the_node_streams(served: tuple[Cluster, Any, RecordingStreams]
                                                   ) -> None:
    _, api, streams = served
    resp = await api.get(POD + "/log", params={"container": "a", "tailLines": "2"})
    assert resp.status == 200 and resp.content_type == "text/plain"
    assert await resp.text() == "line2\nline3\n"
    assert streams.requests[-1].container == "a" and streams.requests[-1].tail_lines == 2


@pytest.mark.parametrize(("params", "message"), [
    ({}, "a container name must be specified for pod p, choose one of: [a b]"),
    ({"container": "c"}, "container c is not valid for pod p"),
])
async def test_the_log_names_its_container(served: tuple[Cluster, Any, RecordingStreams],
                                           params: dict[str, str], message: str) -> None:
    _, api, _ = served
    resp = await api.get(POD + "/log", params=params)
    body = await resp.json()
    assert (resp.status, body["reason"], body["message"]) == (400, "BadRequest", message)


async def test_without_a_kubelet_the_answer_says_so(served: tuple[Cluster, Any, RecordingStreams]
                                                    ) -> None:
    cluster, api, _ = served
    cluster.component_client("kubelet", node="n1").serve_pod_streams("n1", None)
    resp = await api.get(POD + "/log", params={"container": "a"})
    assert (await resp.json())["message"] == (
        'container "a" in pod "p" is not available: node "n1" is not run by an emulated '
        "kubelet")


async def _exec(api: Any, *command: str, stdin: bytes | None = None) -> list[bytes]:
    params = [("container", "a"), ("stdout", "true"), ("stderr", "true"),
              *(("command", c) for c in command)]
    if stdin is not None:
        params.append(("stdin", "true"))
    frames = []
    async with api.ws_connect(POD + "/exec", params=params,
                              protocols=("v5.channel.k8s.io",)) as ws:
        assert ws.protocol == "v5.channel.k8s.io"
        if stdin is not None:
            await ws.send_bytes(b"\x00" + stdin)
            await ws.send_bytes(b"\xff\x00")  # v5: stdin closed
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                frames.append(msg.data)
    return frames


async def test_exec_speaks_the_channel_protocol(
        served: tuple[Cluster, Any, RecordingStreams]) -> None:
    _, api, streams = served
    frames = await _exec(api, "echo", "hi")
    assert frames[0] == b"\x01hi"
    assert orjson.loads(frames[-1][1:]) == {"metadata": {}, "status": "Success"}
    frames = await _exec(api, "cat", stdin=b" there")
    assert frames[0] == b"\x01 there"
    frames = await _exec(api, "fail")
    assert frames[0] == b"\x02boom\n"
    status = orjson.loads(frames[-1][1:])
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]


@pytest.mark.parametrize(("params", "message"), [
    ([("container", "a"), ("stdout", "true")], "you must specify at least 1 command"),
    ([("container", "a"), ("command", "ls")],
     "you must specify at least one of stdin, stdout, stderr"),
])
async def test_exec_checks_its_options(served: tuple[Cluster, Any, RecordingStreams],
                                       params: list[tuple[str, str]], message: str) -> None:
    _, api, _ = served
    resp = await api.post(POD + "/exec", params=params)
    assert (resp.status, (await resp.json())["message"]) == (400, message)


async def test_exec_on_an_unscheduled_pod(served: tuple[Cluster, Any, RecordingStreams]) -> None:
    cluster, api, _ = served
    pods = cluster.kinds.by_id("pods")
    assert pods is not None
    cluster.registry.create(pods, "default", {"metadata": {"name": "q"}, "spec": {
        "containers": [{"name": "a", "image": "x"}]}}, ROOT)
    resp = await api.post("/api/v1/namespaces/default/pods/q/exec",
                          params=[("command", "ls"), ("stdout", "true")])
    assert (resp.status, (await resp.json())["message"]) == (
        400, "pod q does not have a host assigned")
    log = await api.get("/api/v1/namespaces/default/pods/q/log")
    assert (log.status, await log.text()) == (200, "")
