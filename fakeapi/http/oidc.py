"""The service-account issuer's OpenID Connect discovery (upstream's
pkg/serviceaccount/openidmetadata.go, served by kube-apiserver): the provider configuration at
`/.well-known/openid-configuration` and the keys that verify the tokens
`serviceaccounts/NAME/token` issues at `/openid/v1/jwks`. RBAC decides who reads them
(bootstrap's system:service-account-issuer-discovery: every service account)."""

from __future__ import annotations

from aiohttp import web

from fakeapi.auth.tokens import ISSUER
from fakeapi.cluster import Cluster
from fakeapi.machinery.jsonio import dumps

CONFIGURATION = "/.well-known/openid-configuration"
JWKS = "/openid/v1/jwks"
_CACHE = "public, max-age=3600"  # upstream's cacheControl for both documents


def install(app: web.Application, cluster: Cluster) -> None:
    """Serve both documents (each also with a trailing slash, as upstream)."""

    async def configuration(request: web.Request) -> web.Response:
        body = {"issuer": ISSUER, "jwks_uri": f"https://{request.host}{JWKS}",
                "response_types_supported": ["id_token"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["ES256"]}
        return web.Response(body=dumps(body), content_type="application/json",
                            headers={"Cache-Control": _CACHE})

    async def keys(request: web.Request) -> web.Response:
        return web.Response(body=dumps(cluster.tokens.jwks()),
                            content_type="application/jwk-set+json",
                            headers={"Cache-Control": _CACHE})

    for path, handler in ((CONFIGURATION, configuration), (JWKS, keys)):
        app.router.add_get(path, handler)
        app.router.add_get(path + "/", handler)
