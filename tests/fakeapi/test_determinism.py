"""Two runs of the same inputs on a virtual clock with the same seed give byte-identical logs:
every event's revision, type, resource, namespace, name, actor, time and object JSON.

The run is `tests.support.scripted_run` (the seeds' examples and the dra-example-driver's
quickstart applied, pods scheduled and running, a DeviceFault created and deleted, an hour of
virtual time, every component on). It is compared across two runs in one process (warm
caches), two fresh processes with different hash seeds (set and dict orders of strings
differ), and a durable run whose WAL file must hold the same records as the in-memory log
(the WAL's sync thread must not order anything on a virtual clock).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from fakeapi.storage.walformat import scan_file
from tests.support.paths import ROOT
from tests.support.scripted_run import FAULTS, first_difference, read_records, run

SEED = 7


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The log of one in-process run (its own event loop, its own state folder)."""
    return asyncio.run(run(SEED, tmp_path_factory.mktemp("reference")))


def heads(records: list[bytes]) -> list[dict[str, object]]:
    return [orjson.loads(r.partition(b"\n")[0]) for r in records]


def test_the_script_does_what_it_says(reference: list[bytes]) -> None:
    """The log holds what the comparison is about: components' writes, the fault's effect on
    a running pod and back, and an hour of leases."""
    events = heads(reference)
    actors = {e["a"] for e in events}
    assert {"system:serviceaccount:kube-system:kube-scheduler",
            "system:serviceaccount:kube-system:kubelet",
            "system:serviceaccount:kube-system:resource-claim-controller"} <= actors
    # the fault: created, its status (applied) written by the kubelet, deleted
    assert [e["t"] for e in events if e["res"] == FAULTS] == ["ADDED", "MODIFIED", "DELETED"]
    unhealthy = [i for i, r in enumerate(reference) if b'"health":"Unhealthy"' in r]
    assert unhealthy, "the fault never showed in a pod's status"
    pod = (events[unhealthy[-1]]["res"], events[unhealthy[-1]]["ns"], events[unhealthy[-1]]["n"])
    assert pod[0] == "pods"
    assert any((e["res"], e["ns"], e["n"]) == pod and b'"health":"Unhealthy"' not in r
               for e, r in zip(events[unhealthy[-1] + 1:], reference[unhealthy[-1] + 1:],
                               strict=True)), "the pod never healed"
    assert str(events[-1]["ts"]) >= "2026-01-01T01:00:00"


async def test_a_second_run_in_the_same_process_gives_the_same_log(
        reference: list[bytes], tmp_path: Path) -> None:
    again = await run(SEED, tmp_path)
    assert again == reference, first_difference(reference, again)


@pytest.mark.parametrize("hash_seed", ["1", "2"])
def test_a_fresh_process_gives_the_same_log(reference: list[bytes], tmp_path: Path,
                                            hash_seed: str) -> None:
    out = tmp_path / "log.bin"
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    subprocess.run([sys.executable, "-m", "tests.support.scripted_run", str(SEED), str(out)],
                   cwd=ROOT, env=env, check=True, timeout=300)
    theirs = read_records(out)
    assert theirs == reference, first_difference(reference, theirs)


async def test_a_durable_run_writes_the_same_log_to_its_wal(reference: list[bytes],
                                                            tmp_path: Path) -> None:
    durable = await run(SEED, tmp_path / "state", tmp_path / "data")
    assert durable == reference, first_difference(reference, durable)
    on_disk = scan_file(tmp_path / "data" / "events.log").records
    assert on_disk == reference, first_difference(reference, on_disk)


async def test_another_seed_gives_another_log(reference: list[bytes], tmp_path: Path) -> None:
    """The comparison can fail: other UIDs and names from the first generated one on."""
    other = await run(SEED + 1, tmp_path)
    difference = first_difference(reference, other)
    assert difference.startswith("revision ") and '"uid"' in difference
