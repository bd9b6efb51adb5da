"""The system endpoints outside /api and /apis: `/version`, the health checks (`/livez`,
`/healthz`, `/readyz`), `/metrics`, and the OpenAPI documents (`/openapi/v2`, `/openapi/v3`).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable
from typing import Any

from aiohttp import web

from fakeapi import KUBERNETES_VERSION
from fakeapi.cluster import Cluster
from fakeapi.http import openapi, openapi_v2
from fakeapi.http.responses import JSON_TYPE, error_response, json_response, not_found_path
from fakeapi.machinery import healthtext
from fakeapi.machinery.healthtext import Check


async def version(request: web.Request) -> web.Response:
    """GET /version."""
    major, minor, _ = KUBERNETES_VERSION.lstrip("v").split(".")
    return json_response({"major": major, "minor": minor, "emulationMajor": major,
                          "emulationMinor": minor, "minCompatibilityMajor": major,
                          "minCompatibilityMinor": str(int(minor) - 1),
                          "gitVersion": KUBERNETES_VERSION + "-fakeapi", "gitCommit": "fakeapi",
                          "gitTreeState": "clean", "buildDate": "2026-11-30T00:00:00Z",
                          "goVersion": "go1.25", "compiler": "gc",
                          "platform": f"linux/{_arch()}"})


def _arch() -> str:
    machine = platform.machine()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)


Checks = Callable[[], Iterable[Check]]


def health_handlers(cluster: Cluster, extra_checks: Checks | None
                    ) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Handlers for /livez (the server itself) and /healthz, /readyz (plus `extra_checks`,
    e.g. the composition root's components), with upstream's `?verbose` and `/<check>`."""

    def checks(extra: bool) -> list[Check]:
        found: list[Check] = [("ping", True, "")]
        if extra:
            found.extend(cluster.health())
            if extra_checks is not None:
                found.extend(extra_checks())
        return found

    def answer(request: web.Request, extra: bool) -> web.Response:
        endpoint = request.path.strip("/").split("/")[0]
        found = checks(extra)
        status, text = healthtext.render(endpoint, found, verbose="verbose" in request.query,
                                         only=request.match_info.get("check"))
        return web.Response(status=status, text=text)

    async def live(request: web.Request) -> web.Response:
        return answer(request, extra=False)

    async def ready(request: web.Request) -> web.Response:
        return answer(request, extra=True)

    return live, ready


def metrics_handler(cluster: Cluster,
                    extra_metrics: Callable[[], str] | None) -> Callable[..., Any]:
    """/metrics: the gates in effect, as upstream's `kubernetes_feature_enabled` gauge, plus
    `extra_metrics` (the components' crash counts and readiness)."""

    async def metrics(request: web.Request) -> web.Response:
        text = cluster.gates.metrics_text()
        if extra_metrics is not None:
            text += extra_metrics()
        return web.Response(body=text.encode(), headers={
            "Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    return metrics


def openapi_handlers(cluster: Cluster) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Handlers for /openapi/v3 and /openapi/v3/<path>."""

    def _send(served: openapi.Served) -> web.Response:
        return web.Response(status=served.status, body=served.body or None,
                            headers=served.headers)

    async def index(request: web.Request) -> web.Response:
        return _send(openapi.serve_index(cluster.kinds))

    async def document(request: web.Request) -> web.Response:
        served = openapi.serve_document(cluster.kinds, request.match_info["path"],
                                        request.query.get("hash"),
                                        request.headers.get("If-None-Match"))
        if served is None:
            return error_response(not_found_path())
        return _send(served)

    return index, document


def openapi_v2_handler(cluster: Cluster) -> Callable[..., Any]:
    """`/openapi/v2`: protobuf when asked for (kubectl), else JSON; ETag'd like upstream."""

    async def document(request: web.Request) -> web.Response:
        protobuf = openapi_v2.wants_protobuf(request.headers.get("Accept"))
        body = openapi_v2.rendered(cluster.kinds.kinds, protobuf)
        etag = '"' + openapi.content_hash(body)[:32] + '"'
        headers = {"Etag": etag, "Vary": "Accept", "Cache-Control": "no-cache, private",
                   "Content-Type": openapi_v2.PROTOBUF_TYPES[1] if protobuf else JSON_TYPE}
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, headers=headers)

    return document
