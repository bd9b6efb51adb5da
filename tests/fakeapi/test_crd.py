"""CustomResourceDefinitions: the CRD's own rules, what it serves, structural pruning, and
the value and CEL rules of its resources (data-driven from tests/data/crd)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.registry import custom, custom_kinds
from fakeapi.schema import crd

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
    [kind] = custom_kinds.kinds_for(obj)
    assert (kind.group, kind.version, kind.kind, kind.plural, kind.namespaced) == (
        "example.com", "v1", "Widget", "widgets", True)
    assert kind.short_names == ("wd",) and set(kind.subresources) == {"status", "scale"}
    assert [c.name for c in kind.columns.columns] == ["Name", "Size"]
    assert custom.scale_paths(kind) == (".spec.size", ".status.size", "")


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


def test_defaults_fill_missing_fields_deeply() -> None:
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "default": "TCP"}}}}}}}}
    assert crd.apply_defaults({}, schema) == {"spec": {"replicas": 1}}
    assert crd.apply_defaults({"spec": {"replicas": 3, "ports": [{}, {"protocol": "UDP"}]}},
                              schema) == {"spec": {"replicas": 3, "ports": [
                                  {"protocol": "TCP"}, {"protocol": "UDP"}]}}


def test_a_message_expression_names_the_value() -> None:
    schema = {"type": "object", "x-kubernetes-validations": [{
        "rule": "self.size <= 4", "message": "too big",
        "messageExpression": "'size ' + string(self.size) + ' is more than 4'"}],
        "properties": {"size": {"type": "integer"}}}
    [cause] = crd.validate({"size": 9}, schema)
    assert (cause.field, cause.message) == ("<root>", 'Invalid value: "object": size 9 is more '
                                            "than 4")


def test_a_registry_serves_crds_it_stores_and_forgets_deleted_ones() -> None:
    from fakeapi.machinery.clock import RealClock
    from fakeapi.machinery.errors import ApiError
    from fakeapi.registry.context import RequestContext
    from fakeapi.registry.generic import Registry
    from fakeapi.registry.kinds import CUSTOM_RESOURCE_DEFINITIONS, NAMESPACES, served_kinds
    from fakeapi.storage.log import EventLog
    from fakeapi.storage.store import Store

    root = RequestContext(user="root", groups=("system:masters",), field_manager="test")
    store = Store(log=EventLog(), clock=RealClock())
    kinds = served_kinds({})
    registry = Registry(store=store, kinds=kinds)
    namespaces = kinds.by_id(NAMESPACES.resource_id)
    definitions = kinds.by_id(CUSTOM_RESOURCE_DEFINITIONS.resource_id)
    assert namespaces is not None and definitions is not None
    registry.create(namespaces, "", {"metadata": {"name": "ns"}}, root)
    body = _crd()
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object", "properties": {"spec": {"type": "object", "properties": {
            "size": {"type": "integer", "default": 1, "maximum": 5}}}}}
    created = registry.create(definitions, "", body, root).object
    assert [c["type"] for c in created["status"]["conditions"]] == ["NamesAccepted",
                                                                    "Established"]
    widgets = kinds.by_resource("example.com", "v1", "widgets")
    assert widgets is not None and widgets.custom_schema
    widget = registry.create(widgets, "ns", {"apiVersion": "example.com/v1", "kind": "Widget",
                                             "metadata": {"name": "w"}, "spec": {}}, root)
    assert widget.object["spec"] == {"size": 1}  # defaulted
    with pytest.raises(ApiError) as e:
        registry.create(widgets, "ns", {"metadata": {"name": "big"}, "spec": {"size": 9}}, root)
    assert (e.value.code, e.value.causes[0].field) == (422, "spec.size")
    # a registry built again on the same store (a restart) serves the stored CRD
    again = served_kinds({})
    Registry(store=store, kinds=again)
    assert again.by_resource("example.com", "v1", "widgets") is not None
    registry.delete(definitions, "", "widgets.example.com", root)
    assert kinds.by_resource("example.com", "v1", "widgets") is None
    assert list(store.scan("widgets.example.com")) == []
