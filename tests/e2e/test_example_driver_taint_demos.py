"""The dra-example-driver's device-taint demos (device-taints-tolerations/, commit 31914ce)
through kubectl v1.37, their files applied unchanged, step by step as their READMEs run them
(tests/data/kubelet_emu/taint_demos.yaml): a NoExecute DeviceTaintRule evicts the pods whose
claims don't tolerate it (at once, or after their tolerationSeconds), a NoSchedule one keeps
running pods and refuses new ones, the rule's EvictionInProgress condition counts the
evictions.

The server is started as the READMEs start the cluster: kind-cluster-config.yaml's feature
gates with the READMEs' two, and `--runtime-config resource.k8s.io/v1beta2=true` (their
DeviceTaintRules are v1beta2; the rule is stored at v1 and read back at both). The whole
control plane runs in this process on a virtual clock (`tests.support.inprocess`) with one
emulated node of the `gpu` profile: the claim controller, the scheduler, the device taint
eviction controller and the node's kubelet (which stops the containers, emits `Killing` and
confirms each deletion) do their part, and 300 s pass at once. The drivers run in process
only: the gRPC plugin path is covered by the other demos (test_example_driver_demos.py), and
a second mode would double this module's time for the same evictions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.machinery.runtimeconfig import parse_runtime_config
from kubelet_emu.profile import load_profile
from kubelet_emu.settings import EmulatorSettings
from tests.support.inprocess import Session, serving
from tests.support.paths import ROOT

DATA = ROOT / "tests" / "data"
UPSTREAM = DATA / "dra-example-driver"
DEMOS = yaml.safe_load((DATA / "kubelet_emu" / "taint_demos.yaml").read_text())
NAMESPACE = "basic-resourceclaimtemplate"
"""The namespace every device-taint demo uses."""
RULE = "devicetaintrules.v1beta2.resource.k8s.io/example"
"""The demos' rule, at the version their files create it."""
Obj = dict[str, Any]


def server_gates() -> dict[str, bool]:
    """kind-cluster-config.yaml's feature gates and the ones the READMEs add."""
    kind = yaml.safe_load((UPSTREAM / "kind-cluster-config.yaml").read_text())
    return {**kind["featureGates"], **DEMOS["server"]["feature_gates"]}


@pytest.fixture
async def cluster(tmp_path: Path, kubectl_binary: str) -> AsyncIterator[Session]:
    """The whole control plane with one emulated node of the `gpu` profile, started with
    the demos' gates and runtime config."""
    emulator = EmulatorSettings(nodes=1, profile=load_profile("gpu"),
                                state_dir=tmp_path / "state")
    runtime = parse_runtime_config(DEMOS["server"]["runtime_config"]).overrides
    async with serving(tmp_path, kubectl_binary, "*", emulator, feature_gates=server_gates(),
                       runtime_config=runtime) as s:
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
    """The README's `kubectl get devicetaintrule -o yaml` (v1, the preferred version), and
    the same condition read at v1beta2."""
    await cluster("wait", f"--for=condition=EvictionInProgress={want['status']}",
                  "devicetaintrule/example", "--timeout=30s")
    for rule in [await cluster.json("devicetaintrule", "example"), await cluster.json(RULE)]:
        [condition] = [c for c in rule["status"]["conditions"]
                       if c["type"] == "EvictionInProgress"]
        assert (condition["reason"], condition["message"]) == (want["reason"],
                                                               want["message"])


class Demo:
    """One demo's folder of upstream files, and what its steps applied (for the cleanup)."""

    def __init__(self, cluster: Session, name: str) -> None:
        self.cluster = cluster
        self.folder = UPSTREAM / "examples" / "device-taints-tolerations" / name
        self.applied: list[tuple[str, str | None]] = []
        """(file, the text sent on stdin or None for the file itself), in order."""

    async def run(self, verb: str, step: Obj) -> None:
        """`kubectl apply|create -f FILE` (FILE's documents with `set` added, on stdin);
        a `refused` step expects kubectl's error."""
        path = self.folder / step[verb]
        text = None
        if "set" in step:
            docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
            text = yaml.safe_dump_all([{**step["set"], **d} for d in docs])
        args = (verb, "-f", "-" if text is not None else str(path))
        if "refused" in step:
            stderr = await self.cluster.fails(*args, input=text)
            assert step["refused"] in stderr, stderr
            return
        await self.cluster(*args, input=text)
        self.applied.append((str(path), text))

    async def cleanup(self) -> None:
        """The READMEs' cleanup: `kubectl delete -f` of each file, the last applied first
        (kubectl waits for what it deletes: the namespace with its pods and claims)."""
        for path, text in reversed(self.applied):
            await self.cluster("delete", "-f", "-" if text is not None else path,
                               "--ignore-not-found", "--timeout=60s", input=text)


async def run_step(demo: Demo, step: Obj) -> None:
    cluster = demo.cluster
    for verb in ("apply", "create"):
        if verb in step:
            await demo.run(verb, step)
    if step.get("advance"):
        await cluster.clock.advance(step["advance"])
    await check_gone(cluster, step.get("gone") or [])
    await check_running(cluster, step.get("running") or [])
    await check_pending(cluster, step.get("pending") or {})
    await check_events(cluster, step.get("events") or {})
    if "rule" in step:
        await check_rule(cluster, step["rule"])


DEMO_LIST = DEMOS["demos"]


@pytest.mark.parametrize("demo", DEMO_LIST, ids=[d["name"] for d in DEMO_LIST])
async def test_the_example_drivers_device_taint_demos(cluster: Session, demo: Obj,
                                                      tmp_path: Path) -> None:
    files = Demo(cluster, demo["name"])
    for step in demo["steps"]:
        await run_step(files, step)
    await files.cleanup()
    assert (await cluster.json("devicetaintrules"))["items"] == []
    assert (await cluster.json("resourceclaims", "-A"))["items"] == []
    assert not list((tmp_path / "state").rglob("metadata.json"))  # every claim unprepared
