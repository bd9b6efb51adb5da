"""Object-name and label syntax rules with upstream's messages, and generateName suffixes.

Each validator returns a list of detail messages (empty when valid), like upstream's
`IsDNS1123Subdomain` family; callers wrap them as `metadata.name: Invalid value: ...` causes.
Lengths are counted in bytes, as upstream does.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fakeapi.machinery.errors import Cause, field_invalid, field_required
from fakeapi.machinery.randomness import RandomBits

NameRule = Callable[[str, bool], list[str]]
"""A name rule: (name, is_generate_name_prefix) -> detail messages."""

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
LABEL_KEY_NAME_MAX = 63
LABEL_VALUE_MAX = 63

# generateName: the base is cut to 63 - 5 bytes, then 5 random characters are appended.
SUFFIX_LENGTH = 5
MAX_GENERATED_BASE = 63 - SUFFIX_LENGTH
# Same alphabet as upstream's util/rand: no vowels (no accidental words), no 0/1/3 look-alikes.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_KEY_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _KEY_NAME_FMT + ")?"

_LABEL_RE = re.compile(_LABEL_FMT)
_SUBDOMAIN_RE = re.compile(_SUBDOMAIN_FMT)
_KEY_NAME_RE = re.compile(_KEY_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream's RegexError text: `<msg> (e.g. 'a',  or 'b', regex used ... is '<fmt>')`."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """`must be no more than N bytes`."""
    return f"must be no more than {length} bytes"


EMPTY_ERROR = "must be non-empty"

_LABEL_MSG = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character", _LABEL_FMT, "my-name", "123-abc")
_SUBDOMAIN_MSG = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character", _SUBDOMAIN_FMT, "example.com")
_KEY_NAME_BODY = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character")
_KEY_NAME_MSG = regex_error(_KEY_NAME_BODY, _KEY_NAME_FMT, "MyName", "my.name", "123-abc")
_KEY_MANY_SLASHES_MSG = (
    "a valid label key " + _KEY_NAME_MSG
    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
_LABEL_VALUE_MSG = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT, "MyValue", "my_value", "12345")


def _nbytes(value: str) -> int:
    return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))


def dns1123_label_errors(value: str) -> list[str]:
    """Upstream IsDNS1123Label: lower-case alphanumerics and '-', at most 63 bytes."""
    errs: list[str] = []
    if _nbytes(value) > DNS1123_LABEL_MAX:
        errs.append(max_len_error(DNS1123_LABEL_MAX))
    if _LABEL_RE.fullmatch(value) is None:
        if _SUBDOMAIN_RE.fullmatch(value) is not None:
            errs.append("must not contain dots")
        else:
            errs.append(_LABEL_MSG)
    return errs


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Upstream IsDNS1123Subdomain: dot-separated DNS labels, at most 253 bytes."""
    errs: list[str] = []
    if _nbytes(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(max_len_error(DNS1123_SUBDOMAIN_MAX))
    if _SUBDOMAIN_RE.fullmatch(value) is None:
        errs.append(_SUBDOMAIN_MSG)
    return errs


def path_segment_errors(value: str, prefix: bool = False) -> list[str]:
    """Upstream IsValidPathSegmentName (or ...Prefix): not `.`/`..`, no `/` or `%`."""
    if not prefix and value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def label_key_errors(value: str) -> list[str]:
    """Upstream IsLabelKey (a.k.a. qualified name): `[prefix/]name`."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = value
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + EMPTY_ERROR)
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [_KEY_MANY_SLASHES_MSG]
    if not name:
        errs.append("name part " + EMPTY_ERROR)
    elif _nbytes(name) > LABEL_KEY_NAME_MAX:
        errs.append("name part " + max_len_error(LABEL_KEY_NAME_MAX))
    if _KEY_NAME_RE.fullmatch(name) is None:
        errs.append("name part " + _KEY_NAME_MSG)
    return errs


def label_value_errors(value: str) -> list[str]:
    """Upstream IsValidLabelValue: empty, or a qualified-name-like token of at most 63 bytes."""
    errs: list[str] = []
    if _nbytes(value) > LABEL_VALUE_MAX:
        errs.append(max_len_error(LABEL_VALUE_MAX))
    if _LABEL_VALUE_RE.fullmatch(value) is None:
        errs.append(_LABEL_VALUE_MSG)
    return errs


def _mask_trailing_dash(name: str) -> str:
    # Same as upstream maskTrailingDash, including its quirk of replacing the last two bytes.
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """Upstream NameIsDNSSubdomain (a generateName prefix may end in '-')."""
    return dns1123_subdomain_errors(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """Upstream NameIsDNSLabel (a generateName prefix may end in '-')."""
    return dns1123_label_errors(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool) -> list[str]:
    """Upstream ValidatePathSegmentName (the generic rule every stored object must pass)."""
    return path_segment_errors(name, prefix)


def name_is_rbac(name: str, prefix: bool) -> list[str]:
    """Upstream ValidateRBACName: a path segment, the prefix flag ignored."""
    return path_segment_errors(name)


def random_suffix(rng: RandomBits) -> str:
    """Five characters from upstream's generateName alphabet, drawn from `rng`."""
    alphabet = SUFFIX_ALPHABET
    n = len(alphabet)
    return "".join(alphabet[rng.randrange(n)] for _ in range(SUFFIX_LENGTH))


def generate_name(base: str, rng: RandomBits) -> str:
    """Upstream SimpleNameGenerator: base cut to 58 bytes plus a random 5-character suffix."""
    if len(base) > MAX_GENERATED_BASE:
        base = base[:MAX_GENERATED_BASE]
    return base + random_suffix(rng)


def metadata_name_causes(rule: NameRule, name: str | None,
                         generate_name: str | None = None) -> list[Cause]:
    """Causes for `metadata.generateName`/`metadata.name`, as upstream ValidateObjectMeta,
    under the kind's name rule (its kind-table row's `name_rule`).

    `name` is the final name (already generated from generateName when that was used).
    """
    causes: list[Cause] = []
    if generate_name:
        causes.extend(field_invalid("metadata.generateName", generate_name, m)
                      for m in rule(generate_name, True))
    if not name:
        causes.append(field_required("metadata.name", "name or generateName is required"))
    else:
        causes.extend(field_invalid("metadata.name", name, m) for m in rule(name, False))
    return causes
