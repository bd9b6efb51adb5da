"""The whole loop through kubectl v1.37 on the default server (`fakeapi serve`, no flags):
a pod asking for a GPU goes Pending → Running on an emulated node; `kubectl logs` shows the
emulated container's view (its CDI environment), `kubectl exec` runs in that environment,
and `kubectl logs -f` follows a container that prints over time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server

GPU_POD = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
     "metadata": {"name": "one-gpu"},
     "spec": {"spec": {"devices": {"requests": [
         {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
     "spec": {"containers": [{"name": "ctr", "image": "ubuntu:22.04",
                              "command": ["bash", "-c"],
                              "args": ["export; trap 'exit 0' TERM; sleep 9999 & wait"],
                              "resources": {"claims": [{"name": "gpu"}]}}],
              "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}},
]


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory, kubectl_binary: str) -> Iterator[Kubectl]:
    """`fakeapi serve` as the README's first command runs it: the default emulated cluster."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("loop"))
    k = Kubectl(kubectl_binary, srv.kubeconfig)
    # the emulated nodes register just after the ready line: wait for them to exist first
    for node in ("worker-0", "worker-1"):
        k("wait", "--for=create", f"node/{node}", "--timeout=30s")
    k("wait", "--for=condition=Ready", "node/worker-0", "node/worker-1", "--timeout=30s")
    yield k
    assert srv.stop() == 0


def test_a_gpu_pod_runs_and_logs_its_cdi_environment(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(GPU_POD))
    kubectl("wait", "--for=condition=Ready", "pod/trainer", "--timeout=30s")
    assert kubectl("get", "pod", "trainer", "-o", "jsonpath={.status.phase}") == "Running"
    claim = kubectl("get", "pod", "trainer", "-o",
                    "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}")
    assert claim.startswith("trainer-gpu-")
    device = kubectl("get", "resourceclaim", claim, "-o",
                     "jsonpath={.status.allocation.devices.results[0].device}")
    index = device.removeprefix("gpu-")
    logs = kubectl("logs", "trainer").splitlines()
    assert f'declare -x GPU_DEVICE_{index}="{device}"' in logs
    assert f'declare -x GPU_DEVICE_{index}_SHARING_STRATEGY="TimeSlicing"' in logs
    # exec runs in the same environment
    env = kubectl("exec", "trainer", "--", "sh", "-c", f"echo $GPU_DEVICE_{index}")
    assert env == f"{device}\n"
    failed = kubectl.run("exec", "trainer", "--", "sh", "-c", "exit 3", check=False)
    assert failed.returncode == 3
    missing = kubectl.run("logs", "trainer", "-c", "nope", check=False)
    assert missing.returncode != 0 and 'container nope is not valid for pod trainer' in (
        missing.stderr)


def test_logs_follow_a_printing_container(kubectl: Kubectl) -> None:
    kubectl("run", "ticker", "--image=busybox", "--restart=Never", "--", "sh", "-c",
            "echo one; sleep 1; echo two; sleep 1; echo three")
    kubectl("wait", "--for=condition=Ready", "pod/ticker", "--timeout=30s")
    out = kubectl("logs", "-f", "ticker", timeout=30)
    assert out.splitlines() == ["one", "two", "three"]
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/ticker", "--timeout=30s")
    assert kubectl("logs", "ticker", "--tail=1") == "three\n"
