"""PATCH bodies: RFC 6902 JSON patch, RFC 7386 merge patch and Kubernetes strategic merge patch.

Semantics and error shapes follow kube-apiserver 1.37 (apiserver `handlers/patch.go` and
apimachinery `strategicpatch`), re-implemented here over plain JSON data. Server-side apply
(`application/apply-patch+yaml`) lives elsewhere.

None of the functions mutates its inputs, and results share no structure with them: the
registry may freely mutate a patched object before storing it.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any, ClassVar

import jsonpatch
import jsonpointer

from fakeapi.machinery.decode import json_copy, json_kind, parse_json
from fakeapi.machinery.errors import ApiError, bad_request
from fakeapi.machinery.jsonio import dumps
from fakeapi.schema.schemas import Schema, Schemas, get_schemas

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"

#: Patch media types a built-in kind accepts, in upstream's order (used in 415 messages).
BUILTIN_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)
#: Patch media types a kind without Go struct tags (a CRD) accepts: no strategic merge patch.
CUSTOM_PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, APPLY_PATCH)

#: Upstream `maxJSONPatchOperations`.
MAX_JSON_PATCH_OPERATIONS = 10000

# The message of `NewGenericServerResponse(422, ...)`: the real reason is not sent to clients.
REJECTED_MSG = "the server rejected our request due to an error in our request"

_DIRECTIVE = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList"
_SET_ORDER = "$setElementOrder"

_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"


# --------------------------------------------------------------------------- dispatch


def unsupported_patch_type(*, strategic: bool = True) -> ApiError:
    """415 for a PATCH Content-Type the resource does not accept (`strategic`: built-in kind)."""
    accepted = BUILTIN_PATCH_TYPES if strategic else CUSTOM_PATCH_TYPES
    return ApiError(415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    "include: " + ", ".join(accepted))


def apply_patch(patch_type: str, obj: dict[str, Any], body: bytes,
                schema: Schema | None) -> dict[str, Any]:
    """Apply a PATCH `body` of media type `patch_type` to `obj`; return the patched object.

    `schema` is the root schema of the object's kind (None for kinds without one, which, like
    upstream CRDs, refuse strategic merge patch with 415). Server-side apply is not handled here.
    """
    media = patch_type.split(";", 1)[0].strip().lower()
    if media in (APPLY_PATCH, APPLY_PATCH_CBOR):
        raise ValueError("server-side apply is not a fakeapi.patching.patch patch type")
    if media not in (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH) or (
            media == STRATEGIC_MERGE_PATCH and schema is None):
        raise unsupported_patch_type(strategic=schema is not None)
    try:
        patch = decode_json(body)
    except JsonSyntaxError as e:
        # Upstream decodes JSON and merge patches strictly ("error decoding patch: ...") and
        # strategic merge patches into a map with the bare decoder message.
        raise bad_request(e.message if media == STRATEGIC_MERGE_PATCH
                          else f"error decoding patch: {e.message}") from None
    if media == JSON_PATCH:
        return json_patch(obj, patch)
    if media == MERGE_PATCH:
        return merge_patch(obj, patch)
    assert schema is not None
    return strategic_merge_patch(obj, patch, schema)


class JsonSyntaxError(ValueError):
    """A body that is not JSON, with the message Go's `encoding/json` would give."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def decode_json(body: bytes) -> Any:
    """Decode a request body; raise JsonSyntaxError with a Go-style message when it isn't JSON.

    `parse_json` tries orjson first and decodes the rest (deeper than orjson decodes, lone
    surrogates, huge numbers) as Go's decoder does."""
    try:
        return parse_json(body)
    except ValueError as e:
        raise JsonSyntaxError(str(e)) from None


# --------------------------------------------------------------------------- JSON patch


def json_patch(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply an RFC 6902 JSON patch (a decoded list of operations) to `obj`.

    A body that is not a list of operation objects is 400 BadRequest; an operation that does
    not apply (missing path, failed test, bad index, unknown op) is upstream's generic 422.
    """
    ops = [] if patch is None else patch
    _check_json_patch_shape(ops)
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge",
                       "Request entity too large: The allowed maximum operations in a JSON "
                       f"patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(ops)}")
    doc = json_copy(obj, lenient=True)
    try:
        # Both copies are ours, so the result shares nothing with the caller's data.
        result = jsonpatch.JsonPatch(json_copy(ops, lenient=True)).apply(doc, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException,
            TypeError, KeyError, IndexError, ValueError, AttributeError):
        raise _rejected() from None
    if not isinstance(result, dict):
        raise _rejected()
    return result


def _check_json_patch_shape(ops: Any) -> None:
    """Mirror upstream's strict decode into `[]jsonPatchOp` (400 on a type mismatch)."""
    if not isinstance(ops, list):
        raise bad_request("error decoding patch: json: cannot unmarshal "
                          f"{json_kind(ops)} into Go value of type []handlers.jsonPatchOp")
    for op in ops:
        if op is None:
            continue
        if not isinstance(op, dict):
            raise bad_request("error decoding patch: json: cannot unmarshal "
                              f"{json_kind(op)} into Go value of type handlers.jsonPatchOp")
        for field in ("op", "path", "from"):
            value = op.get(field)
            if value is not None and not isinstance(value, str):
                raise bad_request(
                    f"error decoding patch: json: cannot unmarshal {json_kind(value)} "
                    f"into Go struct field jsonPatchOp.{field} of type string")


def _rejected() -> ApiError:
    return ApiError(422, "Invalid", REJECTED_MSG)


# --------------------------------------------------------------------------- merge patch


def merge_patch(obj: dict[str, Any], patch: Any) -> dict[str, Any]:
    """Apply an RFC 7386 JSON merge patch: null deletes, objects merge, anything else replaces.

    Like upstream (evanphx/json-patch), values added where the target had nothing get their
    nested null members pruned. The patch must be a JSON object (400 otherwise).
    """
    if patch is None:
        raise bad_request("Invalid JSON Patch")
    if not isinstance(patch, dict):
        raise bad_request("error decoding patch: json: cannot unmarshal "
                          f"{json_kind(patch)} into Go value of type map[string]interface {{}}")
    return _merge_objects(json_copy(obj, lenient=True), patch)


def _merge_objects(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
            continue
        current = target.get(key)
        if isinstance(current, dict):
            target[key] = (_merge_objects(current, value) if isinstance(value, dict)
                           else json_copy(value, lenient=True))
        else:
            target[key] = _prune_nulls(value)
    return target


def _prune_nulls(value: Any) -> Any:
    """A copy of `value` without null object members (null array elements stay)."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


# --------------------------------------------------------------------------- strategic merge


def strategic_merge_patch(obj: dict[str, Any], patch: Any, schema: Schema) -> dict[str, Any]:
    """Apply a Kubernetes strategic merge patch to `obj`, driven by its kind's root `schema`.

    Maps merge recursively; lists whose field declares `x-kubernetes-patch-strategy: merge`
    merge by `x-kubernetes-patch-merge-key` (primitives: union); other lists replace. Supports
    `$patch: replace|delete`, `$retainKeys`, `$deleteFromPrimitiveList/<f>`,
    `$setElementOrder/<f>` and null deletion, with upstream's errors and ordering rules.
    """
    if patch is None:
        return json_copy(obj, lenient=True)
    if not isinstance(patch, dict):
        raise bad_request(f"json: cannot unmarshal {json_kind(patch)} into Go value of type "
                          "map[string]interface {}")
    return _StrategicMerger(get_schemas()).merge_map(json_copy(obj, lenient=True), patch, schema)


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldMeta:
    """Patch metadata of one field: strategy ("merge", "replace" or ""), merge key, schema."""

    strategy: str
    merge_key: str
    schema: Schema | None


_UNKNOWN_FIELD = _FieldMeta("", "", None)
_META_CACHE_LIMIT = 20000


class _StrategicMerger:
    """One strategic merge over caller-owned `original` data; the patch is only read."""

    _meta_cache: ClassVar[dict[tuple[int, str], tuple[Schema, _FieldMeta]]] = {}

    def __init__(self, schemas: Schemas) -> None:
        self.schemas = schemas

    # ---- schema lookups

    def field(self, node: Schema | None, key: str) -> _FieldMeta:
        """Patch metadata of field `key` of the (resolved) object schema `node`."""
        if not node:
            return _UNKNOWN_FIELD
        cache_key = (id(node), key)
        hit = self._meta_cache.get(cache_key)
        if hit is not None and hit[0] is node:
            return hit[1]
        raw = None
        props = node.get("properties")
        if props is not None and key in props:
            raw = props[key]
        elif isinstance(node.get("additionalProperties"), dict):
            raw = node["additionalProperties"]
        if raw is None:
            meta = _UNKNOWN_FIELD
        else:
            parts = [p.strip() for p in str(raw.get("x-kubernetes-patch-strategy", "")).split(",")]
            strategy = "merge" if "merge" in parts else "replace" if "replace" in parts else ""
            meta = _FieldMeta(strategy, raw.get("x-kubernetes-patch-merge-key", "") or "",
                              self.schemas.resolve(raw))
        if len(self._meta_cache) > _META_CACHE_LIMIT:
            self._meta_cache.clear()
        self._meta_cache[cache_key] = (node, meta)
        return meta

    def items(self, node: Schema | None) -> Schema | None:
        """Resolved item schema of array schema `node`."""
        return self.schemas.items(node) if node else None

    # ---- maps

    def merge_map(self, original: dict[str, Any], patch: dict[str, Any],
                  node: Schema | None) -> dict[str, Any]:
        """Merge `patch` into `original` (owned, mutated) per schema `node`; return the result."""
        node = self.schemas.resolve(node) if node else None
        if _DIRECTIVE in patch:
            directive = patch[_DIRECTIVE]
            if directive == "replace":
                return _clean_map(patch)
            if directive == "delete":
                return {}
            raise _bad_patch_type(directive, patch)
        if _RETAIN_KEYS in patch:
            _apply_retain_keys(original, patch)
        ordered: set[str] = set()
        for key in patch:
            if key.startswith(_SET_ORDER):
                target = _directive_target(key, _SET_ORDER, _BAD_SET_ORDER)
                self.apply_set_element_order(original, patch, key, target, node)
                ordered.add(target)
        for key, value in patch.items():
            if key == _RETAIN_KEYS or key in ordered or key.startswith(_SET_ORDER):
                continue
            delete_list = key.startswith(_DELETE_PRIMITIVE)
            if delete_list:
                key = _directive_target(key, _DELETE_PRIMITIVE, _BAD_PRIMITIVE_LIST)
            if value is None:
                original.pop(key, None)
                continue
            current = original.get(key)
            if isinstance(current, dict) and isinstance(value, dict):
                if delete_list:
                    continue
                meta = self.field(node, key)
                original[key] = (_clean_map(value) if meta.strategy == "replace"
                                 else self.merge_map(current, value, meta.schema))
            elif isinstance(current, list) and isinstance(value, list):
                original[key] = self.merge_list_field(current, value, self.field(node, key),
                                                      delete_list=delete_list)
            elif delete_list:
                continue  # nothing to delete from, or not a list: ignored like upstream
            else:
                cleaned, keep = _clean(value)
                if keep:
                    original[key] = cleaned
                else:
                    original.pop(key, None)
        return original

    # ---- lists

    def merge_list_field(self, original: list[Any], patch: list[Any], meta: _FieldMeta, *,
                         delete_list: bool = False) -> list[Any]:
        """Merge list field values: by strategy, else the patch replaces the list."""
        if meta.strategy != "merge":
            return _clean_list(patch)
        return self.merge_list(original, patch, meta.merge_key, self.items(meta.schema),
                               delete_list=delete_list)

    def merge_list(self, original: list[Any], patch: list[Any], merge_key: str,
                   item_node: Schema | None, *, delete_list: bool = False) -> list[Any]:
        """Merge two lists with strategy merge (`original` is owned and may be reused)."""
        if not original and not patch:
            return original
        kind = _element_kind(original, patch)
        if kind != "map":
            if delete_list:
                doomed = {_ident(v) for v in patch}
                return [v for v in original if _ident(v) not in doomed]
            in_patch = {_ident(v) for v in patch}
            pairs = _unique_pairs(original + patch)
            return _order([pr for pr in pairs if pr[0] in in_patch],
                          [pr for pr in pairs if pr[0] not in in_patch],
                          [_ident(v) for v in patch], [_ident(v) for v in original])
        if not merge_key:
            raise _internal("cannot merge lists without merge key for type map")
        working, plain, replace = self._apply_list_directives(original, patch, merge_key)
        if replace:
            working, plain, server_order = _clean_list(plain), [], None
        else:
            server_order = original
            where: dict[Any, int] = {}
            for i, item in enumerate(working):
                if merge_key in item:
                    where.setdefault(_ident(item[merge_key]), i)
            for item in plain:
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                key = _ident(item[merge_key])
                at = where.get(key)
                if at is not None:
                    working[at] = self.merge_map(working[at], item, item_node)
                else:
                    where[key] = len(working)
                    working.append(_clean_map(item))
        pairs = _key_pairs(working, merge_key)
        in_patch = {_ident(item[merge_key]) for item in plain}
        server_idents = ([pr[0] for pr in pairs] if server_order is None else
                         [_ident(item.get(merge_key)) for item in server_order])
        return _order([pr for pr in pairs if pr[0] in in_patch],
                      [pr for pr in pairs if pr[0] not in in_patch],
                      [_ident(item[merge_key]) for item in plain], server_idents)

    def _apply_list_directives(self, original: list[Any], patch: list[Any], merge_key: str,
                               ) -> tuple[list[Any], list[dict[str, Any]], bool]:
        """Handle `$patch` items of a merge list: (remaining original, plain items, replace)."""
        working = list(original)
        plain: list[dict[str, Any]] = []
        replace = False
        for item in patch:
            if _DIRECTIVE not in item:
                plain.append(item)
                continue
            directive = item[_DIRECTIVE]
            if directive == "delete":
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
                doomed = _ident(item[merge_key])
                working = [v for v in working
                           if not (merge_key in v and _ident(v[merge_key]) == doomed)]
            elif directive == "replace":
                replace = True
            elif directive == "merge":
                raise _internal("merging lists cannot yet be specified in the patch")
            else:
                raise _bad_patch_type(directive, item)
        if replace:
            for item in plain:
                if merge_key not in item:
                    raise _no_merge_key(item, merge_key)
        return working, plain, replace

    def apply_set_element_order(self, original: dict[str, Any], patch: dict[str, Any],
                                directive_key: str, key: str, node: Schema | None) -> None:
        """Merge list `key` together with its `$setElementOrder/<key>` and enforce that order."""
        order = patch[directive_key]
        if not isinstance(order, list):
            raise _bad_arg_type("[]interface {}", order)
        current = original.get(key)
        if current is not None and not isinstance(current, list):
            raise _bad_arg_type("[]interface {}", current)
        patch_list: list[Any] | None = None
        if key in patch:
            if not isinstance(patch[key], list):
                raise _bad_arg_type("[]interface {}", patch[key])
            patch_list = patch[key]
        meta = self.field(node, key)
        merge_key = meta.merge_key
        _validate_against_order(patch_list or [], order, merge_key)
        if patch_list is None:
            if current is None:
                return
            merged = current
        elif current is None:
            merged = _clean_list(patch_list)
        else:
            merged = self.merge_list_field(current, patch_list, meta)
        original_list = current if current is not None else []
        if not original_list and not patch_list:
            original[key] = merged
            return
        _element_kind(original_list, patch_list or [])
        if merge_key:
            wanted = set()
            for index, entry in enumerate(order):
                if not isinstance(entry, dict):
                    raise _internal(f"value for key {index} is not a map.")
                if merge_key in entry:
                    wanted.add(_ident(entry[merge_key]))
            for item in merged:
                if not isinstance(item, dict):
                    raise _bad_arg_type("map[string]interface {}", item)
            pairs = _key_pairs(merged, merge_key)
            for entry in order:
                if merge_key not in entry:
                    raise _no_merge_key(entry, merge_key)
            order_idents = [_ident(entry[merge_key]) for entry in order]
            server_idents = [_ident(item.get(merge_key)) if isinstance(item, dict) else None
                             for item in original_list]
        else:
            pairs = [(_ident(v), v) for v in merged]
            order_idents = [_ident(v) for v in order]
            wanted = set(order_idents)
            server_idents = [_ident(v) for v in original_list]
        original[key] = _order([pr for pr in pairs if pr[0] in wanted],
                               [pr for pr in pairs if pr[0] not in wanted],
                               order_idents, server_idents)


# ---- strategic merge helpers


def _directive_target(key: str, prefix: str, error: str) -> str:
    """`name` of a `<prefix>/<name>` directive key; 400 when malformed."""
    head, sep, tail = key.partition("/")
    if not sep or head != prefix:
        raise bad_request(error)
    return tail


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    """Drop fields of `original` missing from `$retainKeys`; every patched field must be listed."""
    retain = patch[_RETAIN_KEYS]
    if not isinstance(retain, list):
        raise bad_request(_BAD_RETAIN_KEYS)
    allowed = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if (value is None or key == _RETAIN_KEYS or key.startswith(_DELETE_PRIMITIVE)
                or key.startswith(_SET_ORDER)):
            continue
        if key not in allowed:
            raise bad_request(_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in allowed]:
        del original[key]


def _validate_against_order(patch_list: list[Any], order: list[Any], merge_key: str) -> None:
    """The patch list's items must appear in `$setElementOrder` in the same relative order."""
    if not order or not patch_list:
        return
    items = patch_list
    if merge_key:
        items = []
        for item in patch_list:
            if not isinstance(item, dict):
                raise _bad_arg_type("map[string]interface {}", item)
            if item.get(_DIRECTIVE) != "delete":
                items.append(item)
    pi = si = 0
    while pi < len(items) and si < len(order):
        item = items[pi]
        if isinstance(item, dict) and _DIRECTIVE in item:
            pi += 1
            continue
        if _key_equal(item, order[si], merge_key):
            pi += 1
        si += 1
    if pi < len(items) and si >= len(order):
        raise _internal(f"the order in patch list:\n{_go_v(patch_list)}\n doesn't match "
                        f"{_SET_ORDER} list:\n{_go_v(order)}")


def _key_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _ident(left) == _ident(right)
    for side in (left, right):
        if not isinstance(side, dict):
            raise _bad_arg_type("map[string]interface {}", side)
        if merge_key not in side:
            raise _no_merge_key(side, merge_key)
    return _ident(left[merge_key]) == _ident(right[merge_key])


def _order(patch_items: list[tuple[Any, Any]], server_only: list[tuple[Any, Any]],
           patch_order: list[Any], server_order: list[Any]) -> list[Any]:
    """Upstream's ordering of a merged list, over (identity, item) pairs.

    Patch items follow `patch_order`, server-only items keep `server_order` (both lists of
    identities); the two runs are then interleaved so that items both runs know keep their
    server-side relative order, and a patch item the server never had goes before the
    server-only items still pending.
    """
    patch_pos = _positions(patch_order)
    server_pos = _positions(server_order)
    right = sorted(((patch_pos.get(k, len(patch_pos)), server_pos.get(k, -1), item)
                    for k, item in patch_items), key=lambda entry: entry[0])
    left = sorted(((server_pos.get(k, len(server_pos)), item) for k, item in server_only),
                  key=lambda entry: entry[0])
    out: list[Any] = []
    i = j = 0
    while i < len(left) and j < len(right):
        right_pos = right[j][1]
        if 0 <= right_pos and left[i][0] < right_pos:
            out.append(left[i][1])
            i += 1
        else:
            out.append(right[j][2])
            j += 1
    out.extend(entry[1] for entry in left[i:])
    out.extend(entry[2] for entry in right[j:])
    return out


def _positions(idents: list[Any]) -> dict[Any, int]:
    """First position of each identity."""
    pos: dict[Any, int] = {}
    for i, key in enumerate(idents):
        pos.setdefault(key, i)
    return pos


def _key_pairs(items: list[dict[str, Any]], merge_key: str) -> list[tuple[Any, Any]]:
    """(identity of the merge key, item) for each item; every item needs the key."""
    pairs = []
    for item in items:
        if merge_key not in item:
            raise _no_merge_key(item, merge_key)
        pairs.append((_ident(item[merge_key]), item))
    return pairs


def _unique_pairs(values: list[Any]) -> list[tuple[Any, Any]]:
    """(identity, value) of the first occurrence of each distinct value."""
    seen: set[Any] = set()
    out = []
    for value in values:
        key = _ident(value)
        if key not in seen:
            seen.add(key)
            out.append((key, value))
    return out


def _element_kind(*lists: list[Any]) -> str:
    """Common element category of list values ("map", "string", ...); errors like upstream."""
    first = next((values[0] for values in lists if values), _MISSING)
    if first is _MISSING:
        raise _internal("no elements in any of the given slices")
    kind = _category(first)
    if kind == "list":
        raise ApiError(422, "Invalid", REJECTED_MSG)  # ErrNoListOfLists
    types = {type(first)}
    for values in lists:
        types.update(map(type, values))
    if len(types) > 1 and any(_category(v) != kind for values in lists for v in values):
        raise _internal("list element types are not identical: "
                        + _go_v([list(v) for v in lists]))
    return kind


_MISSING = object()


_CATEGORIES: dict[type, str] = {
    str: "string", dict: "map", list: "list", bool: "bool", int: "int", float: "float",
    type(None): "nil",
}


def _category(value: Any) -> str:
    category = _CATEGORIES.get(type(value))
    if category is not None:
        return category
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "string"


def _ident(value: Any) -> Any:
    """A hashable identity matching Go interface equality (1, 1.0, "1" and true all differ)."""
    if type(value) is str:
        return value  # the common case; every other identity is a tuple
    category = _category(value)
    if category in ("map", "list"):
        return (category, dumps(value, sort_keys=True))
    return (category, value)


def _is_directive_key(key: str) -> bool:
    return key.startswith("$") and (
        key in (_DIRECTIVE, _RETAIN_KEYS) or key.startswith(_SET_ORDER + "/")
        or key.startswith(_DELETE_PRIMITIVE + "/"))


def _clean(value: Any) -> tuple[Any, bool]:
    """A fresh copy of a patch value taken as is: nulls and directives dropped.

    Returns (value, keep); keep is False for a map carrying `$patch` (other than replace),
    which upstream drops when there is nothing to apply it to.
    """
    if isinstance(value, dict):
        if _DIRECTIVE in value and value[_DIRECTIVE] != "replace":
            return None, False
        return _clean_map(value), True
    if isinstance(value, list):
        return _clean_list(value), True
    return value, True


def _clean_map(value: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        if item is None or _is_directive_key(key):
            continue
        cleaned, keep = _clean(item)
        if keep:
            out[key] = cleaned
    return out


def _clean_list(values: list[Any]) -> list[Any]:
    out = []
    for item in values:
        cleaned, keep = _clean(item)
        if keep:
            out.append(cleaned)
    return out


# ---- errors


def _internal(message: str) -> ApiError:
    """A patch the merge can't apply, with upstream's text. Upstream lets these plain Go errors
    surface as a 500 (kubernetes/kubernetes#79210 asks for a 400); here nothing a client
    sends is a server error, so they are 400 BadRequest."""
    return bad_request(message)


def _no_merge_key(item: Any, merge_key: str) -> ApiError:
    return _internal(f"map: {_go_v(item)} does not contain declared merge key: {merge_key}")


def _bad_patch_type(directive: Any, item: dict[str, Any]) -> ApiError:
    return _internal(f"unknown patch type: {_go_s(directive)} in map: {_go_v(item)}")


def _bad_arg_type(expected: str, actual: Any) -> ApiError:
    return _internal(f"expected a {expected}, but received a {_go_type(actual)}")


# --------------------------------------------------------------------------- Go formatting


def _go_type(value: Any) -> str:
    """`reflect.TypeOf(v)` printed with %s, for a decoded JSON value."""
    if value is None:
        return "%!s(<nil>)"
    return {"map": "map[string]interface {}", "list": "[]interface {}", "bool": "bool",
            "int": "int64", "float": "float64", "string": "string"}[_category(value)]


def _go_s(value: Any) -> str:
    """Go's %s of a decoded JSON value."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, (dict, list)):
        return _go_v(value)
    return f"%!s({_go_type(value)}={_go_v(value)})"


def _go_v(value: Any) -> str:
    """Go's %v of a decoded JSON value (maps print as `map[k:v ...]` with sorted keys)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    return "[" + " ".join(_go_v(v) for v in value) + "]"


def _go_float(value: float) -> str:
    """Go's %v of a float64: shortest digits, exponent form below 1e-4 and from 1e6."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    exponent = len(digits) - 1 + exp
    minus = "-" if sign else ""
    if exponent < -4 or exponent >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    if exponent < 0:
        return f"{minus}0.{'0' * (-exponent - 1)}{text}"
    whole, frac = text[:exponent + 1].ljust(exponent + 1, "0"), text[exponent + 1:]
    return f"{minus}{whole}.{frac}" if frac else f"{minus}{whole}"
