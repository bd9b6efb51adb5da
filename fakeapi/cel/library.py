"""The Kubernetes CEL function libraries as one declarative table, implemented in Python.

Both engines are built from `FUNCTIONS`: each overload names its parameter and result kinds
("string", "Semver", "list(string)", ...) and a Python implementation over plain values and
the value types of `fakeapi.cel.values`. Mirrors k8s.io/apiserver/pkg/cel/library (semver,
quantity, ip, cidr, url, regex, lists) and DRA's `includes()`; `STRINGS_EXT`, `LISTS_EXT`
and `SETS_EXT` are cel-go's ext.Strings(v2), ext.Lists(v3) and ext.Sets() for the engine
that lacks them natively.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any

from fakeapi.cel.values import CIDR, IP, URL, LibraryError, NamedFormat, Semver, quantity
from fakeapi.machinery import names
from fakeapi.machinery.quantity import Quantity

INCLUDES_MAX = 64  # same as upstream ResourceSliceMaxAttributeValuesPerDevice


@dataclasses.dataclass(frozen=True)
class Overload:
    """One overload: `member` means receiver style (`x.f(y)` passes x first)."""

    id: str
    params: tuple[str, ...]
    result: str
    impl: Callable[..., Any]
    member: bool = False


@dataclasses.dataclass(frozen=True)
class Function:
    """A named function and its overloads."""

    name: str
    overloads: tuple[Overload, ...]


_KUBE_KINDS = {"Semver": Semver, "Quantity": Quantity, "IP": IP, "CIDR": CIDR, "URL": URL,
               "Format": NamedFormat}
_PLAIN_KINDS = {"string": str, "int": int, "uint": int, "double": float, "bool": bool,
                "bytes": bytes}


def accepts(kind: str, value: Any) -> bool:
    """Whether a plain value (or a Kubernetes value) fits a parameter kind."""
    if kind == "dyn":
        return True
    if kind in _KUBE_KINDS:
        return isinstance(value, _KUBE_KINDS[kind])
    if kind.startswith("list("):
        inner = kind[5:-1]
        return isinstance(value, list) and all(accepts(inner, x) for x in value)
    if kind.startswith("map("):
        return isinstance(value, dict)
    return type(value) is _PLAIN_KINDS[kind]


def pick(overloads: Sequence[Overload], values: Sequence[Any]) -> Overload | None:
    """The first overload whose parameters fit the values (runtime dispatch)."""
    for o in overloads:
        if len(o.params) == len(values) and all(
                accepts(k, v) for k, v in zip(o.params, values, strict=True)):
            return o
    return None


def _fn(name: str, *overloads: Overload) -> Function:
    return Function(name, overloads)


def _m(id: str, params: Sequence[str], result: str, impl: Callable[..., Any]) -> Overload:
    return Overload(id, tuple(params), result, impl, member=True)


def _g(id: str, params: Sequence[str], result: str, impl: Callable[..., Any]) -> Overload:
    return Overload(id, tuple(params), result, impl)


# ----- semver ------------------------------------------------------------------------------

def _semver(text: str, normalize: bool = False) -> Semver:
    return Semver.parse(text, normalize)


def _is_semver(text: str, normalize: bool = False) -> bool:
    return _parses(lambda t: Semver.parse(t, normalize))(text)


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Semver) and isinstance(b, Semver):
        return a.compare(b)
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return (a.value > b.value) - (a.value < b.value)
    raise LibraryError("no such overload")


# ----- quantity ----------------------------------------------------------------------------

_INT64 = (-(2**63), 2**63 - 1)


def _q_is_integer(q: Quantity) -> bool:
    return q.value.denominator == 1 and _INT64[0] <= q.value <= _INT64[1]


def _q_as_integer(q: Quantity) -> int:
    if not _q_is_integer(q):
        raise LibraryError("cannot convert value to integer")
    return int(q.value)


def _q_add(a: Quantity, b: Quantity | int) -> Quantity:
    """Same as upstream: `add(int)` adds resource.NewQuantity(int, DecimalSI)."""
    return a.add(b if isinstance(b, Quantity) else Quantity(int(b)))


def _q_sub(a: Quantity, b: Quantity | int) -> Quantity:
    """Same as upstream: `sub(int)` subtracts resource.NewQuantity(int, DecimalSI)."""
    return a.sub(b if isinstance(b, Quantity) else Quantity(int(b)))


def _parses(parse: Callable[[str], Any]) -> Callable[[str], bool]:
    """`isQuantity()`, `isIP()`, ...: whether the text parses (upstream: no error, just false)."""
    def check(text: str) -> bool:
        try:
            parse(text)
        except LibraryError:
            return False
        return True
    return check


_q_is_quantity = _parses(quantity)


# ----- ip and cidr -------------------------------------------------------------------------

_is_ip = _parses(IP.parse)


def _ip_is_canonical(text: str) -> bool:
    return str(IP.parse(text)) == text


def _ip_family(ip: IP) -> int:
    return ip.addr.version


def _is_global_unicast(ip: IP) -> bool:
    """Same as Go's netip.Addr.IsGlobalUnicast (private ranges count as global)."""
    a = ip.addr
    if a.version == 4 and a == ipaddress.IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local)


def _is_link_local_multicast(ip: IP) -> bool:
    a = ip.addr
    if a.version == 4:
        return a in ipaddress.IPv4Network("224.0.0.0/24")
    return a.is_multicast and (int(a) >> 112) & 0xF == 2


_is_cidr = _parses(CIDR.parse)


def _cidr_contains_ip(c: CIDR, ip: Any) -> bool:
    addr = (ip if isinstance(ip, IP) else IP.parse(ip)).addr
    return addr.version == c.addr.version and addr in c.network


def _cidr_contains_cidr(c: CIDR, other: Any) -> bool:
    o = other if isinstance(other, CIDR) else CIDR.parse(other)
    if o.addr.version != c.addr.version or o.prefix < c.prefix:
        return False
    return o.network.network_address in c.network


def _cidr_masked(c: CIDR) -> CIDR:
    return CIDR(c.network.network_address, c.prefix)


# ----- url ---------------------------------------------------------------------------------

_is_url = _parses(URL.parse)


def _url_hostname(u: URL) -> str:
    host = u.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:host.find("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


def _url_port(u: URL) -> str:
    host = u.parts.netloc.rpartition("@")[2]
    tail = host[host.find("]") + 1:] if host.startswith("[") else host
    return tail.rsplit(":", 1)[1] if ":" in tail else ""


def _url_query(u: URL) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in urllib.parse.parse_qsl(u.parts.query, keep_blank_values=True):
        out.setdefault(k, []).append(v)
    return out


# ----- regex -------------------------------------------------------------------------------

def _regex(pattern: str) -> re.Pattern[str]:
    try:
        return _compiled(pattern)
    except re.error as e:
        raise LibraryError(f"Illegal regex: {e}") from None


_regex_cache: dict[str, re.Pattern[str]] = {}


def _compiled(pattern: str) -> re.Pattern[str]:
    found = _regex_cache.get(pattern)
    if found is None:
        if len(_regex_cache) > 1024:
            _regex_cache.clear()
        found = _regex_cache[pattern] = re.compile(pattern)
    return found


def _find(text: str, pattern: str) -> str:
    m = _regex(pattern).search(text)
    return m.group(0) if m else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


def _matches(text: str, pattern: str) -> bool:
    return _regex(pattern).search(text) is not None


# ----- lists (k8s) and includes ------------------------------------------------------------

def _is_sorted(items: list[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _sum(items: list[Any]) -> Any:
    return sum(items, type(items[0])() if items else 0)


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    def op(items: list[Any]) -> Any:
        if not items:
            raise LibraryError(f"{name} called on empty list")
        return pick(items)
    return op


def _index_of(items: Any, x: Any, *rest: Any) -> int:
    if isinstance(items, str):
        return _string_index(items, x, *rest)
    for i, v in enumerate(items):
        if same(v, x):
            return i
    return -1


def _last_index_of(items: Any, x: Any, *rest: Any) -> int:
    if isinstance(items, str):
        return _string_last_index(items, x, *rest)
    for i in range(len(items) - 1, -1, -1):
        if same(items[i], x):
            return i
    return -1


def includes(target: Any, arg: Any) -> bool:
    """Same as DRA's includesFunc: membership for a list (at most 64 items), else equality."""
    if isinstance(target, list):
        for i, item in enumerate(target):
            if i >= INCLUDES_MAX:
                raise LibraryError("'includes' function cannot be applied to lists longer "
                                   f"than {INCLUDES_MAX} values")
            if same(item, arg):
                return True
        return False
    return same(target, arg)


def same(a: Any, b: Any) -> bool:
    """CEL heterogeneous equality: numbers compare by value across int/uint/double."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


# ----- the named formats -------------------------------------------------------------------

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _uri_errors(s: str) -> list[str]:
    try:
        URL.parse(s)
    except LibraryError as e:
        return [str(e).split("conversion from string: ", 1)[-1]]
    return []


_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = names.regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character", _DNS1035_FMT, "my-name",
    "abc-123")


def _dns1035_label(s: str, prefix: bool) -> list[str]:
    """Same as upstream NameIsDNS1035Label (IsDNS1035Label)."""
    if prefix and len(s) > 1 and s.endswith("-"):
        s = s[:-2] + "a"
    errs = [names.max_len_error(names.DNS1123_LABEL_MAX)] if len(s) > 63 else []
    if re.fullmatch(_DNS1035_FMT, s) is None:
        errs.append(_DNS1035_MSG)
    return errs


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": lambda s: names.name_is_dns_label(s, False),
    "dns1123Subdomain": lambda s: names.name_is_dns_subdomain(s, False),
    "dns1035Label": lambda s: _dns1035_label(s, False),
    "qualifiedName": names.label_key_errors,
    "dns1123LabelPrefix": lambda s: names.name_is_dns_label(s, True),
    "dns1123SubdomainPrefix": lambda s: names.name_is_dns_subdomain(s, True),
    "dns1035LabelPrefix": lambda s: _dns1035_label(s, True),
    "labelValue": names.label_value_errors,
    "uri": _uri_errors,
    "uuid": lambda s: [] if _UUID.match(s) else ["does not match the UUID format"],
    "byte": lambda s: [] if _BASE64.match(s) else ["invalid base64"],
    "date": lambda s: [] if _DATE.match(s) else ["invalid date"],
    "datetime": lambda s: [] if _DATETIME.match(s) else ["invalid datetime"],
}
"""Same names as upstream's ConstantFormats; each returns the validation messages."""


def format_errors(fmt: NamedFormat, text: str) -> list[str]:
    """The messages of `<format>.validate(text)` (empty when valid)."""
    return FORMATS[fmt.name](text)


# ----- strings extension (cel-go ext.Strings v2), for engines without it -------------------

def _string_index(s: str, sub: str, start: int = 0) -> int:
    if start < 0 or start > len(s):
        raise LibraryError(f"index out of range: {start}")
    return s.find(sub, start)


def _string_last_index(s: str, sub: str, end: int | None = None) -> int:
    if end is None:
        return s.rfind(sub)
    if end < 0 or end >= len(s):
        raise LibraryError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise LibraryError(f"index out of range: {i}")
    return s[i:i + 1]


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start < 0 or start > len(s):
        raise LibraryError(f"index out of range: {start}")
    if end < 0 or end > len(s):
        raise LibraryError(f"index out of range: {end}")
    if start > end:
        raise LibraryError(f"invalid substring range. start: {start}, end: {end}")
    return s[start:end]


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        chars = list(s)
        return chars if n < 0 or n >= len(chars) else chars[:n - 1] + ["".join(chars[n - 1:])]
    return s.split(sep, -1 if n < 0 else n - 1)


def _join(items: list[str], sep: str = "") -> str:
    return sep.join(items)


def _quote(s: str) -> str:
    out = []
    for c in s:
        out.append({"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                    "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}.get(c, c))
    return '"' + "".join(out) + '"'


def _lower_ascii(s: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in s)


def _upper_ascii(s: str) -> str:
    return "".join(c.upper() if c.isascii() else c for c in s)


_WS = " \t\n\v\f\r\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
      "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _format(fmt: str, args: list[Any]) -> str:
    """cel-go's string.format(): %s %d %f %e %x %X %o %b and %%."""
    out: list[str] = []
    i = n = 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        i += 1
        if i < len(fmt) and fmt[i] == "%":
            out.append("%")
            i += 1
            continue
        m = re.match(r"(\.\d+)?([sdfeExXob])", fmt[i:])
        if m is None:
            raise LibraryError(f"could not parse formatting clause: unrecognized formatting "
                               f"clause \"{fmt[i:i + 1]}\"")
        if n >= len(args):
            raise LibraryError(f"index {n} out of range")
        out.append(_format_one(m.group(2), m.group(1), args[n]))
        n += 1
        i += m.end()
    return "".join(out)


def _format_one(verb: str, precision: str | None, v: Any) -> str:
    if verb == "s":
        return to_string(v)
    if verb == "d":
        if isinstance(v, bool) or not isinstance(v, int):
            raise LibraryError("error during formatting: decimal clause can only be used on "
                               "integers, was given " + _kind(v))
        return str(v)
    if verb in "fe":
        digits = int(precision[1:]) if precision else 6
        return f"{float(v):.{digits}{verb}}"
    if verb in "xX":
        text = v.hex() if isinstance(v, bytes) else (
            v.encode().hex() if isinstance(v, str) else format(int(v), "x"))
        return text.upper() if verb == "X" else text
    if verb == "o":
        return format(int(v), "o")
    return format(int(v), "b")


def _kind(v: Any) -> str:
    return {bool: "bool", int: "int", float: "double", str: "string"}.get(type(v), "dyn")


def to_string(v: Any) -> str:
    """CEL's string() conversion, extended to the Kubernetes types."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, Semver | IP | CIDR | URL):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(to_string(x) for x in v) + "]"
    if isinstance(v, float):
        return repr(v) if v != int(v) or abs(v) >= 1e21 else str(int(v))
    return str(v)


# ----- lists extension (cel-go ext.Lists v3) and sets, for engines without them -------------

def _slice(items: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end < 0:
        raise LibraryError(f"cannot slice(${start}, ${end}), negative indexes not supported")
    if start > end:
        raise LibraryError(f"cannot slice({start}, {end}), start index must be less than or "
                           "equal to end index")
    if end > len(items):
        raise LibraryError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return items[start:end]


def _flatten(items: list[Any], depth: int = 1) -> list[Any]:
    if depth < 0:
        raise LibraryError("level must be non-negative")
    out: list[Any] = []
    for v in items:
        if isinstance(v, list) and depth > 0:
            out += _flatten(v, depth - 1)
        else:
            out.append(v)
    return out


def _distinct(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        if not any(same(v, o) for o in out):
            out.append(v)
    return out


def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    return all(any(same(x, y) for y in a) for x in b)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(any(same(x, y) for y in a) for x in b)


def _sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


# ----- the table ---------------------------------------------------------------------------

COMPARABLE = ("int", "uint", "double", "bool", "string", "bytes")
SUMMABLE = ("int", "uint", "double")
INCLUDES_TYPES = ("string", "int", "bool", "Semver")

KUBERNETES: tuple[Function, ...] = (
    # semver (k8s SemverLib v1)
    _fn("semver", _g("string_to_semver", ["string"], "Semver", _semver),
        _g("string_bool_to_semver", ["string", "bool"], "Semver", _semver)),
    _fn("isSemver", _g("is_semver_string", ["string"], "bool", _is_semver),
        _g("is_semver_string_bool", ["string", "bool"], "bool", _is_semver)),
    _fn("major", _m("semver_major", ["Semver"], "int", lambda v: v.major)),
    _fn("minor", _m("semver_minor", ["Semver"], "int", lambda v: v.minor)),
    _fn("patch", _m("semver_patch", ["Semver"], "int", lambda v: v.patch)),
    # quantity
    _fn("quantity", _g("string_to_quantity", ["string"], "Quantity", quantity)),
    _fn("isQuantity", _g("is_quantity_string", ["string"], "bool", _q_is_quantity)),
    _fn("sign", _g("quantity_sign", ["Quantity"], "int", Quantity.sign)),
    _fn("asApproximateFloat", _m("quantity_get_float", ["Quantity"], "double",
                                 lambda q: float(q.value))),
    _fn("asInteger", _m("quantity_get_int", ["Quantity"], "int", _q_as_integer)),
    _fn("isInteger", _m("quantity_is_integer", ["Quantity"], "bool", _q_is_integer)),
    _fn("add", _m("quantity_add", ["Quantity", "Quantity"], "Quantity", _q_add),
        _m("quantity_add_int", ["Quantity", "int"], "Quantity", _q_add)),
    _fn("sub", _m("quantity_sub", ["Quantity", "Quantity"], "Quantity", _q_sub),
        _m("quantity_sub_int", ["Quantity", "int"], "Quantity", _q_sub)),
    # shared by semver and quantity
    _fn("isGreaterThan",
        _m("semver_is_greater_than", ["Semver", "Semver"], "bool", lambda a, b: _compare(a, b) > 0),
        _m("quantity_is_greater_than", ["Quantity", "Quantity"], "bool",
           lambda a, b: _compare(a, b) > 0)),
    _fn("isLessThan",
        _m("semver_is_less_than", ["Semver", "Semver"], "bool", lambda a, b: _compare(a, b) < 0),
        _m("quantity_is_less_than", ["Quantity", "Quantity"], "bool",
           lambda a, b: _compare(a, b) < 0)),
    _fn("compareTo", _m("semver_compare_to", ["Semver", "Semver"], "int", _compare),
        _m("quantity_compare_to", ["Quantity", "Quantity"], "int", _compare)),
    # ip
    _fn("ip", _g("string_to_ip", ["string"], "IP", IP.parse),
        _m("cidr_ip", ["CIDR"], "IP", lambda c: IP(c.addr))),
    _fn("isIP", _g("is_ip", ["string"], "bool", _is_ip)),
    _fn("ip.isCanonical", _g("ip_is_canonical", ["string"], "bool", _ip_is_canonical)),
    _fn("family", _m("ip_family", ["IP"], "int", _ip_family)),
    _fn("isUnspecified", _m("ip_is_unspecified", ["IP"], "bool", lambda i: i.addr.is_unspecified)),
    _fn("isLoopback", _m("ip_is_loopback", ["IP"], "bool", lambda i: i.addr.is_loopback)),
    _fn("isLinkLocalMulticast", _m("ip_is_link_local_multicast", ["IP"], "bool",
                                   _is_link_local_multicast)),
    _fn("isLinkLocalUnicast", _m("ip_is_link_local_unicast", ["IP"], "bool",
                                 lambda i: i.addr.is_link_local and not i.addr.is_multicast)),
    _fn("isGlobalUnicast", _m("ip_is_global_unicast", ["IP"], "bool", _is_global_unicast)),
    # cidr
    _fn("cidr", _g("string_to_cidr", ["string"], "CIDR", CIDR.parse)),
    _fn("isCIDR", _g("is_cidr", ["string"], "bool", _is_cidr)),
    _fn("containsIP", _m("cidr_contains_ip_string", ["CIDR", "string"], "bool", _cidr_contains_ip),
        _m("cidr_contains_ip_ip", ["CIDR", "IP"], "bool", _cidr_contains_ip)),
    _fn("containsCIDR",
        _m("cidr_contains_cidr_string", ["CIDR", "string"], "bool", _cidr_contains_cidr),
        _m("cidr_contains_cidr", ["CIDR", "CIDR"], "bool", _cidr_contains_cidr)),
    _fn("prefixLength", _m("cidr_prefix_length", ["CIDR"], "int", lambda c: c.prefix)),
    _fn("masked", _m("cidr_masked", ["CIDR"], "CIDR", _cidr_masked)),
    # url
    _fn("url", _g("string_to_url", ["string"], "URL", URL.parse)),
    _fn("isURL", _g("is_url_string", ["string"], "bool", _is_url)),
    _fn("getScheme", _m("url_get_scheme", ["URL"], "string", lambda u: u.parts.scheme)),
    _fn("getHost", _m("url_get_host", ["URL"], "string",
                      lambda u: u.parts.netloc.rpartition("@")[2])),
    _fn("getHostname", _m("url_get_hostname", ["URL"], "string", _url_hostname)),
    _fn("getPort", _m("url_get_port", ["URL"], "string", _url_port)),
    _fn("getEscapedPath", _m("url_get_escaped_path", ["URL"], "string",
                             lambda u: urllib.parse.quote(urllib.parse.unquote(u.parts.path),
                                                          safe="/:@!$&'()*+,;=-._~"))),
    _fn("getQuery", _m("url_get_query", ["URL"], "map(string, list(string))", _url_query)),
    # regex
    _fn("find", _m("string_find_string", ["string", "string"], "string", _find)),
    _fn("findAll", _m("string_find_all_string", ["string", "string"], "list(string)", _find_all),
        _m("string_find_all_string_int", ["string", "string", "int"], "list(string)",
           _find_all)),
    # lists (k8s ListsVersion 0)
    _fn("isSorted", *(_m(f"list_{t}_is_sorted_bool", [f"list({t})"], "bool", _is_sorted)
                      for t in COMPARABLE)),
    _fn("sum", *(_m(f"list_{t}_sum_{t}", [f"list({t})"], t, _sum) for t in SUMMABLE)),
    _fn("max", *(_m(f"list_{t}_max_{t}", [f"list({t})"], t, _extreme("max", max))
                 for t in COMPARABLE)),
    _fn("min", *(_m(f"list_{t}_min_{t}", [f"list({t})"], t, _extreme("min", min))
                 for t in COMPARABLE)),
)
"""The k8s.io/apiserver libraries of the 1.37 base environment that a selector can use."""

LIST_INDEX: tuple[Function, ...] = (
    _fn("indexOf", *(_m(f"list_{t}_index_of_int", [f"list({t})", t], "int", _index_of)
                     for t in COMPARABLE)),
    _fn("lastIndexOf", *(_m(f"list_{t}_last_index_of_int", [f"list({t})", t], "int",
                            _last_index_of) for t in COMPARABLE)),
)
"""k8s lists' `indexOf`/`lastIndexOf`: cel-cpp's strings extension owns those names there."""

DRA_INCLUDES = _fn("includes", *(
    o for t in INCLUDES_TYPES for o in (
        _m(f"dra_includes_{t}_{t}", [t, t], "bool", includes),
        _m(f"dra_includes_list_{t}_{t}", [f"list({t})", t], "bool", includes))))
"""DRA's `includes()` (DRAListTypeAttributes); one overload per type the engine needs."""

FORMAT_NAMES = tuple(FORMATS)

STRINGS_EXT: tuple[Function, ...] = (
    _fn("charAt", _m("string_char_at_int", ["string", "int"], "string", _char_at)),
    _fn("indexOf", _m("string_index_of_string", ["string", "string"], "int", _string_index),
        _m("string_index_of_string_int", ["string", "string", "int"], "int", _string_index)),
    _fn("lastIndexOf", _m("string_last_index_of_string", ["string", "string"], "int",
                          _string_last_index),
        _m("string_last_index_of_string_int", ["string", "string", "int"], "int",
           _string_last_index)),
    _fn("lowerAscii", _m("string_lower_ascii", ["string"], "string", _lower_ascii)),
    _fn("upperAscii", _m("string_upper_ascii", ["string"], "string", _upper_ascii)),
    _fn("replace", _m("string_replace_string_string", ["string", "string", "string"], "string",
                      _replace),
        _m("string_replace_string_string_int", ["string", "string", "string", "int"], "string",
           _replace)),
    _fn("split", _m("string_split_string", ["string", "string"], "list(string)", _split),
        _m("string_split_string_int", ["string", "string", "int"], "list(string)", _split)),
    _fn("substring", _m("string_substring_int", ["string", "int"], "string", _substring),
        _m("string_substring_int_int", ["string", "int", "int"], "string", _substring)),
    _fn("trim", _m("string_trim", ["string"], "string", lambda s: s.strip(_WS))),
    _fn("join", _m("list_join", ["list(string)"], "string", _join),
        _m("list_join_string", ["list(string)", "string"], "string", _join)),
    _fn("format", _m("string_format", ["string", "list(dyn)"], "string", _format)),
    _fn("strings.quote", _g("strings_quote", ["string"], "string", _quote)),
)

LISTS_EXT: tuple[Function, ...] = (
    _fn("slice", _m("list_slice", ["list(dyn)", "int", "int"], "list(dyn)", _slice)),
    _fn("flatten", _m("list_flatten", ["list(dyn)"], "list(dyn)", _flatten),
        _m("list_flatten_int", ["list(dyn)", "int"], "list(dyn)", _flatten)),
    _fn("sort", _m("list_sort", ["list(dyn)"], "list(dyn)", sorted)),
    _fn("reverse", _m("list_reverse", ["list(dyn)"], "list(dyn)", lambda xs: xs[::-1])),
    _fn("distinct", _m("list_distinct", ["list(dyn)"], "list(dyn)", _distinct)),
    _fn("lists.range", _g("lists_range", ["int"], "list(int)", lambda n: list(range(n)))),
)

SETS_EXT: tuple[Function, ...] = (
    _fn("sets.contains", _g("list_sets_contains_list", ["list(dyn)", "list(dyn)"], "bool",
                            _sets_contains)),
    _fn("sets.equivalent", _g("list_sets_equivalent_list", ["list(dyn)", "list(dyn)"], "bool",
                              _sets_equivalent)),
    _fn("sets.intersects", _g("list_sets_intersects_list", ["list(dyn)", "list(dyn)"], "bool",
                              _sets_intersects)),
)

MATCHES = _fn("matches", _m("matches_string", ["string", "string"], "bool", _matches))
"""The standard `matches()` with RE2-like semantics, for engines whose own differs."""
