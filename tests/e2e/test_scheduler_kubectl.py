"""The scheduler seen by the real kubectl v1.37: nodes made with kubectl take pods, a pod
that can't be placed says why in `kubectl describe`, and a pod's claim is allocated and
reserved as on a 1.37 cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server

DRIVER = "gpu.example.com"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory,
            kubectl_binary: str) -> Iterator[Kubectl]:
    """A server of its own (its scheduler places every pod of the module), two nodes made
    with kubectl, a device class and one GPU on node-a."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("scheduler"), "--nodes", "0",
                                      "--no-adopt-nodes")
    kubectl = Kubectl(kubectl_binary, srv.kubeconfig)
    docs = [{"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": n, "labels": {"kubernetes.io/hostname": n, "zone": z}}}
            for n, z in (("node-a", "a"), ("node-b", "b"))]
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": DRIVER}, "spec": {"selectors": [
                     {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                 "metadata": {"name": "node-a-gpus"}, "spec": {
                     "driver": DRIVER, "nodeName": "node-a",
                     "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": "gpu-0", "attributes": {
                         "model": {"string": "LATEST-GPU-MODEL"}}}]}})
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    yield kubectl
    assert srv.stop() == 0


def apply(kubectl: Kubectl, *docs: dict) -> None:
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(list(docs)))


def pod(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def wait_scheduled(kubectl: Kubectl, name: str) -> str:
    kubectl("wait", "--for=condition=PodScheduled", f"pod/{name}", "--timeout=30s")
    return kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName}")


def wait_unschedulable(kubectl: Kubectl, name: str) -> str:
    kubectl("wait", "--for=condition=PodScheduled=false", f"pod/{name}", "--timeout=30s")
    return kubectl("get", "pod", name, "-o",
                   "jsonpath={.status.conditions[?(@.type=='PodScheduled')].message}")


def test_kubectl_run_is_scheduled_with_an_event(cluster: Kubectl) -> None:
    cluster("run", "web", "--image=busybox", "--restart=Never")
    node = wait_scheduled(cluster, "web")
    assert node in ("node-a", "node-b")
    described = cluster("describe", "pod", "web")
    assert f"Successfully assigned default/web to {node}" in described
    assert "default-scheduler" in described


def test_an_unschedulable_pod_says_why_in_describe(cluster: Kubectl) -> None:
    apply(cluster, pod("picky", nodeSelector={"zone": "c"}))
    message = wait_unschedulable(cluster, "picky")
    assert message == ("0/2 nodes are available: 2 node(s) didn't match Pod's node "
                       "affinity/selector. preemption: 0/2 nodes are available: 2 "
                       "Preemption is not helpful for scheduling.")
    described = cluster("describe", "pod", "picky")
    assert "FailedScheduling" in described and "didn't match Pod's node" in described
    cluster("label", "node", "node-b", "zone=c", "--overwrite")
    assert wait_scheduled(cluster, "picky") == "node-b"


def test_a_claim_is_allocated_and_reserved(cluster: Kubectl, tmp_path: Path) -> None:
    apply(cluster, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "one-gpu"}, "spec": {"devices": {"requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}},
          pod("trainer", resourceClaims=[{"name": "gpu", "resourceClaimName": "one-gpu"}]))
    assert wait_scheduled(cluster, "trainer") == "node-a"
    claim = json.loads(cluster("get", "resourceclaim", "one-gpu", "-o", "json"))
    uid = cluster("get", "pod", "trainer", "-o", "jsonpath={.metadata.uid}")
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": DRIVER, "pool": "node-a", "device": "gpu-0"}]
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "trainer",
                                               "uid": uid}]
    assert "allocated,reserved" in cluster("get", "resourceclaim", "one-gpu")
    # the only GPU is taken: a second claim can't be allocated anywhere
    apply(cluster, {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "second-gpu"}, "spec": {"devices": {"requests": [
                        {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}},
          pod("waiting", resourceClaims=[{"name": "gpu", "resourceClaimName": "second-gpu"}]))
    message = wait_unschedulable(cluster, "waiting")
    assert message == ("0/2 nodes are available: 2 cannot allocate all claims. still not "
                       "schedulable, preemption: 0/2 nodes are available: 2 Preemption is "
                       "not helpful for scheduling.")
    assert "cannot allocate all claims" in cluster("describe", "pod", "waiting")
    # why is it pending? the same answer from kubectl get --raw and from fakeapi explain
    report = json.loads(cluster("get", "--raw", "/explain/namespaces/default/pods/waiting"))
    verdicts = {n["node"]: n for n in report["nodes"]}
    assert verdicts["node-a"]["devices"] == [
        {"claim": "default/second-gpu", "request": "gpu", "ruledOut": {"in use": 1},
         "matchedByClass": 1, "matchedBySelectors": 1, "free": 0, "needed": 1}]
    assert verdicts["node-b"]["reasons"] == ["cannot allocate all claims"]
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "explain", "pod",
                          "default/waiting", "--kubeconfig", str(cluster.kubeconfig)],
                         capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[:1] == ["pod default/waiting: pending"]
    assert ("  node-a: DynamicResources: cannot allocate all claims\n"
            "    claim default/second-gpu, request gpu: 1 in use") in res.stdout
    missing = subprocess.run([sys.executable, "-m", "fakeapi.cli", "explain", "pod", "nobody",
                              "--kubeconfig", str(cluster.kubeconfig)],
                             capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert (missing.returncode, missing.stderr) == (
        1, 'Error from server (NotFound): pods "nobody" not found\n')
