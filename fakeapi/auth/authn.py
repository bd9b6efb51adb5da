"""Authentication: who is asking, as kube-apiserver's authenticator chain decides it.

Order as upstream: the client certificate (x509: CN is the user, O values the groups), then
a bearer token from `--token-auth-file` or a service-account token the cluster issued, then
the fallback identity (anonymous on HTTPS; on
plain HTTP the unsecured superuser). A bearer token the file doesn't know is a 401, never
anonymous. Every authenticated identity also gets the `system:authenticated` group.

The emulator's own components act as service accounts (`system:serviceaccount:NS:NAME`),
optionally bound to a node through the `authentication.kubernetes.io/node-name` extra, as
pod-bound service-account tokens are.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fakeapi.machinery.errors import ApiError

log = logging.getLogger(__name__)

ANONYMOUS_USER = "system:anonymous"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
MASTERS = "system:masters"
SA_PREFIX = "system:serviceaccount:"
SA_GROUP = "system:serviceaccounts"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"

Extra = Mapping[str, tuple[str, ...]]


@dataclasses.dataclass(frozen=True)
class UserInfo:
    """An authenticated (or anonymous) identity: name, uid, groups and extra attributes."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Extra = dataclasses.field(default_factory=dict)

    def __hash__(self) -> int:
        # `extra` is a mapping: hashed by its items, so identities that differ only there
        # (one per emulated node) don't collide in dictionaries keyed by users.
        return hash((self.name, self.uid, self.groups,
                     tuple(sorted((k, tuple(v)) for k, v in self.extra.items()))))

    def to_wire(self) -> dict[str, Any]:
        """authentication.k8s.io/v1 `UserInfo` (empty fields left out, as upstream)."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ANONYMOUS = UserInfo(ANONYMOUS_USER, groups=(UNAUTHENTICATED,))
UNSECURED = UserInfo("system:unsecured", groups=(MASTERS, AUTHENTICATED))
"""Everyone on the plain-HTTP port (`fakeapi serve --http`): a superuser, like upstream's old
insecure port."""


def with_authenticated(user: UserInfo) -> UserInfo:
    """Add `system:authenticated` unless anonymous or already there (upstream's group adder)."""
    if user.name == ANONYMOUS_USER or AUTHENTICATED in user.groups:
        return user
    return dataclasses.replace(user, groups=(*user.groups, AUTHENTICATED))


def service_account_username(namespace: str, name: str) -> str:
    """`system:serviceaccount:NS:NAME`."""
    return f"{SA_PREFIX}{namespace}:{name}"


def split_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a service-account username, or None for any other user."""
    if not username.startswith(SA_PREFIX):
        return None
    parts = username[len(SA_PREFIX):].split(":")
    if len(parts) != 2 or not all(parts):
        return None
    return parts[0], parts[1]


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups every service account of a namespace is in."""
    return (SA_GROUP, f"{SA_GROUP}:{namespace}")


def service_account(namespace: str, name: str, *, node: str | None = None,
                    uid: str = "") -> UserInfo:
    """A service-account identity; `node` adds the node-name extra of a pod-bound token."""
    extra = {NODE_NAME_KEY: (node,)} if node else {}
    return UserInfo(service_account_username(namespace, name), uid=uid,
                    groups=(*service_account_groups(namespace), AUTHENTICATED), extra=extra)


# --- static token file ------------------------------------------------------------------


class TokenFileError(ValueError):
    """A `--token-auth-file` kube-apiserver would refuse to start with."""


def parse_token_csv(text: str, path: str = "<tokens>") -> dict[str, UserInfo]:
    """kube-apiserver's static token CSV: `token,user,uid[,"group1,group2"]` per line.

    Records need at least three columns; a record with an empty token is skipped, and a
    repeated token keeps the last record (both logged, as upstream).
    """
    tokens: dict[str, UserInfo] = {}
    number = 0
    for record in csv.reader(io.StringIO(text)):
        if not record:
            continue
        if len(record) < 3:
            raise TokenFileError(f"token file '{path}' must have at least 3 columns (token, "
                                 f"user name, user uid), found {len(record)}")
        number += 1
        token, name, uid = record[0], record[1], record[2]
        if not token:
            log.warning("empty token in token file '%s', record %d", path, number)
            continue
        if token in tokens:
            log.warning("duplicate token in token file '%s', record %d", path, number)
        groups = tuple(g for g in record[3].split(",") if g) if len(record) > 3 else ()
        tokens[token] = UserInfo(name, uid=uid, groups=groups)
    return tokens


def load_token_file(path: Path) -> dict[str, UserInfo]:
    """Read and parse a static token file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise TokenFileError(f"failed to read token file '{path}': {e}") from None
    return parse_token_csv(text, str(path))


# --- the chain --------------------------------------------------------------------------


def unauthorized() -> ApiError:
    """401 for credentials that were presented but are not valid."""
    return ApiError(401, "Unauthorized", "Unauthorized")


CertificateIdentity = Callable[[Any], "tuple[str, tuple[str, ...]] | None"]
"""(user, groups) from a request's verified client certificate, or None."""


class Authenticator:
    """Client certificate, then bearer token, then the fallback identity.

    Each identity is built once (per token, per certificate subject) and then shared: every
    request of a client gets the same UserInfo.
    """

    _MAX_CERTIFICATE_USERS = 1024

    def __init__(self, *, tokens: Mapping[str, UserInfo] | None = None,
                 certificate: CertificateIdentity | None = None,
                 fallback: UserInfo = ANONYMOUS,
                 service_accounts: Callable[[str], UserInfo | None] | None = None) -> None:
        self.tokens = dict(tokens or {})
        self.certificate = certificate
        self.fallback = fallback
        self.service_accounts = service_accounts
        """Verifies service-account JWTs (the cluster's token issuer), after static tokens."""
        self._token_users = {token: with_authenticated(user)
                             for token, user in self.tokens.items()}
        self._certificate_users: dict[tuple[str, tuple[str, ...]], UserInfo] = {}

    def authenticate(self, request: Any) -> UserInfo:
        """The identity of a request (an aiohttp request or anything with `headers`)."""
        if self.certificate is not None:
            ident = self.certificate(request)
            if ident is not None:
                return self._certificate_user(ident[0], tuple(ident[1]))
        header = request.headers.get("Authorization")
        token = bearer_token(header) if header else None
        if token is not None:
            user = self._token_users.get(token)
            if user is None and self.service_accounts is not None:
                user = self.service_accounts(token)
            if user is None:
                raise unauthorized()
            return user
        return self.fallback

    def _certificate_user(self, name: str, groups: tuple[str, ...]) -> UserInfo:
        user = self._certificate_users.get((name, groups))
        if user is None:
            if len(self._certificate_users) >= self._MAX_CERTIFICATE_USERS:
                self._certificate_users.clear()
            user = with_authenticated(UserInfo(name, groups=groups))
            self._certificate_users[(name, groups)] = user
        return user


def bearer_token(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header; None when there is none."""
    parts = header.split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    token = parts[1]
    return token or None
