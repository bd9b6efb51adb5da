"""The DRA controllers as a kubectl v1.37 user meets them, on a real `fakeapi serve`.

The seeds' scenarios: the training-group PodGroup example ends with the reservations the seed
describes; a Pod's template claim goes with the Pod; the ResourcePoolStatusRequest
walkthrough works verbatim, with partition and shareable summaries, and a completed request
is frozen.

The Pod scenarios run on the whole control plane (claim controller, scheduler, emulated
nodes whose kubelets finish graceful deletions). The pool-status scenarios run on a server
with the controllers only and no nodes: the pools and allocations they summarize are the
test's own (the allocations written as the scheduler writes them: finalizer, then status).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.seeds import SEED_GATES
from tests.support.waiting import poll

DATA = Path(__file__).resolve().parent.parent / "data"
COMPONENTS = ("namespace-controller,garbage-collector,resource-claim-controller,"
              "resourcepoolstatusrequest-controller,device-taint-eviction-controller")
PROTECTION = "resource.kubernetes.io/delete-protection"


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory,
            kubectl_binary: str) -> Iterator[Kubectl]:
    """kubectl against a server running the controllers (no scheduler, no nodes)."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("controllers"), "--feature-gates",
                                      SEED_GATES, "--components", COMPONENTS, "--nodes", "0")
    yield Kubectl(kubectl_binary, srv.kubeconfig)
    assert srv.stop() == 0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory,
            kubectl_binary: str) -> Iterator[Kubectl]:
    """kubectl against the whole control plane, with its two emulated GPU nodes."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("cluster"), "--feature-gates",
                                      SEED_GATES)
    k = Kubectl(kubectl_binary, srv.kubeconfig)
    # `kubectl wait --all` fails at once while there is no node yet: first the nodes register
    poll(lambda: k("get", "nodes", "-o", "name"), what="the emulated nodes registered")
    k("wait", "--for=condition=Ready", "node", "--all", "--timeout=30s")
    yield k
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


def wait_for(kubectl: Kubectl, what: str, jsonpath: str, namespace: str = "") -> None:
    extra = ["-n", namespace] if namespace else []
    kubectl("wait", f"--for=jsonpath={jsonpath}", what, *extra, "--timeout=30s")


def test_the_training_group_example_ends_with_the_seed_s_reservations(
        cluster: Kubectl) -> None:
    cluster("apply", "-f", str(DATA / "controllers" / "training-group-claims.yaml"))
    cluster("apply", "-f", str(DATA / "seeds" / "02-podgroup-and-pod.yaml"))
    pod_name = "training-group-pod-1"
    wait_for(cluster, f"pod/{pod_name}", "{.status.resourceClaimStatuses[1].resourceClaimName}",
             "some-ns")
    pod = get(cluster, "pod", pod_name, "-n", "some-ns")
    group = get(cluster, "podgroup", "training-group", "-n", "some-ns")
    [group_status] = group["status"]["resourceClaimStatuses"]
    shared = group_status["resourceClaimName"]
    assert group_status["name"] == "pg-claim-template"
    assert shared.startswith("training-group-pg-claim-template-")
    statuses = {s["name"]: s["resourceClaimName"] for s in pod["status"]["resourceClaimStatuses"]}
    own = statuses["pod-claim-template"]
    assert own.startswith(f"{pod_name}-pod-claim-template-")
    assert statuses == {"pod-claim-template": own, "pg-claim-template": shared}
    names = cluster("get", "resourceclaims", "-n", "some-ns", "-o", "name").split()
    assert sorted(names) == sorted(f"resourceclaim.resource.k8s.io/{n}" for n in (
        "my-pod-claim", "my-pg-claim", own, shared))

    # the scheduler allocates the four claims on one node, reserves them and binds the pod
    cluster("wait", "--for=condition=Ready", f"pod/{pod_name}", "-n", "some-ns",
            "--timeout=60s")
    node = get(cluster, "pod", pod_name, "-n", "some-ns")["spec"]["nodeName"]
    claims = get(cluster, "resourceclaims", "-n", "some-ns")["items"]
    devices = [(r["pool"], r["device"]) for c in claims
               for r in c["status"]["allocation"]["devices"]["results"]]
    assert {pool for pool, _ in devices} == {node} and len(set(devices)) == 4
    reservations = {c["metadata"]["name"]: [(r.get("apiGroup", ""), r["resource"], r["name"])
                                            for r in c["status"]["reservedFor"]]
                    for c in claims}
    for_pod = [("", "pods", pod_name)]
    for_group = [("scheduling.k8s.io", "podgroups", "training-group")]
    assert reservations == {"my-pod-claim": for_pod, own: for_pod,
                            "my-pg-claim": for_group, shared: for_group}

    # the pod goes (its kubelet confirms): its own claims are freed; the group keeps its
    # claims while it exists
    cluster("delete", "pod", pod_name, "-n", "some-ns")
    cluster("wait", "--for=delete", f"resourceclaim/{own}", "-n", "some-ns", "--timeout=30s")
    # a field being gone, which `kubectl wait` cannot express
    poll(lambda: get(cluster, "resourceclaim", "my-pod-claim", "-n", "some-ns")["status"],
         until=lambda status: status == {}, what="my-pod-claim's status emptied")
    assert not get(cluster, "resourceclaim", "my-pod-claim", "-n", "some-ns")["metadata"].get(
        "finalizers")
    assert get(cluster, "resourceclaim", shared, "-n", "some-ns")["status"]["reservedFor"]
    cluster("delete", "podgroup", "training-group", "-n", "some-ns")
    cluster("wait", "--for=delete", f"resourceclaim/{shared}", "-n", "some-ns",
            "--timeout=30s")


def test_a_pod_s_template_claim_goes_with_the_pod(cluster: Kubectl) -> None:
    cluster("create", "namespace", "solo")
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "one-gpu", "namespace": "solo"},
                "spec": {"spec": {"devices": {"requests": [
                    {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer", "namespace": "solo"},
           "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}}
    cluster("apply", "-f", "-", input=yaml.safe_dump_all([template, pod]))
    wait_for(cluster, "pod/trainer", "{.status.resourceClaimStatuses[0].resourceClaimName}",
             "solo")
    name = cluster("get", "pod", "trainer", "-n", "solo", "-o",
                   "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}")
    claim = get(cluster, "resourceclaim", name, "-n", "solo")
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert claim["metadata"]["ownerReferences"][0]["name"] == "trainer"
    assert "trainer-gpu-" in cluster("get", "resourceclaims", "-n", "solo")
    cluster("delete", "pod", "trainer", "-n", "solo")
    cluster("wait", "--for=delete", f"resourceclaim/{name}", "-n", "solo", "--timeout=30s")


def test_a_missing_template_is_reported_on_the_pod(cluster: Kubectl) -> None:
    cluster("create", "namespace", "early")
    cluster("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "eager", "namespace": "early"},
        "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                 "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "later"}]}}))
    wait_for(cluster, "pod/eager", "{.status.conditions[0].reason}=Unschedulable", "early")
    described = cluster("describe", "pod", "eager", "-n", "early")
    assert "FailedResourceClaimCreation" in described
    assert ('PodResourceClaim gpu: resource claim template "later": '
            'resourceclaimtemplate.resource.k8s.io "later" not found') in described
    assert cluster("get", "pod", "eager", "-n", "early", "-o",
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
