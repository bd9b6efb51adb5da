"""Scheduler throughput: upstream scheduler_perf's SchedulingWithResourceClaimTemplate.

500 nodes, each with one ResourceSlice of 10 devices (model A100, driverVersion 1.2.3,
memory 1Gi); one ResourceClaimTemplate; every pod asks for one device through a claim from
the template, which the claim controller generates. The `half` variant is upstream's
5000pods_500nodes: 2,500 pods scheduled first, then 2,500 measured. `empty` measures 2,500
on an empty cluster, `full` 500 more once 4,500 are placed. The clock runs from the first
measured create to the last bind; the pods are created over HTTP by a separate client
process (64 connections). Target: 250 pods/s (upstream's CI threshold is 120).

    .venv/bin/python bench/bench_scheduler.py [--variants empty half full] [--nodes 500]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time

import aiohttp
import benchlib
import orjson

COMPONENTS = "scheduler,resource-claim-controller"
NAMESPACE = "bench"
DRIVER = "gpu.example.com"
VARIANTS = {"empty": (0, 2500), "half": (2500, 2500), "full": (4500, 500)}
"""variant → (pods placed first, pods measured), for 500 nodes × 10 devices."""
TARGET = 250.0
CONNECTIONS = 64


def node(i: int) -> dict:
    """A Node as a kubelet would register it (no kubelet runs: the bench measures scheduling)."""
    name = f"node-{i:04d}"
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"},
                       "capacity": {"cpu": "32", "memory": "128Gi", "pods": "110"}}}


def resource_slice(i: int, devices: int) -> dict:
    """The node's slice, as scheduler_perf's createResourceDriver publishes it."""
    name = f"node-{i:04d}"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "nodeName": name,
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{d}", "attributes": {
                         "model": {"string": "A100"}, "driverVersion": {"version": "1.2.3"}},
                         "capacity": {"memory": {"value": "1Gi"}}} for d in range(devices)]}}


SETUP = [
    ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                            "metadata": {"name": NAMESPACE}}),
    ("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}),
    (f"/apis/resource.k8s.io/v1/namespaces/{NAMESPACE}/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}),
]


def pod(i: int) -> dict:
    """A pod with one claim from the template."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{i:05d}", "namespace": NAMESPACE},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]}}


async def _post_all(url: str, items: list[tuple[str, dict]]) -> None:
    queue: asyncio.Queue[tuple[str, dict]] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    connector = aiohttp.TCPConnector(limit=CONNECTIONS)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            while not queue.empty():
                path, body = queue.get_nowait()
                async with session.post(url + path, json=body) as resp:
                    if resp.status != 201:
                        raise RuntimeError(f"POST {path}: {resp.status} {await resp.text()}")

        await asyncio.gather(*(worker() for _ in range(CONNECTIONS)))


def create_pods(url: str, start: int, count: int) -> None:
    """The separate client process: create pods start..start+count over HTTP."""
    path = f"/api/v1/namespaces/{NAMESPACE}/pods"
    asyncio.run(_post_all(url, [(path, pod(i)) for i in range(start, start + count)]))


async def wait_bound(url: str, want: int, timeout: float) -> float:
    """Watch pods until `want` are bound; the time of the last bind (perf_counter)."""
    bound: set[str] = set()
    last = time.perf_counter()
    deadline = last + timeout
    async with aiohttp.ClientSession() as session:
        while len(bound) < want and time.perf_counter() < deadline:
            async with session.get(f"{url}/api/v1/namespaces/{NAMESPACE}/pods") as resp:
                listing = await resp.json()
            for p in listing["items"]:
                if p["spec"].get("nodeName"):
                    bound.add(p["metadata"]["name"])
            rv = listing["metadata"]["resourceVersion"]
            params = {"watch": "1", "resourceVersion": rv, "timeoutSeconds": "30"}
            async with session.get(f"{url}/api/v1/namespaces/{NAMESPACE}/pods",
                                   params=params, timeout=aiohttp.ClientTimeout(total=None)
                                   ) as resp:
                async for line in resp.content:
                    event = orjson.loads(line)
                    obj = event["object"]
                    if event["type"] in ("ADDED", "MODIFIED") and obj["spec"].get("nodeName"):
                        if obj["metadata"]["name"] not in bound:
                            bound.add(obj["metadata"]["name"])
                            last = time.perf_counter()
                    if len(bound) >= want or time.perf_counter() > deadline:
                        break
    if len(bound) < want:
        raise RuntimeError(f"only {len(bound)} of {want} pods bound in {timeout:.0f} s")
    return last


def spawn_creator(url: str, start: int, count: int) -> subprocess.Popen[bytes]:
    """Start the creating client in a process of its own."""
    return subprocess.Popen([sys.executable, __file__, "--create", url, str(start), str(count)])


async def run_variant(name: str, nodes: int, devices: int, profile: str = "") -> None:
    """One variant on a fresh server: set up, place the first pods, measure the rest."""
    first, measured = VARIANTS[name]
    scale = nodes * devices / 5000
    first, measured = int(first * scale), int(measured * scale)
    server = benchlib.start_server(
        extra=("--components", COMPONENTS),
        python_args=("-m", "cProfile", "-o", f"{profile}.{name}") if profile else ())
    try:
        items = list(SETUP) + [("/api/v1/nodes", node(i)) for i in range(nodes)] + [
            ("/apis/resource.k8s.io/v1/resourceslices", resource_slice(i, devices))
            for i in range(nodes)]
        await _post_all(server.url, items[:len(SETUP)])
        await _post_all(server.url, items[len(SETUP):])
        if first:
            creator = spawn_creator(server.url, 0, first)
            await wait_bound(server.url, first, timeout=600)
            creator.wait()
        c0 = benchlib.cpu_seconds(server.pid)
        meter = benchlib.CpuMeter(server=server.pid)
        t0 = time.perf_counter()
        creator = spawn_creator(server.url, first, measured)
        last = await wait_bound(server.url, first + measured, timeout=600)
        creator.wait()
        seconds = last - t0
        shares = meter.text()
        own = benchlib.cpu_seconds(server.pid) - c0
        print(benchlib.rate_line(f"{name}: {measured} pods after {first} ({nodes} nodes)",
                                 measured / seconds, TARGET, " pods/s"))
        print(f"      server {own:.1f} s CPU ({own / measured * 1e3:.2f} ms per pod); {shares};"
              f" RSS {benchlib.rss_mb(server.pid):.0f} MB")
    finally:
        server.stop()


def main() -> None:
    """Run the chosen variants."""
    if len(sys.argv) > 1 and sys.argv[1] == "--create":
        create_pods(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS),
                        default=["empty", "half", "full"])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--profile", metavar="PREFIX", default="",
                        help="run the server under cProfile, writing PREFIX.<variant>")
    args = parser.parse_args()
    benchlib.header(f"scheduler: SchedulingWithResourceClaimTemplate, {args.nodes} nodes × "
                    f"{args.devices} devices")
    for name in args.variants:
        asyncio.run(run_variant(name, args.nodes, args.devices, args.profile))


if __name__ == "__main__":
    main()
