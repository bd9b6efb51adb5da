"""Throughput of the write-ahead log: append-only cost, and append+sync with group commit.

Run with `python bench/bench_wal.py [--seconds S] [--payload BYTES] [--dir DIR]`. The files are
created in a temporary directory under DIR (default: the system temp dir; point it at the real
disk if that is a tmpfs, or fsync costs nothing) and removed afterwards. Prints rates only.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from fakeapi.storage.wal import WriteAheadLog  # noqa: E402

WRITERS = (1, 4, 16, 64, 256, 1024)


def make_payload(size: int) -> bytes:
    """An orjson-encoded event shaped like a small Pod update, padded to about `size` bytes."""
    event: dict[str, Any] = {
        "type": "MODIFIED",
        "object": {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pod-0", "namespace": "default", "resourceVersion": "1"},
            "spec": {"nodeName": "node-0", "containers": [{"name": "c", "image": "busybox"}]},
        },
    }
    raw = orjson.dumps(event)
    event["object"]["metadata"]["annotations"] = {"pad": "x" * max(0, size - len(raw) - 30)}
    return orjson.dumps(event)


def bench_append_only(path: Path, payload: bytes, seconds: float) -> float:
    """Appends/s of the buffering step alone, flushed in large batches like a busy store."""
    wal, _ = WriteAheadLog.open(path)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(10_000):
            wal.append(payload)
        n += 10_000
        wal.flush_now()
    elapsed = time.perf_counter() - start
    wal.close_now()
    return n / elapsed


async def bench_group_commit(
    path: Path, *, payload: bytes, writers: int, seconds: float
) -> tuple[float, float, float]:
    """(appends/s, records per fsync, mean sync latency ms) with `writers` concurrent loops."""
    wal, _ = WriteAheadLog.open(path)
    stop = False
    done = 0
    latency = 0.0

    async def writer() -> None:
        nonlocal done, latency
        while not stop:
            t0 = time.perf_counter()
            await wal.sync(wal.append(payload))
            latency += time.perf_counter() - t0
            done += 1

    flushes0 = wal.flush_count
    tasks = [asyncio.create_task(writer()) for _ in range(writers)]
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    stop = True
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - start
    flushes = wal.flush_count - flushes0
    await wal.close()
    return done / elapsed, done / max(flushes, 1), latency / max(done, 1) * 1000


async def main() -> None:
    """Run every scenario and print a table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--payload", type=int, default=600, help="approximate event size")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    payload = make_payload(args.payload)
    tmp = Path(tempfile.mkdtemp(prefix="bench-wal-", dir=args.dir))
    try:
        rate = bench_append_only(tmp / "append.wal", payload, args.seconds)
        print(f"payload {len(payload)} B, {args.seconds:.1f} s per scenario, dir {args.dir}")
        print(f"append only (flush_now every 10k): {rate:>12,.0f} appends/s")
        print(f"{'writers':>8} {'append+sync/s':>14} {'records/fsync':>14} {'sync ms':>8}")
        for writers in WRITERS:
            path = tmp / f"gc-{writers}.wal"
            rate, per_flush, ms = await bench_group_commit(
                path, payload=payload, writers=writers, seconds=args.seconds
            )
            print(f"{writers:>8} {rate:>14,.0f} {per_flush:>14.1f} {ms:>8.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
