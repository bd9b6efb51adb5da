"""fakeapi.patching.patch: JSON patch, merge patch and strategic merge patch against golden
cases."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.machinery.errors import ApiError
from fakeapi.patching import patch as p
from fakeapi.schema.schemas import Schema, get_schemas

DATA = Path(__file__).resolve().parent.parent / "data" / "patch"


def load_cases(name: str) -> list[Any]:
    """The cases of one golden file, as pytest params named after each case."""
    cases = yaml.safe_load((DATA / name).read_text())
    return [pytest.param(case, id=case["name"]) for case in cases]


def schema_for(kind: str | None) -> Schema | None:
    """Root schema of "group/version/Kind" (core: "v1/Kind"), None for None."""
    if kind is None:
        return None
    *group, version, name = kind.split("/")
    schema = get_schemas().for_gvk(group[0] if group else "", version, name)
    assert schema is not None, kind
    return schema


def containers(value: Any) -> Iterator[int]:
    """ids of every dict and list inside a JSON value."""
    if isinstance(value, dict):
        yield id(value)
        for item in value.values():
            yield from containers(item)
    elif isinstance(value, list):
        yield id(value)
        for item in value:
            yield from containers(item)


def check(case: dict[str, Any], run: Callable[[dict[str, Any], Any], dict[str, Any]],
          patch: Any) -> None:
    """Run one golden case: compare the result or the error, and that inputs stay untouched."""
    original = case["original"]
    before = (copy.deepcopy(original), copy.deepcopy(patch))
    if "error" in case:
        with pytest.raises(ApiError) as info:
            run(original, patch)
        want = case["error"]
        assert (info.value.code, info.value.reason, info.value.message) == (
            want["code"], want["reason"], want["message"])
    else:
        result = run(original, patch)
        assert result == case["expected"]
        shared = set(containers(result)) & (set(containers(original)) | set(containers(patch)))
        assert not shared, "the result must not share structure with the inputs"
    assert (original, patch) == before, "inputs must not be mutated"


@pytest.mark.parametrize("case", load_cases("strategic.yaml"))
def test_strategic_merge_patch(case: dict[str, Any]) -> None:
    schema = schema_for(case["kind"])
    assert schema is not None
    check(case, lambda obj, body: p.strategic_merge_patch(obj, body, schema), case["patch"])


@pytest.mark.parametrize("case", load_cases("merge.yaml"))
def test_merge_patch(case: dict[str, Any]) -> None:
    check(case, p.merge_patch, case["patch"])


@pytest.mark.parametrize("case", load_cases("json.yaml"))
def test_json_patch(case: dict[str, Any]) -> None:
    check(case, p.json_patch, case["patch"])


@pytest.mark.parametrize("case", load_cases("apply.yaml"))
def test_apply_patch(case: dict[str, Any]) -> None:
    schema = schema_for(case["kind"])
    check(case, lambda obj, body: p.apply_patch(case["content_type"], obj, body, schema),
          case["body"].encode())


@pytest.mark.parametrize(("count", "code"), [(p.MAX_JSON_PATCH_OPERATIONS, None), (
    p.MAX_JSON_PATCH_OPERATIONS + 1, 413)])
def test_json_patch_operation_limit(count: int, code: int | None) -> None:
    ops = [{"op": "test", "path": "/a", "value": 1}] * count
    if code is None:
        assert p.json_patch({"a": 1}, ops) == {"a": 1}
        return
    with pytest.raises(ApiError) as info:
        p.json_patch({"a": 1}, ops)
    assert (info.value.code, info.value.reason, info.value.message) == (
        413, "RequestEntityTooLarge", "Request entity too large: The allowed maximum "
        f"operations in a JSON patch is {p.MAX_JSON_PATCH_OPERATIONS}, got {count}")


@pytest.mark.parametrize("content_type", [p.APPLY_PATCH, p.APPLY_PATCH_CBOR])
def test_apply_patch_leaves_server_side_apply_to_its_handler(content_type: str) -> None:
    with pytest.raises(ValueError):
        p.apply_patch(content_type, {}, b"{}", schema_for("v1/Pod"))


@pytest.mark.parametrize(("strategic", "accepted"), [
    (True, p.BUILTIN_PATCH_TYPES), (False, p.CUSTOM_PATCH_TYPES)])
def test_unsupported_patch_type_lists_accepted_types(strategic: bool,
                                                     accepted: tuple[str, ...]) -> None:
    status = p.unsupported_patch_type(strategic=strategic).to_status()
    assert (status["code"], status["reason"]) == (415, "UnsupportedMediaType")
    assert status["message"].endswith("include: " + ", ".join(accepted))


@pytest.mark.parametrize(("value", "text"), [
    (1.0, "1"), (1.5, "1.5"), (-0.25, "-0.25"), (1e6, "1e+06"), (123456.0, "123456"),
    (1234567.0, "1.234567e+06"), (0.0001, "0.0001"), (0.00001, "1e-05"), (0.0, "0"),
    ({"b": [1, None], "a": True}, "map[a:true b:[1 <nil>]]"),
])
def test_go_formatting_in_error_messages(value: Any, text: str) -> None:
    """Values in upstream's messages print as Go's %v: a list item without its merge key."""
    pod = {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    schema = schema_for("v1/Pod")
    assert schema is not None
    with pytest.raises(ApiError) as info:
        p.strategic_merge_patch(pod, {"spec": {"containers": [{"x": value}]}}, schema)
    assert (info.value.code, info.value.message) == (
        400, f"map: map[x:{text}] does not contain declared merge key: name")
