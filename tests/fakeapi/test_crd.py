"""CustomResourceDefinitions: the CRD's own rules, what it serves, structural pruning, and
the value and CEL rules of its resources (data-driven from tests/data/crd)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi import crd

CASES = yaml.safe_load((Path(__file__).parent.parent / "data" / "crd" / "validation.yaml")
                       .read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validation(case: dict[str, Any]) -> None:
    causes = crd.validate(case["value"], case["schema"], old=case.get("old"))
    assert [[c.field, c.message] for c in causes] == case["causes"]


def test_pruning_keeps_what_the_schema_knows() -> None:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"a": {"type": "string"}, "free": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "n": {"type": "integer"}}}}}}}}
    obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
           "spec": {"a": "x", "b": 1, "free": {"any": {"thing": 1}}, "labels": {"k": "v"},
                    "items": [{"n": 1, "m": 2}]}, "extra": True}
    pruned, dropped = crd.prune(obj, schema)
    assert pruned == {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"},
                      "spec": {"a": "x", "free": {"any": {"thing": 1}}, "labels": {"k": "v"},
                               "items": [{"n": 1}]}}
    assert dropped == ["spec.b", "spec.items[0].m", "extra"]


def _crd(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "subresources": {"status": {}, "scale": {
                          "specReplicasPath": ".spec.size",
                          "statusReplicasPath": ".status.size"}},
                      "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                                    "jsonPath": ".spec.size"}],
                      "schema": {"openAPIV3Schema": {"type": "object"}}}]}
    return {"metadata": {"name": "widgets.example.com"}, "spec": {**base, **spec}}


def test_a_crd_serves_its_versions() -> None:
    obj = _crd()
    crd.default_crd(obj)
    assert obj["spec"]["names"]["listKind"] == "WidgetList"
    assert crd.crd_causes(obj) == []
    [kind] = crd.kinds_for(obj)
    assert (kind.group, kind.version, kind.kind, kind.plural, kind.namespaced) == (
        "example.com", "v1", "Widget", "widgets", True)
    assert kind.short_names == ("wd",) and set(kind.subresources) == {"status", "scale"}
    assert [c.name for c in kind.columns.columns] == ["Name", "Size"]
    assert crd.scale_paths(kind) == (".spec.size", ".status.size", "")


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"group": "example"}, "spec.group", 'Invalid value: "example": should be a domain with '
     "at least one dot"),
    ({"scope": "Global"}, "spec.scope", 'Unsupported value: "Global": supported values: '
     '"Cluster", "Namespaced"'),
    ({"versions": [{"name": "v1", "served": True, "storage": False, "schema": {
        "openAPIV3Schema": {"type": "object"}}}]}, "spec.versions",
     "Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly "
     "one version marked as storage version"),
    ({"versions": [{"name": "v1", "served": True, "storage": True}]},
     "spec.versions[0].schema.openAPIV3Schema", "Required value: schemas are required"),
    ({"versions": [{"name": "v1", "served": True, "storage": True, "schema": {
        "openAPIV3Schema": {"type": "object", "x-kubernetes-validations": [
            {"rule": "self.a >"}]}}}]},
     "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule",
     'Invalid value: "self.a >": compilation failed: '),
])
def test_a_bad_crd_is_refused(spec: dict[str, Any], field: str, message: str) -> None:
    causes = {c.field: c.message for c in crd.crd_causes(_crd(**spec))}
    assert causes[field].startswith(message), causes
