"""Requests to an in-process API server over HTTP (pytest-aiohttp's client on
`create_app(Cluster(...))`) and reading their answers: replies, Status checks, warnings, watch
events, the committed state, and the bodies and paths the HTTP tests share."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from aiohttp.web_runner import BaseRunner

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http import compression
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from fakeapi.storage.log import Event

Obj = dict[str, Any]

JSON = "application/json"
MERGE = "application/merge-patch+json"
NS = "/api/v1/namespaces"
CM = "/api/v1/namespaces/default/configmaps"
RC = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list.")
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu",
                                        "exactly": {"deviceClassName": "gpu.example.com"}}]}}


Serve = Callable[..., Awaitable[tuple[Cluster, TestClient]]]
"""`serve(**config)`: a fresh cluster and a client of its server."""


class ApiTestServer(TestServer):
    """pytest-aiohttp's server with the settings `fakeapi serve`'s listener has (its
    `server_kwargs` never reach the runner)."""

    async def _make_runner(self, **kwargs: Any) -> BaseRunner:
        return await super()._make_runner(**{**kwargs, **compression.SERVER_SETTINGS})


def server_factory(aiohttp_client: Any) -> Serve:
    """Start servers over fresh clusters (deterministic names, virtual clock)."""

    async def make(**config: Any) -> tuple[Cluster, TestClient]:
        cluster = Cluster(ClusterConfig(seed=7, **config), clock=VirtualClock())
        return cluster, await aiohttp_client(ApiTestServer(create_app(cluster)))

    return make


async def seed(api: TestClient) -> None:
    """A ConfigMap and a ResourceClaim in `default`, and a Terminating namespace `doomed`.

    No controller runs, so `doomed` keeps its finalizer and stays Terminating.
    """
    await ok(api, "POST", CM, cm("existing", data={"k": "v"}))
    await ok(api, "POST", RC, claim("claim"))
    await ok(api, "POST", NS, {"metadata": {"name": "doomed"}})
    await ok(api, "POST", f"{NS}/doomed/configmaps", cm("inside"))
    doomed = await ok(api, "DELETE", f"{NS}/doomed")
    assert doomed["status"]["phase"] == "Terminating"


@dataclasses.dataclass
class Reply:
    """A response read in full."""

    status: int
    body: Any
    headers: Any

    @property
    def object(self) -> Obj:
        """The body, which must be a JSON object."""
        assert isinstance(self.body, dict), self.body
        return self.body


async def call(api: TestClient, method: str, path: str, body: Any = None, *,
               raw: bytes | None = None, ctype: str = JSON,
               params: dict[str, str] | list[tuple[str, str]] | None = None) -> Reply:
    """Send one request; `body` is sent as JSON unless `raw` bytes are given."""
    data = raw if raw is not None else (None if body is None else orjson.dumps(body))
    headers = {"Content-Type": ctype} if data is not None else {}
    async with api.request(method, path, data=data, headers=headers, params=params) as resp:
        text = await resp.read()
        parsed = orjson.loads(text) if text[:1] in (b"{", b"[") else text
        return Reply(resp.status, parsed, resp.headers)


async def ok(api: TestClient, method: str, path: str, body: Any = None, *,
             ctype: str = JSON, params: dict[str, str] | None = None) -> Obj:
    """A request that must succeed; returns the object."""
    reply = await call(api, method, path, body, ctype=ctype, params=params)
    assert reply.status in (200, 201), (reply.status, reply.body)
    return reply.object


def committed(cluster: Cluster) -> tuple[int, dict[str, list[bytes]]]:
    """The whole committed state: the revision and every stored object's bytes."""
    store = cluster.store
    return store.revision, {r: [item.raw for item in map(_live, store.scan(r))]
                            for r in store.resources()}


def _live(item: Event | Obj) -> Event:
    """An item of a scan at the current revision (always an Event, with its encoding)."""
    assert isinstance(item, Event), item
    return item


def check_status(reply: Reply, code: int, reason: str, message: str | re.Pattern[str], *,
                 causes: list[tuple[str | None, str]] | None = None,
                 details: Obj | None = None) -> None:
    """The reply is a failure `Status` with exactly this code, reason and message."""
    body = reply.object
    assert reply.status == code, body
    assert {k: body.get(k) for k in ("kind", "apiVersion", "status", "code", "reason")} == {
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
        "reason": reason}
    if isinstance(message, re.Pattern):
        assert message.fullmatch(body["message"]), body["message"]
    else:
        assert body["message"] == message
    got = body.get("details", {})
    if causes is not None:
        assert [(c.get("field"), c["reason"]) for c in got.get("causes", [])] == causes
    for key, value in (details or {}).items():
        assert got.get(key) == value, (key, got)


def warnings_of(reply: Reply) -> list[str]:
    """The texts of the `299` Warning header values."""
    header = ", ".join(reply.headers.getall("Warning", []))
    return [re.sub(r"\\(.)", r"\1", m) for m in re.findall(r'299 - "((?:[^"\\]|\\.)*)"', header)]


def cm(name: str, **extra: Any) -> Obj:
    """A ConfigMap body."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def claim(name: str) -> Obj:
    """A ResourceClaim body."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name}, "spec": CLAIM_SPEC}


async def open_watch(api: TestClient, path: str, **params: str) -> ClientResponse:
    """Start a watch; the caller reads it with `next_event` and closes it."""
    resp = await api.get(path, params={"watch": "true", **params})
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"].startswith(JSON)
    return resp


async def next_event(watch: ClientResponse, timeout: float = 5.0) -> Obj:
    """The next watch event (fails the test if none comes in time)."""
    line = await asyncio.wait_for(watch.content.readline(), timeout)
    assert line, "the watch ended"
    event = orjson.loads(line)
    assert set(event) == {"type", "object"}
    return event


async def no_event(watch: ClientResponse, within: float = 0.2) -> None:
    """Nothing arrives on the watch for a while."""
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(watch.content.readline(), within)


def brief(event: Obj) -> tuple[str, str]:
    """(type, name) of an event."""
    return event["type"], event["object"]["metadata"].get("name", "")
