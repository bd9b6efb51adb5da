"""Serving one cluster on an address: the HTTPS listener with its generated PKI (or plain
HTTP), the authenticator that goes with it, the application, the advertised address and the
admin kubeconfig. `fakeapi serve` and the pytest plugin (`fakeapi.testing`) both start their
server with `listen()`, so a test talks to the same server a user runs."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from aiohttp import web

from fakeapi.auth import authn
from fakeapi.auth.kubeconfig import write_kubeconfig
from fakeapi.auth.tls import (
    Pki,
    ensure_pki,
    identity_from_peercert,
    kubelet_client_context,
    server_ssl_context,
)
from fakeapi.cluster import Cluster
from fakeapi.http import compression
from fakeapi.http.app import Route, create_app
from fakeapi.http.system import Checks

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
"""Names the serving certificate always covers, besides the listening host."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Listener:
    """A started server: where clients reach it and how to stop it."""

    url: str
    """`https://HOST:PORT` (or `http://` for a plain-HTTP server)."""
    port: int
    pki: Pki | None
    """The CA and the admin client certificate (None on plain HTTP)."""
    kubeconfig: Path
    """The admin kubeconfig written for `url`."""
    runner: web.AppRunner

    async def close(self) -> None:
        """Stop accepting connections and close the open ones."""
        await self.runner.cleanup()


def _certificate(request: web.Request) -> tuple[str, tuple[str, ...]] | None:
    """The client certificate's identity, as upstream's x509 authenticator reads it."""
    return identity_from_peercert(request.transport.get_extra_info("peercert")
                                  if request.transport else None)


async def listen(cluster: Cluster, *, host: str, port: int, pki_dir: Path | None,
                 kubeconfig: Path, tokens: Mapping[str, authn.UserInfo] | None = None,
                 checks: Checks | None = None, metrics: Callable[[], str] | None = None,
                 routes: Iterable[Route] = (),
                 advertise: tuple[str, int] | None = None,
                 unauthenticated: authn.UserInfo = authn.UNSECURED) -> Listener:
    """Serve `cluster` on `host:port` (0: a free port): HTTPS with the PKI kept in `pki_dir`
    (created when missing), or plain HTTP when `pki_dir` is None, where a request without
    credentials is `unauthenticated` (a cluster admin unless told otherwise). The
    `kubernetes` Service names the address, and an admin kubeconfig for it is written to
    `kubeconfig`. `advertise` names another address for the
    Service (a replay advertises the recorded server's, so its log matches)."""
    pki = None
    ssl_context = None
    if pki_dir is None:
        authenticator = authn.Authenticator(tokens=tokens, fallback=unauthenticated,
                                            service_accounts=cluster.tokens.authenticate)
    else:
        pki = ensure_pki(pki_dir, hosts=(*LOOPBACK_HOSTS, host))
        ssl_context = server_ssl_context(pki)
        authenticator = authn.Authenticator(tokens=tokens, certificate=_certificate,
                                            service_accounts=cluster.tokens.authenticate)
    cluster.pod_io.kubelet_tls = kubelet_client_context(pki)
    app = create_app(cluster, authenticator=authenticator, checks=checks, metrics=metrics,
                     routes=routes)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2,
                           **compression.SERVER_SETTINGS)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ssl_context, backlog=1024)
    await site.start()
    bound = runner.addresses[0][1]
    cluster.advertise(*(advertise or (host, bound)))
    scheme = "http" if pki is None else "https"
    url = f"{scheme}://[{host}]:{bound}" if ":" in host else f"{scheme}://{host}:{bound}"
    write_kubeconfig(kubeconfig, server=url, pki=pki)
    return Listener(url=url, port=bound, pki=pki, kubeconfig=kubeconfig, runner=runner)
