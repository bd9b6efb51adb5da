"""The emulated cluster through kubectl v1.37: `fakeapi serve` with no flags has Ready nodes
with GPUs and NICs; `--nodes` and `--node-profile` shape it; kubectl-created nodes are
adopted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll


def wait_for(kubectl: Kubectl, *args: str, until: str, timeout: float = 30) -> str:
    """Run kubectl until its output contains `until` (a real server on real time)."""
    return poll(lambda: kubectl(*args), until=lambda out: until in out, timeout=timeout,
                interval=0.1, what=f"{until!r} in the output of kubectl {' '.join(args)}")


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    srv = start_server(tmp_path_factory.mktemp("default"))
    yield srv
    assert srv.stop() == 0


@pytest.fixture(scope="module")
def kubectl_default(kubectl_binary: str, default_server: ServerProcess) -> Kubectl:
    return Kubectl(kubectl_binary, default_server.kubeconfig)


def test_the_default_server_has_two_ready_nodes(kubectl_default: Kubectl) -> None:
    out = wait_for(kubectl_default, "get", "nodes", until="worker-1   Ready")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert [line.split()[:2] for line in lines[1:]] == [["worker-0", "Ready"],
                                                         ["worker-1", "Ready"]]
    assert all(line.split()[-1] == "v1.37.0" for line in lines[1:])
    kubectl_default("wait", "--for=condition=Ready", "node/worker-0", "--timeout=30s")


def test_the_default_nodes_have_gpus_and_nics(kubectl_default: Kubectl) -> None:
    wait_for(kubectl_default, "get", "resourceslices", until="nic.example.com")
    slices = json.loads(kubectl_default("get", "resourceslices",
                                        "--field-selector=spec.driver=gpu.example.com",
                                        "-o", "json"))["items"]
    assert sorted(s["spec"]["nodeName"] for s in slices) == ["worker-0", "worker-1"]
    gpus = slices[0]["spec"]["devices"]
    assert [d["name"] for d in gpus] == [f"gpu-{i}" for i in range(8)]
    assert {"index", "uuid", "model", "driverVersion", "numa", "type"} <= set(
        gpus[0]["attributes"])
    nics = json.loads(kubectl_default("get", "resourceslices", "--field-selector",
                                      "spec.driver=nic.example.com,spec.nodeName=worker-0",
                                      "-o", "json"))["items"]
    assert [d["name"] for d in nics[0]["spec"]["devices"]] == ["nic-0", "nic-1"]
    assert nics[0]["spec"]["devices"][1]["attributes"]["numaNode"] == {"int": 1}
    classes = kubectl_default("get", "deviceclasses", "-o", "name").split()
    assert classes == ["deviceclass.resource.k8s.io/gpu.example.com",
                       "deviceclass.resource.k8s.io/nic.example.com"]
    wide = kubectl_default("get", "resourceslices", "-o", "wide")
    assert "worker-0-gpu.example.com-" in wide


def test_kubectl_created_nodes_are_adopted(kubectl_default: Kubectl) -> None:
    kubectl_default("create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "extra", "labels": {"pool": "mine"}}}))
    out = wait_for(kubectl_default, "get", "node", "extra", until="Ready")
    assert "NotReady" not in out
    node = json.loads(kubectl_default("get", "node", "extra", "-o", "json"))
    assert node["metadata"]["labels"] == {"pool": "mine"}
    lease = json.loads(kubectl_default("get", "lease", "-n", "kube-node-lease", "extra",
                                       "-o", "json"))
    assert lease["spec"]["holderIdentity"] == "extra"


def test_nodes_and_profile_flags(kubectl_binary: str, tmp_path: Path) -> None:
    srv = start_server(tmp_path, "--nodes", "60", "--node-profile", "partitionable")
    try:  # ready means the cluster is there: no waiting for nodes or slices after the line
        k = Kubectl(kubectl_binary, srv.kubeconfig)
        nodes = [line.split()[:2] for line in k("get", "nodes").splitlines()[1:]]
        assert sorted(nodes) == sorted([f"worker-{i}", "Ready"] for i in range(60))
        slices = json.loads(k("get", "resourceslices", "--field-selector",
                              "spec.nodeName=worker-59", "-o", "json"))["items"]
        assert len(slices) == 2  # shared counters, then the partition devices
        devices = [d["name"] for s in slices for d in s["spec"].get("devices", [])]
        assert devices[:5] == [f"gpu-0-partition-{j}" for j in range(4)] + ["gpu-0-full"]
    finally:
        assert srv.stop() == 0
