"""`fakeapi emulate` when things go wrong: its `/readyz` says why it is not ready (the API
server gone, an identity without the rights an informer needs), and a second process given
the same shard refuses the nodes another process's Leases show it runs."""

from __future__ import annotations

import json
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.support.kubectl import Kubectl, token_kubectl
from tests.support.processes import EmulateProcess, ServerProcess, start_emulate, start_server
from tests.support.waiting import poll

NODE_LEASE_PROCESS = "emulator.fakeapi.dev/process"


def readyz(proc: EmulateProcess) -> tuple[int, str]:
    """(status, text) of the process's `/readyz?verbose`."""
    try:
        with urllib.request.urlopen(f"http://{proc.field('health')}/readyz?verbose",
                                    timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_readyz_lists_every_check_and_says_when_the_server_is_gone(
        kubectl_binary: str) -> None:
    data = Path(tempfile.mkdtemp(prefix="fa-", dir="/tmp"))
    server = start_server(data / "srv", "--components", "none", "--nodes", "0")
    proc = start_emulate(server.kubeconfig, data / "em", "--components", "kubelet",
                         "--nodes", "1")
    try:
        status, text = poll(lambda: readyz(proc), what="every check passes",
                            until=lambda r: r[0] == 200)
        lines = text.splitlines()
        assert lines[0] == "[+]ping ok" and lines[-1] == "readyz check passed"
        assert {"[+]apiserver ok", "[+]kubelet ok", "[+]informer:pods ok",
                "[+]informer:nodes ok"} <= set(lines)
        server.proc.kill()  # kill -9: nothing answers at the kubeconfig's address
        server.proc.wait(10)
        gone = f"[-]apiserver failed: cannot reach the API server at {server.url}"
        status, text = poll(lambda: readyz(proc), what="readyz fails saying why",
                            until=lambda r: gone in r[1])
        assert status == 500
        assert text.endswith("readyz check failed\n")
        assert proc.proc.poll() is None  # it keeps running, waiting for the server
    finally:
        proc.stop()
        shutil.rmtree(data, ignore_errors=True)


def test_readyz_says_which_informer_its_identity_may_not_list(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)
    k("create", "serviceaccount", "nodes-only", "-n", "default")
    k("create", "clusterrole", "nodes-only", "--verb=get,list,watch", "--resource=nodes")
    k("create", "clusterrolebinding", "nodes-only", "--clusterrole=nodes-only",
      "--serviceaccount=default:nodes-only")
    limited = token_kubectl(k, k("create", "token", "nodes-only", "-n", "default").strip())
    proc = start_emulate(limited.kubeconfig,
                         Path(tempfile.mkdtemp(prefix="em", dir=api_only.data_dir.parent)),
                         "--identities", "kubeconfig", "--components", "kubelet",
                         "--nodes", "0")
    try:
        status, text = poll(lambda: readyz(proc), what="the pods informer fails",
                            until=lambda r: "[-]informer:pods failed" in r[1]
                            and "[+]informer:nodes ok" in r[1])
        assert status == 500
        assert "[+]apiserver ok" in text
        line = next(t for t in text.splitlines() if t.startswith("[-]informer:pods"))
        assert ('pods is forbidden: User "system:serviceaccount:default:nodes-only" '
                'cannot list resource "pods"') in line
    finally:
        proc.stop()
        k("delete", "clusterrolebinding,clusterrole", "nodes-only")
        k("delete", "serviceaccount", "nodes-only", "-n", "default")


def test_a_second_process_on_the_same_shard_refuses_the_nodes_another_runs(
        kubectl_binary: str, api_only: ServerProcess,
        emulate: Callable[..., EmulateProcess]) -> None:
    k = Kubectl(kubectl_binary, api_only.kubeconfig)

    def port_of(node: str) -> int:
        found = json.loads(k("get", "node", node, "-o", "json"))
        return int(found["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])

    first = emulate("--components", "kubelet", "--nodes", "1", "--shard", "0/1")
    owner = first.field("identity")

    def process() -> str:
        """The process worker-0's Lease names."""
        lease = json.loads(k("get", "lease", "worker-0", "-n", "kube-node-lease", "-o",
                             "json", check=False) or "{}")
        return str(lease.get("metadata", {}).get("annotations", {}).get(NODE_LEASE_PROCESS))

    poll(process, what="worker-0's Lease names the first process", until=owner.__eq__)
    second = emulate("--components", "kubelet", "--nodes", "1", "--shard", "0/1")
    why = f"worker-0 is run by emulate process {owner} (its Lease kube-node-lease/worker-0"
    second.errors.wait_for(lambda lines: any(f"not running node {why}" in t for t in lines))
    status, text = poll(lambda: readyz(second), what="the second's kubelet says why",
                        until=lambda r: why in r[1])
    assert status == 500
    assert f"[-]kubelet failed: nodes not running yet: {why}" in text
    assert readyz(first)[0] == 200
    assert not (second.data_dir / "nodes" / "worker-0").exists()
    assert (first.data_dir / "nodes" / "worker-0").exists()
    assert process() == owner
    assert port_of("worker-0") == int(first.field("kubelet").rpartition(":")[2])

    assert first.stop() == 0  # a graceful stop releases the Lease: the second takes over
    poll(process, what="the second process renews worker-0's Lease",
         until=second.field("identity").__eq__, timeout=30)
    poll(lambda: readyz(second)[0], what="the second runs worker-0", until=lambda s: s == 200)
    poll(lambda: port_of("worker-0"), what="worker-0 advertises the second's kubelet API",
         until=int(second.field("kubelet").rpartition(":")[2]).__eq__)
    k("delete", "node", "worker-0")
