"""YAML request bodies as sigs.k8s.io/yaml reads them: a safe loader whose view of the
document is its JSON (timestamps stay strings, keys become text, duplicate keys are
recorded), with go-yaml's error messages and its limits on aliases. Loaded only when a body
is YAML that isn't also JSON (`fakeapi.machinery.decode` tries JSON first).
"""

from __future__ import annotations

import base64
import math
from typing import Any

import yaml

_ALIAS_EXPANSION_LIMIT = 1_000_000


class YamlBodyError(Exception):
    """A body that is no valid YAML (or no single document), with go-yaml's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class _Loader(_BaseLoader):
    """Safe loader matching sigs.k8s.io/yaml's YAML->JSON view.

    Timestamps stay strings, non-string keys become their text, !!binary stays base64 text,
    and duplicate keys are recorded (per mapping node) instead of silently overwritten.
    """

    dups: list[tuple[Any, str]]

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping node, but found {node.id}", node.start_mark)
        pairs = node.value
        for key_node, _ in pairs:
            if key_node.tag == _MERGE_TAG:
                return self._construct_merged(node, deep)
        mapping: dict[str, Any] = {}
        construct = self.construct_object
        for key_node, value_node in pairs:
            key = construct(key_node, deep=deep)
            if key.__class__ is not str:
                key = _yaml_key(key, key_node)
            if key in mapping:
                self.dups.append((node, key))
            mapping[key] = construct(value_node, deep=deep)
        return mapping

    def _construct_merged(self, node: Any, deep: bool) -> dict[str, Any]:
        own = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
        self.flatten_mapping(node)
        start = len(node.value) - own
        mapping: dict[str, Any] = {}
        own_keys: set[str] = set()
        for i, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=deep)
            if key.__class__ is not str:
                key = _yaml_key(key, key_node)
            if i >= start:
                if key in own_keys:
                    self.dups.append((node, key))
                own_keys.add(key)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    def construct_yaml_binary(self, node: Any) -> str:
        return "".join(str(self.construct_scalar(node)).split())

    def construct_yaml_timestamp(self, node: Any) -> str:
        return str(self.construct_scalar(node))

    def construct_yaml_int(self, node: Any) -> Any:
        """Same as goyaml: an integer too large even for a float64 stays a string."""
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # beyond Python's 4,300-digit conversion limit
            return str(self.construct_scalar(node))

    def construct_yaml_float(self, node: Any) -> Any:
        """Same as sigs.k8s.io/yaml: .inf and .nan can't be converted to JSON."""
        value = super().construct_yaml_float(node)
        if math.isinf(value) or math.isnan(value):
            shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            raise YamlBodyError(f"json: unsupported value: {shown}")
        return value

    def construct_yaml_pairs_list(self, node: Any) -> Any:
        out: list[Any] = []
        yield out
        for sub in node.value:
            out.append(self.construct_mapping(sub))


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_constructor("tag:yaml.org,2002:binary", _Loader.construct_yaml_binary)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
_Loader.add_constructor(_TIMESTAMP_TAG, _Loader.construct_yaml_timestamp)
_Loader.add_constructor("tag:yaml.org,2002:omap", _Loader.construct_yaml_pairs_list)
_Loader.add_constructor("tag:yaml.org,2002:pairs", _Loader.construct_yaml_pairs_list)


def _yaml_key(key: Any, node: Any) -> str:
    """JSON text of a non-string YAML key (as the YAML->JSON conversion writes it)."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, (int, float)):
        return str(key) if isinstance(key, int) or not key.is_integer() else str(int(key))
    if isinstance(key, bytes):
        return base64.b64encode(key).decode()
    raise yaml.constructor.ConstructorError(
        None, None, "found unhashable key", node.start_mark)


_GO_YAML_PROBLEMS = (
    ("mapping values are not allowed here", "mapping values are not allowed in this context"),
    ("expected <block end>, but found", "did not find expected key"),
    ("found character '\\t' that cannot start any token",
     "found character that cannot start any token"),
    ("found character", "found character that cannot start any token"),
)


def _yaml_message(e: yaml.YAMLError, raw: bytes) -> str:
    """goyaml-style text: `yaml: line N: <problem>`."""
    problem = getattr(e, "problem", None) or str(e)
    mark = getattr(e, "problem_mark", None)
    if problem.startswith("found undefined alias"):
        name = ""
        if mark is not None:
            text = raw.decode("utf-8", "replace")[mark.index:]
            name = text[1:].split(None, 1)[0].rstrip(",]}") if text.startswith("*") else ""
        problem = f"unknown anchor '{name}' referenced"
    else:
        for ours, theirs in _GO_YAML_PROBLEMS:
            if problem.startswith(ours):
                problem = theirs
                break
    if mark is None:
        return f"yaml: {problem}"
    return f"yaml: line {mark.line + 1}: {problem}"


def _check_alias_expansion(root: Any) -> None:
    """Reject alias bombs: the tree with aliases expanded must stay reasonably small."""
    sizes: dict[int, int] = {}

    def size(node: Any) -> int:
        got = sizes.get(id(node))
        if got is not None:
            if got < 0:
                raise YamlBodyError("yaml: anchor value contains itself")
            return got
        sizes[id(node)] = -1  # in progress: meeting it again means a cycle
        total = 1
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += size(k) + size(v)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                total += size(v)
        sizes[id(node)] = total
        return total

    if size(root) > _ALIAS_EXPANSION_LIMIT:
        raise YamlBodyError("yaml: document contains excessive aliasing")


def _yaml_dup_paths(root: Any, dups: list[tuple[Any, str]]) -> list[str]:
    """Dotted paths of the recorded duplicate keys, found by walking the node tree."""
    wanted: dict[int, list[str]] = {}
    for node, key in dups:
        wanted.setdefault(id(node), []).append(key)
    out: list[str] = []
    seen: set[int] = set()

    def walk(node: Any, path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key in wanted.get(id(node), ()):
                out.append(f"{path}.{key}" if path else key)
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    walk(v, f"{path}.{k.value}" if path else str(k.value))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, f"{path}[{i}]")

    walk(root, "")
    return out


def parse_yaml(raw: bytes) -> tuple[Any, list[str]]:
    """The document's value and the paths of its duplicate keys; YamlBodyError otherwise."""
    loader = _Loader(raw)
    loader.dups = []
    try:
        try:
            node = loader.get_single_node()
        except yaml.composer.ComposerError as e:
            if e.problem and "another document" in e.problem:
                raise YamlBodyError("yaml: multiple documents are not supported in one request "
                                 "body") from None
            raise
        if node is None:
            return None, []
        if b"*" in raw and b"&" in raw:
            _check_alias_expansion(node)
        value = loader.construct_document(node)
    except yaml.YAMLError as e:
        raise YamlBodyError(_yaml_message(e, raw)) from None
    finally:
        loader.dispose()
    if not loader.dups:
        return value, []
    return value, _yaml_dup_paths(node, loader.dups)


