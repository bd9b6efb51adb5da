"""ValidatingAdmissionPolicy enforcement through the registry, case by case
(tests/data/admission/policies.yaml): allowed, denied with upstream's message and code,
warned, audited, parameters (found, missing with Deny and Allow), matchConditions, variables,
selectors, operations and failurePolicy; a policy whose CEL doesn't compile is a 422 at
create, and a DELETE sees the old object."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.context import RequestContext
from fakeapi.registry.kinds import (
    CONFIG_MAPS,
    NAMESPACES,
    VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS,
)
from tests.support.paths import ROOT

CASES: list[dict[str, Any]] = yaml.safe_load(
    (ROOT / "tests/data/admission/policies.yaml").read_text())
ADMIN = RequestContext()
RULES = [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
          "resources": ["configmaps"]}]


def _policy(spec: dict[str, Any]) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    spec.setdefault("matchConstraints", {}).setdefault("resourceRules", RULES)
    return {"metadata": {"name": "test"}, "spec": spec}


def _install(cluster: Cluster, case: dict[str, Any]) -> None:
    registry = cluster.registry
    registry.create(NAMESPACES, "", {"metadata": {"name": "vap"}}, ADMIN)
    for obj in case.get("params") or ():
        registry.create(CONFIG_MAPS, "vap", copy.deepcopy(obj), ADMIN)
    registry.create(VALIDATING_ADMISSION_POLICIES, "", _policy(case["policy"]), ADMIN)
    binding: dict[str, Any] = {"policyName": "test",
                               "validationActions": case.get("actions") or ["Deny"]}
    if "paramRef" in case:
        binding["paramRef"] = case["paramRef"]
    registry.create(VALIDATING_ADMISSION_POLICY_BINDINGS, "",
                    {"metadata": {"name": "test-binding"}, "spec": binding}, ADMIN)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_policy_case(case: dict[str, Any]) -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    _install(cluster, case)
    body = {"metadata": {"name": "cm", "labels": {"env": "test"}}, **case["write"]}
    if "code" in case:
        with pytest.raises(ApiError) as e:
            cluster.registry.create(CONFIG_MAPS, "vap", body, ADMIN)
        assert (e.value.code, e.value.message) == (case["code"], case["message"])
        assert e.value.reason == {403: "Forbidden", 422: "Invalid"}[case["code"]]
        assert (e.value.group, e.value.kind, e.value.name) == ("", "configmaps", "cm")
        assert [c.message for c in e.value.causes] == [case["message"].split(": ", 1)[1]]
        assert cluster.store.get(CONFIG_MAPS.resource_id, "vap", "cm") is None
    else:
        result = cluster.registry.create(CONFIG_MAPS, "vap", body, ADMIN)
        assert result.warnings == (case.get("warnings") or [])
        assert cluster.store.get(CONFIG_MAPS.resource_id, "vap", "cm") is not None


BAD_POLICIES = [
    ({"validations": [{"expression": "object.data.size( < 3"}]},
     "spec.validations[0].expression",
     'Invalid value: "object.data.size( < 3": compilation failed: ERROR: <input>:1:19: '
     "Syntax error: "),
    ({"validations": [{"expression": "obj.data == 1"}]}, "spec.validations[0].expression",
     # cel-go points at `obj` (1:1), cel-cpp at the qualified name `obj.data` (1:4)
     'Invalid value: "obj.data == 1": compilation failed: ERROR: <input>:1:'),
    ({"validations": [{"expression": "'a'"}]}, "spec.validations[0].expression",
     "Invalid value: \"'a'\": must evaluate to bool"),
    ({"validations": [{"expression": "true", "messageExpression": "1 + 1"}]},
     "spec.validations[0].messageExpression", 'Invalid value: "1 + 1": must evaluate to string'),
    ({"validations": [{"expression": "true"}], "failurePolicy": "Sometimes"},
     "spec.failurePolicy", 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
    ({}, "spec.validations",
     "Required value: validations or auditAnnotations must contain at least one item"),
]


@pytest.mark.parametrize(("spec", "field", "message"), BAD_POLICIES,
                         ids=[b[1] + ":" + b[2][:30] for b in BAD_POLICIES])
def test_a_bad_policy_is_invalid_at_create(spec: dict[str, Any], field: str,
                                           message: str) -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    with pytest.raises(ApiError) as e:
        cluster.registry.create(VALIDATING_ADMISSION_POLICIES, "", _policy(spec), ADMIN)
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert e.value.message.startswith(
        'ValidatingAdmissionPolicy.admissionregistration.k8s.io "test" is invalid: '), e.value
    found = {c.field: c.message for c in e.value.causes}
    assert found.get(field, "").startswith(message), found


def test_a_delete_sees_the_old_object() -> None:
    cluster = Cluster(ClusterConfig(seed=1))
    _install(cluster, {"policy": {
        "matchConstraints": {"resourceRules": [{**RULES[0], "operations": ["DELETE"]}]},
        "validations": [{"expression": "object == null && oldObject.data.keep != 'yes'",
                         "message": "kept"}]}})
    registry = cluster.registry
    registry.create(CONFIG_MAPS, "vap", {"metadata": {"name": "cm"}, "data": {"keep": "yes"}},
                    ADMIN)
    with pytest.raises(ApiError) as e:
        registry.delete(CONFIG_MAPS, "vap", "cm", ADMIN)
    assert e.value.message.endswith("denied request: kept")
    registry.create(CONFIG_MAPS, "vap", {"metadata": {"name": "other"}, "data": {"keep": "no"}},
                    ADMIN)
    registry.delete(CONFIG_MAPS, "vap", "other", ADMIN)
    assert cluster.store.get(CONFIG_MAPS.resource_id, "vap", "other") is None
