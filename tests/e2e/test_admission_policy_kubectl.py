"""The dra-example-driver chart's ValidatingAdmissionPolicy, applied unchanged (its templates
rendered as `helm template` renders them, tests/support/helmchart.py) through the real
kubectl v1.37 against a server process: the plugin's service account, with a token bound to
a pod on node-a (so it carries the node-name extra), writes node-a's ResourceSlice and is
refused node-b's with upstream's message; an admin is not restricted. And a policy whose CEL
doesn't compile is refused at create with upstream's 422."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import yaml

from tests.support import helmchart
from tests.support.kubectl import Kubectl, token_kubectl

TEMPLATES = ("clusterrole.yaml", "clusterrolebinding.yaml", "validatingadmissionpolicy.yaml",
             "validatingadmissionpolicybinding.yaml")
NS = helmchart.NAMESPACE


def _slice(node: str) -> str:
    return yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-gpu.example.com"},
        "spec": {"driver": "gpu.example.com", "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": "gpu-0"}]}})


@pytest.fixture
def chart(kubectl: Kubectl) -> Iterator[Kubectl]:
    """The chart's RBAC and policy installed, and kubectl as its plugin on node-a."""
    kubectl("create", "namespace", NS)
    kubectl("create", "serviceaccount", helmchart.SERVICE_ACCOUNT, "-n", NS)
    for name in TEMPLATES:
        kubectl("apply", "-f", "-", input=helmchart.render(name))
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plugin-a", "namespace": NS},
           "spec": {"nodeName": "node-a", "serviceAccountName": helmchart.SERVICE_ACCOUNT,
                    "containers": [{"name": "plugin", "image": "registry.k8s.io/pause"}]}}
    kubectl("apply", "-f", "-", input=yaml.safe_dump(pod))
    token = kubectl("create", "token", helmchart.SERVICE_ACCOUNT, "-n", NS,
                    "--bound-object-kind", "Pod", "--bound-object-name", "plugin-a").strip()
    yield token_kubectl(kubectl, token)
    for name in reversed(TEMPLATES):
        kubectl("delete", "-f", "-", "--ignore-not-found", input=helmchart.render(name))
    kubectl("delete", "resourceslices", "--all")
    kubectl("delete", "namespace", NS, "--wait=false")


def test_the_chart_limits_slice_writes_to_the_plugins_node(kubectl: Kubectl,
                                                           chart: Kubectl) -> None:
    policy = json.loads(kubectl("get", "validatingadmissionpolicy",
                                f"resourceslices-policy-{helmchart.RELEASE}", "-o", "json"))
    assert len(policy["spec"]["validations"]) == 2
    chart("apply", "-f", "-", input=_slice("node-a"))
    refused = chart.run("apply", "-f", "-", input=_slice("node-b"), check=False)
    assert refused.returncode != 0
    name = f"resourceslices-policy-{helmchart.RELEASE}"
    # kubectl prints a 422 from its details (as it does against a cluster): the resource,
    # the name, and the one cause, which has no field
    assert (f'The resourceslices "node-b-gpu.example.com" is invalid: : '
            f"ValidatingAdmissionPolicy '{name}' with binding '{name}' denied request: this "
            "user running on node 'node-a' may not modify resourceslices on node 'node-b'"
            ) in refused.stderr, refused.stderr
    kubectl("apply", "-f", "-", input=_slice("node-b"))  # the policy binds only the plugin
    denied_delete = chart.run("delete", "resourceslice", "node-b-gpu.example.com", check=False)
    assert "may not modify resourceslices on node 'node-b'" in denied_delete.stderr
    chart("delete", "resourceslice", "node-a-gpu.example.com")


def test_a_policy_with_bad_cel_is_refused_at_create(kubectl: Kubectl) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bad-cel"},
              "spec": {"matchConstraints": {"resourceRules": [{
                  "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                  "resources": ["configmaps"]}]},
                  "validations": [{"expression": "object.data.size( < 3"}]}}
    refused = kubectl.run("create", "-f", "-", input=yaml.safe_dump(policy), check=False)
    assert refused.returncode != 0
    assert ('The ValidatingAdmissionPolicy "bad-cel" is invalid: spec.validations[0].expression:'
            ' Invalid value: "object.data.size( < 3": compilation failed: ERROR: <input>:1:19:'
            ) in refused.stderr, refused.stderr


def test_a_warn_binding_answers_with_a_warning(kubectl: Kubectl, fresh_namespace: str) -> None:
    objects = [
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
         "metadata": {"name": "labelled-cms"},
         "spec": {"matchConstraints": {"resourceRules": [{
             "operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
             "resources": ["configmaps"]}]},
             "validations": [{"expression": "has(object.metadata.labels)",
                              "message": "configmaps should be labelled"}]}},
        {"apiVersion": "admissionregistration.k8s.io/v1",
         "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "labelled-cms"},
         "spec": {"policyName": "labelled-cms", "validationActions": ["Warn"],
                  "matchResources": {"namespaceSelector": {"matchLabels": {
                      "kubernetes.io/metadata.name": fresh_namespace}}}}}]
    manifest = yaml.safe_dump_all(objects)
    kubectl("apply", "-f", "-", input=manifest)
    try:
        made = kubectl.run("create", "configmap", "plain", "-n", fresh_namespace)
        assert ("Warning: Validation failed for ValidatingAdmissionPolicy 'labelled-cms' with "
                "binding 'labelled-cms': configmaps should be labelled") in made.stderr
        assert "plain" in kubectl("get", "configmap", "plain", "-n", fresh_namespace)
    finally:
        kubectl("delete", "-f", "-", input=manifest)
