"""Feature gates through the real kubectl v1.37: served APIs, dropped fields, /metrics, refusals."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Unpack

import pytest

from tests.support.kubectl import Kubectl, RunOptions, require_kubectl
from tests.support.paths import ROOT
from tests.support.processes import start_server

SEEDS = ROOT / "tests" / "data" / "seeds"
DEFAULT = ""
"""No --feature-gates: the 1.37 defaults."""
WORKLOADS_NO_CLAIMS = "DRAResourcePoolStatus=true,GenericWorkload=true,DRADeviceTaintRules=false"


def _kubectl(tmp: Path, gates: str) -> Iterator[Kubectl]:
    binary = require_kubectl()
    extra = ("--feature-gates", gates) if gates else ()
    srv = start_server(tmp / "data", *extra)
    try:
        # a discovery cache of its own: another server may have had this port before
        yield CachedKubectl(binary, srv.kubeconfig, cache=tmp / "cache")
    finally:
        assert srv.stop() == 0


class CachedKubectl(Kubectl):
    """kubectl with a private discovery cache directory."""

    def __init__(self, binary: str, kubeconfig: Path, *, cache: Path) -> None:
        super().__init__(binary, kubeconfig)
        self.cache = cache

    def run(self, *args: str,
            **options: Unpack[RunOptions]) -> subprocess.CompletedProcess[str]:
        """Run kubectl with the private cache directory."""
        return super().run("--cache-dir", str(self.cache), *args, **options)


@pytest.fixture(scope="module")
def default_kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl against a server started without --feature-gates."""
    yield from _kubectl(tmp_path_factory.mktemp("gates-default"), DEFAULT)


@pytest.fixture(scope="module")
def workload_kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl against a server with RPSR and the Workload API but not PodGroup claims."""
    yield from _kubectl(tmp_path_factory.mktemp("gates-workload"), WORKLOADS_NO_CLAIMS)


SERVED = [
    # fixture, resources listed, resources not listed
    ("default_kubectl", ["resourceclaims.resource.k8s.io", "devicetaintrules.resource.k8s.io"],
     ["resourcepoolstatusrequests.resource.k8s.io", "podgroups.scheduling.k8s.io",
      "workloads.scheduling.k8s.io"]),
    ("workload_kubectl", ["resourcepoolstatusrequests.resource.k8s.io",
                          "podgroups.scheduling.k8s.io", "workloads.scheduling.k8s.io"],
     ["devicetaintrules.resource.k8s.io"]),
]


@pytest.mark.parametrize(("fixture", "listed", "hidden"), SERVED, ids=[s[0] for s in SERVED])
def test_api_resources_follow_the_gates(request: pytest.FixtureRequest, fixture: str,
                                        listed: list[str], hidden: list[str]) -> None:
    kubectl: Kubectl = request.getfixturevalue(fixture)
    names = kubectl("api-resources", "-o", "name").split()
    assert [n for n in listed if n not in names] == []
    assert [n for n in hidden if n in names] == []


def test_alpha_group_version_not_served_by_default(default_kubectl: Kubectl) -> None:
    versions = json.loads(default_kubectl("get", "--raw", "/apis/resource.k8s.io"))["versions"]
    assert [v["version"] for v in versions] == ["v1"]
    res = default_kubectl.run("get", "resourcepoolstatusrequests", check=False)
    assert res.returncode != 0
    assert "the server doesn't have a resource type" in res.stderr


def test_alpha_group_version_served_with_its_gate(workload_kubectl: Kubectl) -> None:
    workload_kubectl("apply", "-f", str(SEEDS / "09-check-gpus-rpsr.yaml"))
    got = json.loads(workload_kubectl("get", "resourcepoolstatusrequest", "check-gpus",
                                      "-o", "json"))
    assert got["apiVersion"] == "resource.k8s.io/v1alpha3"


LINE = 'kubernetes_feature_enabled{{name="{}",stage="{}"}} {}'
METRICS = [
    ("default_kubectl", [LINE.format("DRAResourcePoolStatus", "ALPHA", 0),
                         LINE.format("GenericWorkload", "BETA", 0),
                         LINE.format("DRAPrioritizedList", "", 1),
                         LINE.format("DRADeviceTaintRules", "", 1)]),
    ("workload_kubectl", [LINE.format("DRAResourcePoolStatus", "ALPHA", 1),
                          LINE.format("GenericWorkload", "BETA", 1),
                          LINE.format("DRADeviceTaintRules", "", 0)]),
]


@pytest.mark.parametrize(("fixture", "lines"), METRICS, ids=[m[0] for m in METRICS])
def test_metrics_show_the_gates_in_effect(request: pytest.FixtureRequest, fixture: str,
                                          lines: list[str]) -> None:
    kubectl: Kubectl = request.getfixturevalue(fixture)
    out = kubectl("get", "--raw", "/metrics").splitlines()
    assert [line for line in lines if line not in out] == []


DROPPED = [
    # fixture, seed, (kind, name, namespace), spec field dropped
    ("default_kubectl", "10-partition-type-slice.yaml", ("resourceslice", "partitioned-gpus", ""),
     "partitionTypeAttribute"),
    ("workload_kubectl", "11-check-gpu-partitions-rpsr.yaml",
     ("resourcepoolstatusrequest", "check-gpu-partitions", ""), "defaultPartitionTypeAttribute"),
    ("workload_kubectl", "02-podgroup-and-pod.yaml", ("podgroup", "training-group", "some-ns"),
     "resourceClaims"),
    ("default_kubectl", "06-derived-attributes-claim.yaml",
     ("resourceclaim", "gpu-nic-numa-alignment", "default"), None),
]


@pytest.mark.parametrize(("fixture", "seed", "target", "field"), DROPPED,
                         ids=[f"{d[0]}-{d[1]}" for d in DROPPED])
def test_disabled_fields_are_dropped_on_create(request: pytest.FixtureRequest, fixture: str,
                                               seed: str, target: tuple[str, str, str],
                                               field: str | None) -> None:
    kubectl: Kubectl = request.getfixturevalue(fixture)
    kubectl("apply", "-f", str(SEEDS / seed))
    kind, name, ns = target
    got = json.loads(kubectl("get", kind, name, "-o", "json", *(("-n", ns) if ns else ())))
    if field is not None:
        assert field not in got["spec"]
    else:  # derivedAttributes sit one level down, in each request
        assert all("derivedAttributes" not in r["exactly"]
                   for r in got["spec"]["devices"]["requests"])


REFUSED = [
    ("Foo=true", "unrecognized feature gate: Foo"),
    ("DRAResourceClaimDeviceStatus=false",
     "cannot set feature gate DRAResourceClaimDeviceStatus to false, feature is locked to true"),
    ("DRAPartitionableDevicesType=true", "DRAPartitionableDevicesType is enabled, but depends on "
     "features that are disabled: [DRAResourcePoolStatus]"),
    ("GenericWorkload", "missing bool value for GenericWorkload"),
]


@pytest.mark.parametrize(("gates", "message"), REFUSED, ids=[r[0] for r in REFUSED])
def test_bad_gates_refuse_to_start(tmp_path: Path, gates: str, message: str) -> None:
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                          "--data-dir", str(tmp_path), "--feature-gates", gates],
                         capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert res.returncode != 0
    assert "fakeapi ready" not in res.stdout
    assert f'invalid argument "{gates}" for "--feature-gates" flag: {message}' in res.stderr
