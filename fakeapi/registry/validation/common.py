"""Validators shared by the kinds: names, collections, node selectors, conditions, raw JSON.

Each mirrors the upstream helper it is named after and returns `Cause`s with upstream paths.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
import uuid
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from fakeapi.machinery import names
from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    child,
    duplicate,
    forbidden,
    index,
    invalid,
    key,
    not_supported,
    required,
    too_long,
    too_many,
)

Obj = dict[str, Any]
ItemCheck = Callable[[Any, str], list[Cause]]
Enabled = Callable[[str], bool]
"""`enabled(gate)`: whether a feature gate is on (the rules that depend on gates take one)."""

DRIVER_NAME_MAX = 63  # same as upstream DriverNameMaxLength (CSI driver names)
POOL_NAME_MAX = 253  # same as upstream PoolNameMaxLength
C_IDENTIFIER_MAX = 32  # same as upstream DeviceMaxIDLength
DOMAIN_MAX = 63  # same as upstream DeviceMaxDomainLength
CONDITION_REASON_MAX = 1024
CONDITION_MESSAGE_MAX = 32768

_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
# Deliberate deviation: inner dashes are accepted in attribute ids because the documented
# list-attribute example (`dra.example.com/supported-models`) must be accepted.
_C_IDENTIFIER_RE = re.compile("[A-Za-z_]([A-Za-z0-9_-]*[A-Za-z0-9_])?")
_C_IDENTIFIER_MSG = names.regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of "
    "alphanumeric characters or '_'", _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")
_REASON_FMT = "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?"
_REASON_RE = re.compile(_REASON_FMT)
_REASON_MSG = names.regex_error(
    "a condition reason must start with alphabetic character, optionally followed by a string "
    "of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
    _REASON_FMT, "my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB")
CONDITION_STATUSES = ("False", "True", "Unknown")


# ----- collections (same as upstream validateSlice / validateSet / validateMap) -----------

def validate_slice(items: Any, max_size: int, check: ItemCheck | None, path: str) -> list[Cause]:
    """Too many items short-circuits (DOS protection); else each item is checked."""
    items = items or []
    if max_size >= 0 and len(items) > max_size:
        return [too_many(path, len(items), max_size)]
    causes: list[Cause] = []
    if check is not None:
        for i, item in enumerate(items):
            causes += check(item, index(path, i))
    return causes


def validate_set(items: Any, max_size: int, check: ItemCheck | None,
                 item_key: Callable[[Any], Hashable], path: str) -> list[Cause]:
    """`validate_slice` plus `Duplicate value` for repeated keys."""
    items = items or []
    if max_size >= 0 and len(items) > max_size:
        return [too_many(path, len(items), max_size)]
    causes = validate_slice(items, -1, check, path)
    seen: set[Hashable] = set()
    for i, item in enumerate(items):
        k = item_key(item)
        if k in seen:
            causes.append(duplicate(index(path, i), k))
        else:
            seen.add(k)
    return causes


def validate_map(m: Any, max_size: int, truncate: int, check_key: Callable[[str, str], list[Cause]],
                 check_item: ItemCheck | None, path: str) -> list[Cause]:
    """Keys are checked against the map's path; items get `path[key]` (long keys shortened)."""
    m = m or {}
    if max_size >= 0 and len(m) > max_size:
        return [too_many(path, len(m), max_size)]
    causes: list[Cause] = []
    for k, item in m.items():
        causes += check_key(k, path)
        if check_item is not None:
            causes += check_item(item, key(path, truncate_key(k, truncate)))
    return causes


def truncate_key(text: str, max_len: int) -> str:
    """Same as upstream truncateIfTooLong: keep both ends around `...`."""
    max_len = max(max_len, 16)
    if len(text) <= max_len:
        return text
    remaining = max_len - 3
    return text[:(remaining + 1) // 2] + "..." + text[len(text) - remaining // 2:]


def name_key(item: Any) -> Hashable:
    """Set key of items identified by `name`."""
    if isinstance(item, dict):  # the common case, without the slower ABC check
        return item.get("name", "")
    return item.get("name", "") if isinstance(item, Mapping) else item


def same_key(item: Any) -> Hashable:
    """Set key of scalar items."""
    return item if isinstance(item, Hashable) else json.dumps(item, sort_keys=True)


# ----- names --------------------------------------------------------------------------------

# Names repeat across objects (request names, class names): remember their verdicts.
_dns1123_label_errors = functools.lru_cache(maxsize=4096)(names.dns1123_label_errors)
_dns1123_subdomain_errors = functools.lru_cache(maxsize=4096)(names.dns1123_subdomain_errors)


def dns_label(value: Any, path: str) -> list[Cause]:
    """Same as upstream ValidateDNS1123Label."""
    errors = _dns1123_label_errors(str(value))
    return [invalid(path, value, m) for m in errors] if errors else []


def dns_subdomain(value: Any, path: str) -> list[Cause]:
    """Same as upstream ValidateDNS1123Subdomain."""
    errors = _dns1123_subdomain_errors(str(value))
    return [invalid(path, value, m) for m in errors] if errors else []


def driver_name(value: Any, path: str) -> list[Cause]:
    """Same as upstream ValidateCSIDriverName: required, <= 63, a (lower-cased) DNS subdomain."""
    value = value or ""
    causes: list[Cause] = []
    if not value:
        causes.append(required(path))
    if len(value) > DRIVER_NAME_MAX:
        causes.append(too_long(path, DRIVER_NAME_MAX))
    causes += [invalid(path, value, m) for m in names.dns1123_subdomain_errors(value.lower())]
    return causes


def pool_name(value: Any, path: str) -> list[Cause]:
    """Same as upstream validatePoolName: DNS subdomains separated by `/`, <= 253."""
    value = value or ""
    if not value:
        return [required(path)]
    causes: list[Cause] = []
    if len(value) > POOL_NAME_MAX:
        causes.append(too_long(path, POOL_NAME_MAX))
    for part in value.split("/"):
        causes += dns_subdomain(part, path)
    return causes


def node_name(value: Any, path: str) -> list[Cause]:
    """Same as upstream ValidateNodeName (a DNS subdomain)."""
    return [invalid(path, value, m) for m in names.name_is_dns_subdomain(str(value), False)]


def label_name(value: Any, path: str) -> list[Cause]:
    """Same as upstream metav1validation.ValidateLabelName (a qualified name)."""
    return [invalid(path, value, m) for m in names.label_key_errors(str(value or ""))]


def label_value(value: Any, path: str) -> list[Cause]:
    """Same as upstream validateLabelValue."""
    return [invalid(path, value, m) for m in names.label_value_errors(str(value or ""))]


def c_identifier(value: str, path: str) -> list[Cause]:
    """Same as upstream validateCIdentifier (<= 32, a C identifier), but inner `-` allowed."""
    causes: list[Cause] = []
    if len(value) > C_IDENTIFIER_MAX:
        causes.append(too_long(path, C_IDENTIFIER_MAX))
    if _C_IDENTIFIER_RE.fullmatch(value) is None:
        causes.append(invalid(path, value, _C_IDENTIFIER_MSG))
    return causes


def qualified_name(value: str, path: str) -> list[Cause]:
    """Same as upstream validateQualifiedName: `[<driver-like domain>/]<C identifier>`."""
    parts = value.split("/")
    if len(parts) == 1:
        return c_identifier(parts[0], path)
    if len(parts) > 2:
        return [invalid(path, value, "must not contain more than one slash")]
    causes: list[Cause] = []
    if not parts[0]:
        causes.append(invalid(path, "", "the domain must not be empty"))
    else:
        causes += driver_name(parts[0], path)
    if not parts[1]:
        causes.append(invalid(path, "", "the name must not be empty"))
    else:
        causes += c_identifier(parts[1], path)
    return causes


def fully_qualified_name(value: Any, path: str) -> list[Cause]:
    """Same as upstream validateFullyQualifiedName: a qualified name that has a domain."""
    value = value or ""
    causes = qualified_name(value, path)
    if "/" not in value:
        causes.append(invalid(path, value, "a fully qualified name must be a domain and a name "
                              "separated by a slash"))
    return causes


def uid(value: Any, path: str) -> list[Cause]:
    """Same as upstream validateUID: an RFC 4122 UUID in lowercase normalized form."""
    value = str(value)
    try:
        uuid.UUID(value)
    except ValueError:
        return [invalid(path, value, f"error validating uid: invalid UUID length: {len(value)}"
                        if len(value) not in (32, 36, 38, 41) else
                        "error validating uid: invalid UUID format")]
    if len(value) != 36 or value != value.lower():
        return [invalid(path, value, "uid must be in RFC 4122 normalized form, "
                        "`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal "
                        "characters")]
    return []


def raw_json_object(value: Any, path: str, max_length: int, stored: bool = False) -> list[Cause]:
    """Same as upstream validateRawExtension: a JSON object of at most `max_length` bytes."""
    if value is None:
        return [required(path)]
    raw = json.dumps(value, separators=(",", ":"))
    if not stored and len(raw.encode()) > max_length:
        return [too_long(path, max_length)]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


def interface_address(value: Any, path: str) -> list[Cause]:
    """Same as upstream IsValidInterfaceAddress: an IP with prefix length, canonical."""
    text = str(value)
    try:
        iface = ipaddress.ip_interface(text)
        if "/" not in text:
            raise ValueError
    except ValueError:
        return [invalid(path, value, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 "
                        "or 2001:db8::1/64)")]
    canonical = f"{iface.ip}/{iface.network.prefixlen}"
    if canonical != text:
        return [invalid(path, value, f'must be in canonical form ("{canonical}")')]
    return []


# ----- structured values ---------------------------------------------------------------------

_SELECTOR_OPS = ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")


def node_selector(sel: Any, path: str) -> list[Cause]:
    """Same as upstream ValidateNodeSelector (the subset DRA uses)."""
    sel = sel or {}
    terms = sel.get("nodeSelectorTerms") or []
    tpath = child(path, "nodeSelectorTerms")
    if not terms:
        return [required(tpath, "must have at least one node selector term")]
    causes: list[Cause] = []
    for i, term in enumerate(terms):
        term = term or {}
        ipath = index(tpath, i)
        for j, req in enumerate(term.get("matchExpressions") or []):
            causes += _selector_requirement(req or {}, index(child(ipath, "matchExpressions"), j))
        for j, req in enumerate(term.get("matchFields") or []):
            causes += _field_requirement(req or {}, index(child(ipath, "matchFields"), j))
    return causes


def _selector_requirement(req: Obj, path: str) -> list[Cause]:
    op = req.get("operator", "")
    values = req.get("values") or []
    causes: list[Cause] = []
    if op in ("In", "NotIn"):
        if not values:
            causes.append(required(child(path, "values"),
                                   "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            causes.append(forbidden(child(path, "values"), "may not be specified when "
                                    "`operator` is 'Exists' or 'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(required(child(path, "values"), "must be specified single value "
                                   "when `operator` is 'Lt' or 'Gt'"))
    else:
        causes.append(not_supported(child(path, "operator"), op, _SELECTOR_OPS))
    causes += label_name(req.get("key", ""), child(path, "key"))
    return causes


def _field_requirement(req: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    op = req.get("operator", "")
    values = req.get("values") or []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            causes.append(required(child(path, "values"), "must be only one value when "
                                   "`operator` is 'In' or 'NotIn' for node field selector"))
    elif op in ("Exists", "DoesNotExist", "Gt", "Lt"):
        causes.append(invalid(child(path, "operator"), op, "not a valid selector operator"))
    else:
        causes.append(not_supported(child(path, "operator"), op, _SELECTOR_OPS))
    if req.get("key") != "metadata.name":
        causes.append(not_supported(child(path, "key"), req.get("key", ""), ["metadata.name"]))
    return causes


def conditions(items: Any, path: str) -> list[Cause]:
    """Same as upstream metav1validation.ValidateConditions."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, cond in enumerate(items or []):
        cond = cond or {}
        cpath = index(path, i)
        ctype = cond.get("type", "")
        causes += label_name(ctype, child(cpath, "type"))
        if ctype in seen:
            causes.append(duplicate(child(cpath, "type"), ctype))
        seen.add(ctype)
        if cond.get("status") not in CONDITION_STATUSES:
            causes.append(not_supported(child(cpath, "status"), cond.get("status", ""),
                                        CONDITION_STATUSES))
        if (cond.get("observedGeneration") or 0) < 0:
            causes.append(invalid(child(cpath, "observedGeneration"),
                                  cond["observedGeneration"],
                                  "must be greater than or equal to zero"))
        if not cond.get("lastTransitionTime"):
            causes.append(required(child(cpath, "lastTransitionTime"), "must be set"))
        reason = cond.get("reason") or ""
        if not reason:
            causes.append(required(child(cpath, "reason"), "must be set"))
        else:
            if _REASON_RE.fullmatch(reason) is None:
                causes.append(invalid(child(cpath, "reason"), reason, _REASON_MSG))
            if len(reason) > CONDITION_REASON_MAX:
                causes.append(too_long(child(cpath, "reason"), CONDITION_REASON_MAX))
        if len(cond.get("message") or "") > CONDITION_MESSAGE_MAX:
            causes.append(too_long(child(cpath, "message"), CONDITION_MESSAGE_MAX))
    return causes


def each(items: Iterable[Any]) -> list[Any]:
    """Items of a possibly-null list."""
    return list(items or [])
