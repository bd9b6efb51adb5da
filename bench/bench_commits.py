"""In-process write throughput: commits/s through the client, the registry and the raw store.

Run with `.venv/bin/python bench/bench_commits.py [--seconds S]`. Every layer is measured on its
own, each on a fresh cluster, so the cost of each is visible (issue-2 target: >= 20,000
client creates/s in memory). Each line gives the wall-clock rate and the rate per CPU second
of this process (what one free core would do; the steadier number on a shared box):

- `store.commit`: the log append + view update + one orjson encode (no validation);
- `registry.create`: strategies, validation, metadata, managedFields, commit;
- `client.create`: the registry plus RBAC and the client's defensive copies;
- the same client with `--data-dir` semantics: 64 concurrent tasks, each create awaiting the
  WAL group commit (fsync).

p99 spikes of hundreds of ms are the cyclic GC's full (gen2) collections, whose pause grows
with the number of live objects (see bench/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from benchlib import (
    RESOURCECLAIMS,
    CpuMeter,
    configmap,
    header,
    latency_text,
    rate_line,
    resource_claim,
)

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.registry.context import RequestContext

TARGET = 20_000.0
MAX_OPS = 2_000_000

T = TypeVar("T")


def show(label: str, calls: int, wall: float, cpu: float) -> float:
    """Print the wall-clock rate against the target, then the CPU-time rate; return the latter.

    The CPU-time rate (calls per CPU second of this process) is what one free core would do:
    on a shared 2-core box it is the steadier number of the two.
    """
    print(rate_line(label, calls / wall, TARGET))
    per_cpu = calls / max(cpu, 1e-9)
    print(f"{'':<6}{cpu / wall:.2f} core busy; per CPU second {per_cpu:,.0f}/s "
          f"(x{per_cpu / TARGET:.2f}), {cpu / calls * 1e6:,.1f} µs CPU each")
    return per_cpu


def creating(create: Callable[[dict[str, Any]], T], make: Callable[[str], dict[str, Any]],
             prefix: str) -> Callable[[int], T]:
    """A timed step whose i-th call creates `make(f"{prefix}-{i}")`."""
    return lambda i: create(make(f"{prefix}-{i}"))


def timed_loop(label: str, step: Callable[[int], object], seconds: float) -> float:
    """Call `step(i)` in batches of 200 until `seconds` pass; print and return the CPU rate.

    Calls 0..199 are a warm-up (lazy schema compilation, first-use imports) and not timed.
    """
    for i in range(200):
        step(i)
    gc.collect()
    n = 200
    start, cpu0 = time.perf_counter(), time.process_time()
    deadline = start + seconds
    while time.perf_counter() < deadline and n < MAX_OPS:
        for i in range(n, n + 200):
            step(i)
        n += 200
    return show(label, n, time.perf_counter() - start, time.process_time() - cpu0)


async def timed_async(label: str, step: Callable[[int], Awaitable[object]], seconds: float,
                      concurrency: int = 1) -> float:
    """Run `step(i)` from `concurrency` tasks until `seconds` pass; print, return the CPU rate."""
    for i in range(200):  # warm-up, not timed
        await step(i)
    gc.collect()
    counter = iter(range(200, MAX_OPS))
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        for i in counter:
            t0 = time.perf_counter()
            if t0 >= deadline:
                return
            await step(i)
            latencies.append(time.perf_counter() - t0)

    start, cpu0 = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    rate = show(label, len(latencies), time.perf_counter() - start, time.process_time() - cpu0)
    print(f"{'':<6}{latency_text(latencies)}")
    return rate


async def bench_memory(seconds: float) -> dict[str, float]:
    """Every layer against an in-memory cluster (a fresh one per layer)."""
    rates: dict[str, float] = {}
    store = Cluster(ClusterConfig(seed=1)).store
    rates["store.commit"] = timed_loop(
        "store.commit configmap (raw, no validation)",
        creating(partial(store.commit, "ADDED", "configmaps", actor="bench"), configmap, "raw"),
        seconds)

    ctx = RequestContext(user="bench", groups=("system:masters", "system:authenticated"),
                         field_manager="bench")
    for label, resource, make in (("configmap", "configmaps", configmap),
                                  ("resourceclaim", RESOURCECLAIMS, resource_claim)):
        cluster = Cluster(ClusterConfig(seed=1))
        kind = cluster.kinds.by_id(resource)
        assert kind is not None
        rates[f"registry.create {label}"] = timed_loop(
            f"registry.create {label}",
            creating(partial(cluster.registry.create, kind, "default", ctx=ctx), make, "reg"),
            seconds)

    for label, resource, make in (("configmap", "configmaps", configmap),
                                  ("resourceclaim", RESOURCECLAIMS, resource_claim)):
        client = Cluster(ClusterConfig(seed=1)).client("bench")
        rates[f"client.create {label}"] = await timed_async(
            f"client.create {label} (sequential)",
            creating(partial(client.create, resource), make, "cl"), seconds)
    return rates


async def bench_durable(seconds: float, concurrency: int) -> dict[str, float]:
    """client.create with a write-ahead log: every call waits for its group commit."""
    rates: dict[str, float] = {}
    for label, resource, make in (("configmap", "configmaps", configmap),
                                  ("resourceclaim", RESOURCECLAIMS, resource_claim)):
        data_dir = Path(tempfile.mkdtemp(prefix="bench-commits-"))
        cluster = Cluster(ClusterConfig(data_dir=data_dir, seed=1))
        try:
            client = cluster.client("bench")
            flushes = cluster.wal.flush_count if cluster.wal is not None else 0
            rates[f"durable client.create {label}"] = await timed_async(
                f"client.create {label} (WAL, {concurrency} tasks)",
                creating(partial(client.create, resource), make, "d"), seconds, concurrency)
            if cluster.wal is not None:
                print(f"{'':<6}{cluster.wal.flush_count - flushes} fsyncs")
        finally:
            await cluster.close()
            shutil.rmtree(data_dir, ignore_errors=True)
    return rates


async def main() -> None:
    """Run both sets and print the rates."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--concurrency", type=int, default=64, help="tasks in the WAL run")
    args = parser.parse_args()
    header("bench_commits: in-process commits/s")
    meter = CpuMeter(bench=None)
    print("== in memory")
    await bench_memory(args.seconds)
    print(f"== with --data-dir (WAL + fsync group commit), dir {tempfile.gettempdir()}")
    await bench_durable(args.seconds, args.concurrency)
    print(f"\nover the whole run: {meter.text()} (other > 0: the box was shared)")


if __name__ == "__main__":
    asyncio.run(main())
