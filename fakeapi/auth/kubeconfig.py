"""Write a kubeconfig that points kubectl and client libraries at a fakeapi server."""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from fakeapi.auth.tls import Pki


def _b64_file(path: Path) -> str:
    return base64.b64encode(Path(path).read_bytes()).decode("ascii")


def kubeconfig_dict(*, server: str, pki: Pki | None, name: str = "fakeapi") -> dict[str, Any]:
    """The kubeconfig as a dict: one cluster, one user and one context, all named after `name`.

    With `pki` the CA and the admin client cert/key are embedded (base64 `*-data` fields);
    without it (plain HTTP) the cluster has only `server` and the user no credentials.
    """
    scheme = urlsplit(server).scheme
    if scheme not in ("http", "https") or not urlsplit(server).netloc:
        raise ValueError(f"server must be an http:// or https:// URL, got {server!r}")
    if pki is not None and scheme != "https":
        raise ValueError(f"client certificates need an https:// server, got {server!r}")
    cluster: dict[str, Any] = {"server": server}
    user: dict[str, Any] = {}
    user_name = f"{name}-user"
    if pki is not None:
        cluster["certificate-authority-data"] = _b64_file(pki.ca_cert)
        user["client-certificate-data"] = _b64_file(pki.admin_cert)
        user["client-key-data"] = _b64_file(pki.admin_key)
        user_name = f"{name}-admin"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": user_name}}],
        "current-context": name,
    }


def write_kubeconfig(path: Path, *, server: str, pki: Pki | None, name: str = "fakeapi") -> None:
    """Write the kubeconfig for `server` to `path` (mode 0600, parents created, atomic replace).

    The file is overwritten, not merged: point KUBECONFIG at it rather than at ~/.kube/config.
    """
    text = yaml.safe_dump(
        kubeconfig_dict(server=server, pki=pki, name=name), sort_keys=False, width=1 << 16
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _current(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The current context's cluster and user entries."""
    cfg = yaml.safe_load(Path(path).read_text())
    context = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == context["cluster"])
    user: dict[str, Any] = next((u["user"] for u in cfg.get("users") or ()
                                 if u["name"] == context["user"]), {})
    return cluster, user


def _pem(entry: dict[str, Any], field: str, base: Path) -> bytes | None:
    """A PEM the kubeconfig gives inline (`<field>-data`, base64) or as a file (`<field>`,
    relative to the kubeconfig's folder), or None."""
    if entry.get(f"{field}-data"):
        return base64.b64decode(entry[f"{field}-data"])
    if entry.get(field):
        return (base / Path(entry[field]).expanduser()).read_bytes()
    return None


def read_token(path: Path) -> str | None:
    """The current context's bearer token (a `token` user, or its `tokenFile`), or None."""
    user = _current(path)[1]
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (Path(path).parent / Path(user["tokenFile"]).expanduser()).read_text().strip()
    return str(token) if token else None


def read_ca(path: Path) -> bytes | None:
    """The current context's cluster CA (PEM), or None when it names none: what an emulated
    kubelet trusts client certificates by (the API server's own are issued by it)."""
    return _pem(_current(path)[0], "certificate-authority", Path(path).parent)


def read_kubeconfig(path: Path) -> tuple[str, ssl.SSLContext | None]:
    """The current context's server URL and, for https, a TLS context with its CA (the
    system's when it names none; no verification with `insecure-skip-tls-verify`) and client
    certificate, each inline (`*-data`) or a file: how fakeapi's own commands and its remote
    client connect (`read_token` gives a token user's credential)."""
    cluster, user = _current(path)
    base = Path(path).parent
    server = cluster["server"]
    if urlsplit(server).scheme != "https":
        return server, None
    ca = _pem(cluster, "certificate-authority", base)
    ctx = ssl.create_default_context(cadata=ca.decode() if ca else None)
    if cluster.get("insecure-skip-tls-verify"):
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    cert = _pem(user, "client-certificate", base)
    if cert:
        key = _pem(user, "client-key", base)
        with tempfile.TemporaryDirectory() as tmp:  # ssl loads a chain from files only
            cert_file, key_file = Path(tmp, "c.pem"), Path(tmp, "k.pem")
            cert_file.write_bytes(cert)
            if key:
                key_file.write_bytes(key)
            ctx.load_cert_chain(cert_file, key_file if key else None)
    return server, ctx
