"""The Kubernetes 1.37 JSON schemas shipped by `kubernetes-validate` (plus the emulator's
own group, `fakeapi.schema.emulator`), as one lookup table.

Everything schema-driven (structural validation, strategic merge patch, server-side
apply, OpenAPI, `kubectl explain`) reads definitions through this module.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

import orjson

from fakeapi.schema import emulator as emulator_api

SCHEMA_VERSION = "v1.37.0-local"
REF_PREFIX = "#/$defs/"

Schema = dict[str, Any]


class Schemas:
    """The `$defs` of the 1.37 schemas, with GVK and `$ref` lookups."""

    def __init__(self, definitions: dict[str, Schema]) -> None:
        self.definitions = definitions
        self._by_gvk: dict[tuple[str, str, str], str] = {}
        for name, schema in definitions.items():
            for gvk in schema.get("x-kubernetes-group-version-kind", ()):
                self._by_gvk[(gvk["group"], gvk["version"], gvk["kind"])] = name

    def name_for_gvk(self, group: str, version: str, kind: str) -> str | None:
        """Definition name (e.g. `io.k8s.api.core.v1.Pod`) of a group/version/kind."""
        return self._by_gvk.get((group, version, kind))

    def for_gvk(self, group: str, version: str, kind: str) -> Schema | None:
        """Root schema of a group/version/kind, or None when the schemas lack it."""
        name = self.name_for_gvk(group, version, kind)
        return self.definitions[name] if name else None

    def resolve(self, node: Schema | None) -> Schema:
        """Follow `$ref` (also a lone `allOf: [{$ref}]`) to the referenced definition."""
        return self.deref(node)[0] if node else {}

    def deref(self, node: Schema, name: str | None = None) -> tuple[Schema, str | None]:
        """Like `resolve`, also returning the name of the last definition followed."""
        while True:
            ref = node.get("$ref")
            if ref is None:
                all_of = node.get("allOf")
                if all_of and len(all_of) == 1 and "$ref" in all_of[0]:
                    ref = all_of[0]["$ref"]
            if ref is None:
                return node, name
            name = ref.removeprefix(REF_PREFIX)
            node = self.definitions[name]

    def property(self, node: Schema | None, key: str) -> Schema | None:
        """Schema of field `key` inside object schema `node` (resolved), or None if unknown."""
        node = self.resolve(node)
        props = node.get("properties")
        if props is not None and key in props:
            return self.resolve(props[key])
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return self.resolve(extra)
        return None

    def items(self, node: Schema | None) -> Schema:
        """Schema of the items of array schema `node` (resolved)."""
        return self.resolve(self.resolve(node).get("items"))


def types_of(node: Schema) -> set[str]:
    """The JSON types a schema allows, without "null" (schemas spell nullable as a list)."""
    t = node.get("type")
    if t is None:
        return set()
    if isinstance(t, str):
        return {t} - {"null"}
    return set(t) - {"null"}


@functools.cache
def get_schemas() -> Schemas:
    """Load the 1.37 definitions once per process (the package's data files only: its
    validator, and jsonschema with it, is never imported)."""
    spec = importlib.util.find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("fakeapi needs kubernetes-validate (its 1.37 schemas)")
    base = Path(spec.submodule_search_locations[0]) / "kubernetes-json-schema" / SCHEMA_VERSION
    data = orjson.loads((base / "_definitions.json").read_bytes())
    return Schemas({**data["$defs"], **emulator_api.DEFINITIONS})
