"""Name and label syntax rules, per-kind name rules and generateName suffixes."""

from __future__ import annotations

import random

import pytest

from fakeapi.machinery import names
from fakeapi.registry.kinds import served_kinds
from tests.support.messages import KEY_NAME_MSG, LABEL_MSG, SUBDOMAIN_MSG, VALUE_MSG


def name_rule(resource_id: str) -> names.NameRule:
    """The name rule the kind table's row for `resource_id` names."""
    kind = served_kinds().by_id(resource_id)
    assert kind is not None, resource_id
    return kind.name_rule


@pytest.mark.parametrize(("value", "want"), [
    ("gpu-0", []),
    ("a.b.c", []),
    ("0", []),
    ("a" * 253, []),
    ("a" * 254, ["must be no more than 253 bytes"]),
    ("", [SUBDOMAIN_MSG]),
    ("Upper", [SUBDOMAIN_MSG]),
    ("-a", [SUBDOMAIN_MSG]),
    ("a-", [SUBDOMAIN_MSG]),
    ("a..b", [SUBDOMAIN_MSG]),
    ("a_b", [SUBDOMAIN_MSG]),
    ("ü", [SUBDOMAIN_MSG]),
    ("a" * 252 + "_bc", ["must be no more than 253 bytes", SUBDOMAIN_MSG]),
])
def test_dns1123_subdomain(value: str, want: list[str]) -> None:
    assert names.dns1123_subdomain_errors(value) == want


@pytest.mark.parametrize(("value", "want"), [
    ("default", []),
    ("a" * 63, []),
    ("a" * 64, ["must be no more than 63 bytes"]),
    ("a.b", ["must not contain dots"]),
    ("A", [LABEL_MSG]),
    ("", [LABEL_MSG]),
    ("a_b", [LABEL_MSG]),
])
def test_dns1123_label(value: str, want: list[str]) -> None:
    assert names.dns1123_label_errors(value) == want


@pytest.mark.parametrize(("value", "prefix", "want"), [
    ("admin", False, []),
    ("system:controller:x", False, []),
    (".", False, ["may not be '.'"]),
    ("..", False, ["may not be '..'"]),
    ("a/b", False, ["may not contain '/'"]),
    ("a%b/c", False, ["may not contain '/'", "may not contain '%'"]),
    (".", True, []),
    ("a/", True, ["may not contain '/'"]),
])
def test_path_segment(value: str, prefix: bool, want: list[str]) -> None:
    assert names.path_segment_errors(value, prefix) == want


@pytest.mark.parametrize(("value", "want"), [
    ("app", []),
    ("example.com/app", []),
    ("App.Name_1", []),
    ("a" * 63, []),
    ("a" * 64, ["name part must be no more than 63 bytes"]),
    ("", ["name part must be non-empty", KEY_NAME_MSG]),
    ("/a", ["prefix part must be non-empty"]),
    ("Ex.com/a", ["prefix part " + SUBDOMAIN_MSG]),
    ("a:b", [KEY_NAME_MSG]),
    ("a/b/c", ["a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyName',  or "
               "'my.name',  or '123-abc', regex used for validation is "
               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
               "prefix and '/' (e.g. 'example.com/MyName')"]),
])
def test_label_key(value: str, want: list[str]) -> None:
    assert names.label_key_errors(value) == want


@pytest.mark.parametrize(("value", "want"), [
    ("", []),
    ("v1.2_x-Y", []),
    ("a" * 64, ["must be no more than 63 bytes"]),
    ("-a", [VALUE_MSG]),
    ("a b", [VALUE_MSG]),
])
def test_label_value(value: str, want: list[str]) -> None:
    assert names.label_value_errors(value) == want


@pytest.mark.parametrize(("resource_id", "name", "want"), [
    ("pods", "web-0", []),
    ("pods", "web.0", []),
    ("pods", "Web", [SUBDOMAIN_MSG]),
    ("nodes", "node-1.example.com", []),
    ("configmaps", "kube-root-ca.crt", []),
    ("resourceclaims.resource.k8s.io", "gpu-claim", []),
    ("resourceslices.resource.k8s.io", "node-1-gpu.example.com-abcde", []),
    ("deviceclasses.resource.k8s.io", "gpu_class", [SUBDOMAIN_MSG]),
    ("namespaces", "team-a", []),
    ("namespaces", "team.a", ["must not contain dots"]),
    ("namespaces", "Team", [LABEL_MSG]),
    ("clusterroles.rbac.authorization.k8s.io", "system:aggregate-to-edit", []),
    ("roles.rbac.authorization.k8s.io", "a/b", ["may not contain '/'"]),
    ("rolebindings.rbac.authorization.k8s.io", "..", ["may not be '..'"]),
    ("events", "pod.17a3b2c1d0e9f8a7", []),
    ("events", "Pod:Weird_Name", []),
    ("events", "a%b", ["may not contain '%'"]),
])
def test_validate_object_name(resource_id: str, name: str, want: list[str]) -> None:
    assert name_rule(resource_id)(name, False) == want


@pytest.mark.parametrize(("resource_id", "prefix", "want"), [
    ("pods", "web-", []),
    ("pods", "web", []),
    ("pods", "web--", []),
    ("pods", "Web-", [SUBDOMAIN_MSG]),
    ("pods", "-", [SUBDOMAIN_MSG]),
    ("namespaces", "ns-", []),
    ("namespaces", "ns.a-", ["must not contain dots"]),
    ("clusterroles.rbac.authorization.k8s.io", "x-", []),
    ("roles.rbac.authorization.k8s.io", "..", ["may not be '..'"]),
])
def test_validate_generate_name(resource_id: str, prefix: str, want: list[str]) -> None:
    assert name_rule(resource_id)(prefix, True) == want


def test_random_suffix_is_deterministic_and_from_the_alphabet() -> None:
    a = [names.random_suffix(random.Random(7)) for _ in range(3)]
    b = [names.random_suffix(random.Random(7)) for _ in range(3)]
    assert a == b
    rng = random.Random(1)
    suffixes = {names.random_suffix(rng) for _ in range(200)}
    assert len(suffixes) > 190
    assert all(len(s) == 5 and set(s) <= set(names.SUFFIX_ALPHABET) for s in suffixes)


@pytest.mark.parametrize(("base", "kept"), [
    ("web-", "web-"),
    ("", ""),
    ("a" * 58, "a" * 58),
    ("b" * 80, "b" * 58),
])
def test_generate_name(base: str, kept: str) -> None:
    name = names.generate_name(base, random.Random(3))
    assert name.startswith(kept) and len(name) == len(kept) + 5
    assert name_rule("pods")(name, False) == [] or not base


@pytest.mark.parametrize(("resource_id", "name", "generate", "want"), [
    ("pods", "web-abcde", "web-", []),
    ("pods", None, None, [("metadata.name", "Required value: name or generateName is required",
                           "FieldValueRequired")]),
    ("pods", "", "", [("metadata.name", "Required value: name or generateName is required",
                       "FieldValueRequired")]),
    ("pods", "Web", None, [("metadata.name", f'Invalid value: "Web": {SUBDOMAIN_MSG}',
                            "FieldValueInvalid")]),
    ("pods", "Web-xyzab", "Web-", [
        ("metadata.generateName", f'Invalid value: "Web-": {SUBDOMAIN_MSG}', "FieldValueInvalid"),
        ("metadata.name", f'Invalid value: "Web-xyzab": {SUBDOMAIN_MSG}', "FieldValueInvalid")]),
])
def test_metadata_name_causes(resource_id: str, name: str | None, generate: str | None,
                              want: list[tuple[str, str, str]]) -> None:
    causes = names.metadata_name_causes(name_rule(resource_id), name, generate)
    assert [(c.field, c.message, c.reason) for c in causes] == want
