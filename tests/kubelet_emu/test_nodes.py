"""Emulated nodes on a virtual clock: registration, Leases renewed every 10 s, DeviceClasses
installed, adoption of Nodes that clients create (and the opt-outs), deleted nodes."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.timestamps import parse_time
from kubelet_emu import nodes
from kubelet_emu.settings import PROCESS_ANNOTATION
from tests.support.emulated_nodes import (
    CLASSES,
    LEASES,
    SLICES,
    condition,
    emulated_plane,
    present_condition,
)


def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test-admin")


async def test_configured_nodes_register_ready_with_a_kubelets_status(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=3) as plane:
        nodes = await admin(plane).list("nodes")
        assert [n["metadata"]["name"] for n in nodes] == ["worker-0", "worker-1", "worker-2"]
        n = nodes[1]
        assert n["metadata"]["labels"]["kubernetes.io/hostname"] == "worker-1"
        assert n["metadata"]["annotations"]["emulator.fakeapi.dev/profile"] == "default"
        ready = condition(n, "Ready")
        assert ready is not None and ready["status"] == "True"
        assert ready["reason"] == "KubeletReady"
        assert {c["type"]: c["status"] for c in n["status"]["conditions"]} == {
            "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False",
            "Ready": "True"}
        assert n["status"]["allocatable"] == {"cpu": "64", "memory": "512Gi", "pods": "110",
                                              "ephemeral-storage": "1Ti"}
        assert n["status"]["addresses"] == [{"type": "InternalIP", "address": "172.16.0.3"},
                                            {"type": "Hostname", "address": "worker-1"}]
        assert n["status"]["nodeInfo"]["kubeletVersion"] == "v1.37.0"
        assert n["spec"]["podCIDR"] == "10.64.1.0/24"
        # registered by the kubelet's own node-bound identity
        assert n["metadata"]["managedFields"][0]["manager"] == "kubelet"


async def test_leases_are_renewed_every_ten_seconds_on_the_clock(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1) as plane:
        c = admin(plane)
        lease = await c.get(LEASES, "worker-0", "kube-node-lease")
        assert lease["spec"]["holderIdentity"] == "worker-0"
        assert lease["spec"]["leaseDurationSeconds"] == 40
        assert lease["metadata"]["ownerReferences"][0]["kind"] == "Node"
        start = parse_time(lease["spec"]["renewTime"])
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(35)
        lease = await c.get(LEASES, "worker-0", "kube-node-lease")
        assert (parse_time(lease["spec"]["renewTime"]) - start).total_seconds() == 30


async def test_device_classes_are_installed_once_and_left_alone(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path) as plane:
        c = admin(plane)
        gpu = await c.get(CLASSES, "gpu.example.com")
        assert gpu["spec"]["selectors"] == [
            {"cel": {"expression": "device.driver == 'gpu.example.com'"}}]
        assert {d["metadata"]["name"] for d in await c.list(CLASSES)} == {
            "gpu.example.com", "nic.example.com"}
        await c.delete(CLASSES, "nic.example.com")
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(60)
        assert {d["metadata"]["name"] for d in await c.list(CLASSES)} == {"gpu.example.com"}


async def test_nodes_clients_create_are_adopted_keeping_their_resources(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=0) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "mine", "labels": {"team": "a"}},
                                 "status": {"capacity": {"cpu": "4", "memory": "8Gi",
                                                         "pods": "20"}}})
        await c.create("nodes", {"metadata": {"name": "gpus", "annotations": {
            "emulator.fakeapi.dev/profile": "gpu"}}})
        await plane.settle()
        mine = await c.get("nodes", "mine")
        assert mine["metadata"]["labels"] == {"team": "a"}
        assert mine["status"]["capacity"] == {"cpu": "4", "memory": "8Gi", "pods": "20"}
        assert mine["status"]["allocatable"] == mine["status"]["capacity"]
        assert present_condition(mine, "Ready")["status"] == "True"
        assert mine["spec"]["podCIDR"]
        assert await c.get(LEASES, "mine", "kube-node-lease")
        # no devices unless the node names a profile
        pools = {(s["spec"]["nodeName"], s["spec"]["driver"]) for s in await c.list(SLICES)}
        assert pools == {("gpus", "gpu.example.com")}
        assert (await c.get("nodes", "gpus"))["status"]["capacity"]["cpu"] == "32"


async def test_opted_out_nodes_and_no_adoption_are_left_alone(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=0) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "bare", "labels": {
            "emulator.fakeapi.dev/managed": "false"}}})
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(30)
        assert (await c.get("nodes", "bare")).get("status", {}).get("conditions") is None
        assert await c.list(LEASES, "kube-node-lease") == []
    async with emulated_plane(tmp_path, nodes=1, adopt=False) as plane:
        c = admin(plane)
        await c.create("nodes", {"metadata": {"name": "other"}})
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(30)
        assert "conditions" not in ((await c.get("nodes", "other")).get("status") or {})
        assert [x["metadata"]["name"] for x in await c.list(LEASES, "kube-node-lease")] == [
            "worker-0"]


async def test_a_deleted_node_is_not_registered_again_and_its_slices_go(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=2,
                              components="kubelet,garbage-collector") as plane:
        c = admin(plane)
        await c.delete("nodes", "worker-1")
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(30)
        assert [n["metadata"]["name"] for n in await c.list("nodes")] == ["worker-0"]
        assert {s["spec"]["nodeName"] for s in await c.list(SLICES)} == {"worker-0"}


async def test_a_restart_on_the_same_log_keeps_the_nodes(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=2) as plane:
        c = admin(plane)
        before = {n["metadata"]["name"]: n["metadata"]["uid"] for n in await c.list("nodes")}
        slices = sorted(s["metadata"]["name"] for s in await c.list(SLICES))
        kubelet = plane.components["kubelet"]
        await plane.supervisor.stop()
        plane.supervisor.start()
        await plane.settle()
        assert isinstance(plane.clock, VirtualClock)
        await plane.clock.advance(15)
        assert {n["metadata"]["name"]: n["metadata"]["uid"]
                for n in await c.list("nodes")} == before
        assert sorted(s["metadata"]["name"] for s in await c.list(SLICES)) == slices
        assert plane.components["kubelet"] is kubelet


@pytest.mark.parametrize(("kubelet", "before", "ip", "port"), [
    (None, None, "172.16.0.5", 10250),
    (None, "10.9.9.9", "10.9.9.9", 10250),  # an adopted node keeps the addresses it has
    (("127.0.0.1", 41234), None, "127.0.0.1", 41234),
    (("127.0.0.1", 41234), "10.9.9.9", "127.0.0.1", 41234),  # a listening kubelet says where
])
def test_a_node_advertises_where_its_kubelet_api_listens(
        kubelet: tuple[str, int] | None, before: str | None, ip: str, port: int) -> None:
    where = nodes.Addressing(3, kubelet)
    node = {"metadata": {"name": "n"}, "status": {"addresses": [
        {"type": "InternalIP", "address": before}]} if before else {}}
    status = nodes.adopted_status(node, None, where, "2026-01-01T00:00:00Z", {"cpu": "1"})
    assert status["addresses"][0] == {"type": "InternalIP", "address": ip}
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": port}}
    assert where.internal_ip == (kubelet[0] if kubelet else "172.16.0.5")


NOW = dt.datetime(2026, 1, 1, 12, 0, 0, tzinfo=dt.UTC)


def _lease(process: str | None, renewed: str | None, seconds: int = 40) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "w"}
    if process is not None:
        meta["annotations"] = {PROCESS_ANNOTATION: process}
    spec: dict[str, Any] = {"holderIdentity": "w", "leaseDurationSeconds": seconds}
    if renewed is not None:
        spec["renewTime"] = renewed
    return {"metadata": meta, "spec": spec}


@pytest.mark.parametrize(("lease", "owner"), [
    (None, ""),
    (_lease("other", "2026-01-01T11:59:50.000000Z"), "other"),
    (_lease("me", "2026-01-01T11:59:50.000000Z"), ""),
    (_lease(None, "2026-01-01T11:59:50.000000Z"), ""),
    (_lease("other", "2026-01-01T11:59:20.000000Z"), ""),
    (_lease("other", "2026-01-01T11:59:20.000000Z", seconds=60), "other"),
    (_lease("other", None), ""),
], ids=["no lease", "another's, renewed in time", "this process's", "in process (no name)",
        "another's, expired", "another's, a longer duration", "never renewed"])
def test_a_node_lease_names_the_other_process_only_while_it_holds(
        lease: dict[str, Any] | None, owner: str) -> None:
    assert nodes.lease_owner(lease, "me", NOW) == owner
