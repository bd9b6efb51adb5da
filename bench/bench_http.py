"""HTTP throughput: creates/s and gets/s from 64 concurrent clients in another process.

Run with `.venv/bin/python bench/bench_http.py [--seconds S] [--concurrency N] [--runs ...]`.
Each run is MODE:CLIENT. MODE starts `fakeapi serve --port 0` as a subprocess: `http` or
`https` (TLS, with the admin client certificate), each in memory or `-durable` (`--data-dir`,
so every write waits for the WAL group-commit fsync). CLIENT is `aiohttp` (one
aiohttp.ClientSession, 64 pooled keep-alive connections) or `raw` (64 hand-written HTTP/1.1
keep-alive connections on asyncio streams: several times cheaper per request than aiohttp, so
on a 2-core box more CPU is left to the server). From this process each run does, for S
seconds each: POST ConfigMaps, POST ResourceClaims, GET ConfigMaps by name. Prints rates,
p50/p99 latency, the ratio to the issue-2 targets (>= 3,000 creates/s, >= 5,000 gets/s) and the
cores used by server, client and everything else on the machine (server near 1.00 = the server
is the limit; `other` well above 0 = the box was busy and the rates are understated).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import shutil
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import orjson
from benchlib import (
    CpuMeter,
    Server,
    client_ssl_context,
    configmap,
    header,
    latency_text,
    rate_line,
    resource_claim,
    rss_mb,
    start_server,
)

CREATE_TARGET = 3_000.0
GET_TARGET = 5_000.0
MODES = ("http", "http-durable", "https", "https-durable")
CLIENTS = ("aiohttp", "raw")
RUNS = tuple(f"{m}:{c}" for c in CLIENTS for m in MODES)
DEFAULT_RUNS = ("http:aiohttp", "http-durable:aiohttp", "https:aiohttp", "https-durable:aiohttp",
                "http:raw", "https:raw")
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
CONTENT_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)", re.IGNORECASE)

RequestMaker = Callable[[int], tuple[str, str, bytes | None]]  # method, path, body
Sender = Callable[[str, str, bytes | None], Awaitable[int]]  # -> status


class PhaseResult:
    """Outcome of one timed phase."""

    def __init__(self, ok: int, errors: int, elapsed: float, latencies: list[float],
                 cpu: str, server_cores: float) -> None:
        self.ok = ok
        self.errors = errors
        self.elapsed = elapsed
        self.latencies = latencies
        self.cpu = cpu
        self.server_cores = server_cores

    @property
    def server_us(self) -> float:
        """Server CPU microseconds per successful request (independent of machine load)."""
        return self.server_cores * self.elapsed / max(self.ok, 1) * 1e6

    @property
    def rate(self) -> float:
        """Successful requests per second."""
        return self.ok / self.elapsed


class RawConnection:
    """One keep-alive HTTP/1.1 connection, one request at a time, Content-Length bodies only."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 host: str) -> None:
        self.reader = reader
        self.writer = writer
        self.host = host.encode()

    @classmethod
    async def open(cls, url: str, ssl_ctx: ssl.SSLContext | None) -> RawConnection:
        """Connect to the server of `url`."""
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port, ssl=ssl_ctx)
        return cls(reader, writer, parts.netloc)

    async def send(self, method: str, path: str, body: bytes | None) -> int:
        """Send one request, read the whole response, return its status."""
        head = (f"{method} {path} HTTP/1.1\r\nHost: ".encode() + self.host
                + b"\r\nAccept: application/json\r\n")
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.writer.write(head + b"\r\n" + (body or b""))
        resp = await self.reader.readuntil(b"\r\n\r\n")
        m = CONTENT_LENGTH.search(resp)
        if m is None:
            raise RuntimeError(f"raw client needs Content-Length: {resp[:200]!r}")
        await self.reader.readexactly(int(m.group(1)))
        return int(resp[9:12])

    def close(self) -> None:
        """Close the socket."""
        self.writer.close()


async def run_phase(senders: list[Sender], make: RequestMaker, *, expect: int,
                    seconds: float, server_pid: int,
                    max_requests: int = 1_000_000) -> PhaseResult:
    """One worker per sender issues requests from `make(i)` until the time or count runs out."""
    counter = iter(range(max_requests))
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker(send: Sender) -> None:
        nonlocal errors
        for i in counter:
            if time.perf_counter() >= deadline:
                return
            method, path, body = make(i)
            t0 = time.perf_counter()
            status = await send(method, path, body)
            if status == expect:
                latencies.append(time.perf_counter() - t0)
            else:
                errors += 1

    meter = CpuMeter(server=server_pid, client=None)
    start = time.perf_counter()
    await asyncio.gather(*(worker(s) for s in senders))
    elapsed = time.perf_counter() - start
    return PhaseResult(len(latencies), errors, elapsed, latencies, meter.text(),
                       meter.last("server"))


def aiohttp_sender(session: aiohttp.ClientSession, base: str) -> Sender:
    """A Sender on a shared aiohttp session (its pool gives each worker a connection)."""

    async def send(method: str, path: str, body: bytes | None) -> int:
        async with session.request(method, base + path, data=body,
                                   headers=JSON_HEADERS) as resp:
            await resp.read()
            return resp.status

    return send


def print_phase(label: str, result: PhaseResult, target: float) -> None:
    """One rate line plus latency, errors, CPU and the server's cost per request.

    `one-core ceiling` = 1e6 / server µs per request: the rate the server would reach with a
    whole core to itself (it is one process, one event loop), whatever else the box runs.
    """
    print(rate_line(label, result.rate, target))
    print(f"{'':<6}{latency_text(result.latencies)}  errors {result.errors}  {result.cpu}")
    ceiling = 1e6 / max(result.server_us, 1)
    print(f"{'':<6}server {result.server_us:,.0f} µs CPU/request -> one-core ceiling "
          f"{ceiling:,.0f}/s (x{ceiling / target:.2f})")


async def run_phases(senders: list[Sender], server: Server, seconds: float
                     ) -> dict[str, float]:
    """Warm up, then create ConfigMaps, create ResourceClaims, get ConfigMaps."""
    rates: dict[str, float] = {}
    cms = "/api/v1/namespaces/default/configmaps"
    rcs = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    await run_phase(senders, lambda i: ("GET", "/version", None), expect=200, seconds=0.3,
                    server_pid=server.pid, max_requests=len(senders) * 4)

    res = await run_phase(senders, lambda i: ("POST", cms, orjson.dumps(configmap(f"cm-{i}"))),
                          expect=201, seconds=seconds, server_pid=server.pid)
    created = res.ok + res.errors
    print_phase("POST configmaps (create)", res, CREATE_TARGET)
    rates["create_cm"] = res.rate
    rates["us_create_cm"] = res.server_us

    res = await run_phase(
        senders, lambda i: ("POST", rcs, orjson.dumps(resource_claim(f"rc-{i}"))),
        expect=201, seconds=seconds, server_pid=server.pid)
    print_phase("POST resourceclaims (create)", res, CREATE_TARGET)
    rates["create_rc"] = res.rate
    rates["us_create_rc"] = res.server_us

    rng = random.Random(1)
    res = await run_phase(senders, lambda i: ("GET", f"{cms}/cm-{rng.randrange(created)}", None),
                          expect=200, seconds=seconds, server_pid=server.pid)
    print_phase("GET configmaps/NAME", res, GET_TARGET)
    rates["get_cm"] = res.rate
    rates["us_get_cm"] = res.server_us
    return rates


async def bench_run(run: str, *, concurrency: int, seconds: float) -> dict[str, float]:
    """Start a server for MODE, drive it with CLIENT, stop it; return the rates."""
    mode, client = run.split(":")
    tls = mode.startswith("https")
    data_dir = Path(tempfile.mkdtemp(prefix="bench-http-")) if "durable" in mode else None
    server = start_server(tls=tls, data_dir=data_dir)
    try:
        ssl_ctx = client_ssl_context(server.kubeconfig) if tls else None
        print(f"\n== {run}: {server.url} (ready in {server.ready_seconds:.2f} s, "
              f"data dir {data_dir or '-'})")
        if client == "raw":
            conns = [await RawConnection.open(server.url, ssl_ctx) for _ in range(concurrency)]
            try:
                rates = await run_phases([c.send for c in conns], server, seconds)
            finally:
                for c in conns:
                    c.close()
        else:
            connector = aiohttp.TCPConnector(limit=concurrency, ssl=ssl_ctx or False)
            async with aiohttp.ClientSession(connector=connector) as session:
                rates = await run_phases([aiohttp_sender(session, server.url)] * concurrency,
                                         server, seconds)
        print(f"{'':<6}server RSS {rss_mb(server.pid):.0f} MiB after the run")
    finally:
        server.stop()
        if data_dir is not None:
            shutil.rmtree(data_dir, ignore_errors=True)
    return rates


async def main() -> None:
    """Run every selected mode and print a summary table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each phase")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", nargs="+", choices=RUNS, default=list(DEFAULT_RUNS))
    args = parser.parse_args()
    header("bench_http: HTTP creates/gets per second")
    print(f"{args.concurrency} concurrent requests, {args.seconds:.1f} s per phase, "
          f"client in this process, server in a child process")
    summary = {}
    for run in args.runs:
        summary[run] = await bench_run(run, concurrency=args.concurrency,
                                       seconds=args.seconds)
    print(f"\n{'run':<24}{'create cm/s':>12}{'create rc/s':>12}{'get/s':>10}"
          f"{'create x':>10}{'get x':>8}   server µs/req cm, rc, get")
    for run, r in summary.items():
        worst = min(r["create_cm"], r["create_rc"])
        print(f"{run:<24}{r['create_cm']:>12,.0f}{r['create_rc']:>12,.0f}{r['get_cm']:>10,.0f}"
              f"{worst / CREATE_TARGET:>10.2f}{r['get_cm'] / GET_TARGET:>8.2f}   "
              f"{r['us_create_cm']:,.0f}, {r['us_create_rc']:,.0f}, {r['us_get_cm']:,.0f}")


if __name__ == "__main__":
    asyncio.run(main())
