"""OpenAPI v2 from the same 1.37 schemas as v3: every served kind's definition (found by its
x-kubernetes-group-version-kind, as kubectl looks models up), closed references, and the
same document in gnostic's protobuf form."""

from __future__ import annotations

from typing import Any

from fakeapi.http import openapi_v2
from fakeapi.registry.kinds import served_kinds

KINDS = served_kinds({})


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        for key, value in node.items():
            if not key.startswith("x-"):
                found |= _refs(value)
        return found
    if isinstance(node, list):
        return set().union(*(_refs(x) for x in node)) if node else set()
    return set()


def test_every_served_kind_has_a_definition_and_refs_resolve() -> None:
    doc = openapi_v2.document(KINDS)
    assert doc["swagger"] == "2.0"
    definitions = doc["definitions"]
    gvks = [g for d in definitions.values() for g in d.get("x-kubernetes-group-version-kind",
                                                            [])]
    for kind in KINDS.kinds:
        assert {"group": kind.group, "version": kind.version, "kind": kind.kind} in gvks, kind
    assert {r.removeprefix("#/definitions/") for r in _refs(doc)} <= set(definitions)
    spec = definitions["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["strategy"]
    assert spec["$ref"] == "#/definitions/io.k8s.api.apps.v1.DeploymentStrategy"


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _fields(buf: bytes) -> list[tuple[int, bytes | int]]:
    """Top-level protobuf fields (varint and length-delimited only)."""
    out: list[tuple[int, bytes | int]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        value, i = _varint(buf, i)
        if key & 7 == 2:
            out.append((key >> 3, buf[i:i + value]))
            i += value
        else:
            out.append((key >> 3, value))
    return out


def _embedded(value: bytes | int) -> bytes:
    """A length-delimited field's bytes (a varint where one is expected is a bad document)."""
    assert isinstance(value, bytes), value
    return value


def test_the_protobuf_form_holds_the_same_definitions() -> None:
    raw = openapi_v2.rendered(KINDS.kinds, True)
    top = dict(_fields(raw))
    assert top[1] == b"2.0"
    definitions = [_embedded(dict(_fields(_embedded(entry)))[1])
                   for number, entry in _fields(_embedded(top[9])) if number == 1]
    assert [d.decode() for d in definitions] == list(openapi_v2.document(KINDS)["definitions"])


def test_accept_negotiation() -> None:
    assert openapi_v2.wants_protobuf(openapi_v2.PROTOBUF)
    assert openapi_v2.wants_protobuf(f"{openapi_v2.PROTOBUF_TYPES[1]}, application/json")
    assert not openapi_v2.wants_protobuf("application/json")
