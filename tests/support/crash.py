"""Kill -9 rounds against a real durable server: concurrent writers (creates and updates) and
a watcher, SIGKILL mid-burst, restart, and check the log the restarted server runs on.

The promises checked after every round (what etcd keeps for kube-apiserver):
- every acknowledged write is in the log, at the revision its response named;
- every event a watcher received is in the log, at its revision, unchanged (nothing was
  visible before it was durable);
- no revision is reused: every revision anyone saw in any earlier round still holds the
  same event, however many rounds of writes came after.

Shared by tests/e2e/test_crash.py (3 rounds; 20 with `-m crash_full`) and bench/bench_crash.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from fakeapi.storage.log import Event
from fakeapi.storage.logcheck import log_path
from fakeapi.storage.walformat import scan_file
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll_async

WRITERS = 24
CM = "/api/v1/namespaces/default/configmaps"

Seen = tuple[str, str, Any]
"""What a revision was seen to hold: (event type, object name, object data)."""


@dataclasses.dataclass
class Ledger:
    """Everything clients were told, over all rounds: revision → what it held."""

    acked: dict[int, Seen] = dataclasses.field(default_factory=dict)
    watched: dict[int, Seen] = dataclasses.field(default_factory=dict)
    rounds: list[dict[str, int]] = dataclasses.field(default_factory=list)


def _seen(obj: dict[str, Any], type_: str) -> tuple[int, Seen]:
    return int(obj["metadata"]["resourceVersion"]), (type_, obj["metadata"]["name"],
                                                     obj.get("data"))


async def _writer(session: aiohttp.ClientSession, url: str, tag: str, ledger: Ledger,
                  stop: asyncio.Event, counts: dict[str, int]) -> None:
    """Create ConfigMaps and update every third one, until `stop` or the server dies."""
    i = 0
    last: dict[str, Any] | None = None
    while not stop.is_set():
        try:
            if last is not None and i % 3 == 0:
                body = {**last, "data": {"tag": tag, "i": str(i), "update": "yes"}}
                method, path = "PUT", f"{url}{CM}/{last['metadata']['name']}"
            else:
                body = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": f"{tag}-{i}"}, "data": {"tag": tag, "i": str(i)}}
                method, path = "POST", f"{url}{CM}"
            i += 1
            async with session.request(method, path, json=body) as resp:
                if resp.status not in (200, 201):
                    continue
                obj = await resp.json()
        except (TimeoutError, aiohttp.ClientError, ConnectionError):
            return
        rev, seen = _seen(obj, "ADDED" if method == "POST" else "MODIFIED")
        ledger.acked[rev] = seen
        counts["acked"] += 1
        last = obj


async def _watcher(session: aiohttp.ClientSession, url: str, ledger: Ledger,
                   started: asyncio.Event, counts: dict[str, int]) -> None:
    """Watch ConfigMaps from the current revision until the server dies."""
    try:
        async with session.get(f"{url}{CM}", params={"limit": "1"}) as resp:
            rv = (await resp.json())["metadata"]["resourceVersion"]
        async with session.get(f"{url}{CM}", params={
                "watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true"},
                timeout=aiohttp.ClientTimeout(total=None, sock_read=None)) as resp:
            started.set()
            async for line in resp.content:
                event = orjson.loads(line)
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    rev, seen = _seen(event["object"], event["type"])
                    ledger.watched[rev] = seen
                    counts["watched"] += 1
    except (TimeoutError, aiohttp.ClientError, ConnectionError, ValueError):
        return
    finally:
        started.set()


async def _burst_and_kill(url: str, pid_kill: Callable[[], None], tag: str, ledger: Ledger,
                          target: int) -> dict[str, int]:
    counts = {"acked": 0, "watched": 0}
    stop = asyncio.Event()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=WRITERS + 4)) as s:
        started = asyncio.Event()
        watcher = asyncio.create_task(_watcher(s, url, ledger, started, counts))
        await asyncio.wait_for(started.wait(), 30)
        writers = [asyncio.create_task(_writer(s, url, f"{tag}w{w}", ledger, stop, counts))
                   for w in range(WRITERS)]
        await poll_async(lambda: counts["acked"], until=lambda acked: acked >= target,
                         timeout=60, interval=0.01, what=f"{target} acknowledged writes")
        pid_kill()  # mid-burst: writes are in flight, some half-written to the log
        stop.set()
        await asyncio.gather(*writers, watcher)
    return counts


def log_events(data_dir: Path) -> dict[int, Event]:
    """The log as the restarted server runs on it: revision → event."""
    scan = scan_file(log_path(data_dir))
    assert scan.damage is None, f"the restarted server left damage: {scan.damage}"
    events = {}
    for payload in scan.records:
        event = Event.from_record(payload, None)
        events[event.revision] = event
    return events


def check(data_dir: Path, ledger: Ledger) -> int:
    """Every acked and every watched revision (of every round) holds what it was seen to
    hold; returns the log's last revision."""
    events = log_events(data_dir)
    for kind, seen in (("acknowledged", ledger.acked), ("watched", ledger.watched)):
        for rev, (type_, name, data) in seen.items():
            event = events.get(rev)
            assert event is not None, f"{kind} revision {rev} ({type_} {name}) was lost"
            got = (event.type, event.name, event.object.get("data"))
            assert got == (type_, name, data), f"{kind} revision {rev} now holds {got}, " \
                f"not {(type_, name, data)}: a revision was reused"
    return max(events, default=0)


def _kill(srv: ServerProcess) -> None:
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()


def run_rounds(data_dir: Path, rounds: int, *, writes_per_round: int = 300) -> Ledger:
    """`rounds` kill -9 rounds on one data directory, checked after each restart."""
    ledger = Ledger()
    for n in range(rounds):
        srv = start_server(data_dir, "--http")
        counts = asyncio.run(_burst_and_kill(srv.url, functools.partial(_kill, srv), f"r{n}",
                                             ledger, writes_per_round))
        assert srv.proc.returncode == -signal.SIGKILL
        again = start_server(data_dir, "--http")  # recovers (cuts a torn tail) and serves
        try:
            last = check(data_dir, ledger)
            counts["last_revision"] = last
            ledger.rounds.append(counts)
        finally:
            code = again.stop()
            assert again.proc.stderr is not None
            assert code == 0, f"exit {code}: {again.proc.stderr.read()[-2000:]}"
    return ledger
