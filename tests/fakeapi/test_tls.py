"""PKI generation and reuse, TLS client-cert identity over a real handshake, kubeconfig output."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import ipaddress
import json
import os
import shutil
import socket
import ssl
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from fakeapi.auth.kubeconfig import write_kubeconfig
from fakeapi.auth.tls import Pki, ensure_pki, identity_from_peercert, server_ssl_context

KEY_FIELDS = ("ca_key", "server_key", "admin_key", "kubelet_client_key")


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _snapshot(pki: Pki) -> dict[str, bytes]:
    return {f: getattr(pki, f).read_bytes() for f in Pki.__dataclass_fields__}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """One PKI shared by the handshake tests (generation is covered separately)."""
    return ensure_pki(tmp_path_factory.mktemp("pki"))


# --- generation and reuse -------------------------------------------------------------------


def test_ensure_pki_on_empty_dir_writes_private_keys_0600(tmp_path: Path) -> None:
    """(How long it takes is bench/bench_startup.py's: TLS with new and existing PKI.)"""
    pki = ensure_pki(tmp_path / "data" / "pki")
    for field in Pki.__dataclass_fields__:
        path: Path = getattr(pki, field)
        assert path.is_file(), field
        mode = stat.S_IMODE(path.stat().st_mode)
        if field in KEY_FIELDS:
            assert mode == 0o600, (field, oct(mode))
        else:
            assert mode & 0o077 == 0o044, (field, oct(mode))  # certs are public
    assert not [p for p in pki.ca_cert.parent.iterdir() if p.name.endswith(".tmp")]


def test_second_call_reuses_everything(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path)
    before = _snapshot(first)
    second = ensure_pki(tmp_path)
    assert second == first
    assert _snapshot(second) == before


def test_new_host_reissues_only_the_serving_cert(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    before = _snapshot(pki)
    ensure_pki(tmp_path, hosts=("localhost", "127.0.0.1", "::1", "fake.example", "10.0.0.7"))
    after = _snapshot(pki)
    assert after["ca_cert"] == before["ca_cert"]  # existing kubeconfigs stay valid
    assert after["admin_cert"] == before["admin_cert"]
    assert after["server_cert"] != before["server_cert"]
    sans = _cert(pki.server_cert).extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert "fake.example" in sans.value.get_values_for_type(x509.DNSName)
    assert ipaddress.ip_address("10.0.0.7") in sans.value.get_values_for_type(x509.IPAddress)
    # A subset of the hosts the cert already covers is not a reason to reissue.
    ensure_pki(tmp_path, hosts=("localhost",))
    assert _snapshot(pki) == after


def test_corrupt_ca_regenerates_the_whole_pki(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    before = _snapshot(pki)
    pki.ca_key.write_bytes(b"not a key")
    ensure_pki(tmp_path)
    after = _snapshot(pki)
    assert all(after[f] != before[f] for f in after)
    _cert(pki.server_cert).verify_directly_issued_by(_cert(pki.ca_cert))
    _cert(pki.admin_cert).verify_directly_issued_by(_cert(pki.ca_cert))


def test_leaf_from_another_ca_or_mismatched_key_is_reissued(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "a")
    other = ensure_pki(tmp_path / "b")
    shutil.copy(other.admin_cert, pki.admin_cert)  # foreign CA
    shutil.copy(other.server_key, pki.server_key)  # key doesn't match cert
    ca_before = pki.ca_cert.read_bytes()
    ensure_pki(tmp_path / "a")
    ca = _cert(pki.ca_cert)
    assert pki.ca_cert.read_bytes() == ca_before
    _cert(pki.admin_cert).verify_directly_issued_by(ca)
    server_key = serialization.load_pem_private_key(pki.server_key.read_bytes(), None)
    assert _cert(pki.server_cert).public_key() == server_key.public_key()


def test_expiring_ca_is_replaced(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fakeapi-ca")])
    now = datetime.datetime.now(datetime.UTC)
    old = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=400))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )
    pki.ca_cert.write_bytes(old.public_bytes(serialization.Encoding.PEM))
    pki.ca_key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    ensure_pki(tmp_path)
    assert _cert(pki.ca_cert).not_valid_after_utc > now + datetime.timedelta(days=3000)


# --- certificate contents -------------------------------------------------------------------


def test_ca_cert(pki: Pki) -> None:
    ca = _cert(pki.ca_cert)
    assert ca.subject.rfc4514_string() == "CN=fakeapi-ca"
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    key = ca.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey)
    assert key.curve.name == "secp256r1"
    lifetime = ca.not_valid_after_utc - ca.not_valid_before_utc
    assert lifetime >= datetime.timedelta(days=3650)


def test_server_cert_sans_and_eku(pki: Pki) -> None:
    cert = _cert(pki.server_cert)
    cert.verify_directly_issued_by(_cert(pki.ca_cert))
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert sans.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


@pytest.mark.parametrize(("field", "user"), [("admin_cert", "kubernetes-admin"),
                                             ("kubelet_client_cert",
                                              "kube-apiserver-kubelet-client")])
def test_client_cert_cn_o_and_eku(pki: Pki, field: str, user: str) -> None:
    cert = _cert(getattr(pki, field))
    cert.verify_directly_issued_by(_cert(pki.ca_cert))
    cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    org = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert [a.value for a in cn] == [user]
    assert [a.value for a in org] == ["system:masters"]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_bracketed_ipv6_and_upper_case_hosts(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, hosts=("[fd00::1]", "Fake.Local"))
    sans = _cert(pki.server_cert).extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert sans.value.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("fd00::1")]
    assert sans.value.get_values_for_type(x509.DNSName) == ["fake.local"]


# --- identity_from_peercert -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("peercert", "expected"),
    [
        (None, None),
        ({}, None),
        ({"subject": ((("organizationName", "g"),),)}, None),
        ({"subject": ((("commonName", "alice"),),)}, ("alice", ())),
        (
            {
                "subject": (
                    (("organizationName", "system:masters"),),
                    (("organizationName", "dev"),),
                    (("commonName", "bob"),),
                )
            },
            ("bob", ("system:masters", "dev")),
        ),
        # Multi-valued RDN, and Go's pkix.Name semantics: the last CN wins.
        (
            {"subject": ((("commonName", "x"), ("organizationName", "o")), (("commonName", "y"),))},
            ("y", ("o",)),
        ),
    ],
)
def test_identity_from_peercert(
    peercert: dict | None, expected: tuple[str, tuple[str, ...]] | None
) -> None:
    assert identity_from_peercert(peercert) == expected


# --- real TLS handshakes on loopback --------------------------------------------------------


async def _whoami(request: web.Request) -> web.Response:
    transport = request.transport
    assert transport is not None
    ssl_object = transport.get_extra_info("ssl_object")
    identity = identity_from_peercert(transport.get_extra_info("peercert"))
    body = {
        "alpn": ssl_object.selected_alpn_protocol() if ssl_object else None,
        "user": identity[0] if identity else None,
        "groups": list(identity[1]) if identity else None,
    }
    return web.json_response(body)


@contextlib.asynccontextmanager
async def _serve(pki: Pki, host: str = "127.0.0.1") -> AsyncIterator[int]:
    """An aiohttp HTTPS server on `host` using server_ssl_context; yields its port."""
    app = web.Application()
    app.router.add_get("/whoami", _whoami)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, 0, ssl_context=server_ssl_context(pki))
    await site.start()
    try:
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


def _client_ctx(pki: Pki, *, with_cert: bool) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki.ca_cert))
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    if with_cert:
        ctx.load_cert_chain(pki.admin_cert, pki.admin_key)
    return ctx


async def _get_json(url: str, ctx: ssl.SSLContext) -> dict:
    async with aiohttp.ClientSession() as session, session.get(url, ssl=ctx) as resp:
        assert resp.status == 200
        return await resp.json()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


async def test_handshake_with_admin_cert_yields_identity(pki: Pki) -> None:
    async with _serve(pki) as port:
        for host in ("localhost", "127.0.0.1"):  # hostname checked against DNS and IP SANs
            got = await _get_json(f"https://{host}:{port}/whoami", _client_ctx(pki, with_cert=True))
            assert got == {
                "alpn": "http/1.1",
                "user": "kubernetes-admin",
                "groups": ["system:masters"],
            }


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback")
async def test_handshake_over_ipv6_loopback(pki: Pki) -> None:
    async with _serve(pki, host="::1") as port:
        got = await _get_json(f"https://[::1]:{port}/whoami", _client_ctx(pki, with_cert=True))
        assert got["user"] == "kubernetes-admin"


async def test_handshake_without_cert_has_no_identity(pki: Pki) -> None:
    async with _serve(pki) as port:
        got = await _get_json(f"https://localhost:{port}/whoami", _client_ctx(pki, with_cert=False))
        assert got == {"alpn": "http/1.1", "user": None, "groups": None}


async def test_cert_from_another_ca_is_rejected(pki: Pki, tmp_path: Path) -> None:
    stranger = ensure_pki(tmp_path)
    ctx = ssl.create_default_context(cafile=str(pki.ca_cert))
    ctx.load_cert_chain(stranger.admin_cert, stranger.admin_key)
    async with _serve(pki) as port:
        # TLS 1.3 reports the server's rejection on the first read, so any client error counts.
        with pytest.raises(aiohttp.ClientError):
            await _get_json(f"https://localhost:{port}/whoami", ctx)


async def test_client_not_trusting_our_ca_fails(pki: Pki) -> None:
    async with _serve(pki) as port:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            await _get_json(f"https://localhost:{port}/whoami", ssl.create_default_context())


# --- kubeconfig -----------------------------------------------------------------------------


def test_kubeconfig_with_pki(pki: Pki, tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "kubeconfig"
    write_kubeconfig(path, server="https://127.0.0.1:6443", pki=pki)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg = yaml.safe_load(path.read_text())
    assert cfg["apiVersion"] == "v1" and cfg["kind"] == "Config"
    assert cfg["current-context"] == "fakeapi"
    [cluster] = cfg["clusters"]
    [user] = cfg["users"]
    [context] = cfg["contexts"]
    assert cluster["name"] == "fakeapi"
    assert cluster["cluster"]["server"] == "https://127.0.0.1:6443"
    ca = base64.b64decode(cluster["cluster"]["certificate-authority-data"])
    assert ca == pki.ca_cert.read_bytes()
    assert base64.b64decode(user["user"]["client-certificate-data"]) == pki.admin_cert.read_bytes()
    assert base64.b64decode(user["user"]["client-key-data"]) == pki.admin_key.read_bytes()
    assert context == {"name": "fakeapi", "context": {"cluster": "fakeapi", "user": user["name"]}}


def test_kubeconfig_plain_http_and_custom_name(tmp_path: Path) -> None:
    path = tmp_path / "kc"
    path.write_text("old")
    path.chmod(0o644)
    write_kubeconfig(path, server="http://localhost:8080", pki=None, name="dev")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg = yaml.safe_load(path.read_text())
    assert cfg["clusters"] == [{"name": "dev", "cluster": {"server": "http://localhost:8080"}}]
    assert [u["user"] for u in cfg["users"]] == [{}]
    assert cfg["current-context"] == "dev"
    assert cfg["contexts"][0]["context"]["cluster"] == "dev"


@pytest.mark.parametrize("server", ["localhost:6443", "http://127.0.0.1:6443", "ftp://x"])
def test_kubeconfig_rejects_bad_server_for_tls(pki: Pki, tmp_path: Path, server: str) -> None:
    with pytest.raises(ValueError):
        write_kubeconfig(tmp_path / "kc", server=server, pki=pki)
    assert not (tmp_path / "kc").exists()


async def test_kubernetes_client_loads_kubeconfig_and_authenticates(
    pki: Pki, tmp_path: Path
) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    async with _serve(pki) as port:
        path = tmp_path / "kubeconfig"
        write_kubeconfig(path, server=f"https://localhost:{port}", pki=pki)

        def call() -> dict:
            cfg = kubernetes.client.Configuration()
            kubernetes.config.load_kube_config(config_file=str(path), client_configuration=cfg)
            assert cfg.host == f"https://localhost:{port}"
            assert cfg.verify_ssl
            with kubernetes.client.ApiClient(cfg) as api:
                method, url, headers, body, post = api.param_serialize(
                    "GET", "/whoami", auth_settings=["BearerToken"]
                )
                response = api.call_api(method, url, headers, body, post)
                response.read()
                assert response.status == 200
                return json.loads(response.data)

        got = await asyncio.get_running_loop().run_in_executor(None, call)
    assert got["user"] == "kubernetes-admin"
    assert got["groups"] == ["system:masters"]


def test_kubernetes_client_loads_plain_http_kubeconfig(tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    path = tmp_path / "kubeconfig"
    write_kubeconfig(path, server="http://127.0.0.1:8080", pki=None)
    cfg = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=str(path), client_configuration=cfg)
    assert cfg.host == "http://127.0.0.1:8080"
    assert not cfg.cert_file and not cfg.key_file


async def test_real_kubectl_accepts_our_certs(pki: Pki, tmp_path: Path,
                                              kubectl_binary: str) -> None:
    """Go's crypto/x509 is stricter than OpenSSL: check kubectl verifies and presents the certs."""
    hosts = ["localhost", "127.0.0.1"] + (["[::1]"] if _ipv6_loopback() else [])
    for host in hosts:
        bind = "::1" if host == "[::1]" else "127.0.0.1"
        async with _serve(pki, host=bind) as port:
            path = tmp_path / f"kubeconfig-{port}"
            write_kubeconfig(path, server=f"https://{host}:{port}", pki=pki)
            proc = await asyncio.create_subprocess_exec(
                kubectl_binary,
                "--kubeconfig",
                str(path),
                "get",
                "--raw",
                "/whoami",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "HOME": str(tmp_path)},
            )
            out, err = await asyncio.wait_for(proc.communicate(), timeout=30)
            assert proc.returncode == 0, err.decode()
            got = json.loads(out)
            assert got["user"] == "kubernetes-admin", host
            assert got["groups"] == ["system:masters"]
