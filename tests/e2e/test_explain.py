"""The real kubectl v1.37 against discovery and OpenAPI v3 from `fakeapi.http.discovery`/`openapi`.

A tiny aiohttp app (plain HTTP on 127.0.0.1, random port) serves /version, discovery (aggregated
or legacy only), OpenAPI v3 and a minimal in-memory object store, so that `api-resources`,
`explain`, `create` (server-side field validation) and client-side `apply` (strategic merge
patch computed from OpenAPI v3) can be checked without the full server.

kubectl comes from the `kubectl_binary` fixture of tests/conftest.py (skipped locally when
missing, failed under CI).
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import web

from fakeapi.http import discovery, openapi
from fakeapi.registry.kinds import KindTable, served_kinds
from fakeapi.registry.rest import Kind

KUBECTL_TIMEOUT = 60.0


@dataclasses.dataclass
class Recorded:
    """What kubectl sent to the mini server."""

    requests: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    objects: dict[str, Any] = dataclasses.field(default_factory=dict)


def _json(body: Any, status: int = 200, content_type: str = "application/json") -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type=None,
                        headers={"Content-Type": content_type})


def _not_found(path: str) -> web.Response:
    return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": f"the server could not find the requested resource ({path})",
                  "reason": "NotFound", "code": 404}, status=404)


def make_app(kinds: KindTable, *, aggregated: bool = True) -> tuple[web.Application, Recorded]:
    """The mini API server: discovery + OpenAPI from our modules, objects kept in a dict."""
    rec = Recorded()

    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        rec.requests.append((request.method, request.path_qs,
                             request.headers.get("Content-Type", "")))
        accept = request.headers.get("Accept")
        agg = aggregated and discovery.wants_aggregated(accept)
        parts = path.strip("/").split("/")
        if request.method == "GET":
            if path == "/version":
                return _json({"major": "1", "minor": "37", "gitVersion": "v1.37.0",
                              "platform": "linux/amd64"})
            if path == "/api":
                if agg:
                    return _json(discovery.aggregated_core(kinds),
                                 content_type=discovery.AGGREGATED_CONTENT_TYPE)
                return _json(discovery.api_versions(f"{request.host}"))
            if path == "/apis":
                if agg:
                    return _json(discovery.aggregated_groups(kinds),
                                 content_type=discovery.AGGREGATED_CONTENT_TYPE)
                return _json(discovery.api_group_list(kinds))
            if path == "/openapi/v3":
                served = openapi.serve_index(kinds)
                return web.Response(body=served.body, status=served.status,
                                    headers=served.headers)
            if path.startswith("/openapi/v3/"):
                document = openapi.serve_document(kinds, path, request.query.get("hash"),
                                                  request.headers.get("If-None-Match"))
                if document is None:
                    return _not_found(path)
                return web.Response(body=document.body or None, status=document.status,
                                    headers=document.headers)
            if len(parts) == 2 and parts[0] == "apis":
                doc = discovery.api_group(kinds, parts[1])
                return _json(doc) if doc else _not_found(path)
            if (len(parts) == 2 and parts[0] == "api") or (len(parts) == 3 and parts[0] == "apis"):
                group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
                doc = discovery.api_resource_list(kinds, group, version)
                return _json(doc) if doc else _not_found(path)
            if path in rec.objects:
                return _json(rec.objects[path])
            return _not_found(path)
        body = orjson.loads(await request.read() or b"{}")
        if request.method == "POST":
            rec.objects[f"{path}/{body['metadata']['name']}"] = body
            return _json(body, status=201)
        if request.method == "PATCH" and path in rec.objects:
            # Good enough for the test: the stored object is the last-applied one.
            return _json(rec.objects[path])
        return _not_found(path)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app, rec


@dataclasses.dataclass
class Kubectl:
    """Runs the real kubectl against one mini server, with its own kubeconfig and cache."""

    binary: str
    home: Path
    recorded: Recorded

    async def run(self, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
        """Run kubectl; returns (exit code, stdout, stderr)."""
        proc = await asyncio.create_subprocess_exec(
            self.binary, "--kubeconfig", str(self.home / "kubeconfig"),
            "--cache-dir", str(self.home / "cache"), *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env={"HOME": str(self.home), "PATH": "/usr/bin:/bin"})
        out, err = await asyncio.wait_for(proc.communicate(stdin), KUBECTL_TIMEOUT)
        return proc.returncode or 0, out.decode(), err.decode()

    async def ok(self, *args: str, stdin: bytes | None = None) -> str:
        """Run kubectl and require success; returns stdout."""
        code, out, err = await self.run(*args, stdin=stdin)
        assert code == 0, f"kubectl {' '.join(args)} failed ({code}):\n{err}\n{out}"
        assert "couldn't get" not in err, err
        return out


def write_kubeconfig(path: Path, server: str) -> None:
    """A kubeconfig with one insecure cluster and an empty user."""
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: fake\n  cluster:\n    server: {server}\n"
        "users:\n- name: dev\n  user: {}\n"
        "contexts:\n- name: fake\n  context: {cluster: fake, user: dev, namespace: default}\n"
        "current-context: fake\n")


async def _start(aiohttp_server: Any, tmp_path: Path, binary: str, aggregated: bool) -> Kubectl:
    app, rec = make_app(served_kinds(), aggregated=aggregated)
    server = await aiohttp_server(app, host="127.0.0.1")
    write_kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{server.port}")
    return Kubectl(binary, tmp_path, rec)


@pytest.fixture(params=[True, False], ids=["aggregated", "legacy"])
async def kubectl(request: Any, aiohttp_server: Any, tmp_path: Path,
                  kubectl_binary: str) -> Kubectl:
    """kubectl talking to a mini server with aggregated discovery on or off."""
    return await _start(aiohttp_server, tmp_path, kubectl_binary, request.param)


@pytest.fixture
async def kubectl_agg(aiohttp_server: Any, tmp_path: Path, kubectl_binary: str) -> Kubectl:
    """kubectl talking to a mini server with aggregated discovery."""
    return await _start(aiohttp_server, tmp_path, kubectl_binary, True)


def _table(out: str) -> dict[str, list[str]]:
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return {row[0]: row for row in rows}


API_RESOURCES = [
    # name, shortnames or "", apiVersion, namespaced, kind
    ("resourceclaims", "", "resource.k8s.io/v1", "true", "ResourceClaim"),
    ("deviceclasses", "", "resource.k8s.io/v1", "false", "DeviceClass"),
    ("devicetaintrules", "", "resource.k8s.io/v1", "false", "DeviceTaintRule"),
    ("resourcepoolstatusrequests", "", "resource.k8s.io/v1alpha3", "false",
     "ResourcePoolStatusRequest"),
    ("podgroups", "", "scheduling.k8s.io/v1beta1", "true", "PodGroup"),
    ("priorityclasses", "pc", "scheduling.k8s.io/v1", "false", "PriorityClass"),
    ("pods", "po", "v1", "true", "Pod"),
    ("namespaces", "ns", "v1", "false", "Namespace"),
]


async def test_api_resources(kubectl: Kubectl) -> None:
    table = _table(await kubectl.ok("api-resources"))
    for name, short, api_version, namespaced, kind in API_RESOURCES:
        expected = [name, *([short] if short else []), api_version, namespaced, kind]
        assert table[name] == expected


async def test_api_resources_wide_verbs(kubectl_agg: Kubectl) -> None:
    out = await kubectl_agg.ok("api-resources", "-o", "wide", "--api-group=resource.k8s.io")
    assert _table(out)["resourceclaims"][-1] == (
        "create,delete,deletecollection,get,list,patch,update,watch")


EXPLAIN_CASES = [
    # args, substrings the output must contain
    (("resourceclaim.spec.devices.requests",),
     ["GROUP:      resource.k8s.io", "KIND:       ResourceClaim", "VERSION:    v1\n",
      "FIELD: requests <[]DeviceRequest>", "exactly\t<ExactDeviceRequest>",
      "firstAvailable\t<[]DeviceSubRequest>", "name\t<string> -required-"]),
    (("pods.spec.containers", "--recursive"),
     ["KIND:       Pod", "FIELD: containers <[]Container>", "image\t<string>",
      "resources\t<ResourceRequirements>", "claims\t<[]ResourceClaim>"]),
    (("resourcepoolstatusrequests",),
     ["KIND:       ResourcePoolStatusRequest", "VERSION:    v1alpha3",
      "spec\t<ResourcePoolStatusRequestSpec> -required-"]),
    (("resourceslices.spec.devices.capacity",),
     ["FIELD: capacity <map[string]DeviceCapacity>", "value\t<Quantity> -required-"]),
    (("podgroups.spec", "--api-version=scheduling.k8s.io/v1beta1"),
     ["GROUP:      scheduling.k8s.io", "KIND:       PodGroup", "VERSION:    v1beta1"]),
    (("deviceclass",), ["KIND:       DeviceClass", "metadata\t<ObjectMeta>"]),
    (("deviceclass.spec.config.opaque.parameters",),
     ["FIELD: parameters <RawExtension>", "Parameters can contain arbitrary data"]),
    (("resourceclaims.status.devices",),
     ["conditions\t<[]Condition>", "data\t<RawExtension>"]),
]


@pytest.mark.parametrize(("args", "expected"), EXPLAIN_CASES,
                         ids=[c[0][0] for c in EXPLAIN_CASES])
async def test_explain(kubectl: Kubectl, args: tuple[str, ...], expected: list[str]) -> None:
    out = await kubectl.ok("explain", *args)
    for text in expected:
        assert text in out, f"{text!r} not in:\n{out}"


@pytest.mark.parametrize("kind", served_kinds().kinds, ids=lambda k: k.resource_id)
async def test_explain_every_kind(kubectl_agg: Kubectl, kind: Kind) -> None:
    out = await kubectl_agg.ok("explain", kind.plural, f"--api-version={kind.api_version}")
    assert f"KIND:       {kind.kind}\n" in out and f"VERSION:    {kind.version}\n" in out


async def test_explain_fetches_hashed_document_once(kubectl_agg: Kubectl) -> None:
    await kubectl_agg.ok("explain", "resourceclaims")
    await kubectl_agg.ok("explain", "resourceclaims.status")
    fetched = [p for m, p, _ in kubectl_agg.recorded.requests
               if p.startswith("/openapi/v3/apis/resource.k8s.io/v1?hash=")]
    # The second run is answered from kubectl's HTTP cache (immutable, hash in the URL).
    assert len(fetched) == 1


CLAIM = b"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


async def test_create_uses_server_side_field_validation(kubectl_agg: Kubectl) -> None:
    await kubectl_agg.ok("create", "-f", "-", stdin=CLAIM)
    posts = [p for m, p, _ in kubectl_agg.recorded.requests if m == "POST"]
    assert posts and "fieldValidation=Strict" in posts[0], posts


async def test_client_side_apply_sends_strategic_merge_patch(kubectl_agg: Kubectl) -> None:
    await kubectl_agg.ok("apply", "-f", "-", stdin=CLAIM)
    changed = CLAIM.replace(b"metadata: {", b"metadata: {labels: {a: b}, ")
    code, _, err = await kubectl_agg.run("apply", "-f", "-", stdin=changed)
    assert code == 0 and "warning" not in err.lower(), err
    patches = [(p, ct) for m, p, ct in kubectl_agg.recorded.requests if m == "PATCH"]
    assert patches and patches[0][1] == "application/strategic-merge-patch+json", patches
    assert "fieldValidation=Strict" in patches[0][0]
