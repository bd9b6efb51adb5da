"""The scheduling loop on an in-process cluster with a virtual clock: binding, the reasons a
pod stays Pending (condition and Event), node resources, and DRA allocation, reservation,
PostFilter deallocation and binding conditions. Each step waits for the work to settle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.errors import ApiError
from scheduler.cycle import SchedulingCycle
from scheduler.scheduler import Scheduler
from tests.support.plane import running_plane
from tests.support.scheduling import (
    CLAIMS,
    DRIVER,
    NS,
    claim,
    condition,
    device_class,
    events,
    gpu_slice,
    gpus,
    node,
    pod,
    scheduled,
)

Obj = dict[str, Any]


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane("scheduler", seed=3) as p:
        yield p


@pytest.fixture
def admin(plane: ControlPlane) -> Client:
    return plane.cluster.client("test")






def scheduled_condition(p: Obj) -> Obj:
    """The pod's PodScheduled condition, which the test expects it to have."""
    found = condition(p)
    assert found is not None, f"no PodScheduled condition in {p.get('status')}"
    return found



async def test_a_pod_is_bound_with_an_event(plane: ControlPlane, admin: Client) -> None:
    await admin.create("nodes", node("n1"))
    await admin.create("pods", pod("web"))
    p = await scheduled(plane, admin, "web")
    assert p["spec"]["nodeName"] == "n1"
    assert scheduled_condition(p)["status"] == "True"
    assert await events(admin, "web") == [
        ("Normal", "Scheduled", "Successfully assigned default/web to n1")]


async def test_no_nodes_then_a_node(plane: ControlPlane, admin: Client) -> None:
    await admin.create("pods", pod("web"))
    p = await scheduled(plane, admin, "web")
    assert "nodeName" not in p["spec"]
    assert condition(p) == {"type": "PodScheduled", "status": "False",
                            "reason": "Unschedulable",
                            "message": "no nodes available to schedule pods",
                            "lastTransitionTime": scheduled_condition(p)["lastTransitionTime"]}
    assert await events(admin, "web") == [
        ("Warning", "FailedScheduling", "no nodes available to schedule pods")]
    await admin.create("nodes", node("n1"))
    assert (await scheduled(plane, admin, "web"))["spec"]["nodeName"] == "n1"


async def test_another_schedulers_pod_is_left_alone(plane: ControlPlane, admin: Client) -> None:
    await admin.create("nodes", node("n1"))
    await admin.create("pods", pod("mine", schedulerName="my-scheduler"))
    p = await scheduled(plane, admin, "mine")
    assert "nodeName" not in p["spec"] and condition(p) is None
    assert await events(admin, "mine") == []


async def test_reasons_and_a_label_change(plane: ControlPlane, admin: Client) -> None:
    await admin.create("nodes", node("n1", labels={"zone": "b"}))
    await admin.create("nodes", {**node("n2"), "spec": {"taints": [
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]}})
    await admin.create("pods", pod("web", nodeSelector={"zone": "a"}))
    p = await scheduled(plane, admin, "web")
    assert scheduled_condition(p)["message"] == (
        "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {dedicated: ml}. preemption: 0/2 nodes are "
        "available: 2 Preemption is not helpful for scheduling.")
    await admin.patch("nodes", "n1", {"metadata": {"labels": {"zone": "a"}}})
    assert (await scheduled(plane, admin, "web"))["spec"]["nodeName"] == "n1"


async def test_cpu_is_accounted_and_freed(plane: ControlPlane, admin: Client) -> None:
    await admin.create("nodes", node("n1", cpu="1"))
    await admin.create("pods", pod("a", cpu="600m"))
    await admin.create("pods", pod("b", cpu="600m"))
    a, b = await scheduled(plane, admin, "a"), await admin.get("pods", "b", NS)
    assert a["spec"]["nodeName"] == "n1" and "nodeName" not in b["spec"]
    assert scheduled_condition(b)["message"] == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.")
    await admin.delete("pods", "a", NS, grace_period_seconds=0)  # no kubelet to confirm
    assert (await scheduled(plane, admin, "b"))["spec"]["nodeName"] == "n1"


async def test_pods_spread_over_nodes(plane: ControlPlane, admin: Client) -> None:
    for n in ("n1", "n2", "n3"):
        await admin.create("nodes", node(n))
    for i in range(6):
        await admin.create("pods", pod(f"p{i}", cpu="500m"))
    await plane.settle()
    placed = [p["spec"]["nodeName"] for p in await admin.list("pods", NS)]
    assert sorted(placed.count(n) for n in ("n1", "n2", "n3")) == [2, 2, 2]


# ----- DRA ---------------------------------------------------------------------------------



async def test_a_claim_is_allocated_reserved_and_the_pod_bound(plane: ControlPlane,
                                                               admin: Client) -> None:
    await gpus(admin, "n1", "n2", devices=2)
    await admin.create(CLAIMS, claim("c"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    p = await scheduled(plane, admin, "p")
    c = await admin.get(CLAIMS, "c", NS)
    node_name = p["spec"]["nodeName"]
    allocation = c["status"]["allocation"]
    assert allocation["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": node_name, "device": "gpu-0"}]
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    assert allocation["allocationTimestamp"]
    assert c["status"]["reservedFor"] == [
        {"resource": "pods", "name": "p", "uid": p["metadata"]["uid"]}]
    assert c["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]


async def test_a_shared_claim_pins_the_second_pod_to_its_node(plane: ControlPlane,
                                                              admin: Client) -> None:
    await gpus(admin, "n1", "n2", "n3")
    await admin.create(CLAIMS, claim("shared"))
    ref = [{"name": "gpu", "resourceClaimName": "shared"}]
    await admin.create("pods", pod("a", claims=ref))
    first = (await scheduled(plane, admin, "a"))["spec"]["nodeName"]
    for name in ("b", "c"):
        await admin.create("pods", pod(name, claims=ref))
    await plane.settle()
    assert {p["spec"]["nodeName"] for p in await admin.list("pods", NS)} == {first}
    reserved = (await admin.get(CLAIMS, "shared", NS))["status"]["reservedFor"]
    assert sorted(r["name"] for r in reserved) == ["a", "b", "c"]


async def test_devices_run_out(plane: ControlPlane, admin: Client) -> None:
    await gpus(admin, "n1")
    for name in ("c1", "c2"):
        await admin.create(CLAIMS, claim(name))
    await admin.create("pods", pod("a", claims=[{"name": "gpu", "resourceClaimName": "c1"}]))
    await admin.create("pods", pod("b", claims=[{"name": "gpu", "resourceClaimName": "c2"}]))
    await plane.settle()
    bound = {p["metadata"]["name"]: p["spec"].get("nodeName")
             for p in await admin.list("pods", NS)}
    assert sorted(map(str, bound.values())) == ["None", "n1"]
    waiting = "a" if bound["a"] is None else "b"
    p = await admin.get("pods", waiting, NS)
    assert scheduled_condition(p)["message"] == (
        "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.")
    assert ("Warning", "FailedScheduling", scheduled_condition(p)["message"]) in await events(
        admin, waiting)


async def test_a_missing_class_is_named(plane: ControlPlane, admin: Client) -> None:
    await gpus(admin, "n1")
    await admin.create(CLAIMS, claim("c", class_name="nope"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    p = await scheduled(plane, admin, "p")
    assert scheduled_condition(p)["message"] == (
        "0/1 nodes are available: request gpu: device class nope does not exist. no new "
        "claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not "
        "helpful for scheduling.")
    await admin.create("deviceclasses.resource.k8s.io", device_class("nope"))
    assert (await scheduled(plane, admin, "p"))["spec"]["nodeName"] == "n1"


async def test_a_template_claim_waits_silently_for_its_claim(plane: ControlPlane,
                                                             admin: Client) -> None:
    await gpus(admin, "n1")
    await admin.create("pods", pod("p", claims=[{"name": "gpu",
                                                 "resourceClaimTemplateName": "t"}]))
    p = await scheduled(plane, admin, "p")
    assert condition(p) is None and await events(admin, "p") == []  # upstream's PreEnqueue
    made = await admin.create(CLAIMS, {**claim("p-gpu-abcde"), "metadata": {
        "name": "p-gpu-abcde", "namespace": NS, "ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": "p", "uid": p["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]}})
    await admin.patch("pods", "p", {"status": {"resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": made["metadata"]["name"]}]}}, namespace=NS,
        subresource="status")
    assert (await scheduled(plane, admin, "p"))["spec"]["nodeName"] == "n1"


async def test_postfilter_deallocates_an_unreserved_claim_elsewhere(plane: ControlPlane,
                                                                    admin: Client) -> None:
    await gpus(admin, "n1", "n2")
    await admin.create(CLAIMS, claim("c"))
    await admin.create("pods", pod("a", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    first = (await scheduled(plane, admin, "a"))["spec"]["nodeName"]
    other = "n2" if first == "n1" else "n1"
    await admin.delete("pods", "a", NS, grace_period_seconds=0)  # no kubelet to confirm
    c = await admin.get(CLAIMS, "c", NS)  # no claim controller: unreserve by hand
    c["status"]["reservedFor"] = []
    await admin.update(CLAIMS, c, subresource="status")
    await admin.create("pods", pod("b", nodeSelector={"kubernetes.io/hostname": other},
                                   claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    p = await scheduled(plane, admin, "b")
    assert p["spec"]["nodeName"] == other  # deallocated, then allocated again on `other`
    assert (await admin.get(CLAIMS, "c", NS))["status"]["allocation"]["devices"]["results"][
        0]["pool"] == other
    messages = [m for _, reason, m in await events(admin, "b") if reason == "FailedScheduling"]
    assert messages and "deallocation of ResourceClaim completed" in messages[0]


async def test_binding_conditions_are_waited_for(plane: ControlPlane, admin: Client) -> None:
    await gpus(admin, "n1", bindingConditions=["Attached"],
               bindingFailureConditions=["AttachFailed"])
    await admin.create(CLAIMS, claim("c"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    p = await scheduled(plane, admin, "p")
    assert "nodeName" not in p["spec"]
    c = await admin.get(CLAIMS, "c", NS)
    result = c["status"]["allocation"]["devices"]["results"][0]
    assert result["bindingConditions"] == ["Attached"]
    c["status"]["devices"] = [{"driver": DRIVER, "pool": "n1", "device": "gpu-0", "conditions": [
        {"type": "Attached", "status": "True", "reason": "Done", "message": "",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    await admin.update(CLAIMS, c, subresource="status")
    assert (await scheduled(plane, admin, "p"))["spec"]["nodeName"] == "n1"


async def test_a_binding_timeout_deallocates_and_retries(plane: ControlPlane,
                                                        admin: Client) -> None:
    clock = plane.clock
    assert isinstance(clock, VirtualClock)
    await gpus(admin, "n1", bindingConditions=["Attached"],
               bindingFailureConditions=["AttachFailed"])
    await admin.create(CLAIMS, claim("c"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    await plane.settle()
    first = (await admin.get(CLAIMS, "c", NS))["status"]["allocation"]["allocationTimestamp"]
    await clock.advance(599)
    assert ("Warning", "FailedScheduling", TIMEOUT) not in await events(admin, "p")
    await clock.advance(2)
    assert ("Warning", "FailedScheduling", TIMEOUT) in await events(admin, "p")
    p = await admin.get("pods", "p", NS)
    assert "nodeName" not in p["spec"]
    assert scheduled_condition(p)["reason"] == "SchedulerError"
    again = (await admin.get(CLAIMS, "c", NS))["status"]["allocation"]["allocationTimestamp"]
    assert again > first  # deallocated, then allocated again by the retry


async def test_a_binding_failure_condition_fails_at_once(plane: ControlPlane,
                                                         admin: Client) -> None:
    await gpus(admin, "n1", bindingConditions=["Attached"],
               bindingFailureConditions=["AttachFailed"])
    await admin.create(CLAIMS, claim("c"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu", "resourceClaimName": "c"}]))
    await plane.settle()
    c = await admin.get(CLAIMS, "c", NS)
    c["status"]["devices"] = [{"driver": DRIVER, "pool": "n1", "device": "gpu-0", "conditions": [
        {"type": "AttachFailed", "status": "True", "reason": "Broken", "message": "",
         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    await admin.update(CLAIMS, c, subresource="status")
    await plane.settle()
    assert ("Warning", "FailedScheduling",
            "claim default/c: a binding failure condition is true") in await events(admin, "p")


TIMEOUT = "binding timeout: the device binding conditions did not become true"


# ----- why is my pod pending? ----------------------------------------------------------------


def explain(plane: ControlPlane, name: str) -> Obj:
    scheduler = plane.components["scheduler"]
    assert isinstance(scheduler, Scheduler)
    return scheduler.explain(NS, name)


async def test_explain_names_each_nodes_first_filter_and_device_causes(
        plane: ControlPlane, admin: Client) -> None:
    await gpus(admin, "n1", devices=2)
    await admin.create("nodes", {**node("n2"), "spec": {"taints": [
        {"key": "maintenance", "value": "", "effect": "NoSchedule"}]}})
    await admin.create("nodes", node("n3"))  # no GPUs
    await admin.create(CLAIMS, claim("busy"))
    await admin.create("pods", pod("first", nodeName="", claims=[
        {"name": "gpu", "resourceClaimName": "busy"}]))
    await plane.settle()
    await admin.create(CLAIMS, {**claim("two"), "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": 2}}]}}})
    await admin.create("pods", pod("second", claims=[{"name": "gpu",
                                                      "resourceClaimName": "two"}]))
    await plane.settle()
    report = explain(plane, "second")
    assert report["state"] == "pending" and report["nodeName"] is None
    assert report["message"].startswith("0/3 nodes are available:")
    by_node = {n["node"]: n for n in report["nodes"]}
    assert by_node["n2"] == {"node": "n2", "feasible": False, "plugin": "TaintToleration",
                             "reasons": ["node(s) had untolerated taint {maintenance: }"]}
    assert by_node["n1"]["plugin"] == "DynamicResources"
    # issue 18: per request, the devices narrowed down to what it needs (2 match, 1 free)
    assert by_node["n1"]["devices"] == [
        {"claim": "default/two", "request": "gpu", "ruledOut": {"in use": 1},
         "matchedByClass": 2, "matchedBySelectors": 2, "free": 1, "needed": 2}]
    assert by_node["n3"]["devices"] == [
        {"claim": "default/two", "request": "gpu", "ruledOut": {},
         "matchedByClass": 0, "matchedBySelectors": 0, "free": 0, "needed": 2}]
    assert explain(plane, "first")["state"] == "scheduled"


async def test_explain_before_any_node_and_unknown_pods(plane: ControlPlane,
                                                        admin: Client) -> None:
    await admin.create("nodes", node("n1"))
    await admin.create("pods", pod("p", claims=[{"name": "gpu",
                                                 "resourceClaimTemplateName": "t"}]))
    await plane.settle()
    report = explain(plane, "p")
    assert report["preFilter"] == 'pod "default/p": ResourceClaim not created yet'
    assert report["nodes"] == []
    with pytest.raises(ApiError) as e:
        explain(plane, "nobody")
    assert (e.value.code, e.value.message) == (404, 'pods "nobody" not found')


# ----- extended resources backed by DRA ------------------------------------------------------


def gpu_pod(name: str, n: int) -> Obj:
    """A pod whose container asks for `n` of the extended resource example.com/gpu."""
    body = pod(name)
    body["spec"]["containers"][0]["resources"] = {
        "requests": {"example.com/gpu": str(n)}, "limits": {"example.com/gpu": str(n)}}
    return body


async def test_an_extended_resource_gets_the_special_claim(plane: ControlPlane,
                                                           admin: Client) -> None:
    await gpus(admin, "n1", devices=3)
    cls = await admin.get("deviceclasses.resource.k8s.io", DRIVER)
    cls["spec"]["extendedResourceName"] = "example.com/gpu"
    await admin.update("deviceclasses.resource.k8s.io", cls)
    await admin.create("pods", gpu_pod("p", 2))
    p = await scheduled(plane, admin, "p")
    assert p["spec"]["nodeName"] == "n1"
    status = p["status"]["extendedResourceClaimStatus"]
    assert status["requestMappings"] == [{"containerName": "c", "resourceName": "example.com/gpu",
                                          "requestName": "container-0-request-0"}]
    c = await admin.get(CLAIMS, status["resourceClaimName"], NS)
    assert c["metadata"]["generateName"] == "p-extended-resources-"
    assert c["metadata"]["annotations"] == {
        "resource.kubernetes.io/extended-resource-claim": "true"}
    assert c["metadata"]["ownerReferences"][0]["uid"] == p["metadata"]["uid"]
    assert c["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    assert sorted(r["device"] for r in c["status"]["allocation"]["devices"]["results"]) == [
        "gpu-0", "gpu-1"]
    assert c["status"]["reservedFor"] == [{"resource": "pods", "name": "p",
                                           "uid": p["metadata"]["uid"]}]
    # the special claim's devices are in use: a pod asking for two more doesn't fit
    await admin.create("pods", gpu_pod("q", 2))
    q = await scheduled(plane, admin, "q")
    assert "nodeName" not in q["spec"]
    assert "cannot allocate all claims" in scheduled_condition(q)["message"]


async def test_a_device_plugin_node_is_left_to_node_resources_fit(plane: ControlPlane,
                                                                  admin: Client) -> None:
    await admin.create("deviceclasses.resource.k8s.io", {**device_class(), "spec": {
        **device_class()["spec"], "extendedResourceName": "example.com/gpu"}})
    plugin_node = node("plugged")
    plugin_node["status"]["allocatable"]["example.com/gpu"] = "4"
    await admin.create("nodes", plugin_node)
    await admin.create("pods", gpu_pod("p", 2))
    p = await scheduled(plane, admin, "p")
    assert p["spec"]["nodeName"] == "plugged"
    assert "extendedResourceClaimStatus" not in p.get("status", {})
    assert await admin.list(CLAIMS, NS) == []


async def test_pods_of_one_shape_never_share_a_device(plane: ControlPlane,
                                                      admin: Client) -> None:
    """Replicas of one template share verdicts node by node (the equivalence cache): each
    placement must drop the chosen node's verdict, or two pods would get one device."""
    await gpus(admin, "n1", "n2", "n3")
    for i in range(4):
        await admin.create(CLAIMS, claim(f"c{i}"))
        await admin.create("pods", pod(f"p{i}", claims=[{"name": "gpu",
                                                        "resourceClaimName": f"c{i}"}]))
        await plane.settle()
    placed = {p["metadata"]["name"]: p["spec"].get("nodeName")
              for p in await admin.list("pods", NS)}
    assert sorted(n for n in placed.values() if n) == ["n1", "n2", "n3"]
    devices = [(c["status"]["allocation"]["devices"]["results"][0]["pool"])
               for c in await admin.list(CLAIMS, NS) if c.get("status", {}).get("allocation")]
    assert sorted(devices) == ["n1", "n2", "n3"]
    # freeing one device (the pod goes, its claim is deallocated) lets the last pod in
    last = next(name for name, n in placed.items() if n is None)
    first = next(name for name, n in placed.items() if n)
    await admin.delete("pods", first, NS, grace_period_seconds=0)
    c = await admin.get(CLAIMS, "c" + first[1:], NS)
    c["status"] = {}
    await admin.update(CLAIMS, c, subresource="status")
    assert (await scheduled(plane, admin, last))["spec"]["nodeName"] == placed[first]


async def _placements(scan_cached: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Where 150 pods of one shape land on 150 nodes of two sizes with two GPUs each, some
    tainted, in batches (so verdicts are reused and dropped between cycles)."""
    monkeypatch.setattr(Scheduler, "scan_cached", scan_cached)
    scans = 0
    real = SchedulingCycle.scan_cached

    def counted(self: SchedulingCycle, *args: Any) -> Any:
        nonlocal scans
        scans += 1
        return real(self, *args)

    monkeypatch.setattr(SchedulingCycle, "scan_cached", counted)
    async with running_plane("scheduler", seed=5) as plane:
        admin = plane.cluster.client("test")
        await admin.create("deviceclasses.resource.k8s.io", device_class())
        for i in range(150):
            body = node(f"n{i:03}", cpu="8" if i % 3 else "4")
            if i % 7 == 0:
                body["spec"] = {"taints": [{"key": "k", "effect": "NoSchedule"}]}
            await admin.create("nodes", body)
            await admin.create("resourceslices.resource.k8s.io", gpu_slice(f"n{i:03}", 2))
        await plane.settle()
        for batch in range(5):
            for i in range(batch * 30, batch * 30 + 30):
                await admin.create(CLAIMS, claim(f"c{i}"))
                await admin.create("pods", pod(f"p{i}", cpu="1", claims=[
                    {"name": "gpu", "resourceClaimName": f"c{i}"}]))
            await plane.settle()
        placed = {p["metadata"]["name"]: p["spec"].get("nodeName")
                  for p in await admin.list("pods", NS)}
        devices = {c["metadata"]["name"]: c["status"]["allocation"]["devices"]["results"]
                   for c in await admin.list(CLAIMS, NS)}
    return {"placed": placed, "devices": devices, "scans": scans}


async def test_the_cached_window_scan_places_pods_as_the_node_loop_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fast = await _placements(True, monkeypatch)
    slow = await _placements(False, monkeypatch)
    assert fast["scans"] >= 150 and slow["scans"] == 0
    assert fast["placed"] == slow["placed"] and fast["devices"] == slow["devices"]
    assert len(set(fast["placed"].values())) > 50  # spread over many nodes, none tainted
    assert not any(int(n[1:]) % 7 == 0 for n in fast["placed"].values())


@pytest.mark.parametrize("cpu", ["1e999", "1" * 5000, "9" * 400 + "m"],
                         ids=["exponent-999", "5000-digits", "400-digits-milli"])
async def test_an_absurd_request_fits_no_node_and_is_reported(
        plane: ControlPlane, admin: Client, cpu: str) -> None:
    """Upstream's Quantity holds any such value (inf.Dec, uncapped for DecimalSI): the pod is
    valid and fits nowhere, never a request of zero nor a scheduler that fails each cycle."""
    await admin.create("nodes", node("n1"))
    await admin.create("pods", pod("huge", cpu=cpu))
    p = await scheduled(plane, admin, "huge")
    assert "nodeName" not in p["spec"]
    assert scheduled_condition(p)["message"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert [e[1] for e in await events(admin, "huge")] == ["FailedScheduling"]
