"""Crash safety: kill -9 during a burst of writes; every acknowledged write survives."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import aiohttp

from tests.conftest import ServerProcess, start_server

WRITERS = 16


async def _burst(url: str, acked: dict[str, str], attempted: set[str], stop: asyncio.Event,
                 *, target: int, reached: asyncio.Event) -> None:
    """Create ConfigMaps from WRITERS tasks until `stop`; set `reached` at `target` acks."""
    async with aiohttp.ClientSession() as session:

        async def writer(w: int) -> None:
            i = 0
            while not stop.is_set():
                name = f"cm-{w}-{i}"
                i += 1
                attempted.add(name)
                body = {"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name}, "data": {"w": str(w), "i": str(i)}}
                try:
                    async with session.post(f"{url}/api/v1/namespaces/default/configmaps",
                                            json=body) as resp:
                        if resp.status == 201:
                            acked[name] = (await resp.json())["metadata"]["resourceVersion"]
                            if len(acked) >= target:
                                reached.set()
                except (aiohttp.ClientError, ConnectionError):
                    return

        await asyncio.gather(*(writer(w) for w in range(WRITERS)))


async def _kill_mid_burst(srv: ServerProcess, acked: dict[str, str], attempted: set[str],
                          target: int) -> None:
    """Write until `target` acknowledgements, then SIGKILL the server while writes go on."""
    stop, reached = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_burst(srv.url, acked, attempted, stop, target=target,
                                      reached=reached))
    waiter = asyncio.create_task(reached.wait())
    done, _ = await asyncio.wait({task, waiter}, timeout=60,
                                 return_when=asyncio.FIRST_COMPLETED)
    if waiter not in done:
        waiter.cancel()
        stop.set()
        await task  # raises what ended the burst early, if anything did
        raise AssertionError(f"only {len(acked)} of {target} writes acknowledged")
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait()
    stop.set()
    await task


async def _list(url: str) -> dict[str, dict]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}/api/v1/namespaces/default/configmaps") as resp:
            assert resp.status == 200
            return {o["metadata"]["name"]: o for o in (await resp.json())["items"]}


def test_kill_9_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    data = tmp_path / "data"
    acked: dict[str, str] = {}  # every write acknowledged in any round, with its revision
    attempted: set[str] = set()
    for round_ in range(2):
        srv = start_server(data, http=True)
        asyncio.run(_kill_mid_burst(srv, acked, attempted, len(acked) + 300))
        assert srv.proc.returncode == -signal.SIGKILL
        again = start_server(data, http=True)
        try:
            stored = asyncio.run(_list(again.url))
            for name, rv in acked.items():
                assert name in stored, f"acknowledged write {name} lost"
                assert stored[name]["metadata"]["resourceVersion"] == rv
            burst = {n: o for n, o in stored.items() if n.startswith("cm-")}
            assert set(burst) <= attempted, "objects nobody wrote"
            for name, obj in burst.items():
                assert obj["data"]["w"] == name.split("-")[1], "corrupt object"
            newest = max(int(o["metadata"]["resourceVersion"]) for o in stored.values())
            created = asyncio.run(_create_one(again.url, f"after-{round_}"))
            assert int(created["metadata"]["resourceVersion"]) > newest, "revisions restarted"
        finally:
            assert again.stop() == 0


async def _create_one(url: str, name: str) -> dict:
    async with aiohttp.ClientSession() as session:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                "data": {"w": "x"}}
        async with session.post(f"{url}/api/v1/namespaces/default/configmaps",
                                json=body) as resp:
            assert resp.status == 201, await resp.text()
            return await resp.json()
