"""Typed identities (fakeapi.machinery.ids): where the models carry them, and how the generator
types them."""

from __future__ import annotations

import importlib
import typing
from typing import Any

import pytest

from fakeapi.machinery.decode import object_member
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.ids import UID, ResourceVersion, resource_version
from fakeapi.schema.schemas import get_schemas
from scripts import gen_models
from tests.support import models


def _field_annotation(key: str) -> Any:
    """The resolved annotation of a generated field named "<module>:<Class>.<jsonName>"."""
    module, _, rest = key.partition(":")
    cls_name, _, json_name = rest.partition(".")
    cls = getattr(importlib.import_module(f"tests.support.models.{module}"), cls_name)
    hints = typing.get_type_hints(cls)
    return hints[gen_models.snake(json_name)]


@pytest.mark.parametrize("revision, text", [(0, "0"), (1, "1"), (2**63 - 1, "9223372036854775807")])
def test_resource_version_is_the_decimal_text_of_a_revision(revision: int, text: str) -> None:
    rv = resource_version(revision)
    assert rv == text
    assert type(rv) is str  # a NewType is the plain type at run time


@pytest.mark.parametrize("key, new_type", sorted(gen_models.IDENTITIES.items()))
def test_generated_identity_fields_carry_their_new_type(key: str, new_type: str) -> None:
    expected = {"UID": UID, "ResourceVersion": ResourceVersion}[new_type]
    annotation = _field_annotation(key)
    assert expected in (annotation, *typing.get_args(annotation))


def test_identity_fields_still_validate_as_strings() -> None:
    meta = models.ObjectMeta.model_validate({"uid": "0f3c", "resourceVersion": "42"})
    assert (meta.uid, meta.resource_version) == ("0f3c", "42")
    with pytest.raises(Exception, match="valid string"):
        models.ObjectMeta.model_validate({"uid": 5})


def test_names_stay_plain_strings() -> None:
    """Only the listed identities are narrowed: a name or namespace is not a UID."""
    assert typing.get_type_hints(models.ObjectMeta)["name"] == str | None


def test_generator_refuses_an_identity_on_a_non_string_field(monkeypatch: pytest.MonkeyPatch,
                                                             ) -> None:
    monkeypatch.setitem(gen_models.IDENTITIES, "meta:ObjectMeta.generation", "UID")
    with pytest.raises(SystemExit, match="ObjectMeta.generation is int, not str"):
        gen_models.Generator(get_schemas()).render()


def test_generator_refuses_a_stale_identity_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(gen_models.IDENTITIES, "meta:ObjectMeta.nope", "UID")
    with pytest.raises(SystemExit, match="IDENTITIES keys match nothing: meta:ObjectMeta.nope"):
        gen_models.Generator(get_schemas()).render()


def test_status_details_carry_the_uid() -> None:
    err = ApiError(409, "Conflict", "gone", name="a", uid=UID("1234"))
    assert err.to_status()["details"] == {"name": "a", "uid": "1234"}
    assert "uid" not in ApiError(404, "NotFound", "x", name="a").to_status()["details"]


@pytest.mark.parametrize("obj, expected", [
    ({"metadata": {"name": "a"}}, {"name": "a"}),
    ({"metadata": {}}, {}),
    ({}, {}),
    ({"metadata": None}, {}),
    ({"metadata": ["name", "a"]}, {}),
    ({"metadata": "name=a"}, {}),
    ({"metadata": 3}, {}),
])
def test_object_member_reads_only_json_objects(obj: dict[str, Any], expected: Any) -> None:
    assert object_member(obj, "metadata") == expected


def test_object_member_returns_the_object_itself() -> None:
    meta = {"name": "a"}
    assert object_member({"metadata": meta}, "metadata") is meta
