"""Request-body decoding: JSON and YAML values, duplicate-field paths, Go-style errors."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.machinery.decode import decode_body, is_yaml, summarize
from fakeapi.machinery.errors import ApiError

JSON = "application/json"
YAML = "application/yaml"
FIND_KIND = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
             'Kind string "json:\\"kind,omitempty\\"" }')

GOOD: list[tuple[bytes, str, Any, list[str]]] = [
    (b'{"kind":"Pod","metadata":{"name":"a"}}', JSON, {"kind": "Pod", "metadata": {"name": "a"}},
     []),
    (b'{"a":1,"metadata":{"name":"x","name":"y"}}', JSON, {"a": 1, "metadata": {"name": "y"}},
     ["metadata.name"]),
    (b'{"spec":{"c":[{"n":1,"n":2},{"n":3}]},"spec":{"d":1}}', JSON, {"spec": {"d": 1}},
     ["spec.c[0].n", "spec"]),
    (b'{"a":{"b":1,"b":2,"b":3}}', JSON, {"a": {"b": 3}}, ["a.b", "a.b"]),
    (b'[{"op":"add","path":"/a","value":1}]', "application/json-patch+json",
     [{"op": "add", "path": "/a", "value": 1}], []),
    (b'{"big":123456789012345678901234567890}', JSON, {"big": 123456789012345678901234567890},
     []),
    (b'{"s":"\\u00e9\\n"}', "application/merge-patch+json; charset=utf-8", {"s": "é\n"}, []),
    # duplicates the orjson pass must not miss: colons in strings, an escaped colon that only
    # the decoded text has, spaces around colons, a number beyond 64 bits
    (b'{"a":"x:y","a":"z"}', JSON, {"a": "z"}, ["a"]),
    (b'{"a":1,"s":"\\u003a","a":2}', JSON, {"a": 2, "s": ":"}, ["a"]),
    (b'{"a":1,"s":"\\u003A","a":2}', JSON, {"a": 2, "s": ":"}, ["a"]),
    (b'{"a" : 1 ,\n "a"\t:2}', JSON, {"a": 2}, ["a"]),
    (b'{"k:1":{"k:1":"v:v"},"n":18446744073709551616,"n":1}', JSON,
     {"k:1": {"k:1": "v:v"}, "n": 1}, ["n"]),
    (b'{"n":-9223372036854775809,"t":"2026-01-01T00:00:00Z"}', JSON,
     {"n": -9223372036854775809, "t": "2026-01-01T00:00:00Z"}, []),
    (b'{"s":"\\":","\\u0061":1,"a":2}', JSON, {"s": '":', "a": 2}, ["a"]),
    (b"kind: Pod\nmetadata:\n  name: a\n", YAML, {"kind": "Pod", "metadata": {"name": "a"}}, []),
    (b"a: 1\nb: 2019-01-01\nc: yes\nd: '1'\n1: x\ntrue: y\nn: null\n", YAML,
     {"a": 1, "b": "2019-01-01", "c": True, "d": "1", "1": "x", "true": "y", "n": None}, []),
    (b"metadata:\n  name: a\n  name: b\nl:\n- x: 1\n  x: 2\n", YAML,
     {"metadata": {"name": "b"}, "l": [{"x": 2}]}, ["metadata.name", "l[0].x"]),
    (b"base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n", YAML,
     {"base": {"x": 1, "y": 2}, "d": {"x": 3, "y": 2}}, []),
    (b"base: &b {x: 1}\nd:\n  <<: *b\n  z: 3\n  z: 4\n", YAML,
     {"base": {"x": 1}, "d": {"x": 1, "z": 4}}, ["d.z"]),
    (b"{a: 1, b: [x, y]}", YAML, {"a": 1, "b": ["x", "y"]}, []),
    (b'{"a": 1, "a": 2}', "application/apply-patch+yaml", {"a": 2}, ["a"]),
    (b"---\na: 1\n", YAML, {"a": 1}, []),
    (b"", YAML, None, []),
    (b"bin: !!binary aGVs\n  bG8=\n", YAML, {"bin": "aGVsbG8="}, []),
]


@pytest.mark.parametrize(("raw", "content_type", "value", "dups"), GOOD)
def test_decode_good(raw: bytes, content_type: str, value: Any, dups: list[str]) -> None:
    assert decode_body(raw, content_type) == (value, dups)


@pytest.mark.parametrize("raw", [b'{"a":1,"a":2}', b'{"x":{"y":[1,{"z":1,"z":2}]}}'])
def test_duplicates_off_uses_the_fast_path(raw: bytes) -> None:
    value, dups = decode_body(raw, JSON, duplicates=False)
    assert dups == []
    assert value == decode_body(raw, JSON)[0]


BAD_JSON = [
    (b"", "unexpected end of JSON input"),
    (b"{", "unexpected end of JSON input"),
    (b'{"a":"x', "unexpected end of JSON input"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b'{"a":[1 2]}', "invalid character '2' after array element"),
    (b'{"a":1}x', "invalid character 'x' after top-level value"),
    (b'{"a":tru}', "invalid character 't' looking for beginning of value"),
    (b"{'a':1}", "invalid character '\\'' looking for beginning of object key string"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b'{"a":"\n"}', "invalid character '\\n' in string literal"),
    (b'{"a":"\\x"}', "invalid character 'x' in string escape code"),
    (b'{"a":NaN}', "invalid character 'N' looking for beginning of value"),
    (b'{"a":Infinity}', "invalid character 'I' looking for beginning of value"),
    (b'{"a":-Infinity}', "invalid character 'I' in numeric literal"),
    (b'{"a":1,"a":2', "unexpected end of JSON input"),
]


@pytest.mark.parametrize(("raw", "go"), BAD_JSON)
def test_bad_json(raw: bytes, go: str) -> None:
    with pytest.raises(ApiError) as err:
        decode_body(raw, JSON)
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == "couldn't get version/kind; json parse error: " + go


@pytest.mark.parametrize(("raw", "go", "summary"), [
    (b"{", "unexpected end of JSON input", "{"),
    (b"", "unexpected end of JSON input", "<empty>"),
    (b"[1,]", "invalid character ']' looking for beginning of value", "5b312c5d"),
    (b'{"metadata":{"name":"a-very-long-name"}', "unexpected end of JSON input",
     '{"metadata":{"name":"a-very-lo ...'),
])
def test_bad_json_for_a_kind(raw: bytes, go: str, summary: str) -> None:
    with pytest.raises(ApiError) as err:
        decode_body(raw, JSON, kind="Pod")
    assert err.value.message == (
        "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; "
        f"json parse error: {go} ({summary})")


@pytest.mark.parametrize(("raw", "content_type", "what"), [
    (b'"x"', JSON, "string"),
    (b"[1]", JSON, "array"),
    (b"3", JSON, "number"),
    (b"true", JSON, "bool"),
    (b"- a\n", YAML, "array"),
    (b"just text\n", YAML, "string"),
])
def test_kind_requires_an_object(raw: bytes, content_type: str, what: str) -> None:
    with pytest.raises(ApiError) as err:
        decode_body(raw, content_type, kind="ResourceClaim")
    assert err.value.message.startswith(
        "the object provided is unrecognized (must be of type ResourceClaim): couldn't get "
        f"version/kind; json parse error: json: cannot unmarshal {what} into Go value of type "
        f"{FIND_KIND} (")


@pytest.mark.parametrize("raw", [b"null", b""])
def test_null_body_for_a_kind_is_an_empty_object(raw: bytes) -> None:
    content_type = JSON if raw else YAML
    assert decode_body(raw, content_type, kind="Pod") == ({}, [])


BAD_YAML = [
    (b"a: b: c", "yaml: line 1: mapping values are not allowed in this context"),
    (b"a:\n  - b\n c: d", "yaml: line 3: did not find expected key"),
    (b"a: *x", "yaml: line 1: unknown anchor 'x' referenced"),
    (b"a: [*yy, 1]", "yaml: line 1: unknown anchor 'yy' referenced"),
    (b"\tx: 1", "yaml: line 1: found character that cannot start any token"),
    (b"a: 1\n---\nb: 2\n", "yaml: multiple documents are not supported in one request body"),
    (b"a: &a [*a]", "yaml: anchor value contains itself"),
    (b"? [a]\n: 1\n", "yaml: line 1: found unhashable key"),
]


@pytest.mark.parametrize(("raw", "message"), BAD_YAML)
def test_bad_yaml(raw: bytes, message: str) -> None:
    with pytest.raises(ApiError) as err:
        decode_body(raw, YAML)
    assert (err.value.code, err.value.reason) == (400, "BadRequest")
    assert err.value.message == "error converting YAML to JSON: " + message


def test_bad_yaml_for_a_kind() -> None:
    with pytest.raises(ApiError) as err:
        decode_body(b"a: b: c", YAML, kind="Pod")
    assert err.value.message == (
        "the object provided is unrecognized (must be of type Pod): yaml: line 1: mapping values "
        "are not allowed in this context (613a20623a2063)")


def test_yaml_alias_bomb_is_rejected() -> None:
    lines = [b"a: &a [x,x,x,x,x,x,x,x,x,x]"]
    for i in range(8):
        prev, cur = chr(97 + i).encode(), chr(98 + i).encode()
        lines.append(cur + b": &" + cur + b" [" + b",".join([b"*" + prev] * 10) + b"]")
    with pytest.raises(ApiError) as err:
        decode_body(b"\n".join(lines), YAML)
    assert err.value.message.endswith("yaml: document contains excessive aliasing")


def test_yaml_shared_aliases_are_fine() -> None:
    assert decode_body(b"a: &a [1]\nb: [*a, *a]\n", YAML) == ({"a": [1], "b": [[1], [1]]}, [])


@pytest.mark.parametrize(("content_type", "want"), [
    ("application/yaml", True),
    ("application/apply-patch+yaml", True),
    ("Application/YAML; charset=utf-8", True),
    ("application/json", False),
    ("application/strategic-merge-patch+json", False),
])
def test_is_yaml(content_type: str, want: bool) -> None:
    assert is_yaml(content_type) is want


@pytest.mark.parametrize(("raw", "want"), [
    (b"", "<empty>"),
    (b"{}", "{}"),
    (b"abc", "616263"),
    (b"{" + b"x" * 40, "{" + "x" * 29 + " ..."),
    (b"y" * 31, "79" * 30 + " ..."),
])
def test_summarize(raw: bytes, want: str) -> None:
    assert summarize(raw) == want
