"""The real kubectl v1.37 against a real `fakeapi serve` process (HTTPS, admin certificate)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.processes import LineReader
from tests.support.seeds import claim_manifest

SEEDS = sorted((Path(__file__).parent.parent / "data" / "seeds").glob("*.yaml"))
_COUNTER = itertools.count()


def _make_ns(kubectl: Kubectl, name: str) -> None:
    kubectl("apply", "-f", "-", input=f"apiVersion: v1\nkind: Namespace\nmetadata:\n"
                                      f"  name: {name}\n")


def _get(kubectl: Kubectl, doc: dict) -> dict:
    """The stored object a manifest document names."""
    group = doc["apiVersion"].rpartition("/")[0]
    args = ["get", f"{doc['kind'].lower()}.{group}".rstrip("."), doc["metadata"]["name"],
            "-o", "json"]
    if doc["metadata"].get("namespace"):
        args += ["-n", doc["metadata"]["namespace"]]
    return json.loads(kubectl(*args))


def _contains(got: object, want: object) -> bool:
    """Whether `got` has everything `want` has (dicts may carry more keys, e.g. defaults)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and _contains(got[k], v)
                                             for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            _contains(g, w) for g, w in zip(got, want, strict=True))
    return got == want


@pytest.fixture
def ns(kubectl: Kubectl) -> str:
    """A fresh namespace per test."""
    name = f"e2e-{next(_COUNTER)}"
    _make_ns(kubectl, name)
    return name


def _claim(kubectl: Kubectl, ns: str, name: str = "c1") -> None:
    claim = claim_manifest(name, namespace=ns, labels={"app": "demo"})
    kubectl("apply", "-f", "-", input=claim)


def test_version_and_api_resources(kubectl: Kubectl) -> None:
    out = json.loads(kubectl("version", "-o", "json"))
    assert out["serverVersion"]["minor"] == "37"
    resources = kubectl("api-resources", "-o", "name")
    for name in ("resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io",
                 "podgroups.scheduling.k8s.io", "pods", "namespaces",
                 "resourcepoolstatusrequests.resource.k8s.io"):
        assert name in resources.split()


@pytest.mark.parametrize("server_side", [False, True], ids=["client-side", "server-side"])
def test_apply_every_seed_example(kubectl: Kubectl, server_side: bool) -> None:
    extra = ["--server-side"] if server_side else []
    for path in SEEDS:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        kubectl("apply", "-f", str(path), *extra)
        stored = [_get(kubectl, doc) for doc in docs]
        for doc, got in zip(docs, stored, strict=True):
            assert got["metadata"]["uid"]
            if "spec" in doc and doc["kind"] != "Pod":
                # stored = what was applied plus server defaults (e.g. allocationMode)
                assert _contains(got["spec"], doc["spec"]), (path.name, got["spec"])
        # applying again stores nothing new (kubectl may still send a patch: list items
        # carry server defaults, as on a real cluster)
        kubectl("apply", "-f", str(path), *extra)
        again = [_get(kubectl, doc) for doc in docs]
        assert [o["metadata"]["resourceVersion"] for o in again] == [
            o["metadata"]["resourceVersion"] for o in stored], path.name
        if any(d["kind"] == "ResourcePoolStatusRequest" for d in docs):
            # answered at once and frozen from then on: delete to re-run (seed step 4)
            kubectl("delete", "-f", str(path), "--wait")


@pytest.mark.parametrize("fmt,check", [
    ("yaml", lambda out: yaml.safe_load(out)["metadata"]["name"] == "c1"),
    ("json", lambda out: json.loads(out)["spec"]["devices"]["requests"][0]["name"] == "gpu"),
    ("wide", lambda out: out.split()[0] == "NAME" and "c1" in out),
    ("custom-columns=N:.metadata.name,REQ:.spec.devices.requests[0].name",
     lambda out: out.split() == ["N", "REQ", "c1", "gpu"]),
    ("jsonpath={.spec.devices.requests[0].exactly.deviceClassName}",
     lambda out: out == "gpu.example.com"),
])
def test_get_output_formats(kubectl: Kubectl, ns: str, fmt: str,
                            check: Callable[[str], bool]) -> None:
    _claim(kubectl, ns)
    out = kubectl("get", "resourceclaim", "c1", "-n", ns, "-o", fmt)
    assert check(out), out


def test_get_table_columns(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    lines = kubectl("get", "resourceclaims", "-n", ns).splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE"]
    assert lines[1].split()[:2] == ["c1", "pending"]


def test_label_selector_and_field_selector(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns, "a")
    _claim(kubectl, ns, "b")
    kubectl("label", "resourceclaim", "b", "-n", ns, "tier=gold")
    assert kubectl("get", "resourceclaims", "-n", ns, "-l", "tier=gold", "-o", "name").split() \
        == ["resourceclaim.resource.k8s.io/b"]
    out = kubectl("get", "resourceclaims", "-n", ns, "--field-selector", "metadata.name=a",
                  "-o", "name")
    assert out.split() == ["resourceclaim.resource.k8s.io/a"]


def test_label_annotate_patch_types(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    kubectl("label", "resourceclaim", "c1", "-n", ns, "color=blue")
    kubectl("annotate", "resourceclaim", "c1", "-n", ns, "note=hello")
    kubectl("patch", "resourceclaim", "c1", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"labels":{"merge":"yes"}}}')
    kubectl("patch", "resourceclaim", "c1", "-n", ns, "--type=json",
            "-p", '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]')
    kubectl("patch", "resourceclaim", "c1", "-n", ns,
            "-p", '{"metadata":{"finalizers":["example.com/keep"]}}')
    obj = json.loads(kubectl("get", "resourceclaim", "c1", "-n", ns, "-o", "json"))
    assert obj["metadata"]["labels"] == {"app": "demo", "color": "blue", "merge": "yes",
                                         "json": "yes"}
    assert obj["metadata"]["annotations"]["note"] == "hello"
    assert obj["metadata"]["finalizers"] == ["example.com/keep"]
    kubectl("patch", "resourceclaim", "c1", "-n", ns, "--type=json",
            "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')


def test_edit_with_editor(kubectl: Kubectl, ns: str, tmp_path: Path) -> None:
    _claim(kubectl, ns)
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\np = sys.argv[1]\ns = open(p).read()\n"
                      "open(p, 'w').write(s.replace('app: demo', 'app: edited'))\n")
    kubectl("edit", "resourceclaim", "c1", "-n", ns,
            env={"KUBE_EDITOR": f"{sys.executable} {editor}"})
    out = kubectl("get", "resourceclaim", "c1", "-n", ns, "-o", "jsonpath={.metadata.labels.app}")
    assert out == "edited"


def test_describe(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    out = kubectl("describe", "resourceclaim", "c1", "-n", ns)
    assert "Name:" in out and "c1" in out and "gpu.example.com" in out


def test_delete_waits_and_finalizers(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    kubectl("patch", "resourceclaim", "c1", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl("delete", "resourceclaim", "c1", "-n", ns, "--wait=false")
    obj = json.loads(kubectl("get", "resourceclaim", "c1", "-n", ns, "-o", "json"))
    assert obj["metadata"]["deletionTimestamp"]
    kubectl("patch", "resourceclaim", "c1", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}')
    res = kubectl.run("get", "resourceclaim", "c1", "-n", ns, check=False)
    assert res.returncode != 0 and "NotFound" in res.stderr
    _claim(kubectl, ns, "c2")
    kubectl("delete", "resourceclaim", "c2", "-n", ns, timeout=20)  # waits for the deletion
    assert kubectl("get", "resourceclaims", "-n", ns, "-o", "name") == ""


def test_wait_for_condition_and_jsonpath(kubectl: Kubectl, server: object, ns: str) -> None:
    _claim(kubectl, ns)
    kubectl("wait", "--for=jsonpath={.spec.devices.requests[0].name}=gpu",
            "resourceclaim/c1", "-n", ns, "--timeout=10s")
    kubectl("run", "p1", "-n", ns, "--image=registry.k8s.io/pause:3.10", "--restart=Never")
    # -v=2 logs "Caches populated" once its watch is open and holds the pod (not yet Ready)
    waiter = subprocess.Popen(
        [kubectl.binary, "wait", "--for=condition=Ready", "pod/p1", "-n", ns, "--timeout=20s",
         "-v=2"],
        env={**os.environ, "KUBECONFIG": str(kubectl.kubeconfig)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert waiter.stderr is not None
    log = LineReader(waiter.stderr)
    log.wait_for(lambda lines: any('"Caches populated"' in line for line in lines))
    assert waiter.poll() is None, "kubectl wait returned before the condition was met"
    status = {"status": {"phase": "Running", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
    kubectl("patch", "pod", "p1", "-n", ns, "--subresource=status", "--type=merge",
            "-p", json.dumps(status))
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, "\n".join(log.rest())
    assert "condition met" in out


def test_get_watch_streams_changes(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    c1, c2 = "resourceclaim.resource.k8s.io/c1", "resourceclaim.resource.k8s.io/c2"
    watcher = subprocess.Popen(
        [kubectl.binary, "get", "resourceclaims", "-n", ns, "-w", "-o", "name",
         "--request-timeout=5s"],
        env={**os.environ, "KUBECONFIG": str(kubectl.kubeconfig)},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert watcher.stdout is not None
    out = LineReader(watcher.stdout)
    try:
        # the listed claim is printed first; the watch then resumes from the list's revision
        out.wait_for(lambda lines: c1 in lines)
        _claim(kubectl, ns, "c2")
        kubectl("label", "resourceclaim", "c1", "-n", ns, "x=y")
        lines = out.wait_for(lambda lines: lines.count(c1) >= 2 and c2 in lines)
    finally:
        watcher.terminate()
        watcher.wait(10)
    assert lines.count(c1) >= 2
    assert c2 in lines


def test_explain_requests(kubectl: Kubectl) -> None:
    out = kubectl("explain", "resourceclaim.spec.devices.requests")
    assert "firstAvailable" in out and "exactly" in out


def test_delete_namespace_removes_contents(kubectl: Kubectl, ns: str) -> None:
    _claim(kubectl, ns)
    kubectl("apply", "-n", ns, "-f", "-",
            input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {a: b}\n")
    kubectl("delete", "namespace", ns, timeout=30)
    assert kubectl.run("get", "namespace", ns, check=False).returncode != 0
    _make_ns(kubectl, ns)
    assert kubectl("get", "resourceclaims,configmaps", "-n", ns, "-o", "name") == ""
