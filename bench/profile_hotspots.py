"""cProfile the paths furthest below their issue-2 targets and print the hot spots.

Run with `.venv/bin/python bench/profile_hotspots.py [--parts ...] [--seconds S] [--top N]`:

- `commits`: in-process `client.create` of ConfigMaps and ResourceClaims (bench_commits);
- `http-create`: a `fakeapi serve --http` child process run under `-m cProfile`, fed POSTs of
  ConfigMaps and ResourceClaims by raw keep-alive connections (bench_http), then stopped
  with SIGTERM so the profile is written;
- `http-get`: the same server fed GETs (to split the HTTP layer's cost from the registry's);
- `http-watch`: the same server with 100 HTTP watch streams on ConfigMaps while 4 raw
  connections POST ConfigMaps back to back (bench_watch's fixed-rate shape).

Both profiles time with CPU time (`time.process_time`), not wall time, so being preempted by
other processes on a shared box does not count. cProfile adds a roughly constant cost per
Python call, so it exaggerates many-small-call code; read the ranking, not the absolute
times. Saves `.prof` files under `--out` for snakeviz etc.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson
from bench_http import RawConnection
from benchlib import RESOURCECLAIMS, configmap, resource_claim, start_server

from fakeapi.cluster import Cluster, ClusterConfig

# Runs `-m fakeapi.cli ...` (the argv after OUT) under a CPU-time cProfile, dumps it to OUT.
PROFILED_SERVER = """
import cProfile, runpy, sys, time
out = sys.argv[1]
sys.argv = ["fakeapi"] + sys.argv[4:]
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    runpy.run_module("fakeapi.cli", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""


def show(stats: pstats.Stats, title: str, top: int) -> None:
    """Top functions by own time and by cumulative time (fakeapi/controllers code only)."""
    for key, label in (("tottime", "own time"), ("cumulative", "cumulative")):
        out = io.StringIO()
        stats.stream = out  # type: ignore[attr-defined]
        stats.sort_stats(key).print_stats(top)
        body = out.getvalue()
        body = body[body.find("   ncalls"):]
        print(f"\n--- {title}: top {top} by {label}\n{body.rstrip()}")
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(r"fakeapi|controllers", top)
    body = out.getvalue()
    print(f"\n--- {title}: fakeapi code by own time\n{body[body.find('   ncalls'):].rstrip()}")


def profile_commits(seconds: float, top: int, out: Path) -> None:
    """In-process client.create under cProfile."""

    async def run() -> int:
        cluster = Cluster(ClusterConfig(seed=1))
        client = cluster.client("bench")
        n = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline and n < 200_000:
            await client.create("configmaps", configmap(f"cm-{n}"))
            await client.create(RESOURCECLAIMS, resource_claim(f"rc-{n}"))
            n += 1
        return n

    prof = cProfile.Profile(time.process_time)
    prof.enable()
    n = asyncio.run(run())
    prof.disable()
    prof.dump_stats(out / "commits.prof")
    print(f"\n===== commits: {n:,} ConfigMaps + {n:,} ResourceClaims via client.create")
    show(pstats.Stats(prof), "client.create", top)


async def drive(url: str, seconds: float, kind: str) -> int:
    """64 raw connections POSTing (kind=create) or GETting (kind=get) for `seconds`."""
    conns = [await RawConnection.open(url, None) for _ in range(64)]
    cms = "/api/v1/namespaces/default/configmaps"
    rcs = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    counter = iter(range(1_000_000))
    deadline = time.perf_counter() + seconds
    done = 0

    async def worker(conn: RawConnection) -> None:
        nonlocal done
        for i in counter:
            if time.perf_counter() >= deadline:
                return
            if kind == "get":  # the prefill created cm-1, cm-3, ...
                await conn.send("GET", f"{cms}/cm-{2 * (i % 250) + 1}", None)
            elif i % 2:
                await conn.send("POST", cms, orjson.dumps(configmap(f"cm-{i}")))
            else:
                await conn.send("POST", rcs, orjson.dumps(resource_claim(f"rc-{i}")))
            done += 1

    await asyncio.gather(*(worker(c) for c in conns))
    for c in conns:
        c.close()
    return done


async def watch_load(url: str, seconds: float, watchers: int = 100) -> int:
    """`watchers` aiohttp watch streams on ConfigMaps + 4 raw POST connections; return events."""
    cms = "/api/v1/namespaces/default/configmaps"
    events = 0

    async def consume(session: aiohttp.ClientSession) -> None:
        nonlocal events
        params = {"watch": "true", "resourceVersion": "1", "timeoutSeconds": "120"}
        async with session.get(url + cms, params=params) as resp:
            async for chunk in resp.content.iter_any():
                events += chunk.count(b"\n")

    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                     timeout=timeout) as session:
        async with session.get(url + cms) as resp:  # make sure rv 1 is still retained
            await resp.read()
        tasks = [asyncio.create_task(consume(session)) for _ in range(watchers)]
        await asyncio.sleep(1.0)
        conns = [await RawConnection.open(url, None) for _ in range(4)]
        deadline = time.perf_counter() + seconds
        counter = iter(range(1_000_000))

        async def writer(conn: RawConnection) -> None:
            for i in counter:
                if time.perf_counter() >= deadline:
                    return
                await conn.send("POST", cms, orjson.dumps(configmap(f"w-{i}")))

        await asyncio.gather(*(writer(c) for c in conns))
        for c in conns:
            c.close()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return events


def profile_server(kind: str, seconds: float, top: int, out: Path) -> None:
    """A server child process under cProfile, fed creates, gets or watch fan-out."""
    path = out / f"server-{kind}.prof"
    server = start_server(python_args=("-c", PROFILED_SERVER, str(path)))
    try:
        if kind == "get":
            asyncio.run(drive(server.url, 1.0, "create"))  # 500+ ConfigMaps to read
        if kind == "watch":
            n = asyncio.run(watch_load(server.url, seconds))
        else:
            n = asyncio.run(drive(server.url, seconds, kind))
    finally:
        server.stop(grace=20)
    what = "watch events delivered" if kind == "watch" else f"requests ({kind})"
    print(f"\n===== server, {n:,} {what} over HTTP, profile {path}")
    stats = pstats.Stats(str(path))
    show(stats, f"server {kind}", top)


def main() -> None:
    """Profile the selected parts."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parts = ("commits", "http-create", "http-get", "http-watch")
    parser.add_argument("--parts", nargs="+", choices=parts, default=list(parts))
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    if "commits" in args.parts:
        profile_commits(args.seconds, args.top, args.out)
    for kind in ("create", "get", "watch"):
        if f"http-{kind}" in args.parts:
            profile_server(kind, args.seconds, args.top, args.out)


if __name__ == "__main__":
    main()
