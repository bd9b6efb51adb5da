"""The kubelet's controllers: each has its own work queue, shown in `/metrics` under the
kubelet component, and quiescence waits for every one of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fakeapi.machinery.clock import VirtualClock
from tests.support.emulated_nodes import emulated_plane, kubelet_of

PARTS = ("nodes", "plugins", "status", "leases", "slices", "classes", "pods", "faults", "binding")
NOWHERE: dict[str, Any] = {
    "nodes": "nowhere", "plugins": ("nowhere", "x.sock"), "status": "nowhere",
    "leases": "nowhere", "slices": ("nowhere", "x"),
    "classes": "classes", "pods": "default/nowhere", "faults": "nowhere",
    "binding": ("nowhere", "x", "default/nowhere")}
"""A key of each controller that names nothing the kubelet runs."""


def queue_metrics(text: str) -> dict[tuple[str, str], int]:
    """(metric, queue) → value of the kubelet component's work-queue metrics."""
    out = {}
    for m in re.finditer(r'^fakeapi_workqueue_(\w+)\{component="kubelet",queue="([^"]+)"\} '
                         r'(\d+)$', text, re.M):
        out[(m[1], m[2])] = int(m[3])
    return out


async def test_each_controller_has_its_own_queue_in_the_metrics(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = plane.cluster.client("test-admin")
        await c.create("pods", {"metadata": {"name": "p", "namespace": "default"}, "spec": {
            "nodeName": "worker-0", "containers": [{"name": "c", "image": "busybox",
                                                    "command": ["sleep", "3600"]}]}})
        await plane.settle()
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(25)  # two Lease renewals
        metrics = queue_metrics(plane.metrics_text())
        queues = [f"kubelet/{p}" for p in PARTS]
        assert sorted({q for _, q in metrics}) == sorted(queues)
        assert all(metrics[("depth", q)] == 0 for q in queues), "settled: nothing waits"
        # one registration, one pool published, the classes installed, the pod started and
        # its status written; the Lease created and renewed twice
        assert metrics[("reconciles_total", "kubelet/nodes")] >= 1
        assert metrics[("reconciles_total", "kubelet/slices")] >= 2  # gpu and nic pools
        assert metrics[("reconciles_total", "kubelet/classes")] >= 1
        assert metrics[("reconciles_total", "kubelet/pods")] >= 1
        assert metrics[("reconciles_total", "kubelet/leases")] >= 3
        assert metrics[("reconciles_total", "kubelet/binding")] == 0
        assert all(metrics[("retries_total", q)] == 0 for q in queues)


async def test_quiescence_waits_for_every_controllers_queue(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        kubelet = kubelet_of(plane)
        assert [c.name for c in kubelet.controllers] == [f"kubelet/{p}" for p in PARTS]
        before = queue_metrics(plane.metrics_text())
        for part, controller in zip(PARTS, kubelet.controllers, strict=True):
            assert not plane.busy()
            controller.queue.add(NOWHERE[part])
            assert plane.busy(), f"a key queued for {part} is work"
            await plane.settle()
            assert not plane.busy()
            after = queue_metrics(plane.metrics_text())
            assert after[("reconciles_total", f"kubelet/{part}")] == \
                before[("reconciles_total", f"kubelet/{part}")] + 1
