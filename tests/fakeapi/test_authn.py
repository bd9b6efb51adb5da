"""Authentication: the static token file, bearer tokens, the chain's order, service accounts,
and what a request sees over HTTP (401 for a bad token, the fallback identity otherwise)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakeapi.auth import authn
from fakeapi.auth.authn import (
    ANONYMOUS,
    NODE_NAME_KEY,
    UNSECURED,
    Authenticator,
    TokenFileError,
    UserInfo,
)
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app


class FakeRequest:
    """Just what the authenticator reads: headers (and whatever the cert callable wants)."""

    def __init__(self, headers: dict[str, str] | None = None, cert: Any = None) -> None:
        self.headers = headers or {}
        self.cert = cert


# --- the token file ---------------------------------------------------------------------

TOKEN_FILES = [
    ("three columns", "t1,alice,1001\n", {"t1": UserInfo("alice", uid="1001")}),
    ("quoted groups", 't1,alice,1001,"dev,qa"\n',
     {"t1": UserInfo("alice", uid="1001", groups=("dev", "qa"))}),
    ("one group unquoted", "t1,alice,1001,dev\n",
     {"t1": UserInfo("alice", uid="1001", groups=("dev",))}),
    ("empty group column", "t1,alice,1001,\n", {"t1": UserInfo("alice", uid="1001")}),
    ("extra columns ignored", 't1,alice,1001,"dev",whatever\n',
     {"t1": UserInfo("alice", uid="1001", groups=("dev",))}),
    ("blank lines skipped", "\nt1,alice,1\n\nt2,bob,2\n",
     {"t1": UserInfo("alice", uid="1"), "t2": UserInfo("bob", uid="2")}),
    ("empty token skipped", ",alice,1\nt2,bob,2\n", {"t2": UserInfo("bob", uid="2")}),
    ("duplicate token: last wins", "t1,alice,1\nt1,bob,2\n", {"t1": UserInfo("bob", uid="2")}),
    ("empty uid allowed", "t1,alice,\n", {"t1": UserInfo("alice")}),
    ("no trailing newline", "t1,alice,1", {"t1": UserInfo("alice", uid="1")}),
]


@pytest.mark.parametrize(("text", "want"), [c[1:] for c in TOKEN_FILES],
                         ids=[c[0] for c in TOKEN_FILES])
def test_token_csv(text: str, want: dict[str, UserInfo]) -> None:
    assert authn.parse_token_csv(text) == want


@pytest.mark.parametrize(("text", "found"), [("t1,alice\n", 2), ("t1\n", 1),
                                             ("t1,a,1\nt2,b\n", 2)])
def test_token_csv_needs_three_columns(text: str, found: int) -> None:
    with pytest.raises(TokenFileError) as e:
        authn.parse_token_csv(text, "/etc/tokens.csv")
    assert str(e.value) == ("token file '/etc/tokens.csv' must have at least 3 columns "
                            f"(token, user name, user uid), found {found}")


def test_token_file_read_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="failed to read token file"):
        authn.load_token_file(tmp_path / "missing.csv")
    (tmp_path / "t.csv").write_text("tok,carol,7,\"a,b\"\n")
    assert authn.load_token_file(tmp_path / "t.csv") == {
        "tok": UserInfo("carol", uid="7", groups=("a", "b"))}


# --- bearer tokens ----------------------------------------------------------------------


@pytest.mark.parametrize(("header", "token"), [
    ("Bearer abc", "abc"),
    ("bearer abc", "abc"),
    ("BEARER abc", "abc"),
    ("Bearer abc extra", "abc"),
    ("Bearer ", None),
    ("Bearer", None),
    ("Basic dXNlcjpwYXNz", None),
    ("", None),
])
def test_bearer_token(header: str, token: str | None) -> None:
    assert authn.bearer_token(header) == token


# --- the chain --------------------------------------------------------------------------

TOKENS = {"good": UserInfo("alice", uid="1", groups=("dev",)),
          "authed": UserInfo("bob", groups=("system:authenticated", "x"))}


def _cert(request: FakeRequest) -> tuple[str, tuple[str, ...]] | None:
    return request.cert


CHAIN = [
    ("certificate", {}, ("admin", ("system:masters",)),
     UserInfo("admin", groups=("system:masters", "system:authenticated"))),
    ("certificate wins over token", {"Authorization": "Bearer good"}, ("admin", ()),
     UserInfo("admin", groups=("system:authenticated",))),
    ("token", {"Authorization": "Bearer good"}, None,
     UserInfo("alice", uid="1", groups=("dev", "system:authenticated"))),
    ("token group not doubled", {"Authorization": "Bearer authed"}, None,
     UserInfo("bob", groups=("system:authenticated", "x"))),
    ("no credentials: fallback", {}, None, ANONYMOUS),
    ("empty bearer: fallback", {"Authorization": "Bearer "}, None, ANONYMOUS),
    ("other scheme: fallback", {"Authorization": "Basic eDp5"}, None, ANONYMOUS),
]


@pytest.mark.parametrize(("headers", "cert", "want"), [c[1:] for c in CHAIN],
                         ids=[c[0] for c in CHAIN])
def test_chain(headers: dict[str, str], cert: Any, want: UserInfo) -> None:
    chain = Authenticator(tokens=TOKENS, certificate=_cert)
    assert chain.authenticate(FakeRequest(headers, cert)) == want


def test_unknown_token_is_401_not_anonymous() -> None:
    chain = Authenticator(tokens=TOKENS, certificate=_cert)
    with pytest.raises(authn.ApiError) as e:
        chain.authenticate(FakeRequest({"Authorization": "Bearer nope"}))
    assert e.value.to_status() == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                   "status": "Failure", "message": "Unauthorized",
                                   "reason": "Unauthorized", "code": 401}


def test_each_identity_is_built_once() -> None:
    chain = Authenticator(tokens=TOKENS, certificate=_cert)
    token = FakeRequest({"Authorization": "Bearer good"})
    assert chain.authenticate(token) is chain.authenticate(token)
    cert = FakeRequest({}, ("admin", ("system:masters",)))
    assert chain.authenticate(cert) is chain.authenticate(cert)
    other = chain.authenticate(FakeRequest({}, ("admin", ())))
    assert other == UserInfo("admin", groups=("system:authenticated",))


def test_http_fallback_is_the_unsecured_superuser() -> None:
    chain = Authenticator(tokens=TOKENS, fallback=UNSECURED)
    assert chain.authenticate(FakeRequest()) == UNSECURED
    assert "system:masters" in UNSECURED.groups
    assert chain.authenticate(FakeRequest({"Authorization": "Bearer good"})).name == "alice"


# --- service accounts -------------------------------------------------------------------


@pytest.mark.parametrize(("username", "split"), [
    ("system:serviceaccount:kube-system:gc", ("kube-system", "gc")),
    ("system:serviceaccount:ns:a", ("ns", "a")),
    ("system:serviceaccount:ns", None),
    ("system:serviceaccount:ns:a:b", None),
    ("system:serviceaccount::a", None),
    ("system:serviceaccount:ns:", None),
    ("alice", None),
])
def test_split_service_account(username: str, split: tuple[str, str] | None) -> None:
    assert authn.split_service_account(username) == split


@pytest.mark.parametrize(("node", "extra"), [(None, {}), ("node-1", {NODE_NAME_KEY: ("node-1",)})])
def test_service_account_identity(node: str | None, extra: dict) -> None:
    user = authn.service_account("kube-system", "drv", node=node)
    assert user == UserInfo("system:serviceaccount:kube-system:drv",
                            groups=("system:serviceaccounts", "system:serviceaccounts:kube-system",
                                    "system:authenticated"), extra=extra)


def test_user_info_wire_form() -> None:
    assert ANONYMOUS.to_wire() == {"username": "system:anonymous",
                                   "groups": ["system:unauthenticated"]}
    user = UserInfo("a", uid="u", groups=("g",), extra={"k": ("v1", "v2")})
    assert user.to_wire() == {"username": "a", "uid": "u", "groups": ["g"],
                              "extra": {"k": ["v1", "v2"]}}


# --- over HTTP --------------------------------------------------------------------------


@pytest.fixture
async def api(aiohttp_client: Any) -> Any:
    cluster = Cluster(ClusterConfig(seed=1))
    return await aiohttp_client(create_app(cluster, authenticator=Authenticator(tokens=TOKENS)))


WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
SSR = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}


async def test_http_bad_token_is_401(api: Any) -> None:
    async with api.get("/version", headers={"Authorization": "Bearer nope"}) as resp:
        assert resp.status == 401
        assert (await resp.json())["reason"] == "Unauthorized"


@pytest.mark.parametrize(("headers", "code", "user"), [
    ({"Authorization": "Bearer good"}, 201,
     {"username": "alice", "uid": "1", "groups": ["dev", "system:authenticated"]}),
    ({}, 403, None),  # anonymous may not create selfsubjectreviews
])
async def test_http_whoami(api: Any, headers: dict[str, str], code: int, user: Any) -> None:
    async with api.post(WHOAMI, json=SSR, headers=headers) as resp:
        assert resp.status == code
        body = await resp.json()
    if user is not None:
        assert body["status"] == {"userInfo": user}
        assert body["kind"] == "SelfSubjectReview"
    else:
        assert body["message"] == (
            'selfsubjectreviews.authentication.k8s.io is forbidden: User "system:anonymous" '
            'cannot create resource "selfsubjectreviews" in API group "authentication.k8s.io" '
            "at the cluster scope")


@pytest.mark.parametrize("path", ["/version", "/healthz", "/livez", "/readyz"])
async def test_http_anonymous_reads_public_info(api: Any, path: str) -> None:
    async with api.get(path) as resp:
        assert resp.status == 200


async def test_http_anonymous_is_refused_discovery(api: Any) -> None:
    async with api.get("/apis") as resp:
        assert resp.status == 403
        assert await resp.json() == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'forbidden: User "system:anonymous" cannot get path "/apis"',
            "reason": "Forbidden", "details": {}, "code": 403}
