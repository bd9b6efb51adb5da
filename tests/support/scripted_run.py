"""A scripted run of the whole control plane on a virtual clock, and its event log as bytes.

The inputs (what a CI recording holds): the seeds' DRA examples and the dra-example-driver's
quickstart demos applied one file after another, the demo pods scheduled and running, a
DeviceFault created and deleted, a pod deleted, then an hour of virtual time. Every
component runs (scheduler, controllers, two emulated nodes of the default profile). The log
comes back as one record per event (revision, type, resource, namespace, name, actor, time and
the object's JSON, as the WAL stores them), so two runs compare byte for byte.

`python -m tests.support.scripted_run SEED OUT` runs it in a fresh process (its own hash
seed) and writes the records to OUT.
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import yaml

from fakeapi.client import Client
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from kubelet_emu.settings import EmulatorSettings
from tests.support.demos import manifest
from tests.support.paths import DATA
from tests.support.seeds import SEED_GATE_MAP

Obj = dict[str, Any]
QUICKSTART = ("basic-resourceclaimtemplate", "basic-multiple-requests",
              "basic-shared-claim-across-containers", "basic-shared-claim-across-pods",
              "basic-resourceclaim-opaque-config", "initcontainer-shared-gpu", "cel-selector",
              "prioritized-alternatives")
"""The dra-example-driver's quickstart scenarios that the default profile's GPUs serve."""
USER = "kubernetes-admin"
"""Who applies the inputs (a cluster admin, as kubectl with the admin kubeconfig)."""
FAULT = {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
         "metadata": {"name": "gpu-0-ecc"},
         "spec": {"nodeName": "worker-0", "driver": "gpu.example.com", "device": "gpu-0",
                  "mode": "Unhealthy", "message": "ECC error count exceeded threshold"}}
FAULTS = "devicefaults.emulator.fakeapi.dev"


def input_files() -> list[list[Obj]]:
    """The documents to apply, one list per file: every seed example, then each demo."""
    files = [[d for d in yaml.safe_load_all(p.read_text()) if d]
             for p in sorted((DATA / "seeds").glob("*.yaml"))]
    scenarios = {s["name"]: s for s in yaml.safe_load(
        (DATA / "kubelet_emu" / "demos.yaml").read_text())}
    return files + [manifest(scenarios[name]) for name in QUICKSTART]


async def apply(plane: ControlPlane, client: Client, doc: Obj) -> None:
    """Create the object, or merge it into the one that exists (as `kubectl apply` does)."""
    kind = plane.cluster.kinds.by_gvk(doc["apiVersion"], doc["kind"])
    assert kind is not None, (doc["apiVersion"], doc["kind"])
    if kind.namespaced and not doc["metadata"].get("namespace"):
        doc = {**doc, "metadata": {**doc["metadata"], "namespace": "default"}}
    try:
        await client.create(kind.resource_id, doc)
    except ApiError as e:
        if e.code != 409:
            raise
        meta = doc["metadata"]
        await client.patch(kind.resource_id, meta["name"], doc,
                           namespace=meta.get("namespace", ""), patch_type="strategic")


def records(plane: ControlPlane) -> list[bytes]:
    """Every event of the log as the WAL records it."""
    events = list(plane.cluster.log)
    assert events and events[0].revision == 1, "the whole log must still be in memory"
    return [e.record() for e in events]


async def run(seed: int, state_dir: Path, data_dir: Path | None = None) -> list[bytes]:
    """Run the script on a fresh control plane (durable in `data_dir` when given); the
    log's records."""
    plane = ControlPlane(ClusterConfig(seed=seed, feature_gates=SEED_GATE_MAP,
                                       retention=10**7, retention_bytes=2**40,
                                       data_dir=data_dir),
                         clock=VirtualClock(), emulator=EmulatorSettings(state_dir=state_dir))
    await plane.start()
    try:
        await plane.settle()
        await drive(plane)
        return records(plane)
    finally:
        await plane.stop()


async def drive(plane: ControlPlane) -> None:
    """The inputs, each followed by settling (and virtual time where the script says)."""
    clock = plane.clock
    assert isinstance(clock, VirtualClock)
    client = plane.cluster.client(USER)
    for docs in input_files():
        for doc in docs:
            await apply(plane, client, doc)
        await clock.advance(1)
    await clock.advance(30)
    for name in QUICKSTART:
        for pod in await client.list("pods", name):
            assert pod["status"].get("phase") == "Running", (name, pod["metadata"]["name"],
                                                              pod["status"])
    await client.create(FAULTS, FAULT)
    await clock.advance(60)
    await client.delete(FAULTS, "gpu-0-ecc")
    await client.delete("pods", "pod1", QUICKSTART[0])
    await clock.advance(3600)


def first_difference(expected: list[bytes], actual: list[bytes]) -> str:
    """Where two logs part: the revision, both event heads and a diff of the objects ("" when
    they are the same)."""
    for revision, (a, b) in enumerate(itertools.zip_longest(expected, actual), 1):
        if a == b:
            continue
        if a is None or b is None:
            return f"revision {revision}: only one log has it: {(a or b or b'')[:300]!r}"
        (head_a, _, raw_a), (head_b, _, raw_b) = a.partition(b"\n"), b.partition(b"\n")
        diff = difflib.unified_diff(_pretty(raw_a), _pretty(raw_b), "expected", "actual", n=2,
                                    lineterm="")
        return "\n".join([f"revision {revision}:", f"  expected {head_a.decode()}",
                          f"  actual   {head_b.decode()}", *diff])
    return ""


def _pretty(raw: bytes) -> list[str]:
    return orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2).decode().splitlines()


def main(argv: list[str]) -> int:
    """`SEED OUT`: run in this process and write the records to OUT."""
    seed, out = int(argv[0]), Path(argv[1])
    with tempfile.TemporaryDirectory(prefix="scripted-run-") as tmp:
        recs = asyncio.run(run(seed, Path(tmp)))
    out.write_bytes(b"".join(len(r).to_bytes(4, "little") + r for r in recs))
    return 0


def read_records(path: Path) -> list[bytes]:
    """The records `main` wrote."""
    data, out, i = path.read_bytes(), [], 0
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "little")
        out.append(data[i + 4:i + 4 + n])
        i += 4 + n
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
