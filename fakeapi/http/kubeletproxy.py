"""Pod streams of a node no kubelet of this process runs: asked of the kubelet API its Node
advertises (`status.daemonEndpoints.kubeletEndpoint.Port` at its address), over HTTPS with
the kube-apiserver-kubelet-client certificate, as kube-apiserver proxies `pods/log` and
`exec` (pkg/kubelet/client, pkg/registry/core/pod/rest: LogLocation, ExecLocation).

The address is the first of InternalIP, ExternalIP, Hostname the Node has (the order kubeadm
gives kube-apiserver's `--kubelet-preferred-address-types`). The kubelet's serving cert is not
verified, as kube-apiserver without `--kubelet-certificate-authority`. Errors are upstream's:
a kubelet that can't be reached is a 500 whose message is Go's `Get "URL": dial tcp ADDR:
connect: connection refused`; a kubelet's 400 is a BadRequest with its text.
"""

from __future__ import annotations

import errno as errnos
import os
import ssl
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import orjson

from fakeapi.kube import podwire
from fakeapi.kube.podio import ExecRequest, ExecResult, LogRequest
from fakeapi.machinery.errors import ApiError

Obj = dict[str, Any]
ADDRESS_TYPES = ("InternalIP", "ExternalIP", "Hostname")
DIAL_TIMEOUT = 5.0
"""Seconds to reach a kubelet (kube-apiserver's `--kubelet-timeout` default)."""
MAX_ERROR_BODY = 1024
"""How much of a kubelet's error answer is read (upstream's GenericHttpResponseChecker)."""
REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound"}


def endpoint_streams(node: Obj, tls: ssl.SSLContext | None) -> KubeletEndpoint | None:
    """The kubelet API the Node advertises, or None when it names no port or address."""
    status = node.get("status") or {}
    port = ((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")
    found = {a.get("type"): a.get("address") for a in status.get("addresses") or ()}
    address = next((found[t] for t in ADDRESS_TYPES if found.get(t)), None)
    if not port or not address:
        return None
    return KubeletEndpoint(host=str(address), port=int(port), tls=tls)


def _host(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _dial_error(method: str, url: str, address: str, error: BaseException) -> ApiError:
    """Go's url.Error of a failed dial, as ErrorToAPIStatus answers it (500, no reason)."""
    if isinstance(error, TimeoutError):
        why = "i/o timeout"
    else:
        os_error = getattr(error, "os_error", error)
        code = getattr(os_error, "errno", None)
        why = (f"connect: {os.strerror(code).lower()}"
               if isinstance(code, int) and code in errnos.errorcode else str(os_error))
    return ApiError(500, "", f'{method} "{url}": dial tcp {address}: {why}')


async def _refusal(response: aiohttp.ClientResponse) -> ApiError:
    """A kubelet's error answer, as upstream's GenericHttpResponseChecker reads it."""
    text = (await response.content.read(MAX_ERROR_BODY)).decode(errors="replace").strip()
    if response.status == 500:
        return ApiError(500, "InternalError", f"Internal error occurred: {text}")
    return ApiError(response.status, REASONS.get(response.status, ""), text)


class KubeletEndpoint:
    """The `NodeStreams` of a kubelet reached over HTTPS (see the module docstring)."""

    def __init__(self, *, host: str, port: int, tls: ssl.SSLContext | None) -> None:
        self.address = _host(host, port)
        self.tls = tls

    def _url(self, scheme: str, path: str, pod: Obj, container: str,
             query: list[tuple[str, str]]) -> str:
        meta = pod["metadata"]
        parts = (meta.get("namespace", ""), meta["name"], container)
        quoted = "/".join(urllib.parse.quote(p, safe="") for p in parts)
        url = f"{scheme}://{self.address}/{path}/{quoted}"
        return f"{url}?{urllib.parse.urlencode(query)}" if query else url

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[aiohttp.ClientSession]:
        connector = aiohttp.TCPConnector(ssl=self.tls if self.tls is not None else False)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=DIAL_TIMEOUT)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            yield session

    async def logs(self, pod: Obj, request: LogRequest) -> AsyncIterator[bytes]:
        """GET /containerLogs/NS/POD/CONTAINER with the request's options, streamed."""
        url = self._url("https", "containerLogs", pod, request.container,
                        list(podwire.log_query(request).items()))
        async with self._session() as session:
            try:
                response = await session.get(url)
            except (aiohttp.ClientConnectorError, TimeoutError) as e:
                raise _dial_error("Get", url, self.address, e) from None
            async with response:
                if response.status != 200:
                    raise await _refusal(response)
                async for chunk in response.content.iter_any():
                    yield chunk

    async def exec(self, pod: Obj, request: ExecRequest) -> ExecResult:
        """Run the command over the kubelet's /exec WebSocket: send stdin, collect the
        output channels and the exit code from the error channel's Status."""
        query = [*(("command", c) for c in request.command), ("stdout", "true"),
                 ("stderr", "true"), *_flags(request)]
        url = self._url("https", "exec", pod, request.container, query)
        async with self._session() as session:
            try:
                ws = await session.ws_connect(url, protocols=podwire.PROTOCOLS)
            except (aiohttp.ClientConnectorError, TimeoutError) as e:
                raise _dial_error("Get", url, self.address, e) from None
            except aiohttp.WSServerHandshakeError as e:
                raise ApiError(e.status, REASONS.get(e.status, ""), e.message) from None
            async with ws:
                if request.stdin is not None:
                    await ws.send_bytes(bytes([podwire.STDIN]) + request.stdin)
                    await ws.send_bytes(bytes([podwire.CLOSE, podwire.STDIN]))
                return await _exec_result(ws)


def _flags(request: ExecRequest) -> Iterator[tuple[str, str]]:
    if request.stdin is not None:
        yield "stdin", "true"
    if request.tty:
        yield "tty", "true"


async def _exec_result(ws: aiohttp.ClientWebSocketResponse) -> ExecResult:
    out, err, code = b"", b"", 0
    async for msg in ws:
        if msg.type != aiohttp.WSMsgType.BINARY or not msg.data:
            break
        channel, payload = msg.data[0], msg.data[1:]
        if channel == podwire.STDOUT:
            out += payload
        elif channel == podwire.STDERR:
            err += payload
        elif channel == podwire.ERROR:
            status = orjson.loads(payload)
            if status.get("status") != "Success":
                causes = (status.get("details") or {}).get("causes") or [{}]
                code = int(causes[0].get("message") or 1)
    return ExecResult(stdout=out, stderr=err, exit_code=code)
