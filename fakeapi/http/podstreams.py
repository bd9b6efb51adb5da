"""HTTP side of the streamed pod subresources: `log` (plain text, chunked with `follow`),
`exec` and `attach` (WebSocket, the `v5.channel.k8s.io` / `v4.channel.k8s.io` channel
protocol kubectl 1.37 speaks) and `portforward`.

The registry checks the request as upstream does (container, host, command); then the node's
kubelet streams from `fakeapi.kube.podio`; a node no kubelet of this process runs is asked over
HTTPS at the endpoint its Node advertises (`kubeletproxy`, as kube-apiserver proxies to a
kubelet). Where neither runs the pod, the answer is a one-shot Status saying so, never a 404
and never a hang. A pod without a node has an empty log, as upstream's LogLocation gives it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aiohttp import web

from fakeapi.http import kubeletproxy
from fakeapi.kube import podwire
from fakeapi.kube.podio import ExecRequest, NodeStreams, PodIO
from fakeapi.machinery.errors import ApiError, bad_request
from fakeapi.machinery.querybool import query_flag
from fakeapi.registry.generic import Registry
from fakeapi.registry.kinds import NODES
from fakeapi.registry.rest import Kind

KUBELET_CONNECTIONS = ("exec",)
"""The connections an emulated kubelet serves (`fakeapi.kube.podio` streams logs and exec);
attach and portforward are answered as not supported by it."""

Obj = dict[str, Any]


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
    streams = _streams(registry, pod_io, node)
    if streams is None or subresource not in KUBELET_CONNECTIONS:
        if streams is not None:
            raise bad_request(f"{subresource} is not supported by the emulated kubelet of node "
                              f'"{node}"')
        raise _not_running(pod, container)
    if request.headers.get("Upgrade", "").lower() != "websocket":
        raise bad_request("Upgrade request required: use a WebSocket client "
                          f"({', '.join(podwire.PROTOCOLS)})")
    return await podwire.serve_exec(request, streams, pod, ExecRequest(
        container=container, command=commands, tty=query_flag(request.query, "tty")),
        stdin=query_flag(request.query, "stdin"))


def _streams(registry: Registry, pod_io: PodIO, node: str) -> NodeStreams | None:
    """The kubelet of `node`: one of this process, else the endpoint its Node advertises."""
    streams = pod_io.streams(node)
    if streams is not None or not node:
        return streams
    try:
        obj = registry.get(NODES, "", node).object
    except ApiError:
        return None
    return kubeletproxy.endpoint_streams(obj, pod_io.kubelet_tls)


async def _log(request: web.Request, registry: Registry, pod_io: PodIO, kind: Kind,
               namespace: str, name: str, subresource: str) -> web.StreamResponse:
    log_request = podwire.log_request(request.query)
    pod, container = registry.locate(kind, namespace, name, subresource, dict(request.query))
    node = str((pod.get("spec") or {}).get("nodeName") or "")
    if not node:
        return web.Response(body=b"", content_type="text/plain")
    streams = _streams(registry, pod_io, node)
    if streams is None:
        raise _not_running(pod, container)
    log_request = dataclasses.replace(log_request, container=container)
    return await podwire.stream_log(request, aiter(streams.logs(pod, log_request)))
