"""A full disk under a real server, on a small tmpfs (skipped where none can be mounted): the
write that hits ENOSPC fails with a 500 that says why and is neither visible nor half
applied; /readyz turns not ready; writes get 503 while reads go on; once space is freed the
log takes writes again; and a restart serves exactly what was acknowledged."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from tests.support.processes import start_server
from tests.support.waiting import poll_async

CM = "/api/v1/namespaces/default/configmaps"
ROOM = 256 * 1024  # bytes left free on the tmpfs before the writes start


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here: {mounted.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path, leave: int) -> Path:
    """Take all but `leave` bytes of the file system with one file; return it."""
    stat = os.statvfs(mnt)
    filler = mnt / "filler"
    with filler.open("wb") as f:
        f.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"payload": "x" * 16_000}}


async def scenario(url: str, mnt: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"acked": [], "watched": set()}
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}{CM}") as resp:
            rv = (await resp.json())["metadata"]["resourceVersion"]

        async def watch() -> None:
            async with session.get(f"{url}{CM}", params={"watch": "1", "resourceVersion": rv},
                                   timeout=aiohttp.ClientTimeout(total=None)) as resp:
                async for line in resp.content:
                    out["watched"].add(orjson.loads(line)["object"]["metadata"]["name"])

        watcher = asyncio.create_task(watch())
        filler = fill(mnt, ROOM)
        for i in range(200):
            async with session.post(f"{url}{CM}", json=configmap(f"cm-{i}")) as resp:
                body = await resp.json()
                if resp.status != 201:
                    out["failed"] = (f"cm-{i}", resp.status, body)
                    break
                out["acked"].append(f"cm-{i}")
        name = out["failed"][0]
        async with session.get(f"{url}{CM}/{name}") as resp:
            out["get_failed"] = resp.status
        async with session.get(f"{url}{CM}") as resp:
            out["list"] = (resp.status, [o["metadata"]["name"] for o in
                                         (await resp.json())["items"]])
        async with session.get(f"{url}/readyz", params={"verbose": "1"}) as resp:
            out["readyz_failed"] = (resp.status, await resp.text())
        async with session.get(f"{url}/livez") as resp:
            out["livez"] = resp.status
        async with session.post(f"{url}{CM}", json=configmap("while-full")) as resp:
            out["refused"] = (resp.status, await resp.json(), resp.headers.get("Retry-After"))

        filler.unlink()  # space again: the log probes and takes writes

        async def write_after() -> int:
            async with session.post(f"{url}{CM}", json=configmap("after")) as resp:
                if resp.status == 201:
                    out["after"] = await resp.json()
                return resp.status

        await poll_async(write_after, until=lambda status: status == 201, timeout=10,
                         interval=0.1, what="a write accepted again once space was freed")
        async with session.get(f"{url}/readyz") as resp:
            out["readyz_after"] = resp.status
        await poll_async(lambda: out["watched"], until=lambda watched: {
            *out["acked"], "after"} <= watched, what="the watch seeing every acknowledged write")
        watcher.cancel()
    return out


def test_a_full_disk_fails_one_write_cleanly_and_recovers(small_tmpfs: Path) -> None:
    data = small_tmpfs / "data"
    srv = start_server(data, "--http")
    try:
        out = asyncio.run(scenario(srv.url, small_tmpfs))
    finally:
        assert srv.stop() == 0
    name, status, body = out["failed"]
    assert out["acked"], "some writes fit before the disk was full"
    assert (status, body["reason"]) == (500, "InternalError")
    assert "No space left on device" in body["message"] and "not applied" in body["message"]
    assert out["get_failed"] == 404 and name not in out["list"][1], "not visible"
    assert out["list"][0] == 200 and set(out["acked"]) <= set(out["list"][1]), "reads go on"
    code, text = out["readyz_failed"]
    assert code == 500 and "[-]log failed: [Errno 28] No space left on device" in text
    assert out["livez"] == 200
    refused_status, refused, retry_after = out["refused"]
    assert (refused_status, refused["reason"], retry_after) == (503, "ServiceUnavailable", "1")
    assert "after" in out, "writes were never accepted again after space was freed"
    assert out["readyz_after"] == 200
    assert name not in out["watched"] and "while-full" not in out["watched"]
    assert set(out["acked"]) | {"after"} <= out["watched"]

    again = start_server(data, "--http")
    try:
        names = asyncio.run(list_names(again.url))
    finally:
        assert again.stop() == 0
    assert set(out["acked"]) | {"after"} <= set(names)
    assert name not in names and "while-full" not in names


async def list_names(url: str) -> list[str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}{CM}") as resp:
            return [o["metadata"]["name"] for o in (await resp.json())["items"]]
