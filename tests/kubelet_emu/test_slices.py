"""ResourceSlice publishing through the real API: golden files (profile in, slices out),
pools split past the per-slice limits, and the driver's controller behaviour upstream's
resourceslice controller has: manual edits are overwritten, deleted slices come back, the
pool generation goes up on every change."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from kubelet_emu.profile import shipped_profiles
from tests.support.emulated_nodes import SLICES, emulated_plane, kubelet_of
from tests.support.paths import ROOT

GOLDEN = ROOT / "tests" / "data" / "kubelet_emu" / "golden"
UPDATE = os.environ.get("FAKEAPI_UPDATE_GOLDEN") == "1"
"""Set to 1 to rewrite the golden files from what is published now."""


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


def normalized(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Slices without what the server draws (names' random suffix, uid, times, versions)."""
    out = []
    for s in items:
        meta = s["metadata"]
        out.append({"generateName": meta["generateName"],
                    "owner": [[o["kind"], o["name"]] for o in meta["ownerReferences"]],
                    "spec": s["spec"]})
    return sorted(out, key=lambda s: yaml.safe_dump(s["spec"])[:400])


@pytest.mark.parametrize("profile", shipped_profiles())
async def test_golden_slices_of_each_profile(tmp_path: Path, profile: str) -> None:
    gates = {"DRANodeAllocatableResources": True} if profile == "cpu" else None
    async with emulated_plane(tmp_path, nodes=1, profile=profile, gates=gates) as plane:
        got = normalized(await admin(plane).list(SLICES))
    path = GOLDEN / f"{profile}.yaml"
    if UPDATE:
        path.write_text(f"# ResourceSlices of node worker-0 with --node-profile {profile} "
                        "(tests/kubelet_emu/test_slices.py; FAKEAPI_UPDATE_GOLDEN=1 rewrites)\n"
                        + yaml.safe_dump_all(got, sort_keys=True))
    want = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert got == want


async def test_a_large_pool_is_split_into_slices_within_the_limits(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, profile="large") as plane:
        gpu = [s for s in await admin(plane).list(SLICES)
               if s["spec"]["driver"] == "gpu.example.com"]
    counters = [s for s in gpu if "sharedCounters" in s["spec"]]
    devices = [s for s in gpu if "devices" in s["spec"]]
    # 32 counter sets, 8 per slice; 160 devices consuming counters, 64 per slice
    assert sorted(len(s["spec"]["sharedCounters"]) for s in counters) == [8, 8, 8, 8]
    assert sorted(len(s["spec"]["devices"]) for s in devices) == [32, 64, 64]
    assert {s["spec"]["pool"]["resourceSliceCount"] for s in gpu} == {7}
    assert {s["spec"]["pool"]["generation"] for s in gpu} == {1}


async def test_manual_edits_are_overwritten_and_bump_the_generation(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, profile="gpu") as plane:
        c = admin(plane)
        [published] = await c.list(SLICES)
        original = published["spec"]["devices"]
        edited = dict(published)
        edited["spec"] = {**published["spec"], "devices": original[:2]}
        await c.update(SLICES, edited)
        await plane.settle()
        [repaired] = await c.list(SLICES)
        assert repaired["spec"]["devices"] == original
        assert repaired["spec"]["pool"]["generation"] == 2
        assert repaired["metadata"]["name"] == published["metadata"]["name"]

        await c.delete(SLICES, repaired["metadata"]["name"])
        await plane.settle()
        [recreated] = await c.list(SLICES)
        assert recreated["metadata"]["name"] != published["metadata"]["name"]
        assert recreated["spec"]["devices"] == original
        assert recreated["spec"]["pool"]["generation"] == 1  # a new pool starts over

        # a slice someone else creates for the driver's pool is taken over and removed
        await c.create(SLICES, {"metadata": {"name": "intruder"}, "spec": {
            "driver": "gpu.example.com", "nodeName": "worker-0",
            "pool": {"name": "worker-0", "generation": 5, "resourceSliceCount": 1},
            "devices": [{"name": "fake"}]}})
        await plane.settle()
        after = await c.list(SLICES)
        assert len(after) == 1 and after[0]["spec"]["devices"] == original
        assert after[0]["spec"]["pool"]["generation"] == 6


async def test_slices_are_listed_by_driver_field_selector(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=2) as plane:
        c = admin(plane)
        gpu = await c.list(SLICES, field_selector="spec.driver=gpu.example.com")
        assert sorted(s["spec"]["nodeName"] for s in gpu) == ["worker-0", "worker-1"]
        assert all(len(s["spec"]["devices"]) == 8 for s in gpu)


@pytest.mark.parametrize(("disabled", "published"), [
    ((), {"worker-0": ["gpu.example.com", "nic.example.com"],
          "worker-1": ["gpu.example.com", "nic.example.com"]}),
    (("gpu.example.com",), {"worker-0": ["nic.example.com"], "worker-1": ["nic.example.com"]}),
    (("gpu.example.com@worker-1",), {"worker-0": ["gpu.example.com", "nic.example.com"],
                                     "worker-1": ["nic.example.com"]}),
], ids=["none", "everywhere", "on one node"])
async def test_a_disabled_driver_leaves_its_place_free(
        tmp_path: Path, disabled: tuple[str, ...], published: dict[str, list[str]]) -> None:
    async with emulated_plane(tmp_path, nodes=2, disabled=disabled) as plane:
        slices = await admin(plane).list(SLICES)
        classes = await admin(plane).list("deviceclasses.resource.k8s.io")
        kubelet = kubelet_of(plane)
        plugins = {n: sorted(s.plugins) for n, s in kubelet.nodes.by_name.items()}
    got: dict[str, list[str]] = {}
    for s in slices:
        got.setdefault(s["spec"]["nodeName"], []).append(s["spec"]["driver"])
    assert {n: sorted(d) for n, d in got.items()} == published
    assert plugins == published  # nothing registered under its name: a plugin may take it
    # the driver's DeviceClass stays installed (another node, or your plugin, serves it)
    assert {c["metadata"]["name"] for c in classes} >= {"gpu.example.com", "nic.example.com"}
