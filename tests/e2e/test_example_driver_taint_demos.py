"""The dra-example-driver's device-taint demos (device-taints-tolerations/, commit 31914ce)
through kubectl v1.37, step by step as their READMEs run them (tests/data/kubelet_emu/
taint_demos.yaml): a NoExecute DeviceTaintRule evicts the pods whose claims don't tolerate
it (at once, or after their tolerationSeconds), a NoSchedule one keeps running pods and
refuses new ones, the rule's EvictionInProgress condition counts the evictions.

The whole control plane runs in this process on a virtual clock (`tests.support.inprocess`)
with one emulated node of the `gpu` profile: the claim controller, the scheduler, the device
taint eviction controller and the node's kubelet (which stops the containers, emits
`Killing` and confirms each deletion) do their part, and 300 s pass at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_emu.profile import load_profile
from kubelet_emu.settings import DRIVER_MODES, EmulatorSettings
from tests.support.demos import objects
from tests.support.inprocess import Session, serving
from tests.support.paths import ROOT

DEMOS = yaml.safe_load((ROOT / "tests" / "data" / "kubelet_emu" / "taint_demos.yaml")
                       .read_text())
NAMESPACE = "basic-resourceclaimtemplate"
"""The namespace every device-taint demo uses."""
DRIVER = "gpu.example.com"
Obj = dict[str, Any]


@pytest.fixture(params=DRIVER_MODES)
async def cluster(tmp_path: Path, kubectl_binary: str,
                  request: pytest.FixtureRequest) -> AsyncIterator[Session]:
    """The whole control plane with one emulated node of the `gpu` profile, its driver in
    process or as a gRPC plugin."""
    emulator = EmulatorSettings(nodes=1, profile=load_profile("gpu"), drivers=request.param,
                                state_dir=tmp_path / "state")
    async with serving(tmp_path, kubectl_binary, "*", emulator) as s:
        await s("wait", "--for=condition=Ready", "node/worker-0", "--timeout=30s")
        yield s


async def check_running(cluster: Session, pods: list[str]) -> None:
    for name in pods:
        await cluster("wait", "--for=condition=Ready", f"pod/{name}", "-n", NAMESPACE,
                      "--timeout=30s")
        pod = await cluster.json("pod", name, "-n", NAMESPACE)
        assert "deletionTimestamp" not in pod["metadata"], name
        assert pod["status"]["phase"] == "Running", name


async def check_gone(cluster: Session, pods: list[str]) -> None:
    for name in pods:
        await cluster("wait", "--for=delete", f"pod/{name}", "-n", NAMESPACE, "--timeout=30s")


async def check_pending(cluster: Session, pods: dict[str, str]) -> None:
    await cluster.plane.settle()
    for name, reason in pods.items():
        pod = await cluster.json("pod", name, "-n", NAMESPACE)
        assert "nodeName" not in pod["spec"], name
        [scheduled] = [c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert scheduled["status"] == "False" and reason in scheduled["message"], scheduled


async def check_events(cluster: Session, wanted: dict[str, list[list[str]]]) -> None:
    for name, pairs in wanted.items():
        listed = await cluster.json("events", "-n", NAMESPACE, "--field-selector",
                                    f"involvedObject.name={name}")
        seen = iter([e["reason"], e["message"]] for e in sorted(
            listed["items"], key=lambda e: int(e["metadata"]["resourceVersion"])))
        missing = [pair for pair in pairs if pair not in seen]
        assert missing == [], (name, listed["items"])


async def check_rule(cluster: Session, want: dict[str, str]) -> None:
    await cluster("wait", f"--for=condition=EvictionInProgress={want['status']}",
                  "devicetaintrule/example", "--timeout=30s")
    rule = await cluster.json("devicetaintrule", "example")
    [condition] = [c for c in rule["status"]["conditions"] if c["type"] == "EvictionInProgress"]
    assert (condition["reason"], condition["message"]) == (want["reason"], want["message"])


async def run_step(cluster: Session, step: Obj, first: bool) -> None:
    docs = objects(step.get("apply") or [], NAMESPACE, DRIVER)
    if first:
        docs.insert(0, {"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": NAMESPACE}})
    if docs:
        await cluster("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    if step.get("advance"):
        await cluster.clock.advance(step["advance"])
    await check_gone(cluster, step.get("gone") or [])
    await check_running(cluster, step.get("running") or [])
    await check_pending(cluster, step.get("pending") or {})
    await check_events(cluster, step.get("events") or {})
    if "rule" in step:
        await check_rule(cluster, step["rule"])


@pytest.mark.parametrize("demo", DEMOS, ids=[d["name"] for d in DEMOS])
async def test_the_example_drivers_device_taint_demos(cluster: Session, demo: Obj,
                                                      tmp_path: Path) -> None:
    for i, step in enumerate(demo["steps"]):
        await run_step(cluster, step, first=i == 0)
    # cleanup as the READMEs do it: the rule, then the namespace with its pods and claims
    await cluster("delete", "devicetaintrule", "example", "--timeout=30s")
    await cluster("delete", "namespace", NAMESPACE, "--timeout=60s")
    assert (await cluster.json("resourceclaims", "-A"))["items"] == []
    assert not list((tmp_path / "state").rglob("metadata.json"))  # every claim unprepared
