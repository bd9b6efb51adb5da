"""The aiohttp application serving one cluster: the guard every request passes (authentication,
impersonation, RBAC; the web view's static files alone pass unauthenticated) and the routes
(the system endpoints, the web view, extra routes from outside the core, and the catch-all
/api and /apis handlers).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from aiohttp import web

from fakeapi.auth import authn, authz
from fakeapi.cluster import Cluster
from fakeapi.http import loglist, oidc
from fakeapi.http.options import USER, VERB
from fakeapi.http.resources import MAX_BODY, Api
from fakeapi.http.responses import error_response, not_found_path
from fakeapi.http.system import (
    Checks,
    health_handlers,
    metrics_handler,
    openapi_handlers,
    openapi_v2_handler,
    version,
)
from fakeapi.http.ui import assets
from fakeapi.machinery.errors import ApiError, method_not_allowed

log = logging.getLogger(__name__)

Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]
"""An extra (method, path, handler) route outside /api and /apis, e.g. a component's
read-only report; it is authenticated and authorized like every other path."""


def create_app(cluster: Cluster, *, authenticator: authn.Authenticator | None = None,
               checks: Checks | None = None, metrics: Callable[[], str] | None = None,
               routes: Iterable[Route] = ()) -> web.Application:
    """The aiohttp application serving one cluster.

    Every request is authenticated (without an authenticator everyone is the unsecured
    superuser), may impersonate, and is authorized by RBAC before it is routed. `checks`,
    `metrics` and `routes` add readiness checks, metric lines and non-resource paths from
    outside the core (the composition root reports its components through them).
    """
    auth = authenticator or authn.Authenticator(fallback=authn.UNSECURED,
                                                service_accounts=cluster.tokens.authenticate)

    @web.middleware
    async def guard(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        try:
            if assets.is_asset_path(request.path):  # static, no data: see fakeapi.http.ui
                return await handler(request)
            user = authz.impersonate(cluster.authorizer, auth.authenticate(request),
                                     request.headers)
            attrs = authz.authorize_request(cluster.authorizer, user, request.method,
                                            request.path, request.query)
            request[USER] = user
            request[VERB] = attrs.verb
            return await handler(request)
        except ApiError as e:
            return error_response(e)
        except web.HTTPException as e:
            if e.status == 404:
                return error_response(not_found_path())
            if e.status == 405:
                return error_response(method_not_allowed())
            raise
        except Exception:
            log.exception("internal error on %s %s", request.method, request.path)
            return error_response(ApiError(500, "InternalError",
                                           "Internal error occurred: see the server log"))

    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY + 1024)
    api = Api(cluster)
    index, document = openapi_handlers(cluster)
    app.router.add_get("/version", version)
    app.router.add_get("/version/", version)  # same as upstream (kr8s and VersionApi ask so)
    app.router.add_get("/metrics", metrics_handler(cluster, metrics))
    loglist.install(app, cluster)
    oidc.install(app, cluster)
    assets.install(app)
    live, ready = health_handlers(cluster, checks)
    for path, handler in (("/livez", live), ("/healthz", ready), ("/readyz", ready)):
        app.router.add_get(path, handler)
        app.router.add_get(path + "/{check}", handler)
    for method, path, handler in routes:
        app.router.add_route(method, path, handler)
    app.router.add_get("/openapi/v2", openapi_v2_handler(cluster))
    app.router.add_get("/openapi/v3", index)
    app.router.add_get("/openapi/v3/{path:.*}", document)
    # the router tries the routes of a prefix in order: the common one first
    app.router.add_route("*", "/api/{tail:.*}", api.dispatch)
    app.router.add_route("*", "/api", api.dispatch)
    app.router.add_route("*", "/apis/{tail:.*}", api.dispatch)
    app.router.add_route("*", "/apis", api.dispatch)

    async def close_watches(app: web.Application) -> None:
        cluster.log.wake_all()
        for task in tuple(api.watches):
            task.cancel()

    app.on_shutdown.append(close_watches)
    return app
