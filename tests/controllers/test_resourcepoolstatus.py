"""The ResourcePoolStatusRequest controller on a virtual clock: processed once with partition
and shareable summaries, frozen afterwards, retried while a pool is incomplete, deleted an
hour after completion or a day after creation, not started with its gate off, and a
restart mid-way processes a request once."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from controllers.resourcepoolstatus import ResourcePoolStatusRequestController
from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from tests.support import dra
from tests.support.dra import CLAIMS, RPSRS, SLICES
from tests.support.plane import running_plane, stall_calls

CONTROLLER = "resourcepoolstatusrequest-controller"
GATES = {"DRAResourcePoolStatus": True, "DRAPartitionableDevicesType": True}
POOLS = yaml.safe_load((Path(__file__).resolve().parent.parent / "data" / "controllers"
                        / "gpu-pools.yaml").read_text())


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane(CONTROLLER, seed=4, gates=GATES) as p:
        yield p


@pytest.fixture
def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("admin")


def request(name: str, **spec: Any) -> dra.Obj:
    return {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourcePoolStatusRequest",
            "metadata": {"name": name}, "spec": {"driver": dra.DRIVER, **spec}}


async def publish(admin: Client) -> None:
    """The pools of gpu-pools.yaml, and their claims allocated as the scheduler would."""
    for s in POOLS["slices"]:
        await admin.create(SLICES, s)
    for name, results in POOLS["claims"].items():
        await admin.create(CLAIMS, dra.claim(name))
        await dra.allocate(admin, name, results=results)


async def test_a_request_is_answered_once_with_both_summaries(plane: ControlPlane,
                                                             admin: Client) -> None:
    await publish(admin)
    await admin.create(RPSRS, request("check-gpu-partitions",
                                      defaultPartitionTypeAttribute="gpu.example.com/profile"))
    await plane.settle()
    done = await admin.get(RPSRS, "check-gpu-partitions")
    status = done["status"]
    assert {k: status[k] for k in ("poolCount", "pools")} == POOLS["expect"]
    [condition] = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) \
        == ("Complete", "True", "CalculationComplete", "Calculated status for 2 pools")
    assert condition["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    # processed once: later changes of slices and claims leave it as it was
    await admin.delete(CLAIMS, "half", "default")
    await admin.delete(SLICES, "worker-2-shared")
    await plane.settle()
    again = await admin.get(RPSRS, "check-gpu-partitions")
    assert again["metadata"]["resourceVersion"] == done["metadata"]["resourceVersion"]


async def test_no_pool_of_the_driver_completes_with_none(plane: ControlPlane,
                                                        admin: Client) -> None:
    await admin.create(RPSRS, {**request("check-gpus"), "spec": {"driver": "example.com/gpu"}})
    await plane.settle()
    status = (await admin.get(RPSRS, "check-gpus"))["status"]
    assert status["poolCount"] == 0 and "pools" not in status
    assert status["conditions"][0]["message"] == "Calculated status for 0 pools"


async def test_a_completed_request_is_frozen(plane: ControlPlane, admin: Client) -> None:
    await admin.create(RPSRS, request("frozen"))
    await plane.settle()
    with pytest.raises(ApiError) as e:
        await admin.patch(RPSRS, "frozen", {"metadata": {"labels": {"team": "gpu"}}})
    assert e.value.code == 422
    assert "may not be changed once status is set" in e.value.message
    with pytest.raises(ApiError) as e:
        await admin.patch(RPSRS, "frozen", {"status": {"poolCount": 3}}, subresource="status")
    assert e.value.code == 422 and "status: Forbidden: field is immutable" in e.value.message
    assert (await admin.get(RPSRS, "frozen"))["status"]["poolCount"] == 0


async def test_an_incomplete_pool_is_retried_then_reported(plane: ControlPlane,
                                                          admin: Client) -> None:
    first = POOLS["slices"][0]
    await admin.create(SLICES, first)  # one of worker-1's two slices
    await admin.create(RPSRS, request("early"))
    await plane.settle()
    assert (await admin.get(RPSRS, "early")).get("status") is None  # waiting for the driver
    assert isinstance(plane.clock, VirtualClock)
    await plane.clock.advance(5)  # the retries run out: reported as it is
    status = (await admin.get(RPSRS, "early"))["status"]
    [pool] = status["pools"]
    assert pool == {"driver": dra.DRIVER, "poolName": "worker-1", "nodeName": "worker-1",
                    "generation": 1, "validationError": (
                        "PoolIncomplete: pool gpu.example.com/worker-1 is incomplete: "
                        "observed 1/2 slices at generation 1")}
    assert status["conditions"][0]["message"] == "Calculated status for 1 pools (1 incomplete)"


async def test_a_pool_completed_during_the_retries_is_counted(plane: ControlPlane,
                                                             admin: Client) -> None:
    await admin.create(SLICES, POOLS["slices"][0])
    await admin.create(RPSRS, request("patient", poolName="worker-1"))
    await plane.settle()
    await admin.create(SLICES, POOLS["slices"][1])  # the driver finishes publishing
    assert isinstance(plane.clock, VirtualClock)
    await plane.clock.advance(5)
    [pool] = (await admin.get(RPSRS, "patient"))["status"]["pools"]
    assert pool["totalDevices"] == 3 and "validationError" not in pool


async def test_a_completed_request_is_deleted_an_hour_after_completion(
        plane: ControlPlane, admin: Client) -> None:
    assert isinstance(plane.clock, VirtualClock)
    await admin.create(RPSRS, request("old"))
    await plane.settle()
    await plane.clock.advance(1800)
    await admin.create(RPSRS, request("young"))
    await plane.settle()
    await plane.clock.advance(1799)
    assert await dra.get_or_none(admin, RPSRS, "old", "") is not None
    await plane.clock.advance(2)
    assert await dra.get_or_none(admin, RPSRS, "old", "") is None
    assert await dra.get_or_none(admin, RPSRS, "young", "") is not None
    await plane.clock.advance(1800)
    assert await dra.get_or_none(admin, RPSRS, "young", "") is None


async def test_a_pending_request_is_deleted_a_day_after_creation(tmp_path: Path) -> None:
    """Created while the controller was not running and found more than 24 h later: deleted
    unanswered; one 22 h old is answered (and goes an hour later)."""
    clock = VirtualClock()
    async with running_plane("", gates=GATES, data_dir=tmp_path, clock=clock) as before:
        await before.cluster.client("admin").create(RPSRS, request("forgotten"))
        await clock.advance(2 * 3600)
        await before.cluster.client("admin").create(RPSRS, request("recent"))
    later = VirtualClock(start=dt.datetime(2026, 1, 2, 0, 0, 1, tzinfo=dt.UTC))
    async with running_plane(CONTROLLER, gates=GATES, data_dir=tmp_path, clock=later) as after:
        admin = after.cluster.client("admin")
        assert await dra.get_or_none(admin, RPSRS, "forgotten", "") is None
        recent = await dra.get_or_none(admin, RPSRS, "recent", "")
        assert recent is not None and recent["status"]["conditions"][0]["type"] == "Complete"
        await later.advance(3600)
        assert await dra.get_or_none(admin, RPSRS, "recent", "") is None


async def test_without_the_gate_the_controller_does_not_run() -> None:
    async with running_plane(CONTROLLER) as off:
        assert CONTROLLER not in off.components
        assert [h.name for h in off.health() if CONTROLLER in h.name] == []


async def test_stopped_before_writing_a_restart_answers_once(tmp_path: Path) -> None:
    async with running_plane(CONTROLLER, gates=GATES, data_dir=tmp_path) as first:
        controller = first.components[CONTROLLER]
        assert isinstance(controller, ResourcePoolStatusRequestController)
        blocked = stall_calls(controller.client, "update")
        await first.cluster.client("admin").create(RPSRS, request("interrupted"))
        await blocked.wait()
    async with running_plane(CONTROLLER, gates=GATES, data_dir=tmp_path) as second:
        status = (await second.cluster.client("admin").get(RPSRS, "interrupted"))["status"]
        assert [c["type"] for c in status["conditions"]] == ["Complete"]
