"""Certificates for the HTTPS listener: a private CA, a serving cert, an admin client cert and
the client cert the server shows the kubelets it proxies pod streams to (kubeadm's
apiserver-kubelet-client); and the self-signed serving cert an emulated kubelet's API uses.

The PKI lives in the data directory and is reused across restarts so kubeconfigs written
earlier keep working. ECDSA P-256 keys keep first start fast (a few milliseconds).
Client identity follows upstream's x509 authenticator: user = subject CN, groups = subject O.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_COMMON_NAME = "fakeapi-ca"
SERVER_COMMON_NAME = "fakeapi-apiserver"
ADMIN_USER = "kubernetes-admin"
ADMIN_GROUPS: tuple[str, ...] = ("system:masters",)
KUBELET_CLIENT_USER = "kube-apiserver-kubelet-client"
"""Who the API server is to a kubelet (kubeadm's APIServerKubeletClientCertCommonName)."""
KUBELET_CLIENT_GROUPS: tuple[str, ...] = ("system:masters",)
DEFAULT_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")

VALIDITY = datetime.timedelta(days=3650)
# Backdate notBefore so a client whose clock is slightly behind still accepts the certs.
BACKDATE = datetime.timedelta(hours=1)
# A cert that expires sooner than this is treated as invalid and reissued.
RENEW_BEFORE = datetime.timedelta(days=1)

_PKI_FILES = ("ca.crt", "ca.key", "server.crt", "server.key", "admin.crt", "admin.key",
              "apiserver-kubelet-client.crt", "apiserver-kubelet-client.key")

GeneralName = x509.DNSName | x509.IPAddress


@dataclasses.dataclass(frozen=True)
class Pki:
    """Paths of the PEM files making up the server's PKI."""

    ca_cert: Path
    ca_key: Path
    server_cert: Path
    server_key: Path
    admin_cert: Path
    admin_key: Path
    kubelet_client_cert: Path
    kubelet_client_key: Path

    @classmethod
    def in_directory(cls, directory: Path) -> Pki:
        """The file layout used inside a data directory (kubeadm-like names)."""
        return cls(*(Path(directory) / name for name in _PKI_FILES))


def ensure_pki(directory: Path, *, hosts: Sequence[str] = DEFAULT_HOSTS) -> Pki:
    """Create the CA, serving and admin certs in `directory`, reusing valid existing ones.

    The CA is kept whenever it is valid so that existing kubeconfigs stay usable; the
    serving cert is reissued when it no longer covers `hosts`, and any leaf cert is
    reissued when it doesn't chain to the CA, doesn't match its key, or is about to expire.
    """
    if isinstance(hosts, str):  # a lone host name, not a sequence of characters
        hosts = (hosts,)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki.in_directory(directory)
    wanted = _general_names(hosts)
    now = _now()
    with _locked(directory / ".pki.lock"):
        ca = _load_pair(pki.ca_cert, pki.ca_key)
        if ca is None or not _ca_valid(ca[0], now):
            ca = _issue_ca(now)
            _write_pair(pki.ca_cert, pki.ca_key, *ca)
            reissue_leaves = True
        else:
            reissue_leaves = False
        ca_cert, ca_key = ca

        server = None if reissue_leaves else _load_pair(pki.server_cert, pki.server_key)
        if server is None or not _server_valid(server[0], ca_cert, wanted, now):
            server_cert, server_key = _issue_server(ca_cert, ca_key, wanted, now)
            _write_pair(pki.server_cert, pki.server_key, server_cert, server_key)

        for cert_path, key_path, user, groups in (
                (pki.admin_cert, pki.admin_key, ADMIN_USER, ADMIN_GROUPS),
                (pki.kubelet_client_cert, pki.kubelet_client_key, KUBELET_CLIENT_USER,
                 KUBELET_CLIENT_GROUPS)):
            client = None if reissue_leaves else _load_pair(cert_path, key_path)
            if client is None or not _client_valid(client[0], ca_cert, now, user, groups):
                _write_pair(cert_path, key_path,
                            *_issue_client(ca_cert, ca_key, now, user, groups))
    return pki


def server_ssl_context(pki: Pki) -> ssl.SSLContext:
    """A TLS server context: serves the fakeapi cert, verifies client certs when presented.

    Clients without a certificate still connect (CERT_OPTIONAL) and are then authenticated
    some other way (or are anonymous); a certificate not issued by our CA fails the handshake.
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certfile=pki.server_cert, keyfile=pki.server_key)
    ctx.load_verify_locations(cafile=pki.ca_cert)
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def kubelet_client_context(pki: Pki | None) -> ssl.SSLContext:
    """How the API server connects to a kubelet it proxies pod streams to: with the
    kube-apiserver-kubelet-client cert (none without a PKI) and, as kube-apiserver without
    `--kubelet-certificate-authority`, without verifying the kubelet's serving cert."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if pki is not None:
        ctx.load_cert_chain(certfile=pki.kubelet_client_cert, keyfile=pki.kubelet_client_key)
    return ctx


def kubelet_serving_context(directory: Path, hosts: Sequence[str],
                            client_ca: bytes | None) -> ssl.SSLContext:
    """The TLS context of an emulated kubelet's API: the self-signed `kubelet.crt` a kubelet
    without a serving cert makes (kept in `directory`, reissued when it no longer covers
    `hosts`), verifying client certs against `client_ca` (the API server's CA) when one is
    presented."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = directory / "kubelet.crt", directory / "kubelet.key"
    wanted = _general_names(hosts)
    now = _now()
    with _locked(directory / ".pki.lock"):
        pair = _load_pair(cert_path, key_path)
        if pair is None or not _server_valid(pair[0], pair[0], wanted, now):
            _write_pair(cert_path, key_path, *_issue_self_signed(wanted, now))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(certfile=cert_path, keyfile=key_path)
    if client_ca:
        ctx.load_verify_locations(cadata=client_ca.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def identity_from_peercert(peercert: dict | None) -> tuple[str, tuple[str, ...]] | None:
    """(user, groups) from a verified peer cert as returned by `SSLObject.getpeercert()`.

    Same as upstream's x509 authenticator: user is the subject CN, groups are the subject
    O values in order; a cert without a CN authenticates nobody. If the subject has several
    CNs the last one wins, as with Go's pkix.Name.
    """
    if not peercert:
        return None
    user = ""
    groups: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                user = value
            elif key == "organizationName":
                groups.append(value)
    if not user:
        return None
    return user, tuple(groups)


# --- certificate issuance ---------------------------------------------------------------


def _now() -> datetime.datetime:
    """Real wall time, not the injected clock: TLS peers check a certificate's validity
    against their own real clock."""
    return datetime.datetime.now(datetime.UTC)


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _general_names(hosts: Iterable[str]) -> list[GeneralName]:
    """SAN entries for `hosts`: IP literals become IPAddress, everything else DNSName."""
    names: list[GeneralName] = []
    for raw in hosts:
        host = raw.strip()
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not host:
            raise ValueError(f"empty host name in {list(hosts)!r}")
        try:
            name: GeneralName = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            name = x509.DNSName(host.lower())
        if name not in names:
            names.append(name)
    return names


def _builder(
    *,
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    now: datetime.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _leaf_builder(
    *,
    subject: x509.Name,
    ca_cert: x509.Certificate,
    public_key: ec.EllipticCurvePublicKey,
    eku: x509.ObjectIdentifier,
    now: datetime.datetime,
) -> x509.CertificateBuilder:
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (
        _builder(subject=subject, issuer=ca_cert.subject, public_key=public_key, now=now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([eku]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski),
            critical=False,
        )
    )


def _key_usage(*, digital_signature: bool = False, cert_sign: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _issue_ca(now: datetime.datetime) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CA_COMMON_NAME)])
    cert = (
        _builder(subject=name, issuer=name, public_key=key.public_key(), now=now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(digital_signature=True, cert_sign=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _issue_server(
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    names: list[GeneralName],
    now: datetime.datetime,
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SERVER_COMMON_NAME)])
    cert = (
        _leaf_builder(
            subject=subject,
            ca_cert=ca_cert,
            public_key=key.public_key(),
            eku=ExtendedKeyUsageOID.SERVER_AUTH,
            now=now,
        )
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return cert, key


def _issue_self_signed(
    names: list[GeneralName], now: datetime.datetime
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A serving cert signed by its own key (upstream's kubelet names it host@time)."""
    key = _new_key()
    host = str(names[0].value) if names else "localhost"
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                         f"{host}@{int(now.timestamp())}")])
    cert = (
        _builder(subject=name, issuer=name, public_key=key.public_key(), now=now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(digital_signature=True), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert, key


def _issue_client(
    ca_cert: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, now: datetime.datetime,
    user: str, groups: Sequence[str],
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = _new_key()
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    cert = _leaf_builder(
        subject=subject,
        ca_cert=ca_cert,
        public_key=key.public_key(),
        eku=ExtendedKeyUsageOID.CLIENT_AUTH,
        now=now,
    ).sign(ca_key, hashes.SHA256())
    return cert, key


# --- validation of existing files ---------------------------------------------------------


def _load_pair(
    cert_path: Path, key_path: Path
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None:
    """The cert and key at these paths, or None if missing, unreadable or not an EC pair."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        return None
    if cert.public_key() != key.public_key():
        return None
    return cert, key


def _in_validity(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_before_utc <= now and now + RENEW_BEFORE < cert.not_valid_after_utc


def _ca_valid(cert: x509.Certificate, now: datetime.datetime) -> bool:
    try:
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
        cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        cert.verify_directly_issued_by(cert)
    except (x509.ExtensionNotFound, InvalidSignature, ValueError, TypeError):
        return False
    return constraints.ca and _in_validity(cert, now)


def _issued_by(cert: x509.Certificate, ca_cert: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def _has_eku(cert: x509.Certificate, eku: x509.ObjectIdentifier) -> bool:
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return False
    return eku in usages


def _server_valid(
    cert: x509.Certificate,
    ca_cert: x509.Certificate,
    wanted: list[GeneralName],
    now: datetime.datetime,
) -> bool:
    if not (_issued_by(cert, ca_cert) and _in_validity(cert, now)):
        return False
    if not _has_eku(cert, ExtendedKeyUsageOID.SERVER_AUTH):
        return False
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    return all(name in sans for name in wanted)


def _client_valid(cert: x509.Certificate, ca_cert: x509.Certificate, now: datetime.datetime,
                  user: str, groups: Sequence[str]) -> bool:
    if not (_issued_by(cert, ca_cert) and _in_validity(cert, now)):
        return False
    if not _has_eku(cert, ExtendedKeyUsageOID.CLIENT_AUTH):
        return False
    cns = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return cns == [user] and tuple(orgs) == tuple(groups)


# --- files ----------------------------------------------------------------------------------


def _write_pair(
    cert_path: Path,
    key_path: Path,
    cert: x509.Certificate,
    key: ec.EllipticCurvePrivateKey,
) -> None:
    """Write key (0600) then cert (0644), each atomically, so a crash never leaves half a file."""
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    _atomic_write(key_path, key_pem, mode=0o600)
    _atomic_write(cert_path, cert.public_bytes(serialization.Encoding.PEM), mode=0o644)


def _atomic_write(path: Path, data: bytes, *, mode: int) -> None:
    """Write via a temp file in the same directory (created 0600) and rename into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """Exclusive lock so two servers starting on one data dir don't issue two CAs."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock
