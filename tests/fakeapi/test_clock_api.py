"""The emulator's Clock over HTTP: the server creates `clocks/cluster` with its mode and
reading; POST `advance` moves a virtual clock on (timers fire at their own time) and its
status write is the advance's event, by the caller; bad bodies, a real clock, a caller that
isn't cluster-admin and write verbs the kind doesn't serve are refused with a Status and
change nothing; dryRun checks only."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.timestamps import parse_time
from tests.support.httpapi import Reply, Serve, call, check_status, committed, ok

CLOCKS = "/apis/emulator.fakeapi.dev/v1alpha1/clocks"
CLOCK = f"{CLOCKS}/cluster"
ADVANCE = f"{CLOCK}/advance"
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def advance(duration: Any, **extra: Any) -> dict[str, Any]:
    """A ClockAdvance body."""
    return {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "ClockAdvance",
            "duration": duration, **extra}


async def _as_admin(api: TestClient, user: str) -> None:
    """Bind `user` to cluster-admin."""
    await ok(api, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": f"{user}-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


async def call_as(api: TestClient, user: str, method: str, path: str,
                  body: Any = None) -> Reply:
    """A request impersonating `user`."""
    async with api.request(method, path, data=None if body is None else orjson.dumps(body),
                           headers={"Impersonate-User": user,
                                    "Content-Type": "application/json"}) as resp:
        return Reply(resp.status, orjson.loads(await resp.read()), resp.headers)


async def test_the_server_creates_the_clock_with_its_mode_and_reading(serve: Serve) -> None:
    _, api = await serve()
    clock = await ok(api, "GET", CLOCK)
    assert clock["status"] == {"now": "2026-01-01T00:00:00.000000Z", "mode": "virtual"}
    assert [c["metadata"]["name"] for c in (await ok(api, "GET", CLOCKS))["items"]] == [
        "cluster"]


async def test_advance_fires_each_timer_at_its_time_and_is_an_event_by_its_caller(
        serve: Serve) -> None:
    cluster, api = await serve()
    await _as_admin(api, "carol")
    fired: list[str] = []
    for delay in (30, 300, 3600):
        cluster.clock.call_later(delay, lambda: fired.append(cluster.clock.now().isoformat()))
    before = cluster.store.revision
    reply = await call_as(api, "carol", "POST", ADVANCE, advance("5m"))
    assert reply.status == 201 and reply.object["status"] == "Success"
    assert fired == ["2026-01-01T00:00:30+00:00", "2026-01-01T00:05:00+00:00"]
    clock = await ok(api, "GET", CLOCK)
    assert clock["status"] == {"now": "2026-01-01T00:05:00.000000Z", "mode": "virtual"}
    [event] = cluster.log.since(before)
    assert (event.resource, event.name, event.actor, event.type) == (
        "clocks.emulator.fakeapi.dev", "cluster", "carol", "MODIFIED")
    assert parse_time(event.time) == START + dt.timedelta(minutes=5)
    await ok(api, "POST", ADVANCE, advance("55m0.5s"))
    assert fired[-1] == "2026-01-01T01:00:00+00:00"
    assert cluster.clock.monotonic() == 3600.5


BAD_BODIES = [
    ("negative", advance("-5m"),
     'ClockAdvance: a clock can\'t go back: duration "-5m" (-5m0s) is negative'),
    ("unknown unit", advance("5x"), 'ClockAdvance: time: unknown unit "x" in duration "5x"'),
    ("no unit", advance("300"), 'ClockAdvance: time: missing unit in duration "300"'),
    ("spaces", advance("2h 45m"),
     'ClockAdvance: time: unknown unit "h " in duration "2h 45m"'),
    ("overflow", advance("9223372036854775808ns"),
     'ClockAdvance: time: invalid duration "9223372036854775808ns"'),
    ("a number", advance(300),
     "ClockAdvance: duration must be a string in Go duration syntax (30s, 5m, 1.5h), not 300"),
    ("missing", {"kind": "ClockAdvance"},
     "ClockAdvance: duration is required: a Go duration such as 30s, 5m or 1.5h"),
    ("wrong kind", advance("5m", kind="Eviction"),
     'ClockAdvance: kind must be "ClockAdvance", not "Eviction"'),
    ("wrong group", advance("5m", apiVersion="v1"),
     'ClockAdvance: apiVersion must be "emulator.fakeapi.dev/v1alpha1", not "v1"'),
    ("not an object", ["5m"], "ClockAdvance must be an object"),
]


@pytest.mark.parametrize(("body", "message"), [b[1:] for b in BAD_BODIES],
                         ids=[b[0] for b in BAD_BODIES])
async def test_a_bad_advance_is_400_and_changes_nothing(serve: Serve, body: Any,
                                                        message: str) -> None:
    cluster, api = await serve()
    before = committed(cluster)
    check_status(await call(api, "POST", ADVANCE, body), 400, "BadRequest", message)
    assert committed(cluster) == before
    assert cluster.clock.monotonic() == 0


async def test_malformed_json_is_400(serve: Serve) -> None:
    cluster, api = await serve()
    before = committed(cluster)
    reply = await call(api, "POST", ADVANCE, raw=b'{"duration": "5m"')
    assert reply.status == 400
    assert committed(cluster) == before


async def test_a_real_clock_cant_be_advanced(aiohttp_client: Any) -> None:
    cluster = Cluster(ClusterConfig(seed=7))
    api = await aiohttp_client(create_app(cluster))
    assert (await ok(api, "GET", CLOCK))["status"]["mode"] == "real"
    before = committed(cluster)
    check_status(await call(api, "POST", ADVANCE, advance("5m")), 400, "BadRequest",
                 "the cluster runs on the real clock, which can't be advanced: start the "
                 "server with --clock virtual (or --clock virtual:auto)")
    assert committed(cluster) == before


@pytest.mark.parametrize(("method", "path"), [
    ("POST", ADVANCE), ("GET", CLOCK), ("GET", CLOCKS)])
@pytest.mark.parametrize("role", ["", "view", "edit", "admin"])
async def test_only_cluster_admin_may_touch_the_clock(serve: Serve, method: str, path: str,
                                                      role: str) -> None:
    cluster, api = await serve()
    if role:
        await ok(api, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": f"alice-{role}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": "alice"}]})
    before = committed(cluster)
    reply = await call_as(api, "alice", method, path,
                          advance("5m") if method == "POST" else None)
    assert reply.status == 403 and reply.object["reason"] == "Forbidden", reply.object
    assert 'User "alice" cannot' in reply.object["message"]
    assert committed(cluster) == before and cluster.clock.monotonic() == 0


@pytest.mark.parametrize(("method", "path", "body"), [
    ("PUT", CLOCK, {"metadata": {"name": "cluster"}, "status": {"now": "2030-01-01T00:00:00Z"}}),
    ("PATCH", CLOCK, {"status": {"now": "2030-01-01T00:00:00Z"}}),
    ("DELETE", CLOCK, None),
    ("POST", CLOCKS, {"metadata": {"name": "other"}}),
    ("DELETE", CLOCKS, None),
])
async def test_the_clock_serves_no_write_verb(serve: Serve, method: str, path: str,
                                              body: Any) -> None:
    cluster, api = await serve()
    before = committed(cluster)
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    check_status(await call(api, method, path, body, ctype=ctype), 405, "MethodNotAllowed",
                 "the server does not allow this method on the requested resource")
    assert committed(cluster) == before


async def test_a_dry_run_advance_checks_and_moves_nothing(serve: Serve) -> None:
    cluster, api = await serve()
    before = committed(cluster)
    async with api.post(ADVANCE, params={"dryRun": "All"}, json=advance("5m")) as resp:
        assert resp.status in (200, 201)
    assert committed(cluster) == before and cluster.clock.monotonic() == 0
    async with api.post(ADVANCE, params={"dryRun": "All"}, json=advance("-5m")) as resp:
        assert resp.status == 400


async def test_kubectl_get_clock_shows_the_time_now(serve: Serve) -> None:
    cluster, api = await serve()
    clock = cluster.clock
    assert isinstance(clock, VirtualClock)
    await clock.advance(90)  # moved by the test, not by an advance: status.now is older
    async with api.get(CLOCK, headers={"Accept": TABLE}) as resp:
        table = await resp.json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Now", "Mode", "Age"]
    assert table["rows"][0]["cells"] == ["cluster", "2026-01-01T00:01:30.000000Z", "virtual",
                                         "90s"]


async def test_a_restart_continues_the_recorded_time_and_records_a_new_mode(
        tmp_path: Any) -> None:
    first = Cluster(ClusterConfig(data_dir=tmp_path, seed=7), clock=VirtualClock())
    await first.client("carol").create_subresource(
        "clocks.emulator.fakeapi.dev", "cluster", "advance", advance("1h"))
    await first.close()
    again = Cluster(ClusterConfig(data_dir=tmp_path, seed=7), clock=VirtualClock())
    assert again.clock.now() == START + dt.timedelta(hours=1)
    revision = again.store.revision
    await again.close()
    auto = Cluster(ClusterConfig(data_dir=tmp_path, seed=7), clock=VirtualClock(auto=True))
    assert auto.store.revision == revision + 1  # the mode changed: the server says so
    [event] = auto.log.since(revision)
    assert event.actor == "system:apiserver"
    assert event.object["status"] == {"now": "2026-01-01T01:00:00.000000Z",
                                      "mode": "virtual:auto"}
    await auto.close()
