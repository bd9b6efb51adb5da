"""The pod worker's pure logic, called directly: which claims a pod has and whether it may
use them, the CDI devices and environment each container gets, the phase and the status
the kubelet writes (the end-to-end tests in test_pods and test_claims go through the
worker)."""

from __future__ import annotations

from typing import Any

import pytest

from kubelet_emu import cdi
from kubelet_emu.container_env import config_map_names, container_env
from kubelet_emu.node_state import NodeState
from kubelet_emu.nodes import Addressing
from kubelet_emu.plugin import Claim, HealthStatus, PreparedDevice
from kubelet_emu.pod_claims import (
    EXTENDED_CLAIM,
    NotReady,
    PreparedClaim,
    check_claims,
    claim_names,
    container_cdi_devices,
)
from kubelet_emu.pod_records import ContainerRun, PodRecord
from kubelet_emu.pod_status import (
    allocated_resources_status,
    crash_loop_delay,
    image_ref,
    phase_of,
    pod_status,
)

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"
ALLOCATED = {"devices": {"results": [{"request": "r", "driver": "gpu.example.com",
                                      "pool": "n", "device": "gpu-0"}]}}


def pod(**spec: Any) -> Obj:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"app": "a"}},
            "spec": {"nodeName": "n", "containers": [{"name": "c"}], **spec}}


def device(name: str, *requests: str) -> PreparedDevice:
    return PreparedDevice(request_names=requests, pool_name="n", device_name=name,
                          cdi_device_ids=("k8s.gpu/gpu=common", f"k8s.gpu/gpu={name}"))


def prepared(pod_claim: str, *devices: PreparedDevice) -> PreparedClaim:
    return PreparedClaim(pod_claim=pod_claim, claim=Claim(namespace="ns", uid=pod_claim,
                                                          name=pod_claim),
                         devices={"gpu.example.com": devices})


def run(exit_code: int | None = None, *, started: bool = True, init: bool = False,
        **spec: Any) -> ContainerRun:
    return ContainerRun(spec={"name": "c", "image": "ubuntu:22.04", **spec}, init=init,
                        started_at=NOW if started else "", exit_code=exit_code,
                        waiting_reason="" if started else "ContainerCreating")


def record(*containers: ContainerRun, policy: str = "Always", init: tuple[ContainerRun, ...] = (),
           claims: tuple[PreparedClaim, ...] = ()) -> PodRecord:
    return PodRecord(uid="u1", namespace="ns", name="p", node="n", claims=list(claims), slot=1,
                     ip="10.64.0.2", started=NOW, init=list(init), containers=list(containers),
                     restart_policy=policy)


def test_claim_names_follow_the_spec_the_status_and_the_extended_claim() -> None:
    p = pod(resourceClaims=[{"name": "own", "resourceClaimName": "mine"},
                            {"name": "tpl", "resourceClaimTemplateName": "t"},
                            {"name": "made", "resourceClaimTemplateName": "t"},
                            {"name": "unneeded", "resourceClaimTemplateName": "t"}])
    p["status"] = {"resourceClaimStatuses": [{"name": "made", "resourceClaimName": "p-made"},
                                             {"name": "unneeded"}],
                   "extendedResourceClaimStatus": {"resourceClaimName": "p-extended"}}
    assert claim_names(p) == [("own", "mine"), ("tpl", None), ("made", "p-made"),
                              (EXTENDED_CLAIM, "p-extended")]


@pytest.mark.parametrize(("claim", "message"), [
    (None, 'resourceclaim.resource.k8s.io "mine" not found'),
    ({"status": {}}, "claim ns/mine is not allocated"),
    ({"status": {"allocation": ALLOCATED,
                 "reservedFor": [{"resource": "pods", "uid": "other"}]}},
     "pod p (u1) is not allowed to use ResourceClaim ns/mine"),
])
def test_a_claim_not_ready_for_the_pod_says_why(claim: Obj | None, message: str) -> None:
    p = pod(resourceClaims=[{"name": "own", "resourceClaimName": "mine"}])
    with pytest.raises(NotReady) as e:
        check_claims(p, lambda name, ns: claim)
    assert message in str(e.value)


def test_a_claim_reserved_for_the_pods_group_is_ready() -> None:
    p = pod(resourceClaims=[{"name": "own", "resourceClaimName": "mine"}],
            schedulingGroup={"podGroupName": "g"})
    claim = {"status": {"allocation": ALLOCATED, "reservedFor": [{"resource": "podgroups",
                                                           "name": "g"}]}}
    assert check_claims(p, lambda name, ns: claim if (name, ns) == ("mine", "ns") else None) \
        == [("own", claim)]


def test_a_container_gets_the_cdi_devices_of_the_requests_it_names() -> None:
    claims = [prepared("gpus", device("gpu-0", "one"), device("gpu-1", "two/big")),
              prepared(EXTENDED_CLAIM, device("gpu-2", "container-0-request-0"))]
    whole = {"name": "c", "resources": {"claims": [{"name": "gpus"}]}}
    assert container_cdi_devices(whole, claims) == (
        "k8s.gpu/gpu=common", "k8s.gpu/gpu=gpu-0", "k8s.gpu/gpu=gpu-1")
    two = {"name": "c", "resources": {"claims": [{"name": "gpus", "request": "two"}]}}
    assert container_cdi_devices(two, claims) == ("k8s.gpu/gpu=common", "k8s.gpu/gpu=gpu-1")
    mapped = [{"containerName": "c", "requestName": "container-0-request-0"}]
    assert container_cdi_devices({"name": "c"}, claims, mapped) == (
        "k8s.gpu/gpu=common", "k8s.gpu/gpu=gpu-2")
    assert container_cdi_devices({"name": "other"}, claims, mapped) == ()


def test_the_environment_has_the_service_links_the_spec_and_the_cdi_edits_last() -> None:
    container = {"name": "c", "envFrom": [{"configMapRef": {"name": "cm"}, "prefix": "CM_"}],
                 "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "$(A)-$$(A)-$(Z)"},
                         {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath":
                                                                    "metadata.name"}}},
                         {"name": "APP", "valueFrom": {"fieldRef": {
                             "fieldPath": "metadata.labels['app']"}}},
                         {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                         {"name": "KEY", "valueFrom": {"configMapKeyRef": {"name": "cm",
                                                                           "key": "k"}}},
                         {"name": "GPU", "value": "from-spec"}]}
    env = container_env(pod(containers=[container]), container,
                        cdi.ContainerEdits(env=("GPU=gpu-0",)), host_ip="172.16.0.2",
                        pod_ip="10.64.0.2", config={"cm": {"k": "v"}})
    assert env["KUBERNETES_SERVICE_HOST"] == "10.96.0.1" and env["HOSTNAME"] == "p"
    assert (env["CM_k"], env["A"], env["B"], env["POD"], env["APP"], env["IP"], env["KEY"]) == (
        "v", "1", "1-$(A)-$(Z)", "p", "a", "10.64.0.2", "v")
    assert env["GPU"] == "gpu-0", "the CDI edits come last"
    assert config_map_names(pod(containers=[container], initContainers=[
        {"name": "i", "envFrom": [{"configMapRef": {"name": "early"}}]}])) == ["cm", "early"]


@pytest.mark.parametrize(("image", "ref"), [
    ("ubuntu:22.04", "docker.io/library/ubuntu:22.04"),
    ("busybox", "docker.io/library/busybox:latest"),
    ("team/app:1", "docker.io/team/app:1"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
    ("localhost/x", "localhost/x:latest"),
])
def test_image_references_are_containerds(image: str, ref: str) -> None:
    name, image_id = image_ref(image)
    assert name == ref and image_id.startswith(ref.rsplit(":", 1)[0] + "@sha256:")


@pytest.mark.parametrize(("containers", "policy", "init", "phase"), [
    ([run()], "Always", (), "Running"),
    ([run(0)], "Never", (), "Succeeded"),
    ([run(0), run(1)], "Never", (), "Failed"),
    ([run(1)], "OnFailure", (), "Running"),  # restarting
    ([run(0)], "OnFailure", (), "Succeeded"),
    ([run(0)], "Always", (), "Running"),  # restarting
    ([run(started=False)], "Always", (run(init=True),), "Pending"),  # init still running
    ([run()], "Always", (run(0, init=True),), "Running"),
])
def test_the_phase_is_upstreams_get_phase(containers: list[ContainerRun], policy: str,
                                          init: tuple[ContainerRun, ...], phase: str) -> None:
    assert phase_of(record(*containers, policy=policy, init=init)) == phase


def test_the_status_keeps_conditions_the_kubelet_does_not_own_and_their_times() -> None:
    p = pod()
    p["status"] = {"conditions": [
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": "2025-12-31T00:00:00Z"},
        {"type": "Ready", "status": "True", "lastTransitionTime": "2025-12-31T12:00:00Z"}]}
    status = pod_status(p, record(run()), "172.16.0.2")
    assert status["phase"] == "Running" and status["podIP"] == "10.64.0.2"
    by_type = {c["type"]: c for c in status["conditions"]}
    assert list(by_type) == ["PodReadyToStartContainers", "Initialized", "Ready",
                             "ContainersReady", "PodScheduled"]
    assert by_type["PodScheduled"] == {"type": "PodScheduled", "status": "True",
                                       "lastTransitionTime": "2025-12-31T00:00:00Z"}
    assert by_type["Ready"]["lastTransitionTime"] == "2025-12-31T12:00:00Z", "unchanged: kept"
    assert by_type["Initialized"]["lastTransitionTime"] == NOW
    [cs] = status["containerStatuses"]
    assert cs["ready"] and cs["state"] == {"running": {"startedAt": NOW}}


def test_allocated_resources_status_names_each_claim_reference() -> None:
    claim = prepared("gpus", device("gpu-0", "one"), device("gpu-1", "two"))
    containers = [run(resources={"claims": [{"name": "gpus"}]}),
                  ContainerRun(spec={"name": "d", "resources": {"claims": [
                      {"name": "gpus", "request": "two"}]}}, init=False)]
    sick = ("gpu.example.com", "n", "gpu-1")
    health = allocated_resources_status(record(*containers, claims=(claim,)), lambda key: (
        (HealthStatus.UNHEALTHY, "ECC") if key == sick else (HealthStatus.HEALTHY, "")))
    assert health == {
        "c": [{"name": "claim:gpus", "resources": [
            {"resourceID": "gpu.example.com/n/gpu-0", "health": "Healthy"},
            {"resourceID": "gpu.example.com/n/gpu-1", "health": "Unhealthy",
             "message": "ECC"}]}],
        "d": [{"name": "claim:gpus/two", "resources": [
            {"resourceID": "gpu.example.com/n/gpu-1", "health": "Unhealthy",
             "message": "ECC"}]}]}


def test_crash_loop_back_off_doubles_up_to_five_minutes() -> None:
    assert [crash_loop_delay(n) for n in (0, 1, 2, 5, 10)] == [10, 20, 40, 300, 300]


def test_pod_ip_slots_are_the_lowest_free_ones() -> None:
    state = NodeState(name="n", where=Addressing(0), profile=None, emulated=True)
    assert [state.allocate_slot(u) for u in ("a", "b", "a")] == [1, 2, 1]
    state.release_slot("a")
    assert state.allocate_slot("c") == 1


def test_a_condition_that_flips_takes_the_time_of_the_flip() -> None:
    p = pod()
    p["status"] = {"conditions": [
        {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
         "lastTransitionTime": "2025-12-31T12:00:00Z"},
        {"type": "Initialized", "status": "True", "lastTransitionTime": "2025-12-31T11:00:00Z"}]}
    later = "2026-01-01T00:05:00Z"
    by_type = {c["type"]: c for c in pod_status(p, record(run()), "172.16.0.2",
                                                 now=later)["conditions"]}
    assert by_type["Ready"]["status"] == "True"
    assert by_type["Ready"]["lastTransitionTime"] == later  # flipped: now
    assert by_type["Initialized"]["lastTransitionTime"] == "2025-12-31T11:00:00Z"  # held

