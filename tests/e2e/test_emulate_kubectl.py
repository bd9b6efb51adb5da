"""`fakeapi emulate` against an API-only `fakeapi serve --components none --nodes 0`: the
scheduler, the claim controller and two emulated nodes run in a process of their own, over
HTTPS, each under the identity it has in process; the real kubectl v1.37 runs the
dra-example-driver's gpu-test1 (two pods, a GPU each, claims from a template) to Ready and
deleting the pods cleans up their claims; `kubectl logs` (and `-f`, and `exec`) of a pod on an
emulated node reach its kubelet API through the server's proxy, and once that process is
killed they fail with upstream's dial error. A server emulate can't use is a clear exit 1."""

from __future__ import annotations

import base64
import functools
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.auth.tls import ensure_pki
from kubelet_emu.node_dirs import LOGS
from kubelet_emu.settings import PROFILE_ANNOTATION, shard_of
from tests.support.demos import manifest
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import (
    EmulateProcess,
    ServerProcess,
    fakeapi_command,
)
from tests.support.waiting import poll

Obj = dict[str, Any]
DEMO = next(s for s in yaml.safe_load((ROOT / "tests" / "data" / "kubelet_emu" / "demos.yaml")
                                      .read_text()) if s["name"] == "basic-resourceclaimtemplate")
"""gpu-test1 of the dra-example-driver: two pods, one GPU each, from a claim template."""
SA = "system:serviceaccount:kube-system:"
PLANE = "scheduler,resource-claim-controller,garbage-collector,kubelet"
"""What the demo needs: binding, claims from templates, their deletion with the pods, nodes."""


def items(k: Kubectl, *args: str) -> list[Obj]:
    return list(json.loads(k("get", *args, "-o", "json"))["items"])


def actors(k: Kubectl, kind: str, ns: str) -> set[tuple[str, str]]:
    """(actor, verb) of every logged write of a kind in a namespace."""
    done = subprocess.run(fakeapi_command("log", "show", "--kubeconfig", str(k.kubeconfig),
                                          "--kind", kind, "-n", ns, "-o", "json"),
                          capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    return {(e["actor"], e["request"]["v"]) for e in map(json.loads, done.stdout.splitlines())
            if e.get("request")}


def test_the_gpu_demo_runs_with_the_plane_in_an_emulate_process(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    proc = emulate("--components", PLANE, "--nodes", "2")
    assert "identities=service-accounts" in proc.ready
    poll(lambda: len(items(k, "resourceslices")) == 4, what="both nodes' slices published")
    objects = manifest(DEMO)
    ns = DEMO["name"]
    k("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    k("wait", "--for=condition=Ready", "pod/pod0", "pod/pod1", "-n", ns, "--timeout=60s")
    pods = items(k, "pods", "-n", ns)
    assert {p["spec"]["nodeName"] for p in pods} <= {"worker-0", "worker-1"}
    claims = items(k, "resourceclaims", "-n", ns)
    assert sorted(c["status"]["reservedFor"][0]["name"] for c in claims) == ["pod0", "pod1"]
    assert all(c["status"]["allocation"]["devices"]["results"][0]["driver"] ==
               "gpu.example.com" for c in claims)
    assert {(SA + "kube-scheduler", "create")} <= actors(k, "pods", ns)  # the binding
    assert (SA + "kubelet", "patch") in actors(k, "pods", ns) or \
        (SA + "kubelet", "update") in actors(k, "pods", ns)
    assert (SA + "resource-claim-controller", "create") in actors(k, "resourceclaims", ns)

    k("delete", "pod", "pod0", "pod1", "-n", ns, "--timeout=60s")
    poll(lambda: items(k, "resourceclaims", "-n", ns), until=lambda c: c == [],
         what="the template's claims deleted with their pods (the garbage collector)")
    assert proc.proc.poll() is None  # still running
    k("delete", "-f", "-", "--ignore-not-found", input=yaml.safe_dump_all(objects[1:]))


def log_lines(k: Kubectl, pod: str, ns: str) -> list[str]:
    """`kubectl logs` of a pod's ctr0, a line each."""
    return k("logs", pod, "-c", "ctr0", "-n", ns).splitlines()


def test_the_quickstart_runs_with_every_component_in_one_emulate_process(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    """The issue's test: `serve --components none --nodes 0` plus one emulate process with
    all components and 2 nodes runs gpu-test1, and `kubectl logs` through serve's proxy
    shows each container's GPU environment."""
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    proc = emulate("--nodes", "2")
    assert "scheduler" in proc.field("components").split(",")
    poll(lambda: len(items(k, "resourceslices")) == 4, what="both nodes' slices published")
    objects = manifest(DEMO)
    ns = DEMO["name"]
    k("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    k("wait", "--for=condition=Ready", "pod/pod0", "pod/pod1", "-n", ns, "--timeout=60s")
    for pod in ("pod0", "pod1"):
        lines = poll(functools.partial(log_lines, k, pod, ns),
                     what=f"{pod}'s export output",
                     until=lambda ls: any(t.startswith("declare -x GPU_DEVICE_") for t in ls))
        devices = [t for t in lines if re.fullmatch(r'declare -x GPU_DEVICE_\d+="gpu-\d+"', t)]
        assert len(devices) == 1, lines  # one GPU each, as the quickstart's output shows
        assert any(t.startswith(devices[0].partition("=")[0] + "_SHARING_STRATEGY=")
                   for t in lines)
    k("delete", "namespace", ns, "--wait=false")


def gpu_pod(name: str, node: str, ns: str) -> list[Obj]:
    """A claim of one GPU and a pod that uses it, pinned to `node` by its hostname label."""
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
             "metadata": {"name": name, "namespace": ns},
             "spec": {"devices": {"requests": [
                 {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
           "spec": {"nodeSelector": {"kubernetes.io/hostname": node},
                    "containers": [{"name": "c", "image": "ubuntu",
                                    "command": ["sh", "-c", "echo hi; sleep 9999"],
                                    "resources": {"claims": [{"name": "gpu"}]}}],
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": name}]}}
    return [claim, pod]


def test_two_shards_run_disjoint_nodes_and_adopt_a_clients_node_once(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    nodes = [f"worker-{i}" for i in range(4)]
    owner = {n: shard_of(n, 2) for n in [*nodes, "adopted-b"]}
    assert set(owner.values()) == {0, 1}  # both shards have nodes
    shards = [emulate("--components", "scheduler,kubelet" if i == 0 else "kubelet",
                      "--nodes", "4", "--shard", f"{i}/2") for i in range(2)]
    k("create", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "v1", "kind": "Node", "metadata": {
            "name": "adopted-b", "annotations": {PROFILE_ANNOTATION: "default"}}}))
    poll(lambda: len(items(k, "resourceslices")) == 10, what="5 nodes' slices published")
    ns = "shards"
    k("create", "namespace", ns)
    objects = [o for i, n in enumerate(nodes) for o in gpu_pod(f"p{i}", n, ns)]
    k("apply", "-f", "-", input=yaml.safe_dump_all(objects))
    k("wait", "--for=condition=Ready", *(f"pod/p{i}" for i in range(4)), "-n", ns,
      "--timeout=60s")
    for pod in items(k, "pods", "-n", ns):
        node, uid = pod["spec"]["nodeName"], pod["metadata"]["uid"]
        logs = [s.data_dir / "nodes" / node / LOGS / f"{ns}_{pod['metadata']['name']}_{uid}"
                for s in shards]
        assert [d.exists() for d in logs] == [owner[node] == 0, owner[node] == 1], node
    for i, shard in enumerate(shards):  # each shard has folders of its own nodes only
        assert {d.name for d in (shard.data_dir / "nodes").iterdir()} == \
            {n for n, o in owner.items() if o == i}
    k("delete", "namespace", ns, "--wait=false")
    k("delete", "node", "adopted-b")


def bindings(k: Kubectl, ns: str) -> list[str]:
    """The pod of each logged binding in a namespace, one entry per binding write."""
    done = subprocess.run(fakeapi_command("log", "show", "--kubeconfig", str(k.kubeconfig),
                                          "--kind", "pods", "-n", ns, "-o", "json"),
                          capture_output=True, text=True, cwd=ROOT, timeout=60, check=True)
    return sorted(e["name"] for e in map(json.loads, done.stdout.splitlines())
                  if (e.get("request") or {}).get("p", "").endswith("/binding"))


def plain_pod(name: str, ns: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "ubuntu"}]}}


FAST_LEASE = ("--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s",
              "--leader-elect-retry-period", "500ms")


def test_two_schedulers_elect_one_and_the_other_takes_over_after_kill_9(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    emulate("--components", "kubelet", "--nodes", "2")
    candidates = [emulate("--components", "scheduler", *FAST_LEASE) for _ in range(2)]
    identity = {c.field("identity"): c for c in candidates}

    def holder() -> str:
        lease = json.loads(k("get", "lease", "kube-scheduler", "-n", "kube-system",
                             "-o", "json", check=False) or "{}")
        return str((lease.get("spec") or {}).get("holderIdentity") or "")

    first = poll(holder, what="a scheduler holds the Lease", until=lambda h: h in identity)
    ns = "failover"
    k("create", "namespace", ns)
    k("create", "-f", "-", input=yaml.safe_dump_all([plain_pod(f"p{i}", ns) for i in range(2)]))
    k("wait", "--for=condition=PodScheduled", "pod/p0", "pod/p1", "-n", ns, "--timeout=30s")
    identity[first].proc.kill()  # kill -9: the Lease is not released
    identity[first].proc.wait(10)
    k("create", "-f", "-", input=yaml.safe_dump_all([plain_pod(f"p{i}", ns)
                                                     for i in range(2, 4)]))
    second = poll(holder, what="the other scheduler takes the Lease", timeout=15,
                  until=lambda h: h in identity and h != first)
    k("wait", "--for=condition=PodScheduled", "pod/p2", "pod/p3", "-n", ns, "--timeout=30s")
    assert identity[second].proc.poll() is None
    assert bindings(k, ns) == ["p0", "p1", "p2", "p3"]  # each pod bound once
    k("delete", "namespace", ns, "--wait=false")


def test_kubectl_logs_and_exec_reach_the_kubelet_api_of_an_emulate_process(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    proc = emulate("--components", "kubelet", "--nodes", "1")
    port = int(proc.field("kubelet").rpartition(":")[2])
    node = poll(lambda: json.loads(k("get", "node", "worker-0", "-o", "json", check=False)
                                   or "{}"), what="worker-0 advertises the kubelet API",
                until=lambda n: n.get("status", {}).get("daemonEndpoints") == {
                    "kubeletEndpoint": {"Port": port}})
    assert {"type": "InternalIP", "address": "127.0.0.1"} in node["status"]["addresses"]
    ns = "kubelet-api"
    k("create", "namespace", ns)
    k("create", "-f", "-", input=yaml.safe_dump(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "printer", "namespace": ns},
         "spec": {"nodeName": "worker-0", "containers": [{
             "name": "c", "image": "ubuntu",
             "command": ["sh", "-c", "echo first; sleep 2; echo later; sleep 9999"]}]}}))
    k("wait", "--for=condition=Ready", "pod/printer", "-n", ns, "--timeout=60s")
    assert k("logs", "printer", "-n", ns).startswith("first\n")
    follow = subprocess.Popen([kubectl_binary, "logs", "-f", "printer", "-n", ns],
                              stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "KUBECONFIG": str(k.kubeconfig)})
    try:
        assert follow.stdout is not None
        assert [follow.stdout.readline() for _ in range(2)] == ["first\n", "later\n"]
    finally:
        follow.kill()
        follow.wait(10)
    assert k("exec", "printer", "-n", ns, "--", "echo", "hello") == "hello\n"

    proc.proc.kill()  # kill -9: nothing listens on the advertised port any more
    proc.proc.wait(10)
    gone = k.run("logs", "printer", "-n", ns, check=False, timeout=30)
    assert gone.returncode != 0
    assert (f'Error from server: Get "https://127.0.0.1:{port}/containerLogs/{ns}/printer/c": '
            f"dial tcp 127.0.0.1:{port}: connect: connection refused") in gone.stderr
    k("delete", "namespace", ns, "--wait=false")


def _kubeconfig(source: Path, target: Path, change: Callable[[Obj], None]) -> Path:
    cfg = yaml.safe_load(source.read_text())
    change(cfg)
    target.write_text(yaml.safe_dump(cfg))
    return target


def _unreachable(cfg: Obj) -> None:
    cfg["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"


def _other_ca(cfg: Obj) -> None:
    pki = ensure_pki(Path(tempfile.mkdtemp(prefix="fa-ca-")))
    cfg["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(
        pki.ca_cert.read_bytes()).decode()


def _unknown_token(cfg: Obj) -> None:
    cfg["users"][0]["user"] = {"token": "no-such-token"}


@pytest.mark.parametrize(("change", "message"), [
    (_unreachable, "cannot reach the API server at https://127.0.0.1:1"),
    (_other_ca, "certificate verify failed"),
    (_unknown_token, "refused (401 Unauthorized)"),
], ids=["unreachable", "another CA", "no rights"])
def test_a_server_it_cannot_use_is_exit_1_saying_why(
        api_only: ServerProcess, tmp_path: Path, change: Callable[[Obj], None],
        message: str) -> None:
    kubeconfig = _kubeconfig(api_only.kubeconfig, tmp_path / "kubeconfig", change)
    done = subprocess.run(fakeapi_command("emulate", "--kubeconfig", str(kubeconfig),
                                          "--nodes", "0"),
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1, done.stderr
    assert message in done.stderr
    assert done.stdout == ""
