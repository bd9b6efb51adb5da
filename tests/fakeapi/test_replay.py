"""The pieces of `fakeapi replay` in process: external writes take turns on a deterministic
clock (each waits for the plane to settle and for the writes before it; a real clock never
waits); what counts as an external input of a recording; `--until` as a revision or a time;
the check's first divergence, told with the object, the actors and a field diff; and a
real-clock recording's inputs sent at their recorded times; the replay's plain-HTTP port
admits its own token only."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from fakeapi.auth import authn
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.http import serving
from fakeapi.machinery.clock import RealClock, VirtualClock
from fakeapi.machinery.inputturns import InputTurns
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.replay import history
from fakeapi.replay.check import first_divergence
from fakeapi.replay.history import LogRecords
from fakeapi.replay.inputs import Recording, read_recording
from fakeapi.replay.replay import REPLAYER, ReplaySettings, replay
from tests.support.datadirs import write_records

KUBELET = "system:serviceaccount:kube-system:kubelet"
HTTP = {"v": "create", "m": "POST", "p": "/api/v1/namespaces/default/configmaps", "g": [
    "system:masters", "system:authenticated"], "ct": "application/json", "b": "{}",
    "ua": "kubectl/v1.37.0"}


async def idle_loop(rounds: int = 20) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


async def test_writes_wait_for_the_plane_to_settle_and_take_turns_in_arrival_order() -> None:
    clock = VirtualClock()
    busy = [True]
    clock.add_probe(lambda: busy[0])
    turns = InputTurns(clock)
    order: list[tuple[str, bool]] = []
    first_holds = asyncio.Event()

    async def write(name: str) -> None:
        async with turns.turn():
            order.append((name, busy[0]))
            if name == "a":
                await first_holds.wait()  # a write that takes a while (an advance)
            order.append((f"{name} done", busy[0]))

    tasks = [asyncio.create_task(write(n)) for n in "abc"]
    await idle_loop()
    assert order == []  # the plane is busy: nothing applies
    busy[0] = False
    clock.probe_changed()
    await idle_loop()
    assert order == [("a", False)]  # b and c wait for a's turn to end
    first_holds.set()
    await asyncio.gather(*tasks)
    assert order == [("a", False), ("a done", False), ("b", False), ("b done", False),
                     ("c", False), ("c done", False)]
    assert turns.taken == 3


async def test_on_a_real_clock_a_write_never_waits() -> None:
    clock = RealClock()
    clock.add_probe(lambda: True)
    turns = InputTurns(clock)
    async with turns.turn():
        pass
    assert turns.taken == 0


def record(revision: int, actor: str, q: dict[str, Any] | None, *, ts: str = "",
           obj: dict[str, Any] | None = None, name: str = "c") -> bytes:
    head: dict[str, Any] = {"r": revision, "t": "ADDED", "res": "configmaps", "ns": "default",
                            "n": name, "a": actor, "ts": ts or "2026-01-01T00:00:00Z"}
    if q is not None:
        head["q"] = q
    return orjson.dumps(head) + b"\n" + orjson.dumps(obj or {"metadata": {"name": name}})


def recording_of(records: list[bytes]) -> Recording:
    return Recording(log=LogRecords(data_dir=Path("rec"), records=records,
                                    offsets=list(range(len(records)))),
                     heads=[orjson.loads(r.partition(b"\n")[0]) for r in records])


@pytest.mark.parametrize(("actor", "q", "counts"), [
    ("kubernetes-admin", HTTP, True),
    ("alice", {**HTTP, "m": "PATCH", "ct": "application/merge-patch+json"}, True),
    ("system:anonymous", {k: v for k, v in HTTP.items() if k not in ("ct", "b", "ua")}, True),
    ("kubernetes-admin", {"v": "create"}, False),  # in process: no HTTP request
    ("kubernetes-admin", {"v": "delete", "same": 7}, False),  # a collection delete's 2nd event
    (KUBELET, HTTP, False),  # a component, however it got there
    ("system:apiserver", HTTP, False),
    ("system:kube-controller-manager", HTTP, False),
    ("kubernetes-admin", None, False),  # a log from before requests were recorded
])
def test_what_counts_as_an_external_input(actor: str, q: dict[str, Any] | None,
                                          counts: bool) -> None:
    found = recording_of([record(1, actor, q)]).inputs(ControlPlane.is_component_identity)
    assert len(found) == int(counts)
    if counts:
        assert q is not None
        [sent] = found
        assert (sent.revision, sent.user, sent.method, sent.path) == (1, actor, q["m"], q["p"])
        assert (sent.body, sent.user_agent) == (q.get("b", "").encode(), q.get("ua", ""))


TIMES = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-01T00:05:00Z",
         "2026-01-01T01:00:00Z"]


@pytest.mark.parametrize(("until", "revision"), [
    ("3", 3), ("4", 4), ("1", 1), (" 2 ", 2),
    ("2026-01-01T00:00:00Z", 2), ("2026-01-01T00:04:59Z", 2), ("2026-01-01T00:05:00Z", 3),
    ("2026-01-01T00:59:59.5Z", 3), ("2026-01-01T01:00:00+00:00", 4),
    ("2026-01-01T02:00:00+01:00", 4),
])
def test_until_is_a_revision_or_the_newest_event_at_or_before_a_time(until: str,
                                                                     revision: int) -> None:
    rec = recording_of([record(i, "a", None, ts=t) for i, t in enumerate(TIMES, 1)])
    assert rec.revision_of(until) == revision


def records(*objects: tuple[str, dict[str, Any]]) -> list[bytes]:
    return [record(i, actor, None, obj=obj) for i, (actor, obj) in enumerate(objects, 1)]


A = {"metadata": {"name": "c"}, "data": {"k": "v"}}
B = {"metadata": {"name": "c"}, "data": {"k": "w", "new": "x"}}


@pytest.mark.parametrize(("expected", "actual", "text"), [
    (records(("u", A), ("u", B)), records(("u", A), ("u", B)), None),
    (records(("u", A), ("u", A)), records(("u", A), ("u", B)),
     'divergence at revision 2: ADDED configmaps default/c\n  actor: u\n'
     '  expected -> actual:\n    ~ data.k: "v" -> "w"\n    + data.new: "x"'),
    (records(("u", A)), records((KUBELET, A)),
     f"divergence at revision 1: ADDED configmaps default/c\n  actor: expected u, got "
     f"{KUBELET}\n  the objects differ only in their encoding"),
    (records(("u", A), ("u", B)), records(("u", A)),
     "divergence at revision 2: the replay ended at revision 1; the recording goes on with "
     "ADDED configmaps default/c by u"),
    (records(("u", A)), records(("u", A), (KUBELET, B)),
     "divergence at revision 2: the replay has more events than the recording, which ends at "
     f"revision 1; the first extra is ADDED configmaps default/c by {KUBELET}"),
])
def test_the_first_divergence_says_where_what_who_and_how(
        expected: list[bytes], actual: list[bytes], text: str | None) -> None:
    found = first_divergence(expected, actual)
    assert (found and found.text()) == text


def test_another_object_at_a_revision_names_both() -> None:
    expected = [record(1, "u", None, name="a")]
    actual = [record(1, "u", None, name="b")]
    found = first_divergence(expected, actual)
    assert found is not None and found.text() == (
        "divergence at revision 1: ADDED configmaps default/a\n"
        "  object: expected ADDED configmaps default/a, got ADDED configmaps default/b\n"
        "  actor: u")


async def test_a_real_clock_recording_is_replayed_at_its_inputs_recorded_times(
        tmp_path: Path) -> None:
    """The clock of the replay stands at each input's recorded time when it is sent."""
    bootstrap = Cluster(ClusterConfig(data_dir=tmp_path / "boot"), clock=RealClock())
    assert bootstrap.wal is not None
    bootstrap.wal.close_now()
    records = history.read_log(tmp_path / "boot").records
    start = parse_time(orjson.loads(records[0].partition(b"\n")[0])["ts"])
    later = [rfc3339(start + dt.timedelta(seconds=s)) for s in (600, 3600)]
    for name, ts in zip("ab", later, strict=True):
        body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": name}}).decode()
        records.append(record(len(records) + 1, "kubernetes-admin", {**HTTP, "b": body},
                              ts=ts, name=name))
    write_records(tmp_path / "rec", records)
    rec = read_recording(tmp_path / "rec")
    assert (rec.clock_mode(), rec.exact) == ("real", False)
    (tmp_path / "state").mkdir()
    done = await replay(rec, ReplaySettings(nodes=0, components=""),
                        state_dir=tmp_path / "state", data_dir=tmp_path / "out",
                        progress=False)
    assert (done.inputs, done.refused) == (2, [])
    made = {h["n"]: (h["ts"], orjson.loads(raw)["metadata"]["creationTimestamp"])
            for h, raw in ((orjson.loads(r.partition(b"\n")[0]), r.partition(b"\n")[2])
                           for r in history.read_log(tmp_path / "out").records)
            if h["res"] == "configmaps" and h["ns"] == "default"}
    assert made == {"a": (later[0], later[0]), "b": (later[1], later[1])}


@pytest.mark.parametrize(("authorization", "status"), [
    ("Bearer the-replays-token", 201),  # the replay, a cluster admin
    (None, 403),  # anyone else on the loopback port is anonymous: forbidden to write
    ("Bearer a-guess", 401),
])
async def test_the_replays_plain_http_port_admits_its_token_only(
        tmp_path: Path, authorization: str | None, status: int) -> None:
    """A replay listens in plain HTTP; without its token a request is anonymous, not admin."""
    cluster = Cluster(ClusterConfig(), clock=VirtualClock())
    listener = await serving.listen(cluster, host="127.0.0.1", port=0, pki_dir=None,
                                    kubeconfig=tmp_path / "kubeconfig",
                                    tokens={"the-replays-token": REPLAYER},
                                    unauthenticated=authn.ANONYMOUS)
    headers = {"Authorization": authorization} if authorization else {}
    try:
        async with aiohttp.ClientSession() as session, session.post(
                f"{listener.url}/api/v1/namespaces/default/configmaps", headers=headers,
                json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}) as r:
            assert (r.status, listener.url.startswith("http://")) == (status, True)
    finally:
        await listener.close()
        await cluster.close()
