"""How a command talks to a running server: the `--kubeconfig` option, one JSON request
with the kubeconfig's credentials, and a server's error Status as kubectl prints it."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
"""The Accept of a `kubectl get`: the server's Table of the objects."""


class RemoteError(Exception):
    """A request that failed; the message is what to print (kubectl's wording for a server
    Status)."""


def add_kubeconfig_argument(parser: argparse.ArgumentParser) -> None:
    """`--kubeconfig PATH`: the server to talk to."""
    parser.add_argument("--kubeconfig", type=Path, default=None,
                        help="the server to ask (default: $KUBECONFIG, else "
                             ".fakeapi/kubeconfig)")


def kubeconfig_path(given: Path | None) -> Path:
    """`--kubeconfig`, else $KUBECONFIG, else `.fakeapi/kubeconfig`."""
    return given or Path(os.environ.get("KUBECONFIG") or ".fakeapi/kubeconfig")


def request(kubeconfig: Path | None, path: str, *, body: Any = None, accept: str = "",
            timeout: float | None = 30) -> Any:
    """One request to the server the kubeconfig names (POST when there is a body): the
    decoded JSON answer, or RemoteError."""
    data = None if body is None else json.dumps(body).encode()
    with _open(kubeconfig, path, data=data, accept=accept, timeout=timeout) as resp:
        return json.loads(resp.read())


def stream_lines(kubeconfig: Path | None, path: str, *,
                 timeout: float | None = None) -> Iterator[bytes]:
    """The lines of a streamed GET answer (JSON lines), as they arrive; RemoteError."""
    with _open(kubeconfig, path, timeout=timeout) as resp:
        try:
            yield from resp
        except OSError as e:
            raise RemoteError(f"fakeapi: the server closed the stream: {e}") from None


@contextlib.contextmanager
def _open(kubeconfig: Path | None, path: str, *, data: bytes | None = None, accept: str = "",
          timeout: float | None = 30) -> Iterator[Any]:
    """The open response of one request, with kubectl's wording for an error Status."""
    import urllib.error
    import urllib.request

    from fakeapi.auth.kubeconfig import read_kubeconfig, read_token

    config = kubeconfig_path(kubeconfig)
    try:
        server, ssl_context = read_kubeconfig(config)
        token = read_token(config)
    except Exception as e:  # missing, unreadable or not a kubeconfig
        raise RemoteError(f"fakeapi: cannot read the kubeconfig {config}: {e!r}") from None
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if accept:
        headers["Accept"] = accept
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(server + path, data=data, headers=headers)
    try:
        resp = urllib.request.urlopen(req, context=ssl_context, timeout=timeout)
    except urllib.error.HTTPError as e:
        try:
            status = json.loads(e.read() or b"{}")
        except ValueError:
            status = {}
        raise RemoteError(f"Error from server ({status.get('reason', e.code)}): "
                          f"{status.get('message', e.reason)}") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise RemoteError(f"fakeapi: cannot reach the server at {server}: {reason}") from None
    with resp:
        yield resp
