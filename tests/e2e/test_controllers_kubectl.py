"""The DRA controllers as a kubectl v1.37 user meets them, on a real `fakeapi serve`.

The seeds' scenarios: the training-group PodGroup example ends with the reservations the seed
describes; a Pod's template claim goes with the Pod; the ResourcePoolStatusRequest
walkthrough works verbatim, with partition and shareable summaries, and a completed request
is frozen. Until the scheduler lands, the test writes what it would: allocations (finalizer,
then status) and the Pod's binding.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SEED_GATES, Kubectl, ServerProcess, start_server

DATA = Path(__file__).resolve().parent.parent / "data"
COMPONENTS = ("namespace-controller,garbage-collector,resource-claim-controller,"
              "resourcepoolstatusrequest-controller,device-taint-eviction-controller")
PROTECTION = "resource.kubernetes.io/delete-protection"


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory,
            kubectl_binary: str) -> Iterator[Kubectl]:
    """kubectl against a server running the controllers (and no scheduler)."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("controllers"), "--feature-gates",
                                      SEED_GATES, "--components", COMPONENTS)
    yield Kubectl(kubectl_binary, srv.kubeconfig)
    assert srv.stop() == 0


def get(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl("get", *args, "-o", "json"))


def allocate(kubectl: Kubectl, claim: str, namespace: str, results: list[dict[str, Any]],
             reserved_for: list[dict[str, Any]] | None = None) -> None:
    """What the scheduler writes: the delete-protection finalizer, then the allocation."""
    kubectl("patch", "resourceclaim", claim, "-n", namespace, "--type=merge", "-p",
            json.dumps({"metadata": {"finalizers": [PROTECTION]}}))
    status: dict[str, Any] = {"allocation": {"devices": {"results": results}}}
    if reserved_for:
        status["reservedFor"] = reserved_for
    kubectl("patch", "resourceclaim", claim, "-n", namespace, "--subresource=status",
            "--type=merge", "-p", json.dumps({"status": status}))


def bind(kubectl: Kubectl, pod: str, namespace: str, node: str) -> None:
    """What the scheduler does last: POST the pod's binding."""
    binding = {"apiVersion": "v1", "kind": "Binding",
               "metadata": {"name": pod, "namespace": namespace},
               "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
    kubectl("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/{pod}/binding", "-f", "-",
            input=json.dumps(binding))


def wait_for(kubectl: Kubectl, what: str, jsonpath: str, namespace: str = "") -> None:
    extra = ["-n", namespace] if namespace else []
    kubectl("wait", f"--for=jsonpath={jsonpath}", what, *extra, "--timeout=30s")


def until(check: Callable[[], bool], timeout: float = 30) -> None:
    """Poll `check` (kubectl reads) until it holds; fail at the deadline. For states that
    `kubectl wait` cannot express, such as a field being gone."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def gpu(device: str = "gpu-0") -> dict[str, Any]:
    return {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1",
            "device": device}


def test_the_training_group_example_ends_with_the_seed_s_reservations(
        kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(DATA / "controllers" / "training-group-claims.yaml"))
    kubectl("apply", "-f", str(DATA / "seeds" / "02-podgroup-and-pod.yaml"))
    pod_name = "training-group-pod-1"
    wait_for(kubectl, f"pod/{pod_name}", "{.status.resourceClaimStatuses[1].resourceClaimName}",
             "some-ns")
    pod = get(kubectl, "pod", pod_name, "-n", "some-ns")
    group = get(kubectl, "podgroup", "training-group", "-n", "some-ns")
    [group_status] = group["status"]["resourceClaimStatuses"]
    shared = group_status["resourceClaimName"]
    assert group_status["name"] == "pg-claim-template"
    assert shared.startswith("training-group-pg-claim-template-")
    statuses = {s["name"]: s["resourceClaimName"] for s in pod["status"]["resourceClaimStatuses"]}
    own = statuses["pod-claim-template"]
    assert own.startswith(f"{pod_name}-pod-claim-template-")
    assert statuses == {"pod-claim-template": own, "pg-claim-template": shared}
    names = kubectl("get", "resourceclaims", "-n", "some-ns", "-o", "name").split()
    assert sorted(names) == sorted(f"resourceclaim.resource.k8s.io/{n}" for n in (
        "my-pod-claim", "my-pg-claim", own, shared))

    for i, claim in enumerate(("my-pod-claim", own, "my-pg-claim", shared)):
        allocate(kubectl, claim, "some-ns", [gpu(f"gpu-{i}")])
    bind(kubectl, pod_name, "some-ns", "worker-1")
    wait_for(kubectl, f"resourceclaim/{shared}", "{.status.reservedFor[0].name}", "some-ns")
    for claim in ("my-pod-claim", own, "my-pg-claim"):
        wait_for(kubectl, f"resourceclaim/{claim}", "{.status.reservedFor[0].name}", "some-ns")
    reservations = {c["metadata"]["name"]: [(r.get("apiGroup", ""), r["resource"], r["name"])
                                            for r in c["status"]["reservedFor"]]
                    for c in get(kubectl, "resourceclaims", "-n", "some-ns")["items"]}
    for_pod = [("", "pods", pod_name)]
    for_group = [("scheduling.k8s.io", "podgroups", "training-group")]
    assert reservations == {"my-pod-claim": for_pod, own: for_pod,
                            "my-pg-claim": for_group, shared: for_group}

    # the pod goes: its own claims are freed; the group keeps its claims while it exists
    kubectl("delete", "pod", pod_name, "-n", "some-ns")
    kubectl("wait", "--for=delete", f"resourceclaim/{own}", "-n", "some-ns", "--timeout=30s")
    until(lambda: get(kubectl, "resourceclaim", "my-pod-claim", "-n", "some-ns")["status"] == {})
    assert not get(kubectl, "resourceclaim", "my-pod-claim", "-n", "some-ns")["metadata"].get(
        "finalizers")
    assert get(kubectl, "resourceclaim", shared, "-n", "some-ns")["status"]["reservedFor"]
    kubectl("delete", "podgroup", "training-group", "-n", "some-ns")
    kubectl("wait", "--for=delete", f"resourceclaim/{shared}", "-n", "some-ns",
            "--timeout=30s")


def test_a_pod_s_template_claim_goes_with_the_pod(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "solo")
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "solo"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "solo"},
           "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all([template, pod]))
    wait_for(kubectl, "pod/trainer", "{.status.resourceClaimStatuses[0].resourceClaimName}",
             "solo")
    name = kubectl("get", "pod", "trainer", "-n", "solo", "-o",
                   "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}")
    claim = get(kubectl, "resourceclaim", name, "-n", "solo")
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["ownerReferences"][0]["name"] == "trainer"
    assert "trainer-gpu-" in kubectl("get", "resourceclaims", "-n", "solo")
    kubectl("delete", "pod", "trainer", "-n", "solo")
    kubectl("wait", "--for=delete", f"resourceclaim/{name}", "-n", "solo", "--timeout=30s")


def test_a_missing_template_is_reported_on_the_pod(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "early")
    kubectl("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "eager", "namespace": "early"},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "later"}]}}))
    wait_for(kubectl, "pod/eager", "{.status.conditions[0].reason}=Unschedulable", "early")
    described = kubectl("describe", "pod", "eager", "-n", "early")
    assert "FailedResourceClaimCreation" in described
    assert ('PodResourceClaim gpu: resource claim template "later": '
            'resourceclaimtemplate.resource.k8s.io "later" not found') in described
    assert kubectl("get", "pod", "eager", "-n", "early", "-o",
                   "jsonpath={.status.phase}") == "Pending"


def test_the_resource_pool_status_walkthrough_works_verbatim(kubectl: Kubectl) -> None:
    # 1. create the request; 2. wait; 3. read; 4. delete (seed dra-observability)
    kubectl("apply", "-f", str(DATA / "seeds" / "09-check-gpus-rpsr.yaml"))
    out = kubectl("wait", "--for=condition=Complete", "resourcepoolstatusrequest/check-gpus",
                  "--timeout=30s")
    assert out.strip() == "resourcepoolstatusrequest.resource.k8s.io/check-gpus condition met"
    done = yaml.safe_load(kubectl("get", "resourcepoolstatusrequest/check-gpus", "-o", "yaml"))
    assert done["status"]["poolCount"] == 0
    [condition] = done["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Complete", "True", "CalculationComplete")
    # a completed request is frozen
    res = kubectl.run("label", "resourcepoolstatusrequest/check-gpus", "team=gpu", check=False)
    assert res.returncode != 0 and "may not be changed once status is set" in res.stderr
    res = kubectl.run("patch", "resourcepoolstatusrequest/check-gpus", "--subresource=status",
                      "--type=merge", "-p", '{"status":{"poolCount":7}}', check=False)
    assert res.returncode != 0 and "status: Forbidden: field is immutable" in res.stderr
    out = kubectl("delete", "resourcepoolstatusrequest/check-gpus")
    assert out.strip() == 'resourcepoolstatusrequest.resource.k8s.io "check-gpus" deleted'


def test_partition_and_shareable_summaries(kubectl: Kubectl) -> None:
    pools = yaml.safe_load((DATA / "controllers" / "gpu-pools.yaml").read_text())
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(pools["slices"]))
    kubectl("create", "namespace", "summaries")
    for name, results in pools["claims"].items():
        kubectl("apply", "-f", "-", input=yaml.safe_dump({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "summaries"},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}))
        allocate(kubectl, name, "summaries", results)
    kubectl("apply", "-f", str(DATA / "seeds" / "11-check-gpu-partitions-rpsr.yaml"))
    kubectl("wait", "--for=condition=Complete",
            "resourcepoolstatusrequest/check-gpu-partitions", "--timeout=30s")
    status = yaml.safe_load(kubectl("get", "resourcepoolstatusrequest/check-gpu-partitions",
                                    "-o", "yaml"))["status"]
    assert {k: status[k] for k in ("poolCount", "pools")} == pools["expect"]
    listed = kubectl("get", "resourcepoolstatusrequests")
    assert "check-gpu-partitions" in listed
    kubectl("delete", "resourcepoolstatusrequest/check-gpu-partitions")
