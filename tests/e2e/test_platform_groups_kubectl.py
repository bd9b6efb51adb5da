"""The platform groups charts and tools install objects of (admissionregistration.k8s.io,
storage.k8s.io, node.k8s.io, autoscaling/v1, flowcontrol.apiserver.k8s.io,
apiregistration.k8s.io), through the real kubectl v1.37 against a server process: each object
of tests/data/api/platform/objects.yaml applies, reads back with upstream's defaults, shows
its columns in `kubectl get`, is explained, and deletes."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT

CASES: list[dict[str, Any]] = yaml.safe_load(
    (ROOT / "tests/data/api/platform/objects.yaml").read_text())


def _resource(obj: dict[str, Any]) -> str:
    group = obj["apiVersion"].rpartition("/")[0]
    plural = obj["kind"].lower() + ("es" if obj["kind"].endswith("s") else "s")
    plural = plural.replace("policys", "policies").replace("capacitys", "capacities")
    return ".".join(filter(None, (plural, obj["apiVersion"].rpartition("/")[2], group)))


def _contains(found: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(found, dict) and all(_contains(found.get(k), v)
                                               for k, v in expected.items())
    if isinstance(expected, list):  # each item holds the expected one's fields, defaults too
        return isinstance(found, list) and len(found) == len(expected) and all(
            _contains(f, e) for f, e in zip(found, expected, strict=True))
    return bool(found == expected)


@pytest.mark.parametrize("case", CASES, ids=[c["object"]["kind"] for c in CASES])
def test_kubectl_applies_gets_and_deletes(kubectl: Kubectl, case: dict[str, Any]) -> None:
    obj = case["object"]
    resource = _resource(obj)
    scope = ["-n", obj["metadata"]["namespace"]] if "namespace" in obj["metadata"] else []
    name = obj["metadata"]["name"]
    kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))
    try:
        got = json.loads(kubectl("get", resource, name, *scope, "-o", "json"))
        assert got["apiVersion"] == obj["apiVersion"] and got["kind"] == obj["kind"]
        assert _contains(got, {k: v for k, v in obj.items() if k != "metadata"}), got
        assert _contains(got, case.get("expect") or {}), got
        table = kubectl("get", resource, name, *scope)
        assert all(word in table for word in case["columns"]), table
        explained = kubectl("explain", f"{resource.split('.')[0]}.metadata",
                            f"--api-version={obj['apiVersion']}")
        assert f"KIND:       {obj['kind']}" in explained, explained
    finally:
        kubectl("delete", resource, name, *scope)
    assert name not in kubectl("get", resource, *scope, "-o", "name")


def test_discovery_lists_the_groups(kubectl: Kubectl) -> None:
    versions = kubectl("api-versions").split()
    for gv in ("admissionregistration.k8s.io/v1", "storage.k8s.io/v1", "node.k8s.io/v1",
               "autoscaling/v1", "autoscaling/v2", "flowcontrol.apiserver.k8s.io/v1",
               "apiregistration.k8s.io/v1"):
        assert gv in versions, versions
    resources = kubectl("api-resources", "--api-group=storage.k8s.io", "-o", "name").split()
    assert "storageclasses.storage.k8s.io" in resources, resources


def test_an_hpa_written_at_v2_reads_at_v1_and_back(kubectl: Kubectl) -> None:
    """Stored once at v2: v1's CPU target is v2's cpu Resource metric, and a v2 metric v1
    has no field for travels in upstream's annotation."""
    v2 = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "hpa-versions", "namespace": "default"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "web"}, "minReplicas": 1, "maxReplicas": 3,
                   "metrics": [
                       {"type": "Resource", "resource": {"name": "cpu", "target": {
                           "type": "Utilization", "averageUtilization": 60}}},
                       {"type": "Resource", "resource": {"name": "memory", "target": {
                           "type": "AverageValue", "averageValue": "1Gi"}}}]}}
    kubectl("apply", "-f", "-", input=yaml.safe_dump(v2))
    try:
        at_v1 = json.loads(kubectl("get", "horizontalpodautoscalers.v1.autoscaling",
                                   "hpa-versions", "-n", "default", "-o", "json"))
        assert at_v1["spec"]["targetCPUUtilizationPercentage"] == 60
        assert "metrics" not in at_v1["spec"]
        other = json.loads(at_v1["metadata"]["annotations"][
            "autoscaling.alpha.kubernetes.io/metrics"])
        assert other == [v2["spec"]["metrics"][1]]  # type: ignore[index]
        at_v2 = json.loads(kubectl("get", "horizontalpodautoscalers.v2.autoscaling",
                                   "hpa-versions", "-n", "default", "-o", "json"))
        assert at_v2["spec"]["metrics"] == v2["spec"]["metrics"]  # type: ignore[index]
        assert not [k for k in at_v2["metadata"].get("annotations", {})
                    if k.startswith("autoscaling.alpha.kubernetes.io/")], at_v2["metadata"]
    finally:
        kubectl("delete", "hpa", "hpa-versions", "-n", "default")
