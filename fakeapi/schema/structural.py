"""Structural decoding of an object against its kind's schema, the way the apiserver decodes.

Upstream decodes a request body into Go structs: values of the wrong JSON type fail the request
(`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct
field PodSpec.spec.containers of type []v1.Container`), and fields the struct doesn't have are
unknown. The `fieldValidation` mode decides what unknown (and duplicate) fields do:

- "Strict": 400 `... cannot be handled as a Pod: strict decoding error: unknown field "spec.x"`;
- "Warn": dropped, and each is returned as a warning (`unknown field "spec.x"`);
- "Ignore": dropped silently.

`check` never mutates its input: containers on the path to a dropped or normalized value are
copied, everything else is shared with the input. Schemas are compiled once into small node
objects, so the walk is a dict lookup and a type test per field.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import orjson

from fakeapi.machinery.decode import go_quote, json_kind
from fakeapi.machinery.errors import ApiError, bad_request
from fakeapi.machinery.quantity import FORMAT_WRONG
from fakeapi.machinery.quantity import quantity_error as _quantity_grammar_error
from fakeapi.machinery.timestamps import RFC3339, RFC3339_MICRO, canonical_time, time_error
from fakeapi.schema.schemas import Schema, get_schemas, types_of

MODES = ("Strict", "Warn", "Ignore")
MAX_STRICT_ERRORS = 100  # same cap as upstream's strict decoder

# Node tags.
_ANY, _OBJ, _MAP, _ARR, _STR, _INT, _NUM, _BOOL, _IOS, _QTY, _TIME, _BYTES = range(12)

# Definitions decoded as raw JSON upstream (no unknown-field checks inside).
_FREEFORM = frozenset({
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
})
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_TIME_DEF = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
_MICRO_TIME_DEF = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


class _Node:
    """A compiled schema node."""

    __slots__ = ("tag", "props", "child", "preserve", "go", "struct", "bits", "layout")

    def __init__(self, tag: int, go: str) -> None:
        self.tag = tag
        self.props: dict[str, _Node] = {}
        self.child: _Node | None = None  # array items or map values
        self.preserve = False
        self.go = go  # Go type as reflect prints it, for type errors
        self.struct = ""  # Go struct name, for "Go struct field <Struct>.<path>"
        self.bits = 64
        self.layout = RFC3339


_ANY_NODE = _Node(_ANY, "interface {}")
_EMPTY_SCHEMA: Schema = {}
_cache: dict[int, tuple[Schema, _Node]] = {}
_def_names: dict[int, str] = {}


def _go_name(definition: str) -> tuple[str, str]:
    """(`v1.PodSpec`, `PodSpec`) for `io.k8s.api.core.v1.PodSpec`."""
    parts = definition.split(".")
    return f"{parts[-2]}.{parts[-1]}", parts[-1]


def _deref(node: Schema) -> tuple[Schema, str | None]:
    """Follow `$ref` (or a lone `allOf: [{$ref}]`), returning the schema and definition name."""
    return get_schemas().deref(node, _def_names.get(id(node)))


def compile_schema(schema: Schema) -> _Node:
    """The compiled node for a schema (cached; cycles through `$ref` are fine)."""
    hit = _cache.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    if not _def_names:
        _def_names.update({id(v): k for k, v in get_schemas().definitions.items()})
    resolved, name = _deref(schema)
    if resolved is not schema:
        node = compile_schema(resolved)
        _cache[id(schema)] = (schema, node)
        return node
    node = _new_node(resolved, name)
    _cache[id(schema)] = (schema, node)
    _fill(node, resolved, name)
    return node


def _new_node(d: Schema, name: str | None) -> _Node:
    if name in _FREEFORM:
        return _ANY_NODE
    if name == _QUANTITY:
        return _Node(_QTY, "resource.Quantity")
    if name == _INT_OR_STRING or d.get("x-kubernetes-int-or-string") is True:
        return _Node(_IOS, "intstr.IntOrString")
    if name in (_TIME_DEF, _MICRO_TIME_DEF):
        node = _Node(_TIME, "v1." + name.rpartition(".")[2])
        node.layout = RFC3339_MICRO if name == _MICRO_TIME_DEF else RFC3339
        return node
    preserve = d.get("x-kubernetes-preserve-unknown-fields") is True
    embedded = d.get("x-kubernetes-embedded-resource") is True
    types = types_of(d)
    extra = d.get("additionalProperties")
    if "properties" in d or embedded or ("object" in types and extra is None and not preserve):
        go, struct = _go_name(name) if name else ("struct", "")
        node = _Node(_OBJ, go)
        node.struct = struct
        node.preserve = preserve
        return node
    if isinstance(extra, dict) and extra:
        return _Node(_MAP, "map[string]")
    if "array" in types:
        return _Node(_ARR, "[]")
    if "oneOf" in d or "anyOf" in d or preserve or extra is not None or "object" in types:
        return _ANY_NODE
    if "string" in types:
        if d.get("format") == "byte":
            return _Node(_BYTES, "[]uint8")
        if d.get("format") == "date-time":
            return _Node(_TIME, "v1.Time")
        return _Node(_STR, "string")
    if "integer" in types:
        node = _Node(_INT, "int32" if d.get("format") == "int32" else "int64")
        node.bits = 32 if d.get("format") == "int32" else 64
        return node
    if "number" in types:
        return _Node(_NUM, "float64")
    if "boolean" in types:
        return _Node(_BOOL, "bool")
    return _ANY_NODE


def _fill(node: _Node, d: Schema, name: str | None) -> None:
    """Compile children after the node is cached (so recursive schemas terminate)."""
    if node.tag == _OBJ:
        node.props = {k: compile_schema(v) for k, v in (d.get("properties") or {}).items()}
        if d.get("x-kubernetes-embedded-resource") is True:
            string = _Node(_STR, "string")
            node.props.setdefault("apiVersion", string)
            node.props.setdefault("kind", string)
            meta = get_schemas().definitions.get(_OBJECT_META)
            node.props.setdefault("metadata", compile_schema(meta) if meta else _ANY_NODE)
    elif node.tag == _MAP:
        node.child = compile_schema(d["additionalProperties"])
        node.go = "map[string]" + node.child.go
    elif node.tag == _ARR:
        node.child = compile_schema(d.get("items") or _EMPTY_SCHEMA)
        node.go = "[]" + node.child.go


# ---------------------------------------------------------------------------------------------
# Errors


class _Fatal(Exception):
    """An error that stops decoding at once (custom unmarshalers' errors, as in Go)."""


def _number_text(v: Any) -> str:
    if isinstance(v, float):
        text = repr(v)
        return text[:-2] if text.endswith(".0") and "e" not in text else text
    return str(v)


def quantity_error(text: str) -> str | None:
    """Why upstream's JSON decoding of a Quantity rejects `text` (None when it parses): the
    surrounding whitespace trimmed (UnmarshalJSON), then ParseQuantity's grammar."""
    return _quantity_grammar_error(text.strip())


_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(s: str) -> str | None:
    """Go's StdEncoding.Decode error (`illegal base64 data at input byte N`); None if valid."""
    def bad(i: int) -> str:
        return f"illegal base64 data at input byte {i}"
    si, n = 0, len(s)
    while True:
        j = 0
        while j < 4:
            if si == n:
                if j == 0:
                    return None
                return bad(si - j)
            ch = s[si]
            si += 1
            if ch in _B64:
                j += 1
                continue
            if ch in "\r\n":
                continue
            if ch != "=":
                return bad(si - 1)
            if j < 2:
                return bad(si - 1)
            if j == 2:
                while si < n and s[si] in "\r\n":
                    si += 1
                if si == n:
                    return bad(n)
                if s[si] != "=":
                    return bad(si - 1)
                si += 1
            while si < n and s[si] in "\r\n":
                si += 1
            return bad(si) if si < n else None


# ---------------------------------------------------------------------------------------------
# The walk


class _Checker:
    """One check: the mode, collected strict errors, the first type error and the path."""

    __slots__ = ("prune", "unknown", "type_error", "segs")

    def __init__(self, prune: bool) -> None:
        self.prune = prune
        self.unknown: list[str] = []
        self.type_error: str | None = None
        self.segs: list[Any] = []  # str: struct field, int: index, tuple: (map key,)

    def path(self, last: str | None = None) -> str:
        parts: list[str] = []
        for s in self.segs:
            if isinstance(s, int):
                parts.append(f"[{s}]")
            else:
                name = s if isinstance(s, str) else s[0]
                parts.append(f".{name}" if parts else name)
        if last is not None:
            parts.append(f".{last}" if parts else last)
        return "".join(parts)

    def mismatch(self, value: Any, node: _Node, struct: str, what: str | None = None) -> None:
        """Record Go's UnmarshalTypeError (only the first one counts, like Go's saveError)."""
        if self.type_error is not None:
            return
        what = what or json_kind(value)
        fields = ".".join(s for s in self.segs if isinstance(s, str))
        if struct or fields:
            self.type_error = (f"json: cannot unmarshal {what} into Go struct field "
                               f"{struct}.{fields} of type {node.go}")
        else:
            self.type_error = f"json: cannot unmarshal {what} into Go value of type {node.go}"

    def walk(self, v: Any, node: _Node, struct: str) -> Any:
        """Check `v` against `node`; return `v` or a pruned/normalized copy."""
        tag = node.tag
        if tag == _OBJ:
            if v.__class__ is dict:
                return self.obj(v, node)
        elif tag == _STR:
            if v.__class__ is str:
                return v
        elif tag == _ARR:
            if v.__class__ is list:
                return self.arr(v, node, struct)
        elif tag == _MAP:
            if v.__class__ is dict:
                return self.map(v, node, struct)
        elif tag == _ANY:
            return v
        elif tag == _BOOL:
            if v is True or v is False:
                return v
        elif tag == _INT:
            return self.integer(v, node, struct)
        elif tag == _NUM:
            if v.__class__ is int or v.__class__ is float:
                return v
        elif tag == _QTY:
            return self.quantity(v)
        elif tag == _IOS:
            return self.int_or_string(v)
        elif tag == _TIME:
            return self.time(v, node)
        elif tag == _BYTES:
            if v.__class__ is str:
                if self.type_error is None:
                    err = base64_error(v)
                    if err is not None:
                        self.type_error = err
                return v
        self.mismatch(v, node, struct)
        return v

    def obj(self, value: dict[str, Any], node: _Node) -> dict[str, Any]:
        props = node.props
        struct = node.struct
        segs = self.segs
        changes: dict[str, Any] | None = None
        for k, v in value.items():
            child = props.get(k)
            if child is None:
                if node.preserve:
                    continue
                if len(self.unknown) < MAX_STRICT_ERRORS:
                    self.unknown.append(self.path(k))
                if self.prune:
                    if changes is None:
                        changes = {}
                    changes[k] = _DROP
                continue
            if v is None:
                continue
            tag = child.tag
            if (tag == _STR and v.__class__ is str) or tag == _ANY:
                continue
            segs.append(k)
            new = self.walk(v, child, struct)
            segs.pop()
            if new is not v:
                if changes is None:
                    changes = {}
                changes[k] = new
        if changes is None:
            return value
        out = {}
        for k, v in value.items():
            new = changes.get(k, v)
            if new is not _DROP:
                out[k] = new
        return out

    def arr(self, value: list[Any], node: _Node, struct: str) -> list[Any]:
        child = node.child
        assert child is not None
        if child.tag == _ANY or (child.tag == _STR and all(x.__class__ is str for x in value)):
            return value
        segs = self.segs
        out: list[Any] | None = None
        for i, v in enumerate(value):
            if v is None:
                continue
            segs.append(i)
            new = self.walk(v, child, struct)
            segs.pop()
            if new is not v:
                if out is None:
                    out = list(value)
                out[i] = new
        return value if out is None else out

    def map(self, value: dict[str, Any], node: _Node, struct: str) -> dict[str, Any]:
        child = node.child
        assert child is not None
        if child.tag == _ANY:
            return value
        if child.tag == _STR:
            for v in value.values():
                if v.__class__ is not str and v is not None:
                    self.mismatch(v, child, struct)
                    break
            return value
        segs = self.segs
        out: dict[str, Any] | None = None
        for k, v in value.items():
            if v is None:
                continue
            segs.append((k,))
            new = self.walk(v, child, struct)
            segs.pop()
            if new is not v:
                if out is None:
                    out = dict(value)
                out[k] = new
        return value if out is None else out

    def integer(self, v: Any, node: _Node, struct: str) -> Any:
        cls = v.__class__
        if cls is int:
            limit = 1 << (node.bits - 1)
            if -limit <= v < limit:
                return v
            self.mismatch(v, node, struct, f"number {v}")
            return v
        if cls is float:
            # An integral float (YAML `1.0`) decodes as an int once converted to JSON.
            if v.is_integer() and -(1 << (node.bits - 1)) <= v < (1 << (node.bits - 1)):
                return int(v)
            self.mismatch(v, node, struct, f"number {_number_text(v)}")
            return v
        self.mismatch(v, node, struct)
        return v

    def quantity(self, v: Any) -> Any:
        cls = v.__class__
        if cls is str:
            err = quantity_error(v)
        elif cls is int or cls is float:
            err = quantity_error(_number_text(v))
        else:
            err = FORMAT_WRONG
        if err is not None:
            raise _Fatal(err)
        return v

    def int_or_string(self, v: Any) -> Any:
        cls = v.__class__
        if cls is str:
            return v
        if cls is int and -(1 << 31) <= v < (1 << 31):
            return v
        if cls is float and v.is_integer() and -(1 << 31) <= v < (1 << 31):
            return int(v)
        what = json_kind(v)
        if cls is int or cls is float:
            what = f"number {_number_text(v)}"
        raise _Fatal(f"json: cannot unmarshal {what} into Go value of type int32")

    def time(self, v: Any, node: _Node) -> Any:
        if v.__class__ is not str:
            raise _Fatal(f"json: cannot unmarshal {json_kind(v)} into Go value of type string")
        err = time_error(v, node.layout)
        if err is not None:
            raise _Fatal(err)
        return canonical_time(v, node.layout)


@functools.lru_cache(maxsize=4096)
def _quantity_ok(text: str) -> bool:
    return quantity_error(text) is None


@functools.lru_cache(maxsize=4096)
def _time_ok(text: str, layout: str) -> bool:
    return time_error(text, layout) is None and canonical_time(text, layout) == text


def _valid(v: Any, node: _Node) -> bool:
    """Fast pass: True when `v` passes with nothing to report, drop or normalize.

    No paths are tracked; any doubt sends the caller to the full `_Checker` walk.
    """
    t = node.tag
    if t == _OBJ:
        if v.__class__ is not dict:
            return False
        props = node.props
        for k, x in v.items():
            c = props.get(k)
            if c is None:
                if node.preserve:
                    continue
                return False
            if x is None:
                continue
            ct = c.tag
            if ct == _STR:
                if x.__class__ is str:
                    continue
                return False
            if ct == _ANY:
                continue
            # Inline the common scalars; recursion is the expensive part of this walk.
            if ct == _BOOL:
                if x is True or x is False:
                    continue
                return False
            if ct == _INT:
                if x.__class__ is int and -(1 << (c.bits - 1)) <= x < (1 << (c.bits - 1)):
                    continue
                return False
            if ct == _QTY:
                if x.__class__ is str and _quantity_ok(x):
                    continue
            if not _valid(x, c):
                return False
        return True
    if t == _ARR:
        if v.__class__ is not list:
            return False
        c = node.child
        assert c is not None
        ct = c.tag
        if ct == _STR:
            for x in v:
                if x.__class__ is not str and x is not None:
                    return False
            return True
        if ct == _ANY:
            return True
        for x in v:
            if x is not None and not _valid(x, c):
                return False
        return True
    if t == _STR:
        return v.__class__ is str
    if t == _MAP:
        if v.__class__ is not dict:
            return False
        c = node.child
        assert c is not None
        ct = c.tag
        if ct == _STR:
            for x in v.values():
                if x.__class__ is not str and x is not None:
                    return False
            return True
        if ct == _ANY:
            return True
        for x in v.values():
            if x is not None and not _valid(x, c):
                return False
        return True
    if t == _BOOL:
        return v is True or v is False
    if t == _INT:
        return v.__class__ is int and -(1 << (node.bits - 1)) <= v < (1 << (node.bits - 1))
    if t == _NUM:
        return v.__class__ is int or v.__class__ is float
    if t == _QTY:
        cls = v.__class__
        return (cls is str or cls is int or cls is float) and _quantity_ok(
            v if cls is str else _number_text(v))
    if t == _IOS:
        return v.__class__ is str or (v.__class__ is int and -(1 << 31) <= v < (1 << 31))
    if t == _TIME:
        return v.__class__ is str and _time_ok(v, node.layout)
    if t == _BYTES:
        return v.__class__ is str and base64_error(v) is None
    return t == _ANY


_DROP = object()


def _prefix(obj: dict[str, Any], root: _Node, kind: str | None, version: str | None) -> str:
    """`Pod in version "v1" cannot be handled as a Pod: ` (upstream transformDecodeError)."""
    own_kind = obj.get("kind")
    body_kind = kind or (own_kind if isinstance(own_kind, str) else "") or root.struct or "Object"
    target = root.struct or body_kind
    if version is None:
        api_version = obj.get("apiVersion")
        version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    return f'{body_kind} in version "{version}" cannot be handled as a {target}: '


def strict_message(duplicates: Sequence[str], unknown: Sequence[str]) -> list[str]:
    """The strict decoding errors, deduplicated and capped like upstream."""
    # field names are quoted as Go's %q does: a CR or LF in a name stays on one line
    msgs = [f"duplicate field {go_quote(d)}" for d in duplicates]
    msgs.extend(f"unknown field {go_quote(u)}" for u in unknown)
    return list(dict.fromkeys(msgs))[:MAX_STRICT_ERRORS]


def _changed(obj: Any, known: dict[str, Any] | None) -> Any:
    """`obj` without the top-level fields whose JSON is that of `known` (a stored object,
    checked when it was stored); orjson tells `1`, `1.0` and `true` apart, as a check must."""
    if not known or obj.__class__ is not dict:
        return obj
    return {k: x for k, x in obj.items()
            if k not in known or (known[k] is not x and not _same_json(known[k], x))}


def _same_json(a: Any, b: Any) -> bool:
    try:
        return orjson.dumps(a) == orjson.dumps(b)
    except (TypeError, orjson.JSONEncodeError):  # beyond orjson (huge integers): walk it
        return False


def check(obj: dict[str, Any], schema: Schema, *, mode: str,
          duplicates: Sequence[str] = (), kind: str | None = None,
          version: str | None = None,
          known: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """Decode-check `obj` against its kind's root `schema` under a fieldValidation `mode`.

    Returns (object, warnings). The object is `obj` itself when nothing had to change, else a
    copy with unknown fields dropped (Warn, Ignore) and integral floats made ints; the input is
    never mutated. `duplicates` are the duplicate-field paths from `decode_body`, reported like
    unknown fields. Type mismatches are always a 400, whatever the mode; unknown/duplicate
    fields are a 400 only in Strict. `kind`/`version` default to the object's own. `known`
    is the stored version an update replaces: top-level fields equal to it pass unwalked.
    """
    if mode not in MODES:
        raise ValueError(f"unknown fieldValidation mode {mode!r}")
    root = compile_schema(schema)
    if not duplicates and _valid(_changed(obj, known), root):
        return obj, []
    checker = _Checker(prune=mode != "Strict")
    try:
        out = checker.walk(obj, root, "")
    except _Fatal as e:
        raise _decode_error(obj, root, kind, version, str(e)) from None
    if checker.type_error is not None:
        raise _decode_error(obj, root, kind, version, checker.type_error)
    if mode == "Ignore" or not (checker.unknown or duplicates):
        return out, []
    msgs = strict_message(duplicates, checker.unknown)
    if mode == "Strict":
        raise _decode_error(obj, root, kind, version,
                            "strict decoding error: " + ", ".join(msgs))
    return out, msgs


def check_duplicates(duplicates: Sequence[str], mode: str, *, kind: str = "",
                     version: str = "") -> list[str]:
    """Duplicate fields alone (for bodies not run through `check`): warnings, or a 400."""
    if mode not in MODES:
        raise ValueError(f"unknown fieldValidation mode {mode!r}")
    if mode == "Ignore" or not duplicates:
        return []
    msgs = strict_message(duplicates, ())
    if mode == "Strict":
        prefix = f'{kind} in version "{version}" cannot be handled as a {kind}: ' if kind else ""
        raise bad_request(prefix + "strict decoding error: " + ", ".join(msgs))
    return msgs


def _decode_error(obj: Any, root: _Node, kind: str | None, version: str | None,
                  message: str) -> ApiError:
    body = obj if isinstance(obj, dict) else {}
    return bad_request(_prefix(body, root, kind, version) + message)
