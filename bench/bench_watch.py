"""Watch fan-out: events/s delivered to 100 watchers while a writer commits, and the latency.

Run with `.venv/bin/python bench/bench_watch.py [--watchers N] [--seconds S] [--parts ...]`.
Issue-2 targets: >= 50,000 events/s delivered across the watchers, p99 commit-to-delivery
<= 10 ms. Every watcher watches the same ConfigMaps in one namespace (the worst case: each
commit goes to every watcher). Delivered events/s can't exceed commits/s x watchers, so the
fixed-rate runs (600 commits/s = 60k events/s with 100 watchers, then 1,000/s) show the latency
at a given load, and the last run (writer flat out) shows the ceiling.

Parts, labelled in the output:

- `inproc`: one in-memory Cluster in this process; the watchers are `fakeapi.storage.watch.stream`
  consumers, the writer is `cluster.client().create`. Latency is from the moment `create`
  returned (the event is in the log) to the moment a watcher's `async for` got the chunk,
  matched by resourceVersion. Watchers and writer share one event loop, as in the server.
- `inproc-durable`: the same with a data directory (a WAL in $TMPDIR). Watchers see an event
  only once its group commit is synced, so the latency runs from the call of `create` (the
  commit) to the delivery: it includes the fsync.
- `http`: a `fakeapi serve --http` child process; this process holds 100 chunked watch
  streams (aiohttp) and a writer POSTing ConfigMaps (4 connections at a fixed rate, 16 flat
  out). Each object carries its send time in an annotation, so the main latency is
  POST-sent to watch-line-received: an upper bound of commit-to-delivery that includes the
  POST's own request path. POST-201-received to line-received is printed as a lower estimate.
- `http-durable`: the same against `fakeapi serve --http --data-dir` (durable before visible:
  the latency includes the fsync; the lower estimate is ~0, as the line and the 201 both wait
  for it).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from benchlib import (
    CpuMeter,
    configmap,
    header,
    latency_text,
    max_line,
    percentile,
    rate_line,
    start_server,
)

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.ids import resource_version
from fakeapi.storage.watch import WatchSpec, stream

EVENTS_TARGET = 50_000.0
P99_TARGET_MS = 10.0
NAMESPACE = "default"
RV_RE = re.compile(rb'"resourceVersion":"(\d+)"')
NAME_RE = re.compile(rb'"name":"(w-\d+)"')
SENT_RE = re.compile(rb'"bench/sent":"([0-9.]+)"')
WRITER_CONNECTIONS = 16  # the flat-out run
PACED_CONNECTIONS = 4  # fixed-rate runs: few, so POSTs don't queue and the bound stays tight
MAX_RATE = 0  # sentinel: the writer commits as fast as it can


class Tally:
    """Delivered events and latency samples shared by all watchers of one run."""

    def __init__(self) -> None:
        self.events = 0
        self.latencies: list[float] = []
        self.last_delivery = 0.0


async def paced_writer(write: Callable[[int], Awaitable[None]], *, rate: int, seconds: float,
                       tasks: int = 1) -> int:
    """Call `write(i)` `rate` times a second (MAX_RATE: flat out) for `seconds`; return count."""
    start = time.perf_counter()
    deadline = start + seconds
    sent = 0

    async def one() -> None:
        nonlocal sent
        while True:
            now = time.perf_counter()
            if now >= deadline:
                return
            if rate != MAX_RATE and sent >= (now - start) * rate:
                await asyncio.sleep(0.001)
                continue
            i = sent
            sent += 1
            await write(i)
            if rate == MAX_RATE and i % 20 == 0:
                await asyncio.sleep(0)  # let the watchers run, as a server loop would

    await asyncio.gather(*(one() for _ in range(tasks)))
    return sent


async def drain(tally: Tally, expected: int, timeout: float = 5.0) -> None:
    """Wait until the watchers got `expected` events in total (or the timeout)."""
    deadline = time.perf_counter() + timeout
    while tally.events < expected and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)


def report(label: str, rate: int, written: int, tally: Tally, elapsed: float, watchers: int,
           cpu: str) -> None:
    """Rate and latency lines for one run."""
    wanted = "max" if rate == MAX_RATE else f"{rate}/s"
    print(f"  writer {wanted:>6}: {written:,} commits ({written / elapsed:,.0f}/s), "
          f"{tally.events:,}/{written * watchers:,} events delivered")
    print("    " + rate_line(f"{label} delivered events", tally.events / elapsed,
                             EVENTS_TARGET))
    if tally.latencies:
        print("    " + max_line(f"{label} p99 commit-to-delivery",
                                percentile(tally.latencies, 99) * 1e3, P99_TARGET_MS, " ms"))
    print(f"      {latency_text(tally.latencies)}  max "
          f"{max(tally.latencies, default=0) * 1e3:.1f} ms  {cpu}")


# ----- in-process --------------------------------------------------------------------------


async def measured(label: str, meter: CpuMeter, consumers: list[asyncio.Task[None]],
                   tally: Tally, write: Callable[[int], Awaitable[None]], *, rate: int,
                   seconds: float, watchers: int, connections: int = 1) -> None:
    """Write at `rate` while the watchers consume, wait for delivery, stop them, report."""
    start = time.perf_counter()
    written = await paced_writer(write, rate=rate, seconds=seconds, tasks=connections)
    await drain(tally, written * watchers)
    elapsed = max(tally.last_delivery, start + seconds) - start
    cpu = meter.text()
    for t in consumers:
        t.cancel()
    await asyncio.gather(*consumers, return_exceptions=True)
    report(label, rate, written, tally, elapsed, watchers, cpu)


async def inproc_run(cluster: Cluster, *, watchers: int, rate: int, seconds: float,
                     offset: int, label: str) -> None:
    """One writer rate against `watchers` stream consumers in this event loop."""
    kind = cluster.kinds.by_id("configmaps")
    assert kind is not None
    client = cluster.client("bench")
    committed: dict[bytes, float] = {}  # name -> commit time (durable: when create was called)
    durable = cluster.wal is not None
    tally = Tally()
    spec = WatchSpec(kind=kind, namespace=NAMESPACE, timeout=seconds + 30,
                     resource_version=resource_version(cluster.store.revision))

    async def consume() -> None:
        async for chunk in stream(cluster.store, spec):
            now = time.perf_counter()
            for name in NAME_RE.findall(chunk):
                tally.latencies.append(now - committed[name])
                tally.events += 1
            tally.last_delivery = now

    async def write(i: int) -> None:
        name = f"w-{offset + i}"
        if durable:  # the event is committed now and delivered after its fsync
            committed[name.encode()] = time.perf_counter()
        await client.create("configmaps", configmap(name, NAMESPACE))
        if not durable:
            committed[name.encode()] = time.perf_counter()

    tasks = [asyncio.create_task(consume()) for _ in range(watchers)]
    await asyncio.sleep(0.05)
    await measured(label, CpuMeter(inproc=None), tasks, tally, write, rate=rate,
                   seconds=seconds, watchers=watchers)


async def bench_inproc(watchers: int, seconds: float, rates: list[int], *,
                       durable: bool = False) -> None:
    """In-process watchers on a cluster (no controllers running), in memory or durable."""
    label = "inproc-durable" if durable else "inproc"
    print(f"\n== {label}: {watchers} fakeapi.storage.watch.stream consumers, writer client.create")
    work = Path(tempfile.mkdtemp(prefix="fakeapi-bench-")) if durable else None
    cluster = Cluster(ClusterConfig(seed=1, data_dir=work))
    try:
        for n, rate in enumerate(rates):
            await inproc_run(cluster, watchers=watchers, rate=rate, seconds=seconds,
                             offset=n * 1_000_000, label=label)
    finally:
        await cluster.close()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


# ----- over HTTP ---------------------------------------------------------------------------


async def http_run(session: aiohttp.ClientSession, base: str, server_pid: int, *,
                   watchers: int, rate: int, seconds: float, offset: int, label: str) -> None:
    """One writer rate against `watchers` HTTP watch streams."""
    cms = f"{base}/api/v1/namespaces/{NAMESPACE}/configmaps"
    async with session.get(cms, params={"limit": "1"}) as resp:
        rv = (await resp.json())["metadata"]["resourceVersion"]
    tally = Tally()
    ready = 0

    async def consume() -> None:
        nonlocal ready
        params = {"watch": "true", "resourceVersion": rv,
                  "timeoutSeconds": str(int(seconds + 30))}
        async with session.get(cms, params=params) as resp:
            ready += 1
            carry = b""
            async for chunk in resp.content.iter_any():
                now = time.time()
                data = carry + chunk
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                for sent in SENT_RE.findall(data, 0, cut):
                    tally.latencies.append(now - float(sent))
                    after_response.append(max(0.0, now - responded.get(sent, now)))
                    tally.events += 1
                tally.last_delivery = time.perf_counter()

    post_latencies: list[float] = []
    responded: dict[bytes, float] = {}  # annotation value -> when the POST's 201 arrived
    after_response: list[float] = []

    async def write(i: int) -> None:
        obj: dict[str, Any] = configmap(f"h-{offset + i}", NAMESPACE)
        t0 = time.time()
        sent = repr(t0)
        obj["metadata"]["annotations"] = {"bench/sent": sent}
        async with session.post(cms, data=orjson.dumps(obj),
                                headers={"Content-Type": "application/json"}) as resp:
            await resp.read()
        t1 = time.time()
        responded[sent.encode()] = t1
        post_latencies.append(t1 - t0)

    tasks = [asyncio.create_task(consume()) for _ in range(watchers)]
    deadline = time.perf_counter() + 10
    while ready < watchers and time.perf_counter() < deadline:
        await asyncio.sleep(0.01)
    conns = WRITER_CONNECTIONS if rate == MAX_RATE else PACED_CONNECTIONS
    await measured(label, CpuMeter(server=server_pid, client=None), tasks, tally, write,
                   rate=rate, seconds=seconds, watchers=watchers, connections=conns)
    print(f"      POST response -> line (lower estimate): {latency_text(after_response)}")
    print(f"      the writer's POSTs ({conns} connections): {latency_text(post_latencies)}")


async def bench_http(watchers: int, seconds: float, rates: list[int], *,
                     durable: bool = False) -> None:
    """HTTP watch streams from this process against a server child process."""
    label = "http-durable" if durable else "http"
    work = Path(tempfile.mkdtemp(prefix="fakeapi-bench-")) if durable else None
    server = start_server(data_dir=work)
    print(f"\n== {label}: {watchers} aiohttp watch streams + a POST writer -> {server.url}\n"
          "   latency = POST sent -> watch line received (upper bound of commit-to-delivery);\n"
          "   POST 201 received -> line received is a lower estimate (0 if the line came first)")
    try:
        connector = aiohttp.TCPConnector(limit=0)
        timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
        async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
            for n, rate in enumerate(rates):
                await http_run(session, server.url, server.pid, watchers=watchers, rate=rate,
                               seconds=seconds, offset=n * 1_000_000, label=label)
    finally:
        server.stop()
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)


async def main() -> None:
    """Run the selected parts."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each writer run")
    parser.add_argument("--rates", type=int, nargs="+", default=[600, 1000, MAX_RATE],
                        help="writer commits/s per run (0 = as fast as possible)")
    parser.add_argument("--parts", nargs="+",
                        choices=("inproc", "inproc-durable", "http", "http-durable"),
                        default=["inproc", "inproc-durable", "http", "http-durable"])
    args = parser.parse_args()
    header("bench_watch: watch fan-out")
    for part in args.parts:
        durable = part.endswith("-durable")
        if part.startswith("inproc"):
            await bench_inproc(args.watchers, args.seconds, args.rates, durable=durable)
        else:
            await bench_http(args.watchers, args.seconds, args.rates, durable=durable)


if __name__ == "__main__":
    asyncio.run(main())
