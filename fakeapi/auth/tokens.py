"""Service-account tokens: signed JWTs issued by `serviceaccounts/NAME/token` (TokenRequest)
and authenticated by the server, as kube-apiserver's bound service-account tokens are.

Tokens are ES256 JWS (upstream accepts ES256 service-account keys) with upstream's claims:
`iss`, `sub` (`system:serviceaccount:NS:NAME`), `aud`, `exp`/`iat`/`nbf`, `jti` and the
private `kubernetes.io` claim naming the namespace, the service account (with its uid) and,
for a pod-bound token, the pod and its node. A token is accepted while it is unexpired, its
audience is the API's, and the service account (and bound pod) it names still exist with the
same uid. The signing key lives in the data directory, so a restarted durable server accepts
the tokens it issued before.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from fakeapi.auth.authn import UserInfo, service_account

ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)
"""Same as kube-apiserver's default --api-audiences (the issuer)."""
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
DEFAULT_EXPIRATION = 3600
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

Obj = dict[str, Any]
Lookup = Callable[[str, str, str], "Obj | None"]
"""`lookup(resource_id, namespace, name)`: a stored object, or None."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclasses.dataclass(frozen=True)
class Binding:
    """What a token is bound to besides its service account (a pod, and so its node)."""

    pod: str = ""
    pod_uid: str = ""
    node: str = ""


class TokenIssuer:
    """Signs and verifies service-account tokens with one P-256 key."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, *, now: Callable[[], dt.datetime],
                 lookup: Lookup) -> None:
        self._key = key
        self._public = key.public_key()
        self._now = now
        self._lookup = lookup
        der = self._public.public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
        self.key_id = _b64(hashlib.sha256(der).digest())

    @classmethod
    def load(cls, path: Path | None, *, now: Callable[[], dt.datetime],
             lookup: Lookup) -> TokenIssuer:
        """The issuer of the key at `path` (made there when missing); an in-memory key
        without a path."""
        if path is not None and path.exists():
            loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
            if isinstance(loaded, ec.EllipticCurvePrivateKey):
                return cls(loaded, now=now, lookup=lookup)
        key = ec.generate_private_key(ec.SECP256R1())
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                               serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
            path.chmod(0o600)
        return cls(key, now=now, lookup=lookup)

    def jwks(self) -> Obj:
        """The public key as a JSON Web Key Set (`/openid/v1/jwks`), in go-jose's field
        order as upstream serves it."""
        numbers = self._public.public_numbers()
        return {"keys": [{"use": "sig", "kty": "EC", "kid": self.key_id, "crv": "P-256",
                          "alg": "ES256", "x": _b64(numbers.x.to_bytes(32, "big")),
                          "y": _b64(numbers.y.to_bytes(32, "big"))}]}

    def issue(self, *, namespace: str, name: str, uid: str, audiences: list[str],
              expiration: int, jti: str, binding: Binding = Binding()) -> tuple[str, str]:
        """A signed token and its expirationTimestamp (RFC 3339)."""
        now = int(self._now().timestamp())
        private: Obj = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        if binding.pod:
            private["pod"] = {"name": binding.pod, "uid": binding.pod_uid}
        if binding.node:
            private["node"] = {"name": binding.node}
        claims = {"aud": audiences, "exp": now + expiration, "iat": now, "iss": ISSUER,
                  "jti": jti, "kubernetes.io": private, "nbf": now,
                  "sub": f"system:serviceaccount:{namespace}:{name}"}
        header = {"alg": "ES256", "kid": self.key_id}
        signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}"
        der = self._key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        token = f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"
        expires = dt.datetime.fromtimestamp(now + expiration, dt.UTC)
        return token, expires.strftime("%Y-%m-%dT%H:%M:%SZ")

    def claims(self, token: str) -> Obj | None:
        """The verified claims of a token of ours, or None (not a JWT, not signed by this
        key, expired or not yet valid, another issuer)."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header = orjson.loads(_unb64(parts[0]))
            claims = orjson.loads(_unb64(parts[1]))
            signature = _unb64(parts[2])
        except (ValueError, orjson.JSONDecodeError):
            return None
        if not isinstance(header, dict) or header.get("alg") != "ES256" or len(signature) != 64:
            return None
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"),
                                   int.from_bytes(signature[32:], "big"))
        try:
            self._public.verify(der, f"{parts[0]}.{parts[1]}".encode(),
                                ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return None
        now = self._now().timestamp()
        if not isinstance(claims, dict) or claims.get("iss") != ISSUER:
            return None
        if not (claims.get("nbf", 0) - 60 <= now < claims.get("exp", 0) + 60):
            return None
        return claims

    def authenticate(self, token: str, audiences: tuple[str, ...] = API_AUDIENCES
                     ) -> UserInfo | None:
        """The service account a token authenticates, or None: as upstream's validator, the
        audience must be one of ours and the service account (and bound pod) must still
        exist with the uid the token names."""
        claims = self.claims(token)
        if claims is None:
            return None
        aud = claims.get("aud")
        if not isinstance(aud, list) or not set(aud) & set(audiences):
            return None
        private = claims.get("kubernetes.io") or {}
        namespace = private.get("namespace", "")
        account = private.get("serviceaccount") or {}
        found = self._lookup("serviceaccounts", namespace, account.get("name", ""))
        if found is None or found["metadata"].get("uid") != account.get("uid"):
            return None
        extra: dict[str, tuple[str, ...]] = {CREDENTIAL_ID_KEY: (f"JTI={claims.get('jti')}",)}
        pod = private.get("pod")
        if pod:
            bound = self._lookup("pods", namespace, pod.get("name", ""))
            if bound is None or bound["metadata"].get("uid") != pod.get("uid"):
                return None
            extra[POD_NAME_KEY] = (pod["name"],)
            extra[POD_UID_KEY] = (pod["uid"],)
        node = (private.get("node") or {}).get("name")
        user = service_account(namespace, account["name"], node=node, uid=account["uid"])
        return dataclasses.replace(user, extra={**user.extra, **extra}) if extra else user

