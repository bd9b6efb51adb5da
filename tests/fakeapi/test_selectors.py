"""Label and field selector parsing, upstream error messages, and matching."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.selectors import (
    label_selector,
    label_selector_matches,
    parse_field_selector,
    parse_label_selector,
)
from fakeapi.registry.kinds import KINDS
from tests.support.messages import KEY_NAME_MSG, VALUE_MSG

FIELDS = {k.resource_id: k.field_selectors for k in KINDS}
"""Each kind row's field-selector rules."""
LABELS = {"app": "web", "tier": "front", "env": "", "gpu.example.com/count": "4"}

# (selector, labels, expected match)
LABEL_MATCHES: list[tuple[str, dict[str, str] | None, bool]] = [
    ("", LABELS, True),
    ("", None, True),
    ("app=web", LABELS, True),
    ("app==web", LABELS, True),
    ("app=db", LABELS, False),
    ("app!=db", LABELS, True),
    ("app!=web", LABELS, False),
    ("missing!=x", LABELS, True),
    ("app in (web,db)", LABELS, True),
    ("app in (db)", LABELS, False),
    ("missing in (a)", LABELS, False),
    ("app notin (db)", LABELS, True),
    ("app notin (web)", LABELS, False),
    ("missing notin (a)", LABELS, True),
    ("app", LABELS, True),
    ("missing", LABELS, False),
    ("!missing", LABELS, True),
    ("!app", LABELS, False),
    ("env=", LABELS, True),
    ("env in ()", LABELS, True),
    ("env in (,x)", LABELS, True),
    ("gpu.example.com/count>3", LABELS, True),
    ("gpu.example.com/count>4", LABELS, False),
    ("gpu.example.com/count<5", LABELS, True),
    ("app>1", LABELS, False),
    ("missing<1", LABELS, False),
    ("app=web,tier=front", LABELS, True),
    ("app=web,tier=back", LABELS, False),
    ("  app = web ,  tier in ( front , back )  ", LABELS, True),
    ("value in (in,notin)", {"value": "in"}, True),
    ("app=web", None, False),
    ("!app", None, True),
    ("app=web", {}, False),
]


@pytest.mark.parametrize(("text", "labels", "want"), LABEL_MATCHES)
def test_label_selector_matches(text: str, labels: dict[str, str] | None, want: bool) -> None:
    assert parse_label_selector(text).matches(labels) is want


@pytest.mark.parametrize(("text", "empty", "canonical"), [
    ("", True, ""),
    ("b=1,a=2", False, "a=2,b=1"),
    ("x in (c,a,b)", False, "x in (a,b,c)"),
    ("!x", False, "!x"),
    ("x", False, "x"),
    ("x notin (a)", False, "x notin (a)"),
    ("x>5", False, "x>5"),
])
def test_label_selector_shape(text: str, empty: bool, canonical: str) -> None:
    sel = parse_label_selector(text)
    assert sel.empty is empty
    assert str(sel) == canonical


@pytest.mark.parametrize(("text", "key", "want"), [
    ("app=web", "app", "web"),
    ("app==web", "app", "web"),
    ("app in (web)", "app", "web"),
    ("app in (web,db)", "app", None),
    ("app!=web", "app", None),
    ("tier=x", "app", None),
])
def test_label_selector_exact(text: str, key: str, want: str | None) -> None:
    assert parse_label_selector(text).exact(key) == want


BAD_LABEL_SELECTORS = [
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
    ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("a,", "found '', expected: identifier after ','"),
    ("a=b,,c", "found ',', expected: identifier after ','"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("=b", "found '=', expected: !, identifier, or 'end of string'"),
    ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("a!", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"),
    ("app:monolith", f'unable to parse requirement: <nil>: Invalid value: "app:monolith": '
                     f"{KEY_NAME_MSG}"),
    ("/a=b", 'unable to parse requirement: <nil>: Invalid value: "/a": '
             "prefix part must be non-empty"),
    ("a=b_", f'unable to parse requirement: values[0][a]: Invalid value: "b_": {VALUE_MSG}'),
    ("a in (ok,-x)", f'unable to parse requirement: values[0][a]: Invalid value: "-x": '
                     f"{VALUE_MSG}"),
    ("k=" + "v" * 64, f'unable to parse requirement: values[0][k]: Invalid value: "{"v" * 64}": '
                      "must be no more than 63 bytes"),
    ("x>a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' "
            "operators, the value must be an integer"),
    ("x<-1", "unable to parse requirement: values[0][x]: Invalid value: \"-1\": "
             f"{VALUE_MSG}"),
    ("x>_", "unable to parse requirement: [values[0]: Invalid value: \"_\": for 'Gt', 'Lt' "
            "operators, the value must be an integer, values[0][x]: Invalid value: \"_\": "
            f"{VALUE_MSG}]"),
]


@pytest.mark.parametrize(("text", "message"), BAD_LABEL_SELECTORS)
def test_bad_label_selector(text: str, message: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_label_selector(text)
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == message


# ---------------------------------------------------------------------------------------------
# Field selectors

POD: dict[str, Any] = {
    "metadata": {"name": "web-0", "namespace": "team-a"},
    "spec": {"restartPolicy": "Always", "schedulerName": "default-scheduler",
             "serviceAccountName": "default", "hostNetwork": True},
    "status": {"phase": "Pending", "podIPs": [{"ip": "10.0.0.7"}], "nominatedNodeName": "n2"},
}
BOUND_POD: dict[str, Any] = {
    "metadata": {"name": "web-1", "namespace": "team-a"},
    "spec": {"nodeName": "node-1"},
    "status": {"phase": "Running", "podIP": "10.0.0.8"},
}
NODE: dict[str, Any] = {"metadata": {"name": "node-1"}, "spec": {"unschedulable": True}}
NAMESPACE: dict[str, Any] = {"metadata": {"name": "team-a"}, "status": {"phase": "Active"}}
EVENT: dict[str, Any] = {
    "metadata": {"name": "web-0.17", "namespace": "team-a"},
    "involvedObject": {"kind": "Pod", "namespace": "team-a", "name": "web-0", "uid": "u1",
                       "apiVersion": "v1", "resourceVersion": "42", "fieldPath": "spec"},
    "reason": "Scheduled", "type": "Normal", "source": {"component": "default-scheduler"},
    "reportingComponent": "default-scheduler",
}
NEW_EVENT: dict[str, Any] = {"metadata": {"name": "e"}, "reportingComponent": "kubelet"}
SLICE: dict[str, Any] = {
    "metadata": {"name": "node-1-gpu"},
    "spec": {"nodeName": "node-1", "driver": "gpu.example.com", "pool": {"name": "node-1"}},
}
NETWORK_SLICE: dict[str, Any] = {
    "metadata": {"name": "fabric"},
    "spec": {"allNodes": True, "driver": "nic.example.com", "pool": {"name": "fabric"}},
}
CLAIM: dict[str, Any] = {"metadata": {"name": "gpu", "namespace": "team-a"}}
CLASS: dict[str, Any] = {"metadata": {"name": "gpu.example.com"}}

# (selector, resource id, object, expected match)
FIELD_MATCHES: list[tuple[str, str, dict[str, Any], bool]] = [
    ("", "pods", POD, True),
    ("metadata.name=web-0", "pods", POD, True),
    ("metadata.name==web-0", "pods", POD, True),
    ("metadata.name!=web-0", "pods", POD, False),
    ("metadata.namespace=team-a", "pods", POD, True),
    ("spec.nodeName=", "pods", POD, True),
    ("spec.nodeName!=", "pods", POD, False),
    ("spec.nodeName=node-1", "pods", BOUND_POD, True),
    ("spec.host=node-1", "pods", BOUND_POD, True),
    ("spec.restartPolicy=Always", "pods", POD, True),
    ("spec.schedulerName=default-scheduler", "pods", POD, True),
    ("spec.serviceAccountName=default", "pods", POD, True),
    ("spec.hostNetwork=true", "pods", POD, True),
    ("spec.hostNetwork=false", "pods", BOUND_POD, True),
    ("status.phase=Pending", "pods", POD, True),
    ("status.phase!=Succeeded,status.phase!=Failed", "pods", BOUND_POD, True),
    ("status.podIP=10.0.0.7", "pods", POD, True),
    ("status.podIP=10.0.0.8", "pods", BOUND_POD, True),
    ("status.podIPs=", "pods", POD, True),
    ("status.nominatedNodeName=n2", "pods", POD, True),
    ("status.phase=Running,spec.nodeName=node-1", "pods", BOUND_POD, True),
    ("status.phase=Running,spec.nodeName=node-2", "pods", BOUND_POD, False),
    ("metadata.name=node-1", "nodes", NODE, True),
    ("spec.unschedulable=true", "nodes", NODE, True),
    ("spec.unschedulable=false", "nodes", {"metadata": {"name": "n"}}, True),
    ("status.phase=Active", "namespaces", NAMESPACE, True),
    ("metadata.name=team-a", "namespaces", NAMESPACE, True),
    ("involvedObject.kind=Pod,involvedObject.name=web-0", "events", EVENT, True),
    ("involvedObject.namespace=team-a,involvedObject.uid=u1", "events", EVENT, True),
    ("involvedObject.apiVersion=v1,involvedObject.resourceVersion=42", "events", EVENT, True),
    ("involvedObject.fieldPath=spec", "events", EVENT, True),
    ("reason=Scheduled,type=Normal", "events", EVENT, True),
    ("reportingComponent=default-scheduler", "events", EVENT, True),
    ("source=default-scheduler", "events", EVENT, True),
    ("source=kubelet", "events", NEW_EVENT, True),
    ("metadata.namespace=team-a", "events", EVENT, True),
    ("spec.nodeName=node-1", "resourceslices.resource.k8s.io", SLICE, True),
    ("spec.nodeName=", "resourceslices.resource.k8s.io", NETWORK_SLICE, True),
    ("spec.driver=gpu.example.com", "resourceslices.resource.k8s.io", SLICE, True),
    ("metadata.name=fabric", "resourceslices.resource.k8s.io", NETWORK_SLICE, True),
    ("metadata.namespace=team-a", "resourceclaims.resource.k8s.io", CLAIM, True),
    ("metadata.name=gpu", "resourceclaims.resource.k8s.io", CLAIM, True),
    ("status.replicas=2", "replicationcontrollers", {"metadata": {"name": "rc"},
                                                     "status": {"replicas": 2}}, True),
    ("status.replicas=0", "replicationcontrollers", {"metadata": {"name": "rc"}}, True),
    ("metadata.name=pv1", "persistentvolumes", {"metadata": {"name": "pv1"}}, True),
    ("metadata.namespace=", "deviceclasses.resource.k8s.io", CLASS, True),
    ("metadata.namespace=x", "deviceclasses.resource.k8s.io", CLASS, False),
    (r"metadata.name=a\,b", "configmaps", {"metadata": {"name": "a,b"}}, True),
    (r"metadata.name=a\=b\\c", "configmaps", {"metadata": {"name": "a=b\\c"}}, True),
]


@pytest.mark.parametrize(("text", "resource_id", "obj", "want"), FIELD_MATCHES)
def test_field_selector_matches(text: str, resource_id: str, obj: dict[str, Any],
                                want: bool) -> None:
    assert parse_field_selector(text, FIELDS[resource_id]).matches(obj) is want


@pytest.mark.parametrize(("text", "canonical", "exact_field", "exact"), [
    ("", "", "metadata.name", None),
    ("spec.nodeName=n1,metadata.name=a", "metadata.name=a,spec.nodeName=n1", "spec.nodeName",
     "n1"),
    ("spec.host=n1", "spec.nodeName=n1", "spec.nodeName", "n1"),
    ("metadata.name!=a", "metadata.name!=a", "metadata.name", None),
])
def test_field_selector_shape(text: str, canonical: str, exact_field: str,
                              exact: str | None) -> None:
    sel = parse_field_selector(text, FIELDS["pods"])
    assert str(sel) == canonical
    assert sel.empty is (text == "")
    assert sel.exact(exact_field) == exact


BAD_FIELD_SELECTORS = [
    ("foo", "pods", "invalid selector: 'foo'; can't understand 'foo'"),
    ("zz,metadata.nam=1", "pods", "invalid selector: 'zz,metadata.nam=1'; can't understand 'zz'"),
    ("spec.foo=1", "pods", "field label not supported: spec.foo"),
    ("metadata.name =x", "pods", "field label not supported: metadata.name "),
    ("metadata.namespace=x", "nodes", "field label not supported: metadata.namespace"),
    ("spec.nodeName=x", "nodes", "field label not supported: spec.nodeName"),
    ("metadata.namespace=x", "namespaces", "field label not supported: metadata.namespace"),
    ("message=x", "events", "field label not supported: message"),
    ("spec.foo=x", "resourceslices.resource.k8s.io",
     "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.foo"),
    ("metadata.namespace=x", "resourceslices.resource.k8s.io",
     "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: metadata.namespace"),
    ("spec.pool.name=x", "resourceslices.resource.k8s.io",  # selectable upstream, no label
     "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool.name"),
    ("spec.replicas=1", "replicationcontrollers",
     "field label not supported: spec.replicas"),
    ("spec.capacity=1", "persistentvolumes",  # no conversion of its own: the default's
     '"spec.capacity" is not a known field selector: only "metadata.name", '
     '"metadata.namespace"'),
    ("spec.devices.deviceClassName=x", "resourceclaims.resource.k8s.io",
     '"spec.devices.deviceClassName" is not a known field selector: only "metadata.name", '
     '"metadata.namespace"'),
    ("spec.nodeName=x", "deviceclasses.resource.k8s.io",
     '"spec.nodeName" is not a known field selector: only "metadata.name", '
     '"metadata.namespace"'),
    ("metadata.name=b=c", "pods", "invalid field selector: unescaped character in value: 61"),
    ("metadata.name=b\\x", "pods", "invalid field selector: invalid escape sequence: \\x"),
    ("metadata.name=a\\", "pods", "invalid field selector: invalid escape sequence: \\"),
]


@pytest.mark.parametrize(("text", "resource_id", "message"), BAD_FIELD_SELECTORS)
def test_bad_field_selector(text: str, resource_id: str, message: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_field_selector(text, FIELDS[resource_id])
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == message


def test_parse_errors_come_before_label_errors() -> None:
    with pytest.raises(ApiError) as err:
        parse_field_selector("a.b=1,zzz", FIELDS["pods"])
    assert err.value.message == "invalid selector: 'a.b=1,zzz'; can't understand 'zzz'"


@pytest.mark.parametrize(("obj", "text"), [
    ({}, ""),
    ({"matchLabels": {"tier": "fe", "app": "web"}}, "app=web,tier=fe"),  # sorted by key
    ({"matchLabels": {"app": "web", "tier": "fe"}}, "app=web,tier=fe"),
    ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "qa"]}]},
     "env in (prod,qa)"),
    ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]},
     "env notin (prod)"),
    ({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "gpu", "operator": "Exists"}, {"key": "spot", "operator": "DoesNotExist"}]},
     "app=web,gpu,!spot"),
])
@pytest.mark.parametrize("labels", [
    {}, {"app": "web"}, {"app": "web", "tier": "fe"}, {"env": "prod"}, {"env": "dev"},
    {"app": "web", "gpu": ""}, {"app": "web", "gpu": "1", "spot": "yes"},
])
def test_a_selector_object_matches_as_its_string_form(obj: dict[str, Any], text: str,
                                                      labels: dict[str, str]) -> None:
    """metav1.LabelSelector objects and `labelSelector` strings share one matcher."""
    assert label_selector(obj) is not None
    assert str(label_selector(obj)) == str(parse_label_selector(text))
    assert label_selector_matches(obj, labels) is parse_label_selector(text).matches(labels)


@pytest.mark.parametrize("obj", [
    None, "app=web", {"matchLabels": ["app"]}, {"matchExpressions": ["app"]},
    {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
])
def test_a_malformed_selector_object_selects_nothing(obj: Any) -> None:
    assert label_selector(obj) is None and not label_selector_matches(obj, {"app": "web"})
