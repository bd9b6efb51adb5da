"""Startup time and memory: `fakeapi --help`, process start to ready line, and RSS holding
10,000 ResourceClaims.

Run with `.venv/bin/python bench/bench_startup.py [--runs N] [--claims N]`. Targets: `fakeapi
--help` <= 0.15 s and ready with the default cluster <= 0.25 s (issue 15); <= 200 MB RSS with
10,000 ResourceClaims and ready after replaying their log <= 1 s (issue 2).

- help: spawns `python -m fakeapi.cli --help` N times (bytecode cached, as an installed
  package runs).
- startup: spawns `fakeapi serve --port 0` N times each: the default (TLS, a fresh PKI in a
  temporary folder), plain HTTP, TLS with a fresh data directory and TLS reusing it, timing
  fork+exec to the ready line; for the default, also to the moment `/readyz` passes (every
  emulated node registered, every component running); then `python -X importtime` names
  the slowest imports.
- memory: a `--http` server child process gets the claims over HTTP (64 concurrent POSTs),
  VmRSS of the server is read from /proc before and after; the same with the claims created
  in-process (this process, `cluster.client().create`), to show the cost per object without
  HTTP buffers. Then a `--data-dir` server is restarted on its 10,000-claim log to time replay.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import orjson
from benchlib import (
    RESOURCECLAIMS,
    ROOT,
    Server,
    child_env,
    client_ssl_context,
    header,
    max_line,
    resource_claim,
    rss_mb,
    start_server,
)

READY_TARGET = 0.25
REPLAY_TARGET = 1.0
HELP_TARGET = 0.15
RSS_TARGET = 200.0


def bench_help(runs: int) -> None:
    """Median time of `fakeapi --help` (the interpreter included)."""
    cmd = [sys.executable, "-m", "fakeapi.cli", "--help"]
    subprocess.run(cmd, cwd=ROOT, env=child_env(), capture_output=True, check=True)  # .pyc
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env=child_env(), capture_output=True, check=True)
        times.append(time.perf_counter() - t0)
    print(f"== fakeapi --help, {runs} runs")
    print(max_line("fakeapi --help (median)", statistics.median(times), HELP_TARGET, " s"))
    print(f"{'':<6}min {min(times):.3f} s  max {max(times):.3f} s")


def readyz_seconds(server: Server, started: float, timeout: float = 20.0) -> float:
    """Seconds from `started` until the server's `/readyz` answers 200."""
    ssl_context = client_ssl_context(server.kubeconfig) if server.url.startswith("https") \
        else None
    deadline = started + timeout
    while time.perf_counter() < deadline:
        try:
            with urllib.request.urlopen(f"{server.url}/readyz", context=ssl_context,
                                        timeout=2) as resp:
                if resp.status == 200:
                    return time.perf_counter() - started
        except urllib.error.HTTPError:
            pass
        time.sleep(0.005)
    raise RuntimeError("/readyz never passed")


def bench_ready(runs: int) -> None:
    """Median and max time from spawn to the ready line, per mode; for the default, also to
    a passing /readyz."""
    print(f"\n== startup: spawn -> 'fakeapi ready at' line, {runs} runs each")
    start_server(tls=True).stop()  # .pyc files
    ready, nodes = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        server = start_server(tls=True)
        ready.append(server.ready_seconds)
        nodes.append(readyz_seconds(server, t0))
        server.stop()
    print(max_line("ready, default (TLS, new PKI) (median)", statistics.median(ready),
                   READY_TARGET, " s"))
    print(f"{'':<6}min {min(ready):.3f} s  max {max(ready):.3f} s; /readyz passing (nodes "
          f"registered) median {statistics.median(nodes):.3f} s")
    shared = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        modes = [("--http", lambda i: start_server()),
                 ("TLS, new PKI each run", lambda i: start_server(
                     tls=True, data_dir=shared / f"fresh-{i}")),
                 ("TLS, existing PKI", lambda i: start_server(tls=True, data_dir=shared / "pki"))]
        start_server(tls=True, data_dir=shared / "pki").stop()  # create the reused PKI
        for label, start in modes:
            times = []
            for i in range(runs):
                server = start(i)
                times.append(server.ready_seconds)
                server.stop()
            print(max_line(f"ready, {label} (median)", statistics.median(times), READY_TARGET,
                           " s"))
            print(f"{'':<6}min {min(times):.3f} s  max {max(times):.3f} s")
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def slowest_imports(top: int = 12) -> None:
    """`python -X importtime` of what a server loads before its ready line, top cumulative
    times."""
    code = ("import fakeapi.cli.main, fakeapi.http.app, fakeapi.auth.tls;"
            "from fakeapi.controlplane import ControlPlane; ControlPlane()")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env=child_env())
    wall = time.perf_counter() - t0
    rows = []  # (cumulative us, self us, name with its nesting indent)
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        own_us, cum_us, module = line.split(":", 1)[1].split("|")
        rows.append((int(cum_us), int(own_us), module.rstrip()[1:]))
    top_level = sum(r[0] for r in rows if not r[2].startswith(" "))
    print(f"\n== imports + ControlPlane(): {wall:.2f} s wall for the whole interpreter, "
          f"{top_level / 1e6:.2f} s of it importing")
    print(f"{'cumulative ms':>14} {'self ms':>8}  module")
    for cum, own, name in sorted(rows, reverse=True)[:top]:
        print(f"{cum / 1e3:>14.1f} {own / 1e3:>8.1f}  {name}")


async def post_claims(base: str, count: int, concurrency: int = 64) -> int:
    """POST `count` ResourceClaims (spread over 10 namespaces' worth of names); return 201s."""
    url = f"{base}/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    counter = iter(range(count))
    ok = 0

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal ok
        for i in counter:
            body = orjson.dumps(resource_claim(f"claim-{i:05d}"))
            async with session.post(url, data=body,
                                    headers={"Content-Type": "application/json"}) as resp:
                await resp.read()
                ok += resp.status == 201

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(concurrency)))
    return ok


def bench_rss_http(claims: int, data_dir: Path | None) -> None:
    """Server process RSS before and after `claims` POSTed ResourceClaims."""
    server = start_server(data_dir=data_dir)
    try:
        before = rss_mb(server.pid)
        t0 = time.perf_counter()
        ok = asyncio.run(post_claims(server.url, claims))
        took = time.perf_counter() - t0
        after = rss_mb(server.pid)
        label = "durable" if data_dir else "in memory"
        print(max_line(f"server RSS with {ok:,} claims ({label})", after, RSS_TARGET, " MB"))
        print(f"{'':<6}idle {before:.0f} MB, +{after - before:.0f} MB "
              f"= {(after - before) * 1024 * 1024 / max(ok, 1):,.0f} B/claim; "
              f"created in {took:.1f} s ({ok / took:,.0f}/s)")
    finally:
        server.stop()


def bench_replay(claims: int) -> None:
    """Write `claims` through a durable server, stop it, time the restart (log replay)."""
    data_dir = Path(tempfile.mkdtemp(prefix="bench-replay-"))
    try:
        bench_rss_http(claims, data_dir)
        size = (data_dir / "events.log").stat().st_size if (data_dir / "events.log").exists() \
            else 0
        server = start_server(data_dir=data_dir)
        rss = rss_mb(server.pid)
        server.stop()
        print(max_line("ready after replaying the log", server.ready_seconds, REPLAY_TARGET,
                       " s"))
        print(f"{'':<6}log {size / 1e6:.1f} MB, RSS after replay {rss:.0f} MB")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def bench_rss_inproc(claims: int) -> None:
    """This process's RSS growth while an in-memory Cluster holds `claims` claims."""
    from fakeapi.cluster import Cluster, ClusterConfig

    async def fill() -> float:
        cluster = Cluster(ClusterConfig(seed=1))
        client = cluster.client("bench")
        gc.collect()
        before = rss_mb()
        for i in range(claims):
            await client.create(RESOURCECLAIMS, resource_claim(f"claim-{i:05d}"))
        gc.collect()
        after = rss_mb()
        print(f"in-process Cluster: +{after - before:.0f} MB for {claims:,} claims "
              f"= {(after - before) * 1024 * 1024 / claims:,.0f} B/claim "
              f"(this process {after:.0f} MB)")
        return after

    asyncio.run(fill())


def main() -> None:
    """Run startup and memory measurements."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--claims", type=int, default=10_000)
    args = parser.parse_args()
    header("bench_startup: help, ready time and RSS")
    bench_help(args.runs)
    bench_ready(args.runs)
    slowest_imports()
    print(f"\n== memory with {args.claims:,} ResourceClaims")
    bench_rss_http(args.claims, None)
    bench_replay(args.claims)
    bench_rss_inproc(args.claims)


if __name__ == "__main__":
    main()
