"""Structural decoding: unknown/duplicate fields per fieldValidation mode, and type errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import RFC3339_MICRO, time_error
from fakeapi.schema.schemas import get_schemas
from fakeapi.schema.structural import (
    MAX_STRICT_ERRORS,
    base64_error,
    check,
    check_duplicates,
    quantity_error,
)

QUANTITY_WRONG = ("quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
POD_PREFIX = 'Pod in version "v1" cannot be handled as a Pod: '


def schema(group: str, version: str, kind: str) -> dict[str, Any]:
    s = get_schemas().for_gvk(group, version, kind)
    assert s is not None
    return s


POD_SCHEMA = schema("", "v1", "Pod")
CLAIM_SCHEMA = schema("resource.k8s.io", "v1", "ResourceClaim")
SLICE_SCHEMA = schema("resource.k8s.io", "v1", "ResourceSlice")
CONFIGMAP_SCHEMA = schema("", "v1", "ConfigMap")
EVENT_SCHEMA = schema("", "v1", "Event")


def pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


GOOD_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "x"}, "annotations": {"a": "b"},
                 "creationTimestamp": "2024-05-01T10:00:00Z", "managedFields": [
                     {"manager": "kubectl", "fieldsV1": {"f:spec": {"f:x": {}}}}]},
    "spec": {
        "containers": [{
            "name": "c", "image": "busybox", "command": ["sleep", "1"],
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "500m", "memory": 1073741824},
                          "claims": [{"name": "gpu"}]},
            "livenessProbe": {"httpGet": {"port": "http"}, "periodSeconds": 10},
            "env": [{"name": "A", "value": "1"}],
        }],
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
        "hostNetwork": False, "nodeSelector": {"k": "v"}, "priority": None,
    },
    "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "lastTransitionTime": None}]},
}


@pytest.mark.parametrize("mode", ["Strict", "Warn", "Ignore"])
def test_valid_object_passes_unchanged(mode: str) -> None:
    out, warnings = check(GOOD_POD, POD_SCHEMA, mode=mode)
    assert out is GOOD_POD
    assert warnings == []


UNKNOWN_POD = {
    "apiVersion": "v1", "kind": "Pod", "x": 1,
    "metadata": {"name": "p", "foo": 1},
    "spec": {"containers": [{"name": "c", "foo": 2, "ports": [{"containerPort": 1, "bad": 0}]},
                            {"name": "d", "foo": 3}],
             "bar": 3},
}
UNKNOWN_PATHS = ["x", "metadata.foo", "spec.containers[0].foo",
                 "spec.containers[0].ports[0].bad", "spec.containers[1].foo", "spec.bar"]
PRUNED_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p"},
    "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 1}]}, {"name": "d"}]},
}


def test_unknown_fields_strict() -> None:
    with pytest.raises(ApiError) as err:
        check(UNKNOWN_POD, POD_SCHEMA, mode="Strict")
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == POD_PREFIX + "strict decoding error: " + ", ".join(
        f'unknown field "{p}"' for p in UNKNOWN_PATHS)


@pytest.mark.parametrize(("mode", "warnings"), [
    ("Warn", [f'unknown field "{p}"' for p in UNKNOWN_PATHS]),
    ("Ignore", []),
])
def test_unknown_fields_are_pruned_without_mutating_input(mode: str,
                                                          warnings: list[str]) -> None:
    before = copy.deepcopy(UNKNOWN_POD)
    out, got = check(UNKNOWN_POD, POD_SCHEMA, mode=mode)
    assert got == warnings
    assert out == PRUNED_POD
    assert UNKNOWN_POD == before


def test_untouched_subtrees_are_shared() -> None:
    obj = {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"bogus": 1},
           "status": {"phase": "Running"}}
    out, _ = check(obj, POD_SCHEMA, mode="Ignore")
    assert out is not obj and out["spec"] == {}
    assert out["metadata"] is obj["metadata"] and out["status"] is obj["status"]


@pytest.mark.parametrize(("obj", "schema_", "paths"), [
    ({"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c",
                                                                  "foo": 1}}]}}},
     CLAIM_SCHEMA, ["spec.devices.requests[0].exactly.foo"]),
    ({"spec": {"devices": [{"name": "d", "attributes": {"model": {"string": "x", "float": 1}},
                            "capacity": {"mem": {"value": "1Gi", "max": "2Gi"}}}]}},
     SLICE_SCHEMA, ["spec.devices[0].attributes.model.float", "spec.devices[0].capacity.mem.max"]),
    ({"Spec": {}, "spec": {"Driver": "x"}}, SLICE_SCHEMA, ["Spec", "spec.Driver"]),
])
def test_unknown_field_paths(obj: dict[str, Any], schema_: dict[str, Any],
                             paths: list[str]) -> None:
    _, warnings = check(obj, schema_, mode="Warn")
    assert warnings == [f'unknown field "{p}"' for p in paths]


@pytest.mark.parametrize(("mode", "outcome"), [
    ("Strict", POD_PREFIX + 'strict decoding error: duplicate field "metadata.name", '
               'unknown field "spec.bar"'),
    ("Warn", ['duplicate field "metadata.name"', 'unknown field "spec.bar"']),
    ("Ignore", []),
])
def test_duplicates_are_reported_like_unknown_fields(mode: str, outcome: Any) -> None:
    obj = pod(bar=1)
    if mode == "Strict":
        with pytest.raises(ApiError) as err:
            check(obj, POD_SCHEMA, mode=mode, duplicates=["metadata.name"])
        assert err.value.message == outcome
    else:
        assert check(obj, POD_SCHEMA, mode=mode, duplicates=["metadata.name"])[1] == outcome


def test_strict_errors_are_capped_and_deduplicated() -> None:
    obj = {f"x{i}": i for i in range(150)}
    _, warnings = check(obj, POD_SCHEMA, mode="Warn", duplicates=["a", "a"])
    assert len(warnings) == MAX_STRICT_ERRORS
    assert warnings[:2] == ['duplicate field "a"', 'unknown field "x0"']


@pytest.mark.parametrize(("mode", "outcome"), [
    ("Strict", 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
               'error: duplicate field "data.a"'),
    ("Warn", ['duplicate field "data.a"']),
    ("Ignore", []),
])
def test_check_duplicates(mode: str, outcome: Any) -> None:
    if mode == "Strict":
        with pytest.raises(ApiError) as err:
            check_duplicates(["data.a"], mode, kind="ConfigMap", version="v1")
        assert err.value.message == outcome
    else:
        assert check_duplicates(["data.a"], mode) == outcome
    assert check_duplicates([], mode) == []


def test_bad_mode() -> None:
    with pytest.raises(ValueError):
        check({}, POD_SCHEMA, mode="strict")
    with pytest.raises(ValueError):
        check_duplicates([], "warn")


TYPE_ERRORS: list[tuple[dict[str, Any], str]] = [
    ({"apiVersion": "v1", "kind": "Pod", "spec": "x"},
     "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": []},
     "json: cannot unmarshal array into Go struct field Pod.metadata of type v1.ObjectMeta"),
    (pod(containers="x"), "json: cannot unmarshal string into Go struct field "
                          "PodSpec.spec.containers of type []v1.Container"),
    (pod(containers={}), "json: cannot unmarshal object into Go struct field "
                         "PodSpec.spec.containers of type []v1.Container"),
    (pod(containers=["x"]), "json: cannot unmarshal string into Go struct field "
                            "PodSpec.spec.containers of type v1.Container"),
    (pod(containers=[{"name": 5}]), "json: cannot unmarshal number into Go struct field "
                                    "Container.spec.containers.name of type string"),
    (pod(containers=[{"name": "c", "command": ["a", 1]}]),
     "json: cannot unmarshal number into Go struct field Container.spec.containers.command of "
     "type string"),
    (pod(hostNetwork="true"), "json: cannot unmarshal string into Go struct field "
                              "PodSpec.spec.hostNetwork of type bool"),
    (pod(priority=True), "json: cannot unmarshal bool into Go struct field PodSpec.spec.priority "
                         "of type int32"),
    (pod(priority=2**31), "json: cannot unmarshal number 2147483648 into Go struct field "
                          "PodSpec.spec.priority of type int32"),
    (pod(priority=1.5), "json: cannot unmarshal number 1.5 into Go struct field "
                        "PodSpec.spec.priority of type int32"),
    (pod(activeDeadlineSeconds=2**63), "json: cannot unmarshal number 9223372036854775808 into "
                                       "Go struct field PodSpec.spec.activeDeadlineSeconds of "
                                       "type int64"),
    (pod(nodeSelector={"a": 1}), "json: cannot unmarshal number into Go struct field "
                                 "PodSpec.spec.nodeSelector of type string"),
    (pod(nodeSelector=["a"]), "json: cannot unmarshal array into Go struct field "
                              "PodSpec.spec.nodeSelector of type map[string]string"),
    (pod(containers=[{"name": "c", "ports": [{"containerPort": "80"}]}]),
     "json: cannot unmarshal string into Go struct field "
     "ContainerPort.spec.containers.ports.containerPort of type int32"),
    (pod(containers=[{"name": "c", "resources": {"limits": {"cpu": "1x"}}}]), QUANTITY_WRONG),
    (pod(containers=[{"name": "c", "resources": {"limits": {"cpu": True}}}]), QUANTITY_WRONG),
    (pod(containers=[{"name": "c", "resources": {"limits": {"cpu": "1ki"}}}]),
     "unable to parse quantity's suffix"),
    (pod(containers=[{"name": "c", "livenessProbe": {"httpGet": {"port": True}}}]),
     "json: cannot unmarshal bool into Go value of type int32"),
    (pod(containers=[{"name": "c", "livenessProbe": {"httpGet": {"port": 1.5}}}]),
     "json: cannot unmarshal number 1.5 into Go value of type int32"),
    (pod(containers=[{"name": "c", "livenessProbe": {"httpGet": {"port": [80]}}}]),
     "json: cannot unmarshal array into Go value of type int32"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": 5}},
     "json: cannot unmarshal number into Go value of type string"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"creationTimestamp": "yesterday"}},
     'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as '
     '"2006"'),
    # A type error wins over unknown fields, even in Strict.
    ({"apiVersion": "v1", "kind": "Pod", "bogus": 1, "spec": {"containers": 1}},
     "json: cannot unmarshal number into Go struct field PodSpec.spec.containers of type "
     "[]v1.Container"),
    # The first type error in document order is the one reported.
    (pod(hostNetwork="x", priority="y"), "json: cannot unmarshal string into Go struct field "
                                         "PodSpec.spec.hostNetwork of type bool"),
]


@pytest.mark.parametrize("mode", ["Strict", "Ignore"])
@pytest.mark.parametrize(("obj", "message"), TYPE_ERRORS)
def test_type_errors(obj: dict[str, Any], message: str, mode: str) -> None:
    with pytest.raises(ApiError) as err:
        check(obj, POD_SCHEMA, mode=mode)
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == POD_PREFIX + message


@pytest.mark.parametrize(("obj", "schema_", "message"), [
    ({"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"a": "aGVsbG8"}}, CONFIGMAP_SCHEMA,
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input '
     "byte 4"),
    ({"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"a": 5}}, CONFIGMAP_SCHEMA,
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number '
     "into Go struct field ConfigMap.binaryData of type []uint8"),
    ({"apiVersion": "v1", "kind": "Event", "eventTime": "2020-01-01T00:00:00Z"}, EVENT_SCHEMA,
     'Event in version "v1" cannot be handled as a Event: parsing time "2020-01-01T00:00:00Z" '
     'as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'),
    ({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
      "spec": {"devices": [{"name": "d", "attributes": {"a": {"int": "1"}}}]}}, SLICE_SCHEMA,
     'ResourceSlice in version "v1" cannot be handled as a ResourceSlice: json: cannot unmarshal '
     "string into Go struct field DeviceAttribute.spec.devices.attributes.int of type int64"),
    ([], SLICE_SCHEMA, 'ResourceSlice in version "" cannot be handled as a ResourceSlice: json: '
                       "cannot unmarshal array into Go value of type v1.ResourceSlice"),
])
def test_type_errors_other_kinds(obj: Any, schema_: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiError) as err:
        check(obj, schema_, mode="Strict")
    assert err.value.message == message


def test_kind_and_version_override_the_prefix() -> None:
    with pytest.raises(ApiError) as err:
        check({"spec": 1}, POD_SCHEMA, mode="Strict", kind="Pod", version="v1")
    assert err.value.message.startswith(POD_PREFIX)


@pytest.mark.parametrize(("obj", "want"), [
    (pod(priority=5.0), pod(priority=5)),
    (pod(containers=[{"name": "c", "livenessProbe": {"httpGet": {"port": 8080.0}}}]),
     pod(containers=[{"name": "c", "livenessProbe": {"httpGet": {"port": 8080}}}])),
    (pod(containers=[{"name": "c", "resources": {"limits": {"cpu": 1.5, "memory": 10}}}]),
     pod(containers=[{"name": "c", "resources": {"limits": {"cpu": 1.5, "memory": 10}}}])),
])
def test_numbers_are_normalized_like_go(obj: dict[str, Any], want: dict[str, Any]) -> None:
    out, warnings = check(obj, POD_SCHEMA, mode="Strict")
    assert (out, warnings) == (want, [])
    assert type(out["spec"].get("priority", 0)) is int


STORED_POD = pod(priority=5, hostNetwork=False)


@pytest.mark.parametrize(("obj", "outcome"), [
    # the same spec as stored: not walked again, passed as it is
    ({**STORED_POD, "status": {"phase": "Running"}}, None),
    # JSON that only Python calls equal is still checked: 5.0 becomes 5, true is no integer
    (pod(priority=5.0, hostNetwork=False), pod(priority=5, hostNetwork=False)),
    (pod(priority=True, hostNetwork=False), "spec.priority"),
    (pod(priority=5, hostNetwork=0), "spec.hostNetwork"),
    ({**STORED_POD, "status": {"phase": 1}}, "status.phase"),
    ({**STORED_POD, "bogus": 1}, 'unknown field "bogus"'),
])
def test_fields_equal_to_the_stored_object_are_not_checked_twice(obj: dict[str, Any],
                                                                 outcome: Any) -> None:
    if isinstance(outcome, str):
        with pytest.raises(ApiError) as e:
            check(obj, POD_SCHEMA, mode="Strict", known=STORED_POD)
        assert outcome in e.value.message
        return
    got = check(obj, POD_SCHEMA, mode="Strict", known=STORED_POD)
    assert got == (obj if outcome is None else outcome, [])
    assert got == check(obj, POD_SCHEMA, mode="Strict")  # the same answer as a full walk


# Synthetic schemas for the CRD-style extensions.
PRESERVED: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
CRD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"x-kubernetes-int-or-string": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "mixed": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                          "properties": {"n": {"type": "integer"}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "properties": {"spec": PRESERVED}},
                "raw": {"$ref": "#/$defs/io.k8s.apimachinery.pkg.runtime.RawExtension"},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                "ratio": {"type": "number"},
            },
        },
    },
}


@pytest.mark.parametrize(("spec", "warnings"), [
    ({"size": 3, "free": {"anything": {"goes": [1]}}, "raw": {"kind": "X", "x": 1}}, []),
    ({"size": "50%", "mixed": {"n": 1, "other": "kept"}, "ratio": 0.5}, []),
    ({"template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
                   "spec": {"free": 1}}}, []),
    ({"template": {"metadata": {"bogus": 1}}, "tags": ["a", None], "nope": 1},
     ['unknown field "spec.template.metadata.bogus"', 'unknown field "spec.nope"']),
])
def test_preserve_unknown_and_embedded(spec: dict[str, Any], warnings: list[str]) -> None:
    assert check({"spec": spec}, CRD_SCHEMA, mode="Warn")[1] == warnings


@pytest.mark.parametrize(("spec", "message"), [
    ({"mixed": {"n": "1"}}, "json: cannot unmarshal string into Go struct field "
                            ".spec.mixed.n of type int64"),
    ({"size": {}}, "json: cannot unmarshal object into Go value of type int32"),
    ({"ratio": "1"}, "json: cannot unmarshal string into Go struct field .spec.ratio of type "
                     "float64"),
])
def test_synthetic_type_errors(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ApiError) as err:
        check({"apiVersion": "x.io/v1", "kind": "Thing", "spec": spec}, CRD_SCHEMA, mode="Strict")
    assert err.value.message == 'Thing in version "v1" cannot be handled as a Thing: ' + message


@pytest.mark.parametrize(("text", "want"), [
    ("1", None), ("0", None), ("-1.5", None), ("+3", None), (" 1Gi ", None), ("500m", None),
    ("1e3", None), ("1E-3", None), ("1.5Ki", None), ("100Mi", None), ("1.", None), (".5", None),
    ("80Gi", None), ("1n", None), ("2u", None), ("3P", None), ("4Ei", None),
    ("", QUANTITY_WRONG), ("abc", QUANTITY_WRONG), ("1 Gi", QUANTITY_WRONG),
    ("1Gb", QUANTITY_WRONG), ("1.2.3", QUANTITY_WRONG),
    ("1ki", "unable to parse quantity's suffix"), ("1e", "unable to parse quantity's suffix"),
    ("1Kii", "unable to parse quantity's suffix"),
])
def test_quantity_error(text: str, want: str | None) -> None:
    assert quantity_error(text) == want


@pytest.mark.parametrize(("value", "layout", "want"), [
    ("2024-02-29T23:59:59Z", None, None),
    ("2024-01-01T00:00:00.123Z", None, None),
    ("2024-01-01T00:00:00+05:30", None, None),
    ("2024-01-01T00:00:00.000000Z", RFC3339_MICRO, None),
    ("2023-02-29T00:00:00Z", None, 'parsing time "2023-02-29T00:00:00Z": day out of range'),
    ("2024-13-01T00:00:00Z", None, 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2024-01-01T24:00:00Z", None, 'parsing time "2024-01-01T24:00:00Z": hour out of range'),
    ("2024-01-01", None, 'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot '
                         'parse "" as "T"'),
    ("2024-01-01 00:00:00Z", None, 'parsing time "2024-01-01 00:00:00Z" as '
                                   '"2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as '
                                   '"T"'),
    ("2024-01-01T00:00:00", None, 'parsing time "2024-01-01T00:00:00" as '
                                  '"2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"'),
    ("2024-01-01T00:00:00Zjunk", None, 'parsing time "2024-01-01T00:00:00Zjunk": extra text: '
                                       '"junk"'),
    ("2024-1-01T00:00:00Z", None, 'parsing time "2024-1-01T00:00:00Z" as '
                                  '"2006-01-02T15:04:05Z07:00": cannot parse "1-01T00:00:00Z" '
                                  'as "01"'),
])
def test_time_error(value: str, layout: str | None, want: str | None) -> None:
    assert (time_error(value, layout) if layout else time_error(value)) == want


@pytest.mark.parametrize(("value", "want"), [
    ("", None), ("aGVsbG8=", None), ("aGVsbA==", None), ("aGVs\nbG8=", None),
    ("aGVsbG8", "illegal base64 data at input byte 4"),
    ("a!", "illegal base64 data at input byte 1"),
    ("a===", "illegal base64 data at input byte 1"),
    ("aGVsbA=", "illegal base64 data at input byte 7"),
    ("aGVsbG8=x", "illegal base64 data at input byte 8"),
])
def test_base64_error(value: str, want: str | None) -> None:
    assert base64_error(value) == want
