"""Version skew: older kubectl releases (1.27–1.33) found on the machine run a smoke of
apply, server-side apply, get, describe, explain, patch, delete and watch against the
server. Without any, the test is skipped (also under CI: they are optional on a machine).

Binaries are taken from $KUBECTL_SKEW (paths separated by ':'), else from `kubectl`,
`kubectl1.NN` and `kubectl-1.NN` on PATH; each is kept when its client minor is in range.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.processes import LineReader, ServerProcess

SKEW = range(27, 34)


def _minor(binary: str) -> int | None:
    try:
        out = subprocess.run([binary, "version", "--client", "-o", "json"],
                             capture_output=True, text=True, timeout=20).stdout
        return int(str(json.loads(out)["clientVersion"]["minor"]).rstrip("+"))
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return None


def skewed_kubectls() -> list[tuple[int, str]]:
    """(minor, path) of each older kubectl in range, one per minor."""
    wanted = os.environ.get("KUBECTL_SKEW")
    candidates = wanted.split(":") if wanted else [
        name for name in ("kubectl", *(f"kubectl1.{m}" for m in SKEW),
                          *(f"kubectl-1.{m}" for m in SKEW))]
    found: dict[int, str] = {}
    for candidate in candidates:
        path = candidate if os.sep in candidate else shutil.which(candidate)
        if not path or not Path(path).is_file():
            continue
        minor = _minor(path)
        if minor is not None and minor in SKEW and minor not in found:
            found[minor] = path
    return sorted(found.items())


SKEWED = skewed_kubectls()


@pytest.mark.skipif(not SKEWED, reason="no kubectl 1.27-1.33 on this machine")
@pytest.mark.parametrize(("minor", "binary"), SKEWED or [(0, "")],
                         ids=[f"1.{m}" for m, _ in SKEWED] or ["none"])
def test_an_older_kubectl_works(minor: int, binary: str, server: ServerProcess,
                                tmp_path: Path) -> None:
    kubectl = Kubectl(binary, server.kubeconfig)
    ns = f"skew-{minor}-{uuid.uuid4().hex[:6]}"
    kubectl("create", "namespace", ns)
    manifest = tmp_path / "app.yaml"
    manifest.write_text(yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"},
         "data": {"a": "1"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}},
    ]))
    assert "configmap/cfg created" in kubectl("apply", "-n", ns, "-f", str(manifest))
    assert "configmap/cfg configured" in kubectl(
        "apply", "-n", ns, "-f", "-", input=manifest.read_text().replace("a: '1'", "a: '2'"))
    ssa = kubectl("apply", "--server-side", "--force-conflicts", "-n", ns, "-f", "-",
                  input=yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": "ssa"}, "data": {"b": "1"}}))
    assert "serverside-applied" in ssa
    assert kubectl("get", "configmap", "cfg", "-n", ns, "-o", "jsonpath={.data.a}") == "2"
    described = kubectl("describe", "deployment", "web", "-n", ns)
    assert described.startswith("Name:") and "NewReplicaSet:   web-" in described
    assert "replicas" in kubectl("explain", "deployment.spec")
    kubectl("patch", "configmap", "cfg", "-n", ns, "-p", '{"data": {"c": "3"}}')
    watch = subprocess.Popen([binary, "get", "configmaps", "-n", ns, "-w",
                              "--output-watch-events", "-o",
                              "jsonpath={.type} {.object.metadata.name}{'\\n'}"],
                             env={**os.environ, "KUBECONFIG": str(server.kubeconfig)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stdout is not None
        lines = LineReader(watch.stdout)
        lines.wait_for(lambda got: "ADDED ssa" in got)
        kubectl("delete", "configmap", "cfg", "-n", ns)
        lines.wait_for(lambda got: "DELETED cfg" in got)
    finally:
        watch.kill()
        watch.wait(10)
    kubectl("delete", "namespace", ns, "--wait=false")
