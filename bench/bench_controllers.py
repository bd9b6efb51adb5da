"""The DRA controllers' throughput, in process (issue 9 targets).

Run with `.venv/bin/python bench/bench_controllers.py [--pods N] [--pools N] [--devices N]`.

- **Template claims**: `--pods` pods, each with one template claim, are created in a burst
  while the resource-claim controller runs; measured from the first create until every pod
  has its claim created and recorded in its status. Target ≥ 1,000 claims/s. Also printed:
  the same when the controller starts after the burst (its own rate, with no creates
  competing for the CPU).
- **Pool status**: `--pools` pools of `--devices` devices (a quarter of them allocated,
  some tainted, one partitionable pool and one shareable pool), then one
  ResourcePoolStatusRequest for the driver, from create to the written status. Target
  ≤ 1 s. Also printed: the pure computation (`controllers.poolstatus.compute`) alone.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from benchlib import CpuMeter, header, max_line, rate_line

from controllers import poolstatus
from fakeapi.cli import process
from fakeapi.client import Client
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane

CLAIMS = "resourceclaims.resource.k8s.io"
TEMPLATES = "resourceclaimtemplates.resource.k8s.io"
SLICES = "resourceslices.resource.k8s.io"
RPSRS = "resourcepoolstatusrequests.resource.k8s.io"
DRIVER = "gpu.example.com"
CLAIMS_TARGET = 1000.0
POOL_STATUS_TARGET = 1.0


def pod(i: int) -> dict[str, Any]:
    """A pod with one template claim."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]}}


TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "gpu", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


async def _recorded(admin: Client) -> int:
    """Pods whose claim is created and recorded."""
    return sum(1 for p in await admin.list("pods", "default", copy=False)
               if (p.get("status") or {}).get("resourceClaimStatuses"))


async def template_claims(pods: int, *, start_after: bool) -> tuple[float, float, str]:
    """Claims per second for a burst of pods (controller running, or started after), per
    second of this process's CPU, and the load."""
    plane = ControlPlane(ClusterConfig(seed=1), components="resource-claim-controller")
    admin = plane.cluster.client("admin")
    await admin.create(TEMPLATES, TEMPLATE)
    if not start_after:
        await plane.start()
        await plane.settle()
    meter = CpuMeter(bench=None)
    t0 = time.perf_counter()
    for i in range(pods):
        await admin.create("pods", pod(i))
    if start_after:
        t0 = time.perf_counter()
        meter = CpuMeter(bench=None)
        await plane.start()
    await plane.settle()
    elapsed = time.perf_counter() - t0
    load = meter.text()
    cpu = meter.last("bench") * elapsed
    done = await _recorded(admin)
    claims = len(await admin.list(CLAIMS, "default", copy=False))
    await plane.stop()
    assert done == pods and claims == pods, (done, claims)
    return pods / elapsed, pods / cpu, load


def _slices(pools: int, devices: int) -> list[dict[str, Any]]:
    """One node-local slice per pool; pool 0 partitionable, pool 1 shareable, every tenth
    device tainted NoSchedule."""
    out = []
    for p in range(pools):
        devs: list[dict[str, Any]] = []
        for d in range(devices):
            dev: dict[str, Any] = {"name": f"gpu-{d}", "attributes": {
                f"{DRIVER}/index": {"int": d}, f"{DRIVER}/model": {"string": "LATEST"}}}
            if d % 10 == 9:
                dev["taints"] = [{"key": f"{DRIVER}/unhealthy", "effect": "NoSchedule"}]
            if p == 1:
                dev.update(allowMultipleAllocations=True,
                           capacity={"memory": {"value": "40Gi"}})
            devs.append(dev)
        spec: dict[str, Any] = {"driver": DRIVER, "nodeName": f"node-{p}",
                                "pool": {"name": f"node-{p}", "generation": 1,
                                         "resourceSliceCount": 1},
                                "devices": devs}
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"node-{p}"}, "spec": spec})
    return out


async def pool_status(pools: int, devices: int) -> tuple[float, float, str, int]:
    """Seconds from request create to written status; the computation alone; load; pools."""
    gates = {"DRAResourcePoolStatus": True, "DRAPartitionableDevicesType": True}
    plane = ControlPlane(ClusterConfig(seed=2, feature_gates=gates),
                         components="resourcepoolstatusrequest-controller")
    admin = plane.cluster.client("admin")
    for s in _slices(pools, devices):
        await admin.create(SLICES, s)
    per_claim = 8
    for p in range(pools):  # a quarter of the devices allocated, 8 per claim
        for c in range(devices // 4 // per_claim):
            name = f"c-{p}-{c}"
            claim = await admin.create(CLAIMS, {
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                    "deviceClassName": DRIVER, "count": per_claim}}]}}})
            claim["status"] = {"allocation": {"devices": {"results": [
                {"request": "gpu", "driver": DRIVER, "pool": f"node-{p}",
                 "device": f"gpu-{c * per_claim + k}"} for k in range(per_claim)]}}}
            await admin.update(CLAIMS, claim, subresource="status")
    await plane.start()
    await plane.settle()
    meter = CpuMeter(bench=None)
    t0 = time.perf_counter()
    await admin.create(RPSRS, {"apiVersion": "resource.k8s.io/v1alpha3",
                               "kind": "ResourcePoolStatusRequest",
                               "metadata": {"name": "all"},
                               "spec": {"driver": DRIVER, "limit": 1000}})
    await plane.settle()
    elapsed = time.perf_counter() - t0
    load = meter.text()
    status = (await admin.get(RPSRS, "all"))["status"]
    slices = await admin.list(SLICES, copy=False)
    claims = await admin.list(CLAIMS, "default", copy=False)
    t1 = time.perf_counter()
    poolstatus.compute(poolstatus.Inputs(spec={"driver": DRIVER, "limit": 1000},
                                         slices=slices, claims=claims))
    pure = time.perf_counter() - t1
    await plane.stop()
    return elapsed, pure, load, len(status.get("pools") or [])


async def main(args: argparse.Namespace) -> None:
    header("bench_controllers: template claims and pool status, in process")
    process.tune()  # as `fakeapi serve` tunes its process
    for start_after in (False, True):
        rate, per_cpu, load = await template_claims(args.pods, start_after=start_after)
        label = ("claims/s, controller started after the burst" if start_after
                 else f"claims/s, {args.pods} pods in a burst")
        print(rate_line(label, rate, CLAIMS_TARGET) + f"  ({load})")
        print(rate_line("  per second of this process's CPU", per_cpu, CLAIMS_TARGET))
    elapsed, pure, load, listed = await pool_status(args.pools, args.devices)
    print(max_line(f"pool status, {args.pools} pools x {args.devices} devices",
                   elapsed, POOL_STATUS_TARGET, " s") + f"  ({load})")
    print(max_line("  of which the computation alone", pure, POOL_STATUS_TARGET, " s")
          + f"  ({listed} pools listed)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--pools", type=int, default=500)
    parser.add_argument("--devices", type=int, default=64)
    asyncio.run(main(parser.parse_args()))
