"""Everyday kubectl v1.37 commands against a real server process: cluster-info, deployments
(rollout status, scale, undo), jobs, tokens, secrets, drain with eviction, apply --prune
without an allowlist, debug, explain from OpenAPI v2, logs/exec without a kubelet, and a
CRD with a CEL rule.

Where a command waits for pods to run, a small stand-in kubelet (the official Python client,
a real client of the same server) marks them Running and Ready, or Succeeded, through
`pods/status`, as a kubelet would.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config

from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess
from tests.support.waiting import poll

Obj = dict[str, object]


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.fixture
def ns(fresh_namespace: str) -> str:
    return fresh_namespace


@pytest.fixture(scope="module")
def core(server: ServerProcess) -> Iterator[client.CoreV1Api]:
    api = config.new_client_from_config(config_file=str(server.kubeconfig))
    yield client.CoreV1Api(api)
    api.close()


class StandInKubelet:
    """Runs every pod of a namespace: Running and Ready (or Succeeded) via pods/status."""

    def __init__(self, core: client.CoreV1Api, namespace: str, phase: str = "Running") -> None:
        self.core, self.namespace, self.phase = core, namespace, phase
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> StandInKubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for pod in self.core.list_namespaced_pod(self.namespace).items:
                assert pod.metadata and pod.metadata.name and pod.status, pod
                if pod.metadata.deletion_timestamp:  # a kubelet ends a graceful deletion
                    self.core.delete_namespaced_pod(pod.metadata.name, self.namespace,
                                                    grace_period_seconds=0)
                    continue
                if pod.status.phase != "Pending":
                    continue
                ready = "True" if self.phase == "Running" else "False"
                self.core.patch_namespaced_pod_status(pod.metadata.name, self.namespace, {
                    "status": {"phase": self.phase,
                               "conditions": [{"type": "Ready", "status": ready}]}})


def test_cluster_info(kubectl: Kubectl, server: ServerProcess) -> None:
    out = kubectl("cluster-info")
    assert f"Kubernetes control plane is running at {server.url}" in out
    assert "kubernetes" in kubectl("get", "endpointslices", "-n", "default")


def test_a_deployment_rolls_out_scales_and_rolls_back(kubectl: Kubectl,
                                                      core: client.CoreV1Api, ns: str) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2", "-n", ns)
    with StandInKubelet(core, ns):
        out = kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        assert 'deployment "web" successfully rolled out' in out
        kubectl("scale", "deployment/web", "--replicas=3", "-n", ns)
        kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        assert kubectl("get", "deployment", "web", "-n", ns, "-o",
                       "jsonpath={.status.availableReplicas}") == "3"
        kubectl("set", "image", "deployment/web", "nginx=nginx:2", "-n", ns)
        kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        history = kubectl("rollout", "history", "deployment/web", "-n", ns)
        assert "1 " in history and "2 " in history
        kubectl("rollout", "undo", "deployment/web", "-n", ns)
        kubectl("rollout", "status", "deployment/web", "-n", ns, "--timeout=60s")
        image = kubectl("get", "deployment", "web", "-n", ns, "-o",
                        "jsonpath={.spec.template.spec.containers[0].image}")
        assert image == "nginx:1"
        # read while the stand-in kubelet still runs the pods, as a real one would (once in
        # a full suite the table read after it stopped showed the rolled-back pods unready)
        table = poll(lambda: kubectl("get", "deployment", "web", "-n", ns),
                     what="the rolled-back deployment 3/3 ready and available",
                     until=lambda t: t.split("\n")[1].split()[1:4] == ["3/3", "3", "3"])
    assert table.split("\n")[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]


def test_a_job_completes(kubectl: Kubectl, core: client.CoreV1Api, ns: str) -> None:
    kubectl("create", "job", "pi", "--image=perl", "-n", ns, "--", "perl", "-e", "print 1")
    with StandInKubelet(core, ns, phase="Succeeded"):
        kubectl("wait", "--for=condition=complete", "job/pi", "-n", ns, "--timeout=60s")
    row = kubectl("get", "job", "pi", "-n", ns, "--no-headers").split()
    assert row[1:3] == ["Complete", "1/1"]


def _wait_for_default_account(kubectl: Kubectl, ns: str) -> None:
    poll(lambda: kubectl.run("get", "serviceaccount", "default", "-n", ns, check=False),
         until=lambda res: res.returncode == 0, what=f"the default ServiceAccount of {ns}")


def test_a_token_of_the_default_account_authenticates(kubectl: Kubectl, server: ServerProcess,
                                                      ns: str, tmp_path: Path) -> None:
    _wait_for_default_account(kubectl, ns)
    token = kubectl("create", "token", "default", "-n", ns).strip()
    assert token.count(".") == 2
    admin = yaml.safe_load(server.kubeconfig.read_text())
    cluster = admin["clusters"][0]
    kubeconfig = tmp_path / "sa-kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": cluster["name"], "user": "sa",
                                                "namespace": ns}}],
        "current-context": "sa"}))
    as_sa = Kubectl(kubectl.binary, kubeconfig)
    assert as_sa("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}") == (
        f"system:serviceaccount:{ns}:default")
    denied = as_sa.run("get", "pods", check=False)
    assert denied.returncode != 0
    assert (f'User "system:serviceaccount:{ns}:default" cannot list resource "pods"'
            in denied.stderr)
    kubectl("create", "rolebinding", "sa-view", "--clusterrole=view",
            f"--serviceaccount={ns}:default", "-n", ns)
    assert as_sa.run("get", "pods").returncode == 0
    kubectl("delete", "serviceaccount", "default", "-n", ns)
    gone = as_sa.run("get", "pods", check=False)
    assert gone.returncode != 0 and "Unauthorized" in gone.stderr


def test_a_generic_secret(kubectl: Kubectl, ns: str) -> None:
    kubectl("create", "secret", "generic", "creds", "--from-literal=user=admin", "-n", ns)
    data = kubectl("get", "secret", "creds", "-n", ns, "-o", "jsonpath={.data.user}")
    assert base64.b64decode(data) == b"admin"
    assert kubectl("get", "secret", "creds", "-n", ns, "--no-headers").split()[1:3] == [
        "Opaque", "1"]


def test_drain_evicts_and_honours_the_budget(kubectl: Kubectl, core: client.CoreV1Api,
                                             ns: str) -> None:
    node = _unique("drain-node")
    kubectl("create", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
    for name in ("a", "b"):
        kubectl("create", "-f", "-", "-n", ns, input=yaml.safe_dump({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "db"}},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "db"}]}}))
    kubectl("create", "pdb", "db", "--selector=app=db", "--min-available=2", "-n", ns)
    with StandInKubelet(core, ns):
        kubectl("wait", "--for=jsonpath={.status.currentHealthy}=2", "pdb/db", "-n", ns,
                "--timeout=30s")
        blocked = kubectl.run("drain", node, "--force", "--timeout=3s", check=False,
                              timeout=60)
        assert blocked.returncode != 0
        assert "Cannot evict pod as it would violate the pod's disruption budget" in (
            blocked.stdout + blocked.stderr)
        assert kubectl("get", "node", node, "-o", "jsonpath={.spec.unschedulable}") == "true"
        kubectl("delete", "pdb", "db", "-n", ns)
        out = kubectl("drain", node, "--force", "--timeout=30s", timeout=60)
    assert "evicting pod" in out and f"node/{node} drained" in out
    assert kubectl("get", "pods", "-n", ns, "-o", "name") == ""
    kubectl("delete", "node", node)


def test_apply_prune_without_an_allowlist(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    def manifest(*names: str) -> Path:
        path = tmp_path / f"{'-'.join(names)}.yaml"
        path.write_text(yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": n, "labels": {"set": "prune"}}, "data": {"k": n}}
            for n in names]))
        return path

    kubectl("apply", "-n", ns, "-f", str(manifest("one", "two")))
    result = kubectl.run("apply", "--prune", "-l", "set=prune", "-n", ns, "-f",
                         str(manifest("one")))
    assert "configmap/two pruned" in result.stdout, result.stdout
    assert "error" not in result.stderr.lower(), result.stderr  # (kubectl warns of -n)
    assert kubectl("get", "configmaps", "-n", ns, "-l", "set=prune", "-o", "name") == (
        "configmap/one\n")


def test_debug_adds_an_ephemeral_container_without_a_panic(kubectl: Kubectl, ns: str) -> None:
    kubectl("run", "app", "--image=busybox", "-n", ns)
    result = kubectl.run("debug", "pod/app", "--image=busybox", "-n", ns)
    assert "panic" not in result.stderr
    names = kubectl("get", "pod", "app", "-n", ns, "-o",
                    "jsonpath={.spec.ephemeralContainers[*].name}")
    assert names.startswith("debugger-")
    copy = kubectl.run("debug", "pod/app", "--image=busybox", "--copy-to=app-copy", "-n", ns)
    assert "panic" not in copy.stderr
    assert kubectl("get", "pod", "app-copy", "-n", ns, "-o", "name") == "pod/app-copy\n"


def test_explain_from_openapi_v2(kubectl: Kubectl) -> None:
    out = kubectl("explain", "deployment.spec.strategy", "--output=plaintext-openapiv2")
    assert "KIND:     Deployment" in out and "rollingUpdate\t<Object>" in out
    raw = kubectl("get", "--raw", "/openapi/v2")
    assert '"swagger":"2.0"' in raw and "io.k8s.api.resource.v1.ResourceClaim" in raw


def test_logs_and_exec_without_a_kubelet_fail_once_and_clearly(kubectl: Kubectl,
                                                               ns: str) -> None:
    # a scheduler nobody runs: the pod stays unscheduled whatever components run
    kubectl("run", "idle", "--image=busybox", "-n", ns,
            '--overrides={"spec": {"schedulerName": "nobody"}}')
    logs = kubectl.run("logs", "idle", "-n", ns)
    assert (logs.returncode, logs.stdout) == (0, "")
    exec_ = kubectl.run("exec", "idle", "-n", ns, "--", "ls", check=False, timeout=30)
    assert exec_.returncode != 0
    assert "pod idle does not have a host assigned" in exec_.stderr
    wrong = kubectl.run("logs", "idle", "-c", "nope", "-n", ns, check=False)
    assert "container nope is not valid for pod idle" in wrong.stderr
    node = _unique("quiet-node")
    kubectl("create", "-f", "-", "-n", ns, input=yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "placed"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]}}))
    once = kubectl.run("logs", "placed", "-n", ns, check=False, timeout=30)
    assert once.returncode != 0
    assert f'node "{node}" is not run by an emulated kubelet' in once.stderr
    # -f waits for a pending pod as on any cluster (each try says why), then gives up
    follow = kubectl.run("logs", "-f", "placed", "-n", ns, "--pod-running-timeout=2s",
                         check=False, timeout=30)
    assert follow.returncode != 0
    assert "not found" not in follow.stderr and "not run by an emulated kubelet" in (
        follow.stderr)


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gpuprofiles.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "gpuprofiles", "singular": "gpuprofile",
                       "kind": "GpuProfile", "shortNames": ["gpp"]},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "additionalPrinterColumns": [
                               {"name": "Memory", "type": "integer",
                                "jsonPath": ".spec.memoryGi"}],
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object",
                                        "x-kubernetes-validations": [{
                                            "rule": "self.memoryGi <= 80",
                                            "message": "memoryGi must be at most 80"}],
                                        "properties": {"memoryGi": {"type": "integer"},
                                                       "mode": {"type": "string",
                                                                "enum": ["shared",
                                                                         "exclusive"]}}},
                               "status": {"type": "object",
                                          "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def test_a_crd_with_a_cel_rule(kubectl: Kubectl, ns: str) -> None:
    kubectl("apply", "-f", "-", input=yaml.safe_dump(CRD))
    kubectl("wait", "--for=condition=Established", "crd/gpuprofiles.example.com",
            "--timeout=30s")

    def profile(name: str, memory: int) -> str:
        return yaml.safe_dump({"apiVersion": "example.com/v1", "kind": "GpuProfile",
                               "metadata": {"name": name}, "spec": {"memoryGi": memory,
                                                                    "mode": "shared"}})

    kubectl("apply", "-n", ns, "-f", "-", input=profile("small", 40))
    assert kubectl("get", "gpp", "small", "-n", ns, "--no-headers").split()[:2] == [
        "small", "40"]
    refused = kubectl.run("apply", "-n", ns, "-f", "-", input=profile("huge", 100),
                          check=False)
    assert refused.returncode != 0
    assert 'The GpuProfile "huge" is invalid: spec: Invalid value: "object": memoryGi must be ' \
           "at most 80" in refused.stderr
    out = kubectl("explain", "gpuprofile.spec")
    assert "memoryGi" in out
    kubectl("patch", "gpp", "small", "-n", ns, "--subresource=status", "--type=merge", "-p",
            '{"status": {"ready": true}}')
    assert kubectl("get", "gpp", "small", "-n", ns, "-o", "jsonpath={.status.ready}") == "true"


def test_version_with_a_trailing_slash(kubectl: Kubectl) -> None:
    assert '"gitVersion":"v1.37.0' in kubectl("get", "--raw", "/version/")


def test_a_fresh_claim_has_an_empty_status(kubectl: Kubectl, ns: str) -> None:
    kubectl("create", "-n", ns, "-f", "-", input=yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu.example.com"}}]}}}))
    raw = kubectl("get", "--raw", f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/c")
    assert '"status":{}' in raw


def test_autoscale_and_quota(kubectl: Kubectl, ns: str) -> None:
    kubectl("create", "deployment", "web", "--image=nginx", "-n", ns)
    kubectl("autoscale", "deployment/web", "--max=3", "--cpu=50%", "-n", ns)
    row = kubectl("get", "hpa", "web", "-n", ns, "--no-headers").split()
    assert row[:2] == ["web", "Deployment/web"] and row[-4:-1] == ["1", "3", "0"]
    kubectl("create", "quota", "q", "--hard=pods=2,limits.cpu=2", "-n", ns)
    assert kubectl("get", "quota", "q", "-n", ns, "-o", "jsonpath={.spec.hard.pods}") == "2"


def test_a_port_in_use_is_one_line_not_a_traceback(server: ServerProcess,
                                                   tmp_path: Path) -> None:
    port = server.url.rsplit(":", 1)[1]
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--http", "--port", port,
                          "--data-dir", str(tmp_path / "d")], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == f"fakeapi: cannot listen on 127.0.0.1:{port}: Address already in use\n"
