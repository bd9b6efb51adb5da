"""HTTP side of the streamed pod subresources: `log` (plain text, chunked with `follow`),
`exec` and `attach` (WebSocket, the `v5.channel.k8s.io` / `v4.channel.k8s.io` channel
protocol kubectl 1.37 speaks) and `portforward`.

The registry checks the request as upstream does (container, host, command); then the node's
kubelet streams from `fakeapi.kube.podio`. Where no emulated kubelet runs the pod, the answer is a
one-shot Status saying so, never a 404 and never a hang. A pod without a node has an empty
log, as upstream's LogLocation gives it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
from aiohttp import WSMsgType, web

from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest, PodIO
from fakeapi.machinery.errors import ApiError, bad_request
from fakeapi.machinery.querybool import query_flag
from fakeapi.registry.generic import Registry
from fakeapi.registry.rest import Kind

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
KUBELET_CONNECTIONS = ("exec",)
"""The connections an emulated kubelet serves (`fakeapi.kube.podio` streams logs and exec);
attach and portforward are answered as not supported by it."""
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255

Obj = dict[str, Any]


def _int(query: Any, name: str) -> int | None:
    value = query.get(name)
    return int(value) if value not in (None, "") else None


def _not_running(pod: Obj, container: str) -> ApiError:
    """What a client sees while no kubelet runs the pod: upstream's kubelet message for a
    container still waiting, naming why this emulator has nothing to stream."""
    name = pod["metadata"]["name"]
    node = (pod.get("spec") or {}).get("nodeName")
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        waiting = (status.get("state") or {}).get("waiting")
        if status.get("name") == container and waiting:
            return bad_request(f'container "{container}" in pod "{name}" is waiting to start: '
                               f"{waiting.get('reason') or 'ContainerCreating'}")
    return bad_request(f'container "{container}" in pod "{name}" is not available: node '
                       f'"{node}" is not run by an emulated kubelet')


async def serve_stream(request: web.Request, registry: Registry, pod_io: PodIO, kind: Kind,
                       namespace: str, name: str, subresource: str) -> web.StreamResponse:
    """Answer one GET of a subresource read as a stream (`rest.StreamStrategy`: the log)."""
    if request.method != "GET":
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on "
                       "the requested resource")
    return await _log(request, registry, pod_io, kind, namespace, name, subresource)


async def serve_connect(request: web.Request, registry: Registry, pod_io: PodIO, kind: Kind,
                        namespace: str, name: str, subresource: str) -> web.StreamResponse:
    """Answer one request to connect to a subresource (`rest.ConnectStrategy`: exec, attach,
    portforward); the emulated kubelet streams exec only."""
    if request.method not in ("GET", "POST"):
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource")
    options = {k: v for k, v in request.query.items()}
    commands = tuple(request.query.getall("command", []))
    if commands:
        options["command"] = commands[0]
    pod, container = registry.locate(kind, namespace, name, subresource, options)
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    streams = pod_io.streams(node)
    if streams is None or subresource not in KUBELET_CONNECTIONS:
        if streams is not None:
            raise bad_request(f"{subresource} is not supported by the emulated kubelet of node "
                              f'"{node}"')
        raise _not_running(pod, container)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise bad_request("Upgrade request required: use a WebSocket client "
                          f"({', '.join(PROTOCOLS)})")
    return await _exec(request, streams, pod, ExecRequest(
        container=container, command=commands, tty=query_flag(request.query, "tty")),
        stdin=query_flag(request.query, "stdin"))


async def _log(request: web.Request, registry: Registry, pod_io: PodIO, kind: Kind,
               namespace: str, name: str, subresource: str) -> web.StreamResponse:
    q = request.query
    try:
        log_request = LogRequest(container="", follow=query_flag(q, "follow"),
                                 previous=query_flag(q, "previous"),
                                 timestamps=query_flag(q, "timestamps"),
                                 tail_lines=_int(q, "tailLines"),
                                 limit_bytes=_int(q, "limitBytes"),
                                 since_seconds=_int(q, "sinceSeconds"))
    except ValueError:
        log_request = LogRequest(container="")
    pod, container = registry.locate(kind, namespace, name, subresource, dict(q))
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node:
        return web.Response(body=b"", content_type="text/plain")
    streams = pod_io.streams(node)
    if streams is None:
        raise _not_running(pod, container)
    log_request = dataclasses.replace(log_request, container=container)
    chunks = aiter(streams.logs(pod, log_request))
    # the first chunk before the headers: a kubelet's refusal (ApiError) is still a Status
    first = await anext(chunks, None)
    response = web.StreamResponse(headers={"Content-Type": "text/plain",
                                           "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    try:
        if first is not None:
            await response.write(first)
        async for chunk in chunks:
            await response.write(chunk)
    except ConnectionResetError:
        return response
    await response.write_eof()
    return response


def exec_status(result: ExecResult) -> Obj:
    """The error channel's Status at the end of a command (upstream's remotecommand)."""
    if result.exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure", "reason": "NonZeroExitCode",
            "message": f"command terminated with non-zero exit code: exit status "
                       f"{result.exit_code}",
            "details": {"causes": [{"reason": "ExitCode", "message": str(result.exit_code)}]}}


async def _exec(request: web.Request, streams: Any, pod: Obj, exec_request: ExecRequest,
                *, stdin: bool) -> web.StreamResponse:
    ws = web.WebSocketResponse(protocols=PROTOCOLS)
    await ws.prepare(request)
    data = b""
    if stdin:
        async for msg in ws:
            if msg.type != WSMsgType.BINARY or not msg.data:
                break
            channel, payload = msg.data[0], msg.data[1:]
            if channel == STDIN:
                data += payload
            elif channel == CLOSE and payload[:1] == bytes([STDIN]):
                break
    result = await streams.exec(pod, dataclasses.replace(exec_request, stdin=data or None))
    if result.stdout:
        await ws.send_bytes(bytes([STDOUT]) + result.stdout)
    if result.stderr:
        await ws.send_bytes(bytes([STDERR]) + result.stderr)
    await ws.send_bytes(bytes([ERROR]) + orjson.dumps(exec_status(result)))
    await ws.close()
    return ws
