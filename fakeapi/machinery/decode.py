"""Request-body decoding: JSON or YAML into plain Python values, plus duplicate-field paths.

JSON goes through orjson first: a body decodes there without duplicate keys exactly when it has
as many `:` bytes as orjson's re-encoding of the value (`_orjson_without_duplicates`). Anything
else (a duplicate, a syntax error, an integer orjson can't hold) takes the stdlib decoder, whose
pairs hook only compares `len(dict(pairs))` with `len(pairs)`; a duplicate aborts that pass and
a slower pass computes every duplicate path (`metadata.name`, `spec.containers[0].name`).
Callers that don't care about duplicates pass `duplicates=False`. Malformed bodies become 400
BadRequest with Go-style messages, wrapped the way the apiserver wraps them.

Hostile bodies get what Go's decoder gives them, never a server error: nesting deeper than
10,000 levels is refused ("exceeded max depth"); a lone UTF-16 surrogate escape (`\ud800`)
decodes to U+FFFD; a number beyond float64 (an integer of 400 digits, `1e999`) is refused as
Go refuses to unmarshal it; YAML's `.inf`/`.nan` are refused as JSON can't carry them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

import orjson

from fakeapi.machinery.errors import bad_request
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.jsonio import (
    HAZARD_RUN,
    MAX_DEPTH,
    dumps,
    hazard,
    is_hazard,
    list_chain,
    loads,
    note_request_hazard,
)

# The Go type upstream's version/kind sniffer unmarshals into, as `%v` prints it.
_FIND_KIND_TYPE = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                   'Kind string "json:\\"kind,omitempty\\"" }')
_JSON_PREFIX = "couldn't get version/kind; json parse error: "
_YAML_PREFIX = "error converting YAML to JSON: "


class _Duplicate(Exception):
    """Raised by the fast JSON hook at the first duplicate key."""


class _BadConstant(ValueError):
    """NaN/Infinity literals: Python accepts them, Go's decoder does not."""


class _BadValue(Exception):
    """A well-formed value Go's decoder won't unmarshal (a number beyond float64)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_SHOWN_DIGITS = 64


def _number_error(text: str) -> _BadValue:
    shown = text if len(text) <= _SHOWN_DIGITS else text[:_SHOWN_DIGITS] + "..."
    return _BadValue(f"json: cannot unmarshal number {shown} into Go value of type float64")


def _parse_int(text: str) -> int | float:
    """Integers as the stdlib reads them, but one too long for a float64 is Go's error (and
    never reaches Python's 4,300-digit conversion limit)."""
    if len(text) > 300 and math.isinf(float(text)):
        raise _number_error(text)
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _number_error(text)
    return value


def _fast_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Duplicate
    return d


class _Pairs(list[tuple[str, Any]]):
    """Marker for an object's raw key/value pairs in the slow duplicate-path pass."""


def _reject_constant(name: str) -> Any:
    raise _BadConstant(name)


_FAST = json.JSONDecoder(object_pairs_hook=_fast_pairs, parse_constant=_reject_constant,
                         parse_int=_parse_int, parse_float=_parse_float)
_SLOW = json.JSONDecoder(object_pairs_hook=_Pairs, parse_constant=_reject_constant,
                         parse_int=_parse_int, parse_float=_parse_float)


def media_type(content_type: str) -> str:
    """The bare, lower-case media type of a Content-Type header value."""
    return content_type.partition(";")[0].strip().lower()


def is_yaml(content_type: str) -> bool:
    """Whether a Content-Type names a YAML body (application/yaml, apply-patch+yaml, ...)."""
    return media_type(content_type).endswith("yaml")


def summarize(raw: bytes, limit: int = 30) -> str:
    """Upstream summarizeData: a JSON-looking prefix as text, anything else as hex."""
    if not raw:
        return "<empty>"
    more = " ..." if len(raw) > limit else ""
    head = raw[:limit]
    if head[:1] == b"{":
        return head.decode("utf-8", "replace") + more
    return head.hex() + more


def decode_body(raw: bytes, content_type: str, *, kind: str | None = None,
                duplicates: bool = True) -> tuple[Any, list[str]]:
    """Decode a request body; return (value, duplicate-field paths in the order found).

    With `kind` (create/update of that kind) the body must be an object and errors take the
    apiserver's shape `the object provided is unrecognized (must be of type Pod): ...`;
    without it (patches) errors carry only the parser's message.
    """
    yaml_body = is_yaml(content_type)
    try:
        if yaml_body:
            value, dups = _decode_yaml(raw, duplicates)
        else:
            value, dups = _decode_json(raw, duplicates)
    except _BadValue as e:
        raise bad_request(_YAML_PREFIX + e.message if yaml_body else e.message) from None
    except _BodyError as e:
        inner = e.message if yaml_body else _JSON_PREFIX + e.message
        if kind is None:
            raise bad_request(_YAML_PREFIX + inner if yaml_body else inner) from None
        raise bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                          f"{inner} ({summarize(raw)})") from None
    if kind is not None and not isinstance(value, dict):
        if value is None:
            return {}, dups
        raise bad_request(f"the object provided is unrecognized (must be of type {kind}): "
                          f"{_JSON_PREFIX}json: cannot unmarshal {json_kind(value)} into Go "
                          f"value of type {_FIND_KIND_TYPE} ({summarize(raw)})")
    return value, dups


STRUCT_FIELDS = {"metadata": "v1.ObjectMeta", "spec": "{version}.{kind}Spec",
                 "status": "{version}.{kind}Status"}
"""The top-level fields every kind's Go type has as a struct, and the struct's type name."""


def as_go_object(body: dict[str, Any], kind: str, version: str) -> dict[str, Any]:
    """A decoded object as Go's decoder sees it: a top-level `null` is the field's zero value
    (left out); a top-level `metadata`, `spec` or `status` that isn't an object is upstream's
    400 (`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into
    Go struct field Pod.spec of type v1.PodSpec`)."""
    for key in [k for k, v in body.items() if v is None]:
        del body[key]
    for key, type_name in STRUCT_FIELDS.items():
        value = body.get(key)
        if value is not None and not isinstance(value, dict):
            go_type = type_name.format(version=version or "v1", kind=kind)
            raise bad_request(f'{kind} in version "{version or "v1"}" cannot be handled as a '
                              f"{kind}: json: cannot unmarshal {json_kind(value)} into Go "
                              f"struct field {kind}.{key} of type {go_type}")
    return body


def require_object(body: Any, kind: ResourceType) -> dict[str, Any]:
    """Same as upstream: a decoded create/update body must be a JSON object (400 otherwise)."""
    if not isinstance(body, dict):
        raise bad_request(f"Object '{kind.kind}' is missing in request body: expected a JSON "
                          "object")
    return body


def object_member(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """`obj[key]` when it is a JSON object, else an empty dict (for reading optional parts)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def check_type_meta(obj: dict[str, Any], kind: ResourceType) -> None:
    """Same as upstream: `apiVersion` and `kind`, where set, are those of the endpoint (400)."""
    api_version, k = obj.get("apiVersion"), obj.get("kind")
    if api_version and api_version != kind.api_version:
        raise bad_request(f"the API version in the data ({api_version}) does not match the "
                          f"expected API version ({kind.api_version})")
    if k and k != kind.kind:
        raise bad_request(f"the kind in the data ({k}) does not match the expected kind "
                          f"({kind.kind})")


class _BodyError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def json_kind(value: Any) -> str:
    """The JSON kind Go names in `cannot unmarshal <kind> into ...` of a decoded value.

    Anything else than null, a bool, number, string or array is an object, as YAML-only values
    (`!!set`) become objects in upstream's YAML-to-JSON conversion.
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if value is None:
        return "null"
    return "object"


def json_copy(value: Any, *, lenient: bool = False) -> Any:
    """A deep copy of JSON data through an orjson round trip (TypeError on non-JSON values).

    With `lenient`, scalars come back as they are and containers orjson can't encode (integers
    beyond 64 bits from the stdlib decoder) are copied recursively instead.
    """
    if not lenient:
        return loads(dumps(value))
    if not isinstance(value, (dict, list)):
        return value
    try:
        return loads(dumps(value))
    except (TypeError, ValueError):
        return _copy_slow(value)


def _copy_slow(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_slow(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_slow(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# JSON


# orjson reads integers beyond 64 bits as floats, the stdlib keeps them exact: bodies with a
# run of 19 digits are left to the stdlib (found by mapping every digit to 0, faster than re).
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
_NO_VALUE = object()


def _orjson_without_duplicates(raw: bytes) -> Any:
    """The value of a body orjson decodes as the stdlib would, without duplicate keys; else
    `_NO_VALUE`.

    Every `:` of a JSON text separates a key from its value or sits in a string. orjson's
    re-encoding writes one `:` per key it kept and the strings' own, unescaped. So the counts
    match exactly when no key was dropped as a duplicate, unless an escaped colon (`\\u003a`)
    adds one to the decoded strings only: such bodies, and ones with long numbers, are not
    decoded here.
    """
    if (not isinstance(raw, bytes) or _LONG_NUMBER in raw.translate(_DIGITS_TO_ZERO)
            or b"\\u003a" in raw or b"\\u003A" in raw):
        return _NO_VALUE
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _NO_VALUE  # the stdlib pass gives the Go-style message
    if hazard():  # orjson can't be trusted to encode it: the stdlib pass decides
        return _NO_VALUE
    try:
        encoded = orjson.dumps(value)
    except TypeError:  # nested deeper than orjson encodes: the stdlib pass decides
        return _NO_VALUE
    if raw.count(b":") != encoded.count(b":"):
        return _NO_VALUE
    return value


def _decode_json(raw: bytes, duplicates: bool) -> tuple[Any, list[str]]:
    note_hazard(raw)
    if not duplicates:
        try:
            return orjson.loads(raw), []
        except orjson.JSONDecodeError:
            pass  # fall through for a Go-style message
    else:
        value = _orjson_without_duplicates(raw)
        if value is not _NO_VALUE:
            return value, []
    text = raw.decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else raw
    _check_depth(text)
    text = replace_lone_surrogates(text)
    try:
        try:
            return _FAST.decode(text), []
        except _Duplicate:
            return _slow_json(text)
    except _BadConstant as e:
        raise _BodyError(_constant_message(str(e))) from None
    except json.JSONDecodeError as e:
        raise _BodyError(_go_json_message(e)) from None


def note_hazard(raw: bytes | str) -> None:
    """Mark the request being served if its body is a hazard to orjson's encoder."""
    if is_hazard(raw):
        note_request_hazard()


def note_value_hazard(value: Any) -> None:
    """The same for a decoded value whose text doesn't show it (YAML, protobuf)."""
    if isinstance(value, (dict, list)) and list_chain(value) >= HAZARD_RUN:
        note_request_hazard()


def parse_json(raw: bytes) -> Any:
    """Decode a JSON body (a patch) as `decode_body` does, duplicates ignored; ValueError with
    Go's message when it isn't JSON Go would decode."""
    try:
        return _decode_json(raw, False)[0]
    except (_BodyError, _BadValue) as e:
        raise ValueError(e.message) from None


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def too_deep(text: str) -> str:
    """The bracket at which a JSON (or flow YAML) text nests deeper than MAX_DEPTH levels,
    strings aside; "" when it doesn't."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return ""
    data = _STRINGS.sub(b"", text.encode("utf-8", "surrogatepass"))
    brackets = data.translate(None, _NOT_BRACKETS)
    steps = memoryview(brackets.translate(_STEPS)).cast("b")
    if max(itertools.accumulate(steps), default=0) <= MAX_DEPTH:  # at C speed: the usual case
        return ""
    for i, depth in enumerate(itertools.accumulate(steps)):
        if depth > MAX_DEPTH:
            return chr(brackets[i])
    return ""


class _TooDeep(_BodyError):
    """Nested deeper than MAX_DEPTH: refused whatever the media type says."""


def _check_depth(text: str) -> None:
    """Same as Go's JSON scanner: nesting deeper than 10,000 levels is a syntax error."""
    opener = too_deep(text)
    if opener:
        raise _TooDeep(f"invalid character '{opener}' exceeded max depth")


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPES = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})|u[dD][89a-fA-F][0-9a-fA-F]{2}|.)",
    re.S)


def _one_escape(m: re.Match[str]) -> str:
    text = m.group(0)
    if m.group(1) is None and text[1] == "u":
        return "\\ufffd"  # a surrogate escape that is not half of a pair
    return text


def replace_lone_surrogates(text: str) -> str:
    """Same as Go's decoder: a `\\uD800`-`\\uDFFF` escape that is not part of a valid pair
    decodes to U+FFFD instead of a lone surrogate (which no UTF-8 encoder accepts)."""
    if not _SURROGATE_ESCAPE.search(text):
        return text
    return _ESCAPES.sub(_one_escape, text)


def _slow_json(text: str) -> tuple[Any, list[str]]:
    dups: list[str] = []
    return _build(_SLOW.decode(text), "", dups), dups


def _build(v: Any, path: str, dups: list[str]) -> Any:
    """Turn `_Pairs` back into dicts (last value wins, like Go), recording duplicate paths."""
    if isinstance(v, _Pairs):
        out: dict[str, Any] = {}
        for k, item in v:
            child = f"{path}.{k}" if path else k
            if k in out:
                dups.append(child)
            out[k] = _build(item, child, dups)
        return out
    if isinstance(v, list):
        return [_build(item, f"{path}[{i}]", dups) for i, item in enumerate(v)]
    return v


def _constant_message(name: str) -> str:
    if name.startswith("-"):
        return "invalid character 'I' in numeric literal"
    return f"invalid character '{name[0]}' looking for beginning of value"


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """Go's strconv.Quote (`%q`): a double-quoted string whose control and unprintable
    characters are escaped, so the result is safe on one line (in a header, in a message)."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out = ['"']
    for ch in text:
        esc = _GO_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:  # not a rune: Go writes the replacement character
            out.append("\ufffd")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def go_quote_char(ch: str) -> str:
    """Go's quoteChar for the (first byte of the) offending character."""
    b = ch.encode("utf-8", "surrogatepass")[0]
    c = chr(b)
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    esc = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
           "\v": "\\v", "\\": "\\\\"}.get(c)
    if esc is not None:
        return f"'{esc}'"
    if b < 0x20 or b == 0x7F:
        return f"'\\x{b:02x}'"
    if 0x80 <= b < 0xA0:
        return f"'\\u{b:04x}'"
    return f"'{c}'"


def _container_at(text: str, pos: int) -> str:
    """'{' or '[' enclosing position `pos` (scanning strings properly), '' at top level."""
    stack: list[str] = []
    in_str = esc = False
    for ch in text[:pos]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _go_json_message(e: json.JSONDecodeError) -> str:
    """Map a Python JSON syntax error onto the message Go's scanner gives for it."""
    text, pos, msg = e.doc, e.pos, e.msg
    if pos >= len(text) or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    q = go_quote_char(text[pos])
    if msg.startswith("Expecting value") or msg.startswith("Illegal trailing comma before end "
                                                            "of array"):
        return f"invalid character {q} looking for beginning of value"
    if msg.startswith("Expecting property name") or msg.startswith("Illegal trailing comma"):
        return f"invalid character {q} looking for beginning of object key string"
    if msg.startswith("Expecting ':'"):
        return f"invalid character {q} after object key"
    if msg.startswith("Expecting ','"):
        where = "object key:value pair" if _container_at(text, pos) == "{" else "array element"
        return f"invalid character {q} after {where}"
    if msg.startswith("Extra data"):
        return f"invalid character {q} after top-level value"
    if msg.startswith("Invalid control character"):
        return f"invalid character {q} in string literal"
    if msg.startswith("Invalid \\u"):
        return f"invalid character {go_quote_char(text[min(pos + 2, len(text) - 1)])} in \\u " \
               "hexadecimal character escape"
    if msg.startswith("Invalid \\escape"):
        return f"invalid character {go_quote_char(text[min(pos + 1, len(text) - 1)])} in " \
               "string escape code"
    return f"invalid character {q} looking for beginning of value"


def _decode_yaml(raw: bytes, duplicates: bool) -> tuple[Any, list[str]]:
    head = raw.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            return _decode_json(raw, duplicates)
        except _TooDeep:
            raise
        except _BodyError:
            pass  # flow-style YAML that isn't JSON
    from fakeapi.machinery.yamlbody import YamlBodyError, parse_yaml  # PyYAML, on first use

    try:
        value, dups = parse_yaml(raw)
    except YamlBodyError as e:
        raise _BodyError(e.message) from None
    note_value_hazard(value)
    return value, dups
