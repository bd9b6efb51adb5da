"""The service-account issuer's OIDC discovery through the real kubectl v1.37 against a
server process: a service account reads `/.well-known/openid-configuration` and
`/openid/v1/jwks` (RBAC's system:service-account-issuer-discovery), the configuration names
the issuer of the tokens and the JWKS, and the JWKS key verifies a token the server issued,
as an external verifier (a cloud's workload identity) does."""

from __future__ import annotations

import base64
import json

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from tests.support.kubectl import Kubectl, token_kubectl


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_service_account_discovers_the_issuer_and_verifies_a_token(
        kubectl: Kubectl, fresh_namespace: str) -> None:
    kubectl("create", "serviceaccount", "reader", "-n", fresh_namespace)
    token = kubectl("create", "token", "reader", "-n", fresh_namespace).strip()
    reader = token_kubectl(kubectl, token)
    config = json.loads(reader("get", "--raw", "/.well-known/openid-configuration"))
    header, claims, signature = token.split(".")
    assert config["issuer"] == json.loads(_unb64(claims))["iss"]
    assert config["jwks_uri"].endswith("/openid/v1/jwks")
    assert config["id_token_signing_alg_values_supported"] == ["ES256"]
    assert config["response_types_supported"] == ["id_token"]
    jwks = json.loads(reader("get", "--raw", "/openid/v1/jwks"))
    kid = json.loads(_unb64(header))["kid"]
    [key] = [k for k in jwks["keys"] if k["kid"] == kid]
    assert (key["kty"], key["crv"], key["alg"], key["use"]) == ("EC", "P-256", "ES256", "sig")
    public = ec.EllipticCurvePublicNumbers(int.from_bytes(_unb64(key["x"]), "big"),
                                           int.from_bytes(_unb64(key["y"]), "big"),
                                           ec.SECP256R1()).public_key()
    raw = _unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises


def test_discovery_is_for_service_accounts_only(kubectl: Kubectl) -> None:
    user = kubectl.run("get", "--raw", "/openid/v1/jwks", "--as", "jane", check=False)
    assert user.returncode != 0 and "Forbidden" in user.stderr, user.stderr
    roles = json.loads(kubectl("get", "clusterrolebinding",
                               "system:service-account-issuer-discovery", "-o", "json"))
    assert roles["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                  "name": "system:serviceaccounts"}]
