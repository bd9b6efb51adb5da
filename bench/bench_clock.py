"""The drivable clock: how fast emulated time passes when it is told to, and by itself.

Run with `.venv/bin/python bench/bench_clock.py [--parts inproc http auto] [--nodes N ...]`.
No targets in the issue besides "in milliseconds": every figure is printed with its ratio
to real time (virtual seconds per real second).

- inproc: the whole control plane in this process on a VirtualClock with N emulated nodes
  (default profile), idle after start; `clocks/cluster/advance` of 1 h through the in-process
  client (the registry path HTTP takes, without HTTP). Prints real seconds, the virtual/real
  ratio and the events the hour wrote (the kubelets' Lease renewals and status updates).
- http: a `fakeapi serve --http --clock virtual --nodes 2` child process; the real time of
  one POST advance over HTTP for the spans the tests fast-forward (30 s health timeout, 300 s
  toleration, 10 min binding timeout, 1 h cleanup), and of a 0 s advance (the round trip).
- auto: a `--clock virtual:auto --nodes 2` child, idle: how far its clock runs by itself
  in 3 real seconds, the events per real second that writes and the server's CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from benchlib import CpuMeter, header, start_server

from fakeapi.cli import process
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.timestamps import parse_time
from kubelet_emu.settings import EmulatorSettings

CLOCKS = "clocks.emulator.fakeapi.dev"
CLOCK_PATH = "/apis/emulator.fakeapi.dev/v1alpha1/clocks/cluster"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
SPANS = (("health timeout", "30s", 30), ("NoExecute toleration", "300s", 300),
         ("binding timeout", "10m", 600), ("RPSR cleanup", "1h", 3600))


async def _inproc(nodes: int) -> None:
    with tempfile.TemporaryDirectory() as state:
        plane = ControlPlane(ClusterConfig(seed=1), clock=VirtualClock(),
                             emulator=EmulatorSettings(nodes=nodes, state_dir=Path(state)))
        await plane.start()
        await plane.settle()
        admin = plane.cluster.client("bench")
        before = plane.cluster.store.revision
        t0 = time.perf_counter()
        await admin.create_subresource(CLOCKS, "cluster", "advance", {"duration": "1h"})
        took = time.perf_counter() - t0
        events = plane.cluster.store.revision - before
        print(f"  inproc {nodes:>3} nodes: 1 h in {took:6.3f} s = {3600 / took:>9,.0f}x real "
              f"time; {events:>6,} events written ({events / took:>7,.0f}/s)")
        await plane.stop()


def _call(url: str, *, body: dict | None = None, accept: str = "") -> dict:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data else {}
    if accept:
        headers["Accept"] = accept
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers),
                                timeout=600) as resp:
        return dict(json.loads(resp.read()))


def _advance(url: str, duration: str) -> float:
    t0 = time.perf_counter()
    _call(url + CLOCK_PATH + "/advance", body={"kind": "ClockAdvance", "duration": duration})
    return time.perf_counter() - t0


def _now(url: str) -> tuple[float, int]:
    """The clock's virtual seconds since its start and the cluster's revision (the Table of
    the clock list: its Now column and the list's resourceVersion)."""
    table = _call(url + CLOCK_PATH.removesuffix("/cluster"), accept=TABLE)
    now = parse_time(table["rows"][0]["cells"][1]) - VirtualClock().now()
    return now.total_seconds(), int(table["metadata"]["resourceVersion"])


def _http() -> None:
    server = start_server(extra=("--clock", "virtual", "--nodes", "2"))
    try:
        time.sleep(1.0)  # the nodes register
        round_trips = [_advance(server.url, "0s") for _ in range(20)]
        print(f"  http: a 0 s advance round trip: median {statistics.median(round_trips) * 1e3:.1f}"
              " ms")
        for what, duration, seconds in SPANS:
            took = _advance(server.url, duration)
            print(f"  http: {what:<22} {duration:>5} in {took * 1e3:8.1f} ms = "
                  f"{seconds / took:>9,.0f}x real time")
    finally:
        server.stop()


def _auto(seconds: float) -> None:
    server = start_server(extra=("--clock", "virtual:auto", "--nodes", "2"))
    try:
        time.sleep(0.5)
        meter = CpuMeter(server=server.pid)
        v0, r0 = _now(server.url)
        t0 = time.perf_counter()
        time.sleep(seconds)
        v1, r1 = _now(server.url)
        took = time.perf_counter() - t0
        print(f"  auto, idle: {v1 - v0:,.0f} virtual s in {took:.1f} s = "
              f"{(v1 - v0) / took:>7,.0f}x real time; {(r1 - r0) / took:,.0f} events/s; "
              f"{meter.text()}")
    finally:
        server.stop()


def main() -> None:
    """Run the chosen parts."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", nargs="+", default=["inproc", "http", "auto"],
                        choices=["inproc", "http", "auto"])
    parser.add_argument("--nodes", nargs="+", type=int, default=[2, 10, 50])
    parser.add_argument("--auto-seconds", type=float, default=3.0)
    args = parser.parse_args()
    header("bench_clock: emulated time on demand")
    process.tune()
    if "inproc" in args.parts:
        for nodes in args.nodes:
            asyncio.run(_inproc(nodes))
    if "http" in args.parts:
        _http()
    if "auto" in args.parts:
        _auto(args.auto_seconds)


if __name__ == "__main__":
    main()
