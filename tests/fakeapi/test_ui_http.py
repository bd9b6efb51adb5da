"""The web view's files over HTTP (no browser): what `/ui/` serves and with which headers,
that nothing else under it is served (`..` included), that the files need no credentials
while the data does, and that a fault write without the user's bearer token is refused (a
cross-site form can send cookies, never the token header)."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.auth.authn import Authenticator, UserInfo
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.http.ui.assets import CONTENT_SECURITY_POLICY
from fakeapi.machinery.clock import VirtualClock
from fakeapi.registry.kinds import DEVICE_FAULTS
from tests.support.httpapi import call, check_status

ADMIN_TOKEN = "admin-token"
FAULTS = "/apis/emulator.fakeapi.dev/v1alpha1/devicefaults"
FAULT = {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
         "metadata": {"generateName": "ui-"},
         "spec": {"nodeName": "worker-0", "driver": "gpu.example.com", "device": "gpu-0"}}


@pytest.fixture
async def served(aiohttp_client: Any) -> tuple[Cluster, TestClient]:
    """A server that authenticates as `fakeapi serve` does: a token or nobody (anonymous)."""
    cluster = Cluster(ClusterConfig(seed=7), clock=VirtualClock())
    auth = Authenticator(tokens={ADMIN_TOKEN: UserInfo("admin", groups=("system:masters",))},
                         service_accounts=cluster.tokens.authenticate)
    return cluster, await aiohttp_client(create_app(cluster, authenticator=auth))


@pytest.mark.parametrize(("path", "content_type", "contains"), [
    ("/ui/", "text/html", b'<script src="app.js" type="module">'),
    ("/ui/watch.js", "text/javascript", b"resourceVersionMatch=Exact"),
    ("/ui/index.html", "text/html", b'<link rel="stylesheet" href="ui.css">'),
    ("/ui/app.js", "text/javascript", b"textContent"),
    ("/ui/ui.css", "text/css", b".cell"),
])
async def test_the_files_are_served_to_anyone_with_the_policy(
        served: tuple[Cluster, TestClient], path: str, content_type: str,
        contains: bytes) -> None:
    _, api = served
    async with api.get(path) as resp:  # no credentials: the files hold no data
        body = await resp.read()
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith(content_type)
        assert resp.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
        assert resp.headers["X-Frame-Options"] == "DENY"
    assert contains in body


def test_the_policy_forbids_inline_script_and_other_origins() -> None:
    directives = dict(d.strip().split(" ", 1) for d in CONTENT_SECURITY_POLICY.split(";"))
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["default-src"] == "'none'"
    assert directives["connect-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"


def test_the_page_has_no_inline_script_or_style() -> None:
    import importlib.resources
    page = (importlib.resources.files("fakeapi.http.ui") / "static" / "index.html").read_text()
    assert "<script>" not in page and "<style" not in page and " on" not in page.replace(
        " one", "")  # no inline handlers (onclick=...) either
    assert "http://" not in page and "https://" not in page  # nothing from another origin


async def test_ui_without_the_slash_redirects(served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    async with api.get("/ui", allow_redirects=False) as resp:
        assert resp.status == 301
        assert resp.headers["Location"] == "/ui/"


@pytest.mark.parametrize("raw_path", [
    "/ui/nothing.js",
    "/ui/static/app.js",
    "/ui/assets.py",
    "/ui/__init__.py",
    "/ui/../ui/assets.py",
    "/ui/%2e%2e/assets.py",
    "/ui/..%2fassets.py",
    "/ui/%2e%2e%2f%2e%2e%2fpyproject.toml",
    "/ui/static%2f..%2f..%2f..%2fpyproject.toml",
    "/ui//etc/passwd",
    "/ui/app.js/",
    "/ui/APP.JS",
])
async def test_any_other_path_is_404_and_reads_no_file(
        served: tuple[Cluster, TestClient], raw_path: str) -> None:
    _, api = served
    status, body = await _raw_get(api, raw_path)
    assert status == 404, (raw_path, status, body[:200])
    assert b"import" not in body and b"[build-system]" not in body and b"root:" not in body


async def _raw_get(api: TestClient, raw_path: str) -> tuple[int, bytes]:
    """GET `raw_path` byte for byte (a client library would normalise the dots away)."""
    server = api.server
    reader, writer = await asyncio.open_connection(server.host, server.port)
    writer.write(f"GET {raw_path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    answer = await reader.read()
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


async def test_the_data_needs_credentials(served: tuple[Cluster, TestClient]) -> None:
    _, api = served
    reply = await call(api, "GET", "/apis/resource.k8s.io/v1/resourceslices")
    check_status(reply, 403, "Forbidden",
                 'resourceslices.resource.k8s.io is forbidden: User "system:anonymous" cannot '
                 'list resource "resourceslices" in API group "resource.k8s.io" at the cluster '
                 "scope")


@pytest.mark.parametrize(("headers", "status"), [
    ({}, 403),  # what a cross-site form sends: no token header
    ({"Cookie": f"token={ADMIN_TOKEN}"}, 403),  # cookies are no credential here
    ({"Authorization": "Bearer wrong"}, 401),
    ({"Authorization": f"Bearer {ADMIN_TOKEN}"}, 201),
])
async def test_a_fault_write_needs_the_bearer_token(
        served: tuple[Cluster, TestClient], headers: dict[str, str], status: int) -> None:
    cluster, api = served
    async with api.post(FAULTS, json=FAULT, headers=headers) as resp:
        assert resp.status == status, await resp.text()
    assert cluster.store.count(DEVICE_FAULTS.resource_id) == (status == 201)


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
async def test_what_a_cross_site_form_can_send_is_refused_even_with_credentials(
        served: tuple[Cluster, TestClient], content_type: str) -> None:
    """A browser presenting a client certificate would send it with a cross-site form too:
    the types a form can send are no API body (415), so such a write never lands."""
    cluster, api = served
    body = orjson.dumps({**FAULT, "metadata": {"name": "forged"}})
    async with api.post(FAULTS, data=body, headers={
            "Content-Type": content_type, "Authorization": f"Bearer {ADMIN_TOKEN}"}) as resp:
        assert resp.status == 415, await resp.text()
    assert cluster.store.count(DEVICE_FAULTS.resource_id) == 0
