"""The kubelet's HTTPS API for the nodes of an emulate process (upstream's pkg/kubelet/server):
`GET /containerLogs/NS/POD/CONTAINER` with PodLogOptions' query parameters (follow, tailLines,
timestamps, sinceSeconds, limitBytes, previous) and `/exec/NS/POD/CONTAINER` (WebSocket,
`v5.channel.k8s.io` / `v4.channel.k8s.io`), on one port for every node the process runs.
Where `fakeapi serve` asks a node's `NodeStreams` in process, the API server it attaches to
proxies `pods/log` and `exec` here (`fakeapi.http.kubeletproxy`).

The pod is looked up by namespace and name (a kubelet's pod manager: here the shared pod
informer), then asked of the streams its node registered. A client must present a
certificate the TLS context verifies (the API server's kube-apiserver-kubelet-client): the
composition root builds that context. Errors are a kubelet's: the status code and the
message as plain text (`pod "x" does not exist`, 404), which the API server turns into its
Status.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from fakeapi.kube import podwire
from fakeapi.kube.podio import ExecRequest, NodeStreams
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.querybool import query_flag
from fakeapi.runtime.listener import AppListener

Obj = dict[str, Any]
PodLookup = Callable[[str, str], Obj | None]
"""(namespace, name) → the pod as the kubelet knows it, or None."""
UNSUPPORTED = ("attach", "portForward")
"""Kubelet endpoints the emulated kubelet answers as not supported."""


class KubeletApiServer:
    """The kubelet API of an emulate process's nodes on one address (see the module
    docstring); `start()` binds it, `stop()` closes it."""

    def __init__(self, *, pods: PodLookup, streams: Mapping[str, NodeStreams],
                 tls: ssl.SSLContext | None) -> None:
        self._pods = pods
        self._streams = streams
        self._tls = tls
        self._listener = AppListener(shutdown_timeout=2)

    def app(self) -> web.Application:
        """The aiohttp application of the kubelet's endpoints."""
        app = web.Application(middlewares=[self._guard])
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        app.router.add_route("*", "/exec/{namespace}/{pod}/{container}", self._exec)
        for name in UNSUPPORTED:
            app.router.add_route("*", f"/{name}/{{namespace}}/{{pod}}", self._unsupported)
            app.router.add_route("*", f"/{name}/{{namespace}}/{{pod}}/{{container}}",
                                 self._unsupported)
        return app

    @property
    def port(self) -> int:
        """The bound port (after `start()`)."""
        return self._listener.port

    async def start(self, host: str, port: int) -> int:
        """Listen on `host:port` (0: a free port) and return the bound port."""
        return await self._listener.start(self.app(), host, port, self._tls)

    async def stop(self) -> None:
        """Stop listening and close the open streams."""
        await self._listener.stop()

    @web.middleware
    async def _guard(self, request: web.Request,
                     handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                     ) -> web.StreamResponse:
        """Only a verified client certificate gets in; an ApiError is a kubelet's text."""
        peer = request.transport.get_extra_info("peercert") if request.transport else None
        if self._tls is not None and not peer:
            return web.Response(status=401, text="Unauthorized")
        try:
            return await handler(request)
        except ApiError as e:
            return web.Response(status=e.code, text=e.message)

    def _target(self, request: web.Request) -> tuple[Obj, NodeStreams]:
        """The pod a path names and the streams of its node (404 as a kubelet's)."""
        namespace, name = request.match_info["namespace"], request.match_info["pod"]
        pod = self._pods(namespace, name)
        node = str(((pod or {}).get("spec") or {}).get("nodeName") or "")
        streams = self._streams.get(node) if pod is not None else None
        if pod is None or streams is None:
            raise ApiError(404, "NotFound", f'pod "{name}" does not exist')
        return pod, streams

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        pod, streams = self._target(request)
        log_request = podwire.log_request(request.query, request.match_info["container"])
        return await podwire.stream_log(request, aiter(streams.logs(pod, log_request)))

    async def _exec(self, request: web.Request) -> web.StreamResponse:
        pod, streams = self._target(request)
        if request.headers.get("Upgrade", "").lower() != "websocket":
            raise ApiError(400, "BadRequest", "Upgrade request required")
        return await podwire.serve_exec(request, streams, pod, ExecRequest(
            container=request.match_info["container"],
            command=tuple(request.query.getall("command", [])),
            tty=query_flag(request.query, "tty")), stdin=query_flag(request.query, "stdin"))

    async def _unsupported(self, request: web.Request) -> web.StreamResponse:
        self._target(request)
        endpoint = request.path.split("/")[1]
        raise ApiError(400, "BadRequest", f"{endpoint} is not supported by the emulated kubelet")
