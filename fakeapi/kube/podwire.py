"""The wire of the pod streams, the same on the API server's `pods/NAME/log` and `exec` and on
a kubelet's `/containerLogs` and `/exec`: the log's query parameters and chunked text, and the
WebSocket channel protocol (`v5.channel.k8s.io` / `v4.channel.k8s.io`) kubectl 1.37 speaks.

Imports: machinery, `podio`, and aiohttp's server types (both servers are aiohttp apps).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import Any

import orjson
from aiohttp import WSMsgType, web

from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest, NodeStreams
from fakeapi.machinery.querybool import query_flag

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
LOG_FLAGS = ("follow", "previous", "timestamps")
LOG_NUMBERS = {"tailLines": "tail_lines", "limitBytes": "limit_bytes",
               "sinceSeconds": "since_seconds"}
"""PodLogOptions' query parameters (upstream's names) and the `LogRequest` fields they set."""

Obj = dict[str, Any]


def _int(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name)
    return int(value) if value not in (None, "") else None


def log_request(query: Mapping[str, str], container: str = "") -> LogRequest:
    """The PodLogOptions a query asks for (a number that doesn't parse asks for none: the
    registry's validation has answered it)."""
    try:
        numbers = {field: _int(query, name) for name, field in LOG_NUMBERS.items()}
    except ValueError:
        return LogRequest(container=container)
    return LogRequest(container=container, follow=query_flag(query, "follow"),
                      previous=query_flag(query, "previous"),
                      timestamps=query_flag(query, "timestamps"), **numbers)


def log_query(request: LogRequest) -> dict[str, str]:
    """The query a `LogRequest` is sent to a kubelet with (upstream's LogLocation: only the
    options set)."""
    query = {name: "true" for name in LOG_FLAGS if getattr(request, name)}
    for name, field in LOG_NUMBERS.items():
        value = getattr(request, field)
        if value is not None:
            query[name] = str(value)
    return query


async def stream_log(request: web.Request, chunks: AsyncIterator[bytes]) -> web.StreamResponse:
    """Answer with a log's chunks as chunked plain text. The first chunk is read before the
    headers, so a kubelet's refusal (an ApiError) is still an error answer."""
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


async def serve_exec(request: web.Request, streams: NodeStreams, pod: Obj,
                     exec_request: ExecRequest, *, stdin: bool) -> web.StreamResponse:
    """Run one command over a WebSocket: stdin until its CLOSE (when asked for), then stdout,
    stderr and the error channel's Status."""
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
