"""A process's own health endpoints over plain HTTP (`fakeapi emulate --health-port`, as
kube-scheduler's and the kubelet's healthz ports): `/livez` and `/healthz` (the process
answers), `/readyz` (every check the composition root gives: its components, informers and
the API server), each with `?verbose` and `/<check>`, in kube-apiserver's text."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from aiohttp import web

from fakeapi.machinery import healthtext
from fakeapi.machinery.healthtext import Check
from fakeapi.runtime.listener import AppListener

PING: Check = ("ping", True, "")


class HealthServer:
    """The health endpoints of `checks` on one address; `start()` binds, `stop()` closes."""

    def __init__(self, checks: Callable[[], Iterable[Check]]) -> None:
        self._checks = checks
        self._listener = AppListener(shutdown_timeout=1)

    def app(self) -> web.Application:
        """The aiohttp application of the endpoints."""
        app = web.Application()
        for endpoint in ("livez", "healthz", "readyz"):
            app.router.add_get(f"/{endpoint}", self._answer)
            app.router.add_get(f"/{endpoint}/{{check}}", self._answer)
        return app

    async def _answer(self, request: web.Request) -> web.Response:
        endpoint = request.path.strip("/").split("/")[0]
        found = [PING, *self._checks()] if endpoint == "readyz" else [PING]
        status, text = healthtext.render(endpoint, found, verbose="verbose" in request.query,
                                         only=request.match_info.get("check"))
        return web.Response(status=status, text=text)

    @property
    def port(self) -> int:
        """The bound port (after `start()`)."""
        return self._listener.port

    async def start(self, host: str, port: int) -> int:
        """Listen on `host:port` (0: a free port) and return the bound port."""
        return await self._listener.start(self.app(), host, port)

    async def stop(self) -> None:
        """Stop listening."""
        await self._listener.stop()
