"""`fakeapi serve --runtime-config` through the real kubectl v1.37: the device-taint demo's
v1beta2 DeviceTaintRule applies unchanged and reads at v1, a PodGroup written at v1alpha3 reads
at v1beta1, `kubectl explain` knows the enabled version, a claim template written at v1 reads in
v1beta1's shape (a second --runtime-config flag adds v1beta1); without the flag the same apply is
kubectl's "no matches"; a version 1.37 no longer has refuses the start as upstream does."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.kubectl import Kubectl, require_kubectl
from tests.support.paths import ROOT
from tests.support.processes import start_server

EXAMPLES = ROOT / "tests" / "data" / "dra-example-driver" / "examples"
TAINT_RULE = (EXAMPLES / "device-taints-tolerations" / "device-taint-pod-noschedule"
              / "3-device-taint-rule.yaml")
PODGROUP_DEMO = EXAMPLES / "podgroup-resourceclaimtemplate" / "podgroup-resourceclaimtemplate.yaml"
TEMPLATE_DEMO = EXAMPLES / "basic-resourceclaimtemplate" / "basic-resourceclaimtemplate.yaml"
RUNTIME_CONFIG = "resource.k8s.io/v1beta2=true,scheduling.k8s.io/v1alpha3=true"


def _kubectl(tmp: Path, *extra: str) -> Iterator[Kubectl]:
    srv = start_server(tmp / "data", *extra)
    try:
        yield Kubectl(require_kubectl(), srv.kubeconfig)
    finally:
        assert srv.stop() == 0


@pytest.fixture(scope="module")
def enabled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl against a server serving the off-by-default versions."""
    yield from _kubectl(tmp_path_factory.mktemp("runtime-on"), "--feature-gates",
                        "GenericWorkload=true", "--runtime-config", RUNTIME_CONFIG,
                        "--runtime-config", "resource.k8s.io/v1beta1=true")  # flags merge


@pytest.fixture(scope="module")
def default(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl against a server without --runtime-config."""
    yield from _kubectl(tmp_path_factory.mktemp("runtime-off"), "--feature-gates",
                        "GenericWorkload=true")


def test_the_v1beta2_taint_rule_demo_applies_unchanged(enabled: Kubectl, tmp_path: Path
                                                       ) -> None:
    assert "devicetaintrule.resource.k8s.io/example created" in enabled(
        "apply", "-f", str(TAINT_RULE))
    at_v1 = json.loads(enabled("get", "devicetaintrules.v1.resource.k8s.io", "example",
                               "-o", "json"))
    at_beta2 = json.loads(enabled("get", "devicetaintrules.v1beta2.resource.k8s.io", "example",
                                  "-o", "json"))
    assert at_v1["apiVersion"] == "resource.k8s.io/v1"
    assert at_beta2 == {**at_v1, "apiVersion": "resource.k8s.io/v1beta2"}
    assert "unchanged" in enabled("apply", "-f", str(TAINT_RULE))
    assert "DeviceTaintRuleSpec" in enabled("explain", "devicetaintrules.spec",
                                            "--api-version=resource.k8s.io/v1beta2")


def test_a_v1alpha3_podgroup_reads_at_v1beta1(enabled: Kubectl, tmp_path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(PODGROUP_DEMO.read_text()) if d]
    group = next(d for d in docs if d["kind"] == "PodGroup")
    namespace = next(d for d in docs if d["kind"] == "Namespace")
    manifest = tmp_path / "podgroup.yaml"
    # the demo's PodGroup at the alpha version 1.37 has (v1alpha2 is gone)
    manifest.write_text(yaml.safe_dump_all(
        [namespace, {**group, "apiVersion": "scheduling.k8s.io/v1alpha3"}]))
    enabled("apply", "-f", str(manifest))
    ns = group["metadata"]["namespace"]
    at_beta1 = json.loads(enabled("get", "podgroups.v1beta1.scheduling.k8s.io", "group-1",
                                  "-n", ns, "-o", "json"))
    assert at_beta1["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert at_beta1["spec"]["schedulingPolicy"] == group["spec"]["schedulingPolicy"]


def test_a_claim_template_written_at_v1_reads_at_v1beta1(enabled: Kubectl) -> None:
    """The demo's template, applied unchanged at v1, in v1beta1's shape: the request's
    `exactly` fields at its top."""
    enabled("apply", "-f", str(TEMPLATE_DEMO))
    ns = "basic-resourceclaimtemplate"
    at_v1 = json.loads(enabled("get", "resourceclaimtemplates.v1.resource.k8s.io",
                               "single-gpu", "-n", ns, "-o", "json"))
    at_beta1 = json.loads(enabled("get", "resourceclaimtemplates.v1beta1.resource.k8s.io",
                                  "single-gpu", "-n", ns, "-o", "json"))
    assert at_beta1["apiVersion"] == "resource.k8s.io/v1beta1"
    [request] = at_v1["spec"]["spec"]["devices"]["requests"]
    assert at_beta1["spec"]["spec"]["devices"]["requests"] == [
        {"name": request["name"], **request["exactly"]}]
    assert at_beta1["metadata"] == at_v1["metadata"]
    table = enabled("get", "resourceclaimtemplates.v1beta1.resource.k8s.io", "-n", ns)
    assert table.split()[:3] == ["NAME", "AGE", "single-gpu"], table
    assert "ResourceClaimTemplate" in enabled("get", "resourceclaimtemplates.v1beta1"
                                              ".resource.k8s.io", "-n", ns, "-o", "yaml")


def test_without_the_flag_kubectl_finds_no_v1beta2(default: Kubectl) -> None:
    failed = default.run("apply", "-f", str(TAINT_RULE), check=False)
    assert failed.returncode != 0
    assert ('no matches for kind "DeviceTaintRule" in version "resource.k8s.io/v1beta2"'
            in failed.stderr)


@pytest.mark.parametrize(("config", "message"), [
    ("scheduling.k8s.io/v1alpha2=true",
     "group version scheduling.k8s.io/v1alpha2 that has not been registered"),
    ("api/all=maybe", "invalid value api/all=maybe"),
])
def test_a_refused_runtime_config_stops_the_start(tmp_path: Path, config: str,
                                                  message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                           "--data-dir", str(tmp_path / "data"), "--runtime-config", config],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 1
    assert done.stderr.strip() == f"fakeapi: refusing to start: --runtime-config: {message}"
    assert not (tmp_path / "data" / "events.log").exists()
