"""The ResourceClaim controller on a virtual clock: template claims for Pods and PodGroups,
reservations, deallocation, missing claims and templates, restarts with no duplicates.

The controller runs without the scheduler and the kubelet: the tests allocate claims as an
admin client (what the scheduler writes) and create Pods already bound to a node (which the
controller reserves for, as upstream does for pods scheduled behind the scheduler's back).
No kubelet confirms a bound Pod's graceful deletion, so the tests delete those with grace 0,
as the kubelet finally does. The extended-resource tests run the scheduler too: the special
claim is its own, made when it binds the pod.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

import fakeapi.kube.resourceclaim as podclaims
from controllers.resourceclaim import ResourceClaimController
from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from tests.support import dra
from tests.support.dra import CLAIMS, POD_GROUPS, TEMPLATES
from tests.support.plane import running_plane, stall_calls
from tests.support.scheduling import node

CONTROLLERS = "resource-claim-controller,garbage-collector"


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane(CONTROLLERS, seed=3, gates=dra.WORKLOAD_GATES) as p:
        yield p


@pytest.fixture
def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("admin")


async def test_a_template_claim_is_created_owned_recorded_and_reused(
        plane: ControlPlane, admin: Client) -> None:
    await admin.create(TEMPLATES, dra.template("gpu-template", team="ml"))
    await admin.create("pods", dra.pod("worker", claims=[dra.from_template("gpu",
                                                                           "gpu-template")]))
    await plane.settle()
    [(name, generated)] = (await dra.claims_of(admin)).items()
    pod = await admin.get("pods", "worker", "default")
    assert name.startswith("worker-gpu-") and len(name) == len("worker-gpu-") + 5
    meta = generated["metadata"]
    assert meta["annotations"] == {podclaims.POD_CLAIM_ANNOTATION: "gpu"}
    assert meta["labels"] == {"team": "ml"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "worker",
                                        "uid": pod["metadata"]["uid"], "controller": True,
                                        "blockOwnerDeletion": True}]
    assert generated["spec"] == dra.claim_spec() | generated["spec"]
    assert dra.statuses(pod) == {"gpu": name}
    # touching the pod (and its claim) again makes no second claim
    await admin.patch("pods", "worker", {"metadata": {"labels": {"x": "y"}}},
                      namespace="default")
    await admin.patch(CLAIMS, name, {"metadata": {"labels": {"x": "y"}}}, namespace="default")
    await plane.settle()
    assert list(await dra.claims_of(admin)) == [name]


async def test_the_claim_goes_with_its_pod(plane: ControlPlane, admin: Client) -> None:
    await admin.create(TEMPLATES, dra.template("t"))
    await admin.create("pods", dra.pod("p", claims=[dra.from_template("gpu", "t")]))
    await plane.settle()
    assert len(await dra.claims_of(admin)) == 1
    await admin.delete("pods", "p", "default")
    await plane.settle()
    assert await dra.claims_of(admin) == {}


async def test_an_accidentally_deleted_claim_is_made_again(plane: ControlPlane,
                                                           admin: Client) -> None:
    await admin.create(TEMPLATES, dra.template("t"))
    await admin.create("pods", dra.pod("p", claims=[dra.from_template("gpu", "t")]))
    await plane.settle()
    [first] = await dra.claims_of(admin)
    await admin.delete(CLAIMS, first, "default")
    await plane.settle()
    [second] = await dra.claims_of(admin)
    assert second != first
    assert dra.statuses(await admin.get("pods", "p", "default")) == {"gpu": second}


async def test_a_claim_not_owned_by_the_pod_is_not_taken(plane: ControlPlane,
                                                         admin: Client) -> None:
    """A user's claim carrying the annotation is no generated claim of the pod."""
    impostor = dra.claim("impostor")
    impostor["metadata"]["annotations"] = {podclaims.POD_CLAIM_ANNOTATION: "gpu"}
    await admin.create(CLAIMS, impostor)
    await admin.create(TEMPLATES, dra.template("t"))
    await admin.create("pods", dra.pod("p", claims=[dra.from_template("gpu", "t")]))
    await plane.settle()
    claims = await dra.claims_of(admin)
    assert len(claims) == 2
    assert dra.statuses(await admin.get("pods", "p", "default"))["gpu"] != "impostor"


@pytest.mark.parametrize("pod_name,claim_name,expected", [
    ("p", "gpu", "p-gpu-"),
    ("a" * 40, "b" * 30, "a" * 31 + "-" + "b" * 23),  # 72 long: both cut to 57/72
    ("pod-" + "x" * 60, "c", "pod-" + "x" * 50 + "-"),  # the 1-letter claim name cut to 0
])
def test_generated_names_keep_room_for_the_random_suffix(pod_name: str, claim_name: str,
                                                         expected: str) -> None:
    assert podclaims.generate_name(pod_name, claim_name) == expected
    assert len(podclaims.generate_name(pod_name, claim_name)) <= 57


# ----- the seed's training-group example ------------------------------------------------------


async def _training_group(admin: Client) -> None:
    """The seed's PodGroup and Pod, with the claims and templates they name."""
    await admin.create("namespaces", {"metadata": {"name": "some-ns"}})
    for name in ("my-pod-claim", "my-pg-claim"):
        await admin.create(CLAIMS, dra.claim(name, "some-ns"))
    for name in ("my-pod-template", "my-pg-template"):
        await admin.create(TEMPLATES, dra.template(name, "some-ns"))
    await admin.create(POD_GROUPS, dra.pod_group("training-group", "some-ns", claims=[
        dra.by_name("pg-claim", "my-pg-claim"),
        dra.from_template("pg-claim-template", "my-pg-template")]))
    await admin.create("pods", dra.pod("training-group-pod-1", "some-ns", group="training-group",
                                       node="worker-1", claims=[
        dra.by_name("pod-claim", "my-pod-claim"),
        dra.from_template("pod-claim-template", "my-pod-template"),
        dra.by_name("pg-claim", "my-pg-claim"),
        dra.from_template("pg-claim-template", "my-pg-template")]))


async def test_the_training_group_example_ends_with_the_seed_s_reservations(
        plane: ControlPlane, admin: Client) -> None:
    await _training_group(admin)
    await plane.settle()
    group = await admin.get(POD_GROUPS, "training-group", "some-ns")
    pod = await admin.get("pods", "training-group-pod-1", "some-ns")
    claims = await dra.claims_of(admin, "some-ns")
    group_claim = dra.statuses(group)["pg-claim-template"]
    assert group_claim is not None and group_claim.startswith("training-group-pg-claim-template-")
    pod_claim = dra.statuses(pod)["pod-claim-template"]
    assert pod_claim is not None and pod_claim.startswith(
        "training-group-pod-1-pod-claim-template-")
    # one claim for the whole group, shared by the pod; one of the pod's own
    assert dra.statuses(pod) == {"pod-claim-template": pod_claim,
                                 "pg-claim-template": group_claim}
    assert sorted(claims) == sorted(["my-pod-claim", "my-pg-claim", pod_claim, group_claim])
    assert claims[group_claim]["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert claims[pod_claim]["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    for name in claims:  # what the scheduler does: allocate (the pod is bound already)
        await dra.allocate(admin, name, "some-ns")
    await plane.settle()
    claims = await dra.claims_of(admin, "some-ns")
    assert {n: dra.reserved(c) for n, c in claims.items()} == {
        "my-pod-claim": [("pods", "training-group-pod-1")],
        pod_claim: [("pods", "training-group-pod-1")],
        "my-pg-claim": [("podgroups", "training-group")],
        group_claim: [("podgroups", "training-group")],
    }
    assert claims[group_claim]["status"]["reservedFor"][0]["apiGroup"] == "scheduling.k8s.io"

    # the pod goes: its claims are freed, the group's stay allocated for the empty group
    await admin.delete("pods", "training-group-pod-1", "some-ns", grace_period_seconds=0)
    await plane.settle()
    claims = await dra.claims_of(admin, "some-ns")
    assert sorted(claims) == sorted(["my-pod-claim", "my-pg-claim", group_claim])
    assert "allocation" not in claims["my-pod-claim"]["status"]
    assert claims["my-pod-claim"]["metadata"].get("finalizers") in (None, [])
    for name in ("my-pg-claim", group_claim):
        assert dra.reserved(claims[name]) == [("podgroups", "training-group")]
        assert claims[name]["status"]["allocation"]

    # the group goes: its generated claim is deleted, the user's claim deallocated
    await admin.delete(POD_GROUPS, "training-group", "some-ns")
    await plane.settle()
    claims = await dra.claims_of(admin, "some-ns")
    assert sorted(claims) == sorted(["my-pod-claim", "my-pg-claim"])
    assert claims["my-pg-claim"]["status"] == {}


async def test_more_than_256_pods_share_the_group_s_claim(plane: ControlPlane,
                                                          admin: Client) -> None:
    await admin.create(TEMPLATES, dra.template("shared"))
    await admin.create(POD_GROUPS, dra.pod_group("big", claims=[
        dra.from_template("gpus", "shared")]))
    await plane.settle()
    [name] = await dra.claims_of(admin)
    await dra.allocate(admin, name)
    for i in range(300):
        await admin.create("pods", dra.pod(f"member-{i}", group="big", node=f"node-{i % 7}",
                                           claims=[dra.from_template("gpus", "shared")]))
    await plane.settle()
    claims = await dra.claims_of(admin)
    assert list(claims) == [name]
    assert dra.reserved(claims[name]) == [("podgroups", "big")]
    pods = await admin.list("pods", "default")
    assert {dra.statuses(p)["gpus"] for p in pods} == {name}


async def test_a_group_claim_waits_for_its_pod_group(plane: ControlPlane, admin: Client) -> None:
    """A pod naming a PodGroup not created yet makes no per-pod claim for the group's."""
    await admin.create(TEMPLATES, dra.template("t"))
    await admin.create("pods", dra.pod("early", group="late", claims=[
        dra.from_template("gpus", "t")]))
    await plane.settle()
    assert await dra.claims_of(admin) == {}
    await admin.create(POD_GROUPS, dra.pod_group("late", claims=[dra.from_template("gpus", "t")]))
    await plane.settle()
    [name] = await dra.claims_of(admin)
    assert name.startswith("late-gpus-")
    assert dra.statuses(await admin.get("pods", "early", "default")) == {"gpus": name}


async def test_without_the_gate_a_group_s_template_claim_makes_no_claim(tmp_path: Path) -> None:
    """Same as upstream: objects written while DRAWorkloadResourceClaims was on, controller
    restarted with it off: the pod's own template claim is made, the group's not at all."""
    async with running_plane("", gates=dra.WORKLOAD_GATES, data_dir=tmp_path) as before:
        admin = before.cluster.client("admin")
        await _training_group(admin)
    async with running_plane(CONTROLLERS, gates={"GenericWorkload": True},
                             data_dir=tmp_path) as after:
        admin = after.cluster.client("admin")
        claims = await dra.claims_of(admin, "some-ns")
        pod = await admin.get("pods", "training-group-pod-1", "some-ns")
        [own] = [n for n in claims if n not in ("my-pod-claim", "my-pg-claim")]
        assert own.startswith("training-group-pod-1-pod-claim-template-")
        assert dra.statuses(pod) == {"pod-claim-template": own}
        group = await admin.get(POD_GROUPS, "training-group", "some-ns")
        assert dra.statuses(group) == {}


# ----- missing claims and templates -----------------------------------------------------------


@pytest.mark.parametrize("entry,create,reason,message", [
    (dra.from_template("gpu", "later"), (TEMPLATES, dra.template("later")),
     "FailedResourceClaimCreation",
     'PodResourceClaim gpu: resource claim template "later": '
     'resourceclaimtemplate.resource.k8s.io "later" not found'),
    (dra.by_name("gpu", "later"), (CLAIMS, dra.claim("later")), "ResourceClaimNotFound",
     'PodResourceClaim gpu: resourceclaim.resource.k8s.io "later" not found'),
])
async def test_a_missing_claim_or_template_keeps_the_pod_pending_with_a_reason(
        plane: ControlPlane, admin: Client, entry: dra.Obj, create: tuple[str, dra.Obj],
        reason: str, message: str) -> None:
    await admin.create("pods", dra.pod("waiting", claims=[entry]))
    await plane.settle()
    pod = await admin.get("pods", "waiting", "default")
    assert pod["status"]["phase"] == "Pending"
    [condition] = pod["status"]["conditions"]
    assert condition["type"] == "PodScheduled" and condition["status"] == "False"
    assert condition["reason"] == "Unschedulable"
    assert condition["message"] == message.removeprefix("PodResourceClaim gpu: ")
    [event] = await dra.events_about(admin, "waiting")
    assert (event["type"], event["reason"], event["message"]) == ("Warning", reason, message)
    assert event["source"] == {"component": "resource_claim"}
    assert event["involvedObject"]["uid"] == pod["metadata"]["uid"]
    # settling again reports nothing new
    await admin.patch("pods", "waiting", {"metadata": {"labels": {"a": "b"}}},
                      namespace="default")
    await plane.settle()
    assert [e["count"] for e in await dra.events_about(admin, "waiting")] == [1]
    # once it exists, the condition goes (the scheduler owns PodScheduled from then on)
    await admin.create(*create)
    await plane.settle()
    pod = await admin.get("pods", "waiting", "default")
    assert not pod["status"].get("conditions")
    assert len(await dra.claims_of(admin)) == 1


# ----- reservations and deallocation --------------------------------------------------------


async def test_a_finished_pod_s_reservation_goes_and_its_claim_with_it(
        plane: ControlPlane, admin: Client) -> None:
    await admin.create(TEMPLATES, dra.template("t"))
    await admin.create("pods", dra.pod("job", node="worker-1",
                                       claims=[dra.from_template("gpu", "t")]))
    await plane.settle()
    [name] = await dra.claims_of(admin)
    await dra.allocate(admin, name)
    await plane.settle()
    assert dra.reserved((await dra.claims_of(admin))[name]) == [("pods", "job")]
    pod = await admin.get("pods", "job", "default")
    pod["status"]["phase"] = "Succeeded"
    await admin.update("pods", pod, subresource="status")
    await plane.settle()
    assert await dra.claims_of(admin) == {}  # deallocated, unprotected, deleted
    assert await dra.get_or_none(admin, "pods", "job") is not None


async def test_a_shared_claim_keeps_its_allocation_while_one_consumer_remains(
        plane: ControlPlane, admin: Client) -> None:
    await admin.create(CLAIMS, dra.claim("shared"))
    pods = [await admin.create("pods", dra.pod(f"p{i}", node="worker-1",
                                                claims=[dra.by_name("gpu", "shared")]))
            for i in range(2)]
    other = {"apiGroup": "example.com", "resource": "things", "name": "t", "uid": "u-1"}
    await dra.allocate(admin, "shared",
                       reserved_for=[*(dra.consumer(p) for p in pods), other])
    await admin.delete("pods", "p0", "default", grace_period_seconds=0)
    await plane.settle()
    shared = await admin.get(CLAIMS, "shared", "default")
    assert dra.reserved(shared) == [("pods", "p1"), ("things", "t")]
    assert shared["status"]["allocation"]
    assert shared["metadata"]["finalizers"] == [dra.PROTECTION]


async def test_the_last_consumer_gone_deallocates(plane: ControlPlane, admin: Client) -> None:
    await admin.create(CLAIMS, dra.claim("mine"))
    pod = await admin.create("pods", dra.pod("p", node="worker-1",
                                              claims=[dra.by_name("gpu", "mine")]))
    allocated = await dra.allocate(admin, "mine", reserved_for=[dra.consumer(pod)])
    allocated["status"]["devices"] = [{"driver": dra.DRIVER, "pool": "worker-1",
                                       "device": "gpu-0", "data": {"healthy": True}}]
    await admin.update(CLAIMS, allocated, subresource="status")  # what the driver reports
    await admin.delete("pods", "p", "default", grace_period_seconds=0)
    await plane.settle()
    mine = await admin.get(CLAIMS, "mine", "default")
    assert mine["status"] == {}  # allocation and the driver's device status both gone
    assert not mine["metadata"].get("finalizers")


async def test_a_terminating_pod_keeps_its_claim_until_it_is_gone(plane: ControlPlane,
                                                                   admin: Client) -> None:
    """Same as upstream's isPodDone: a bound pod being deleted gracefully may still run, so
    its reservation stays until the pod is gone (its kubelet deletes it with grace 0)."""
    await admin.create(CLAIMS, dra.claim("mine"))
    pod = await admin.create("pods", dra.pod("p", node="worker-1",
                                              claims=[dra.by_name("gpu", "mine")]))
    await dra.allocate(admin, "mine", reserved_for=[dra.consumer(pod)])
    terminating = await admin.delete("pods", "p", "default")
    assert terminating["metadata"]["deletionGracePeriodSeconds"] == 30
    await plane.settle()
    mine = await admin.get(CLAIMS, "mine", "default")
    assert dra.reserved(mine) == [("pods", "p")] and mine["status"]["allocation"]
    await admin.delete("pods", "p", "default", grace_period_seconds=0)
    await plane.settle()
    assert (await admin.get(CLAIMS, "mine", "default"))["status"] == {}


async def test_a_replaced_pod_loses_the_old_one_s_reservation(plane: ControlPlane,
                                                             admin: Client) -> None:
    """A reservation names a uid: a new pod under the same name is not its consumer."""
    await admin.create(CLAIMS, dra.claim("mine"))
    ghost = {"resource": "pods", "name": "p", "uid": "00000000-0000-4000-8000-000000000001"}
    await admin.create("pods", dra.pod("p", claims=[dra.by_name("gpu", "mine")]))
    await dra.allocate(admin, "mine", reserved_for=[ghost])
    await plane.settle()
    mine = await admin.get(CLAIMS, "mine", "default")
    assert "reservedFor" not in mine["status"] and "allocation" not in mine["status"]


async def test_deleting_an_unreserved_allocated_claim_frees_it(plane: ControlPlane,
                                                              admin: Client) -> None:
    await admin.create(CLAIMS, dra.claim("idle"))
    await dra.allocate(admin, "idle")
    await admin.delete(CLAIMS, "idle", "default")
    await plane.settle()
    assert await dra.get_or_none(admin, CLAIMS, "idle") is None


# ----- the special claim of extended resources ----------------------------------------------

EXTENDED = "scheduler,resource-claim-controller,namespace-controller"
"""The scheduler makes the special claim; no garbage collector, so what is released is the
claim controller's own work (upstream re-queues `status.extendedResourceClaimStatus`)."""
GPU = "example.com/gpu"
EXT_NS = "gpu-test"


async def _delete_namespace(plane: ControlPlane, admin: Client) -> None:
    """`kubectl delete -f` of the example: the namespace first; the namespace controller
    deletes the bound pod gracefully, and its kubelet then deletes it with grace 0."""
    await admin.delete("namespaces", EXT_NS)
    await plane.settle()
    await admin.delete("pods", "pod0", EXT_NS, grace_period_seconds=0)


async def _delete_pod(plane: ControlPlane, admin: Client) -> None:
    await admin.delete("pods", "pod0", EXT_NS, grace_period_seconds=0)


async def _succeed(plane: ControlPlane, admin: Client) -> None:
    pod = await admin.get("pods", "pod0", EXT_NS)
    pod["status"]["phase"] = "Succeeded"
    await admin.update("pods", pod, subresource="status")


@pytest.mark.parametrize("end,namespace_left,claim_left", [
    (_delete_namespace, False, False),  # the claim freed, then gone with its namespace
    (_delete_pod, True, True),  # freed; deleting it is the garbage collector's
    (_succeed, True, False),  # freed and deleted, as a done pod's generated claim
], ids=["namespace-first", "pod-deleted", "pod-succeeded"])
async def test_the_special_claim_of_extended_resources_is_freed_when_its_pod_ends(
        end: Callable[[ControlPlane, Client], Awaitable[None]], namespace_left: bool,
        claim_left: bool) -> None:
    async with running_plane(EXTENDED, seed=3) as plane:
        admin = plane.cluster.client("admin")
        await admin.create("nodes", node("worker-1"))
        await admin.create(dra.SLICES, dra.node_slice("worker-1", devices=2))
        await admin.create("deviceclasses.resource.k8s.io", dra.extended_class(GPU))
        await admin.create("namespaces", {"metadata": {"name": EXT_NS}})
        await admin.create("pods", dra.requesting(dra.pod("pod0", EXT_NS), GPU, 1))
        await plane.settle()
        pod = await admin.get("pods", "pod0", EXT_NS)
        name = pod["status"]["extendedResourceClaimStatus"]["resourceClaimName"]
        special = await admin.get(CLAIMS, name, EXT_NS)
        assert dra.reserved(special) == [("pods", "pod0")]
        assert special["metadata"]["finalizers"] == [dra.PROTECTION]
        await end(plane, admin)
        await plane.settle()
        left = await dra.claims_of(admin, EXT_NS)
        for claim in left.values():
            assert claim["status"] == {}  # unreserved and deallocated
            assert not claim["metadata"].get("finalizers")
        assert list(left) == ([name] if claim_left else [])
        ns = await dra.get_or_none(admin, "namespaces", EXT_NS, "")
        assert (ns is not None) == namespace_left


# ----- restarts ---------------------------------------------------------------------------


async def test_stopped_between_claim_and_pod_status_a_restart_makes_no_duplicate(
        tmp_path: Path) -> None:
    """The controller stops right after creating the claims, before recording them; the
    restarted one finds them by owner and annotation."""
    async with running_plane(CONTROLLERS, data_dir=tmp_path) as first:
        admin = first.cluster.client("admin")
        controller = first.components["resource-claim-controller"]
        assert isinstance(controller, ResourceClaimController)
        blocked = stall_calls(controller.client, "patch")
        await admin.create(TEMPLATES, dra.template("t"))
        await admin.create("pods", dra.pod("p", claims=[dra.from_template("a", "t"),
                                                        dra.from_template("b", "t")]))
        await blocked.wait()
        made = await dra.claims_of(admin)
        assert len(made) == 2
    async with running_plane(CONTROLLERS, data_dir=tmp_path) as second:
        admin = second.cluster.client("admin")
        assert await dra.claims_of(admin) == made
        pod = await admin.get("pods", "p", "default")
        assert Counter(dra.statuses(pod).values()) == Counter(made.keys())


async def test_a_burst_interrupted_mid_way_converges_after_restart(tmp_path: Path) -> None:
    async with running_plane("", data_dir=tmp_path) as before:
        admin = before.cluster.client("admin")
        await admin.create(TEMPLATES, dra.template("t"))
        await asyncio.gather(*(admin.create("pods", dra.pod(
            f"p{i}", claims=[dra.from_template("gpu", "t")])) for i in range(60)))
    # the WAL's real group commit (writers wait for the sync thread) lets the test stop the
    # controller mid-burst; a deterministic clock syncs inline and nothing would yield
    async with running_plane(CONTROLLERS, data_dir=tmp_path, settle=False,
                             clock=VirtualClock(deterministic=False)) as first:
        admin = first.cluster.client("admin")
        for _ in range(10_000):  # let part of the burst through, then stop
            await asyncio.sleep(0)
            if len(await admin.list(CLAIMS, "default", copy=False)) >= 20:
                break
        done = len(await admin.list(CLAIMS, "default", copy=False))
        assert 0 < done < 60
    async with running_plane(CONTROLLERS, data_dir=tmp_path) as second:
        admin = second.cluster.client("admin")
        claims = await dra.claims_of(admin)
        pods = await admin.list("pods", "default")
        assert len(claims) == 60
        assert Counter(dra.statuses(p)["gpu"] for p in pods) == Counter(claims.keys())
