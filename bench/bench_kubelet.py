"""The node emulator's speed, in process on the real clock (issue-10 targets, a 2-core box):

- slices: 500 nodes x 8 GPUs, from start to every pool published (<= 5 s);
- plain pods: 10,000 pods on 100 nodes, from created to Running (<= 20 s; kwok's CI bar is
  10,000 in 60 s);
- GPU pods: 10,000 pods with one GPU claim each from a template on 1,250 nodes x 8 GPUs, from
  created to Running (<= 40 s), with the claim controller and the scheduler in the loop;
- gRPC drivers: 1,000 one-GPU pods on 125 nodes with the built-in drivers in process and
  as gRPC plugins (`--drivers grpc`): the wall and CPU time preparing through gRPC adds per
  pod (issue 17: <= 2 ms);
- the process RSS at the end of each part.

Run with `.venv/bin/python bench/bench_kubelet.py [--parts slices plain gpu grpc] [--scale F]`
(`--scale 0.1` runs a tenth of each size).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import CpuMeter, header, max_line, rate_line, rss_mb  # noqa: E402

from fakeapi.cli import process  # noqa: E402
from fakeapi.client import Client  # noqa: E402
from fakeapi.cluster import ClusterConfig  # noqa: E402
from fakeapi.controlplane import ControlPlane  # noqa: E402
from fakeapi.machinery.statedir import make_temporary_state  # noqa: E402
from kubelet_emu.profile import load_profile, parse_profile  # noqa: E402
from kubelet_emu.settings import DRIVER_MODES, EmulatorSettings  # noqa: E402

SLICES = "resourceslices.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
PLAIN = parse_profile("name: plain\ndescription: no devices\n", "bench")
BATCH = 200


async def until(check: Callable[[], Awaitable[bool]], timeout: float) -> float:
    """Seconds until `check()` holds (polled every 20 ms), or the timeout."""
    t0 = time.perf_counter()
    while not await check():
        if time.perf_counter() - t0 > timeout:
            break
        await asyncio.sleep(0.02)
    return time.perf_counter() - t0


def plane_with(nodes: int, profile: Any, components: str,
               drivers: str = "in-process") -> tuple[ControlPlane, Path]:
    """A control plane whose nodes keep their files where `fakeapi serve` keeps them without
    `--data-dir` (a RAM-backed temporary folder when there is one, as a node's /run)."""
    state = make_temporary_state(prefix="bench-kubelet-")
    return ControlPlane(ClusterConfig(), components=components, emulator=EmulatorSettings(
        nodes=nodes, profile=profile, state_dir=state, drivers=drivers)), state


async def stop(plane: ControlPlane, state: Path) -> None:
    """Stop the plane and remove its nodes' files."""
    await plane.stop()
    shutil.rmtree(state, ignore_errors=True)


async def bench_slices(scale: float) -> None:
    nodes = max(1, int(500 * scale))
    plane, state = plane_with(nodes, load_profile("gpu"), "kubelet")
    admin = plane.cluster.client("bench")
    meter = CpuMeter(bench=None)
    t0 = time.perf_counter()
    await plane.start()

    async def published() -> bool:
        return len(await admin.list(SLICES, copy=False)) >= nodes

    await until(published, 120)
    took = time.perf_counter() - t0
    devices = sum(len(s["spec"]["devices"]) for s in await admin.list(SLICES, copy=False))
    print(max_line(f"{nodes} nodes x 8 GPUs: start to all published", took, 5.0 * scale, " s"))
    print(f"{'':<6}{devices} devices in {nodes} slices, {nodes / took:,.0f} nodes/s; "
          f"{meter.text()}; RSS {rss_mb():.0f} MB")
    await stop(plane, state)


async def create_all(make: Callable[[int], Awaitable[Any]], n: int) -> None:
    for start in range(0, n, BATCH):
        await asyncio.gather(*(make(i) for i in range(start, min(n, start + BATCH))))


async def running(admin: Client, want: int) -> bool:
    pods = await admin.list("pods", "default", copy=False)
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running") >= want


async def bench_plain(scale: float) -> None:
    nodes, pods = max(1, int(100 * scale)), max(1, int(10_000 * scale))
    plane, state = plane_with(nodes, PLAIN, "kubelet")
    admin = plane.cluster.client("bench")
    await plane.start()
    await until(lambda: _nodes_ready(admin, nodes), 60)
    meter = CpuMeter(bench=None)
    t0 = time.perf_counter()

    async def make(i: int) -> Any:
        return await admin.create("pods", {"metadata": {"name": f"p-{i}", "namespace": "default"},
                                           "spec": {"nodeName": f"worker-{i % nodes}",
                                                    "containers": [{"name": "c",
                                                                    "image": "pause"}]}})

    await create_all(make, pods)
    created = time.perf_counter() - t0
    await until(lambda: running(admin, pods), 120)
    took = time.perf_counter() - t0
    print(max_line(f"{pods:,} plain pods on {nodes} nodes: created to Running", took,
                   20.0 * scale, " s"))
    print(rate_line(f"{'':<6}pods/s", pods / took, 10_000 / 20))
    print(f"{'':<6}creates took {created:.2f} s; {meter.text()}; RSS {rss_mb():.0f} MB")
    await stop(plane, state)


async def _nodes_ready(admin: Client, n: int) -> bool:
    return len(await admin.list("leases.coordination.k8s.io", "kube-node-lease",
                                copy=False)) >= n


async def bench_gpu(scale: float) -> None:
    await gpu_pods(max(1, int(1_250 * scale)), max(1, int(10_000 * scale)), 40.0 * scale)


async def bench_grpc(scale: float) -> None:
    """1,000 one-GPU pods on 125 nodes with the drivers in process, then as gRPC plugins:
    what preparing through gRPC adds per pod (issue 17: <= 2 ms)."""
    pods = max(1, int(1_000 * scale))
    nodes = -(-pods // 8)  # 8 GPUs a node
    took = {mode: await gpu_pods(nodes, pods, 4.0 * scale, drivers=mode)
            for mode in DRIVER_MODES}
    wall = (took["grpc"][0] - took["in-process"][0]) / pods * 1e3
    cpu = (took["grpc"][1] - took["in-process"][1]) / pods * 1e3
    print(max_line("gRPC drivers: wall time added per pod", wall, 2.0, " ms"))
    print(max_line("gRPC drivers: CPU time added per pod", cpu, 2.0, " ms"))


async def gpu_pods(nodes: int, pods: int, target: float,
                   drivers: str = "in-process") -> tuple[float, float]:
    """One-GPU pods (template claims) to Running on `nodes` gpu nodes; (wall seconds, CPU
    seconds of this process) from the first create to the last Running."""
    plane, state = plane_with(nodes, load_profile("gpu"), "*", drivers)
    admin = plane.cluster.client("bench")
    await plane.start()
    await until(lambda: _nodes_ready(admin, nodes), 120)
    await until(lambda: _count(admin, SLICES, nodes), 120)
    await admin.create(TEMPLATES, {"metadata": {"name": "one-gpu", "namespace": "default"},
                                   "spec": {"spec": {"devices": {"requests": [{
                                       "name": "gpu", "exactly": {
                                           "deviceClassName": "gpu.example.com"}}]}}}})
    meter = CpuMeter(bench=None)
    t0 = time.perf_counter()
    cpu0 = time.process_time()

    async def make(i: int) -> None:
        await admin.create("pods", {"metadata": {"name": f"g-{i}", "namespace": "default"},
                                    "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
            "containers": [{"name": "c", "image": "cuda", "resources": {
                "claims": [{"name": "gpu"}]}}]}})

    await create_all(make, pods)
    created = time.perf_counter() - t0
    await until(lambda: running(admin, pods), 300)
    took = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    print(max_line(f"{pods:,} GPU pods on {nodes} nodes ({drivers} drivers): created to "
                   "Running", took, target, " s"))
    print(f"{'':<6}creates took {created:.2f} s; {pods / took:,.0f} pods/s; "
          f"{meter.text()}; RSS {rss_mb():.0f} MB")
    await stop(plane, state)
    return took, cpu


async def _count(admin: Client, resource: str, n: int) -> bool:
    return len(await admin.list(resource, copy=False)) >= n


PARTS = {"slices": bench_slices, "plain": bench_plain, "gpu": bench_gpu, "grpc": bench_grpc}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", nargs="*", default=["slices", "plain", "gpu"],
                        choices=list(PARTS))
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    header("bench_kubelet: emulated nodes, slices and pods")
    process.tune()  # as `fakeapi serve` tunes its process
    for part in args.parts:
        gc.collect()
        asyncio.run(PARTS[part](args.scale))


if __name__ == "__main__":
    main()
