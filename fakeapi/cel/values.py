"""The Kubernetes CEL value types (Semver, Quantity, IP, CIDR, URL, NamedFormat), engine-neutral.

Each is a small frozen value with upstream's equality: a semver ignores build metadata; a
quantity is machinery's `Quantity`, equal by value (`1Gi == 1024Mi`). Parsing errors carry
upstream's messages (blang/semver, `resource.ParseQuantity`, `netip`, `url.ParseRequestURI`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
import urllib.parse
from typing import Any

from fakeapi.machinery.quantity import DECIMAL_SI, Quantity, canonical, parse


class LibraryError(ValueError):
    """A library function failed at runtime; the text is upstream's error message."""


# ----- semver (github.com/blang/semver/v4, as k8s.io/apiserver's semver library uses it) -----

_NUMBERS = set("0123456789")
_ALPHANUM = _NUMBERS | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def _numeric_part(text: str, what: str) -> int:
    if not text or not set(text) <= _NUMBERS:
        raise LibraryError(f"Invalid character(s) found in {what} number {_go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise LibraryError(f"{what.capitalize()} number must not contain leading zeroes "
                           f"{_go_quote(text)}")
    return int(text)


def _go_quote(text: str) -> str:
    """Go's %q for the plain strings found in these messages."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclasses.dataclass(frozen=True)
class Semver:
    """A semantic version; build metadata is dropped since it never affects precedence."""

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Same as blang's semver.Parse (and k8s normalizeAndParse with `normalize`)."""
        if normalize:
            text = _normalize_semver(text)
        if not text:
            raise LibraryError("Version string empty")
        parts = text.split(".", 2)
        if len(parts) != 3:
            raise LibraryError("No Major.Minor.Patch elements found")
        major = _numeric_part(parts[0], "major")
        minor = _numeric_part(parts[1], "minor")
        patch_text, build = parts[2], ""
        if "+" in patch_text:
            patch_text, build = patch_text.split("+", 1)
            for meta in build.split("."):
                if not meta:
                    raise LibraryError("Buildmetadata is empty")
                if not set(meta) <= _ALPHANUM:
                    raise LibraryError("Invalid character(s) found in build meta data "
                                       f"{_go_quote(meta)}")
        pre: tuple[str, ...] = ()
        if "-" in patch_text:
            patch_text, pre_text = patch_text.split("-", 1)
            pre = tuple(pre_text.split("."))
            for p in pre:
                if not p:
                    raise LibraryError("Prerelease is empty")
                if not set(p) <= _ALPHANUM:
                    raise LibraryError(f"Invalid character(s) found in prerelease {_go_quote(p)}")
                if set(p) <= _NUMBERS and len(p) > 1 and p[0] == "0":
                    raise LibraryError("Numeric PreRelease version must not contain leading "
                                       f"zeroes {_go_quote(p)}")
        patch = _numeric_part(patch_text, "patch")
        return cls(major, minor, patch, pre)

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(self.pre) if self.pre else "")

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 by semver precedence."""
        a, b = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if a != b:
            return -1 if a < b else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:
            return 1 if not self.pre else -1
        for x, y in zip(self.pre, other.pre, strict=False):
            if x == y:
                continue
            xn, yn = x.isdigit(), y.isdigit()
            if xn and yn:
                return -1 if int(x) < int(y) else 1
            if xn != yn:
                return -1 if xn else 1
            return -1 if x < y else 1
        return -1 if len(self.pre) < len(other.pre) else 1


def _normalize_semver(text: str) -> str:
    """Same as upstream normalizeAndParse: `v` prefix, leading zeros, short versions."""
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit():
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise LibraryError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


# ----- quantity ---------------------------------------------------------------------------


def quantity(text: str) -> Quantity:
    """CEL's `quantity()`: machinery's Quantity, or upstream's parse error as a LibraryError."""
    try:
        return parse(text)
    except ValueError as e:
        raise LibraryError(str(e)) from None


# ----- ip and cidr (net/netip, as k8s.io/apiserver's ip and cidr libraries parse them) -------

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _parse_addr(text: str) -> Address:
    if "%" in text:
        raise LibraryError(f"IP address {_go_quote(text)} with zone value is not allowed")
    try:
        if ":" not in text and any(len(p) > 1 and p[0] == "0" for p in text.split(".")):
            raise ValueError("IPv4 field has octet with leading zero")
        addr = ipaddress.ip_address(text)
    except ValueError as e:
        raise LibraryError(f"IP Address {_go_quote(text)} parse error during conversion from "
                           f"string: ParseAddr({_go_quote(text)}): {_netip_reason(str(e))}"
                           ) from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise LibraryError(f"IPv4-mapped IPv6 address {_go_quote(text)} is not allowed")
    return addr


def _netip_reason(text: str) -> str:
    if "leading zero" in text:
        return "IPv4 field has octet with leading zero"
    return "unable to parse IP"


@dataclasses.dataclass(frozen=True)
class IP:
    """An IPv4 or IPv6 address (no zones, no IPv4-mapped IPv6, like upstream)."""

    addr: Address

    @classmethod
    def parse(cls, text: str) -> IP:
        """Same as upstream parseIPAddr."""
        return cls(_parse_addr(text))

    def __str__(self) -> str:
        return str(self.addr)


@dataclasses.dataclass(frozen=True)
class CIDR:
    """An address with a prefix length (`10.0.0.1/8` keeps the host bits, as netip.Prefix)."""

    addr: Address
    prefix: int

    @classmethod
    def parse(cls, text: str) -> CIDR:
        """Same as upstream parseCIDR."""
        addr_text, sep, bits = text.partition("/")
        err = f"network address parse error during conversion from string: " \
              f"netip.ParsePrefix({_go_quote(text)})"
        if not sep:
            raise LibraryError(err + ": no '/'")
        if "%" in addr_text:
            raise LibraryError(err + ": IPv6 zones cannot be present in a prefix")
        try:
            addr = ipaddress.ip_address(addr_text)
        except ValueError:
            raise LibraryError(err + f": ParseAddr({_go_quote(addr_text)}): unable to parse IP"
                               ) from None
        width = 32 if addr.version == 4 else 128
        if not bits.isdigit() or (len(bits) > 1 and bits[0] == "0") or int(bits) > width:
            raise LibraryError(err + ": bad bits after slash: " + _go_quote(bits))
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            raise LibraryError(f"IPv4-mapped IPv6 address {_go_quote(text)} is not allowed")
        return cls(addr, int(bits))

    @property
    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
        """The masked network."""
        return ipaddress.ip_network(f"{self.addr}/{self.prefix}", strict=False)

    def __str__(self) -> str:
        return f"{self.addr}/{self.prefix}"


# ----- url (net/url.ParseRequestURI, as upstream's url() uses it) ---------------------------


@dataclasses.dataclass(frozen=True)
class URL:
    """A parsed absolute URI or absolute path."""

    text: str

    @classmethod
    def parse(cls, text: str) -> URL:
        """Same acceptance as Go's url.ParseRequestURI (absolute URI or absolute path)."""
        err = f"URL parse error during conversion from string: parse {_go_quote(text)}: "
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
            raise LibraryError(err + "net/url: invalid control character in URL")
        parts = urllib.parse.urlsplit(text)
        if not parts.scheme and not text.startswith("/"):
            raise LibraryError(err + "invalid URI for request")
        if parts.scheme and not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme):
            raise LibraryError(err + "first path segment in URL cannot contain colon")
        try:
            parts.port  # noqa: B018 - validates the port
        except ValueError:
            raise LibraryError(err + f"invalid port {_go_quote(':' + text.rsplit(':', 1)[-1])}"
                               " after host") from None
        return cls(text)

    @property
    def parts(self) -> urllib.parse.SplitResult:
        """The split URL."""
        return urllib.parse.urlsplit(self.text)

    def __str__(self) -> str:
        return self.text


@dataclasses.dataclass(frozen=True)
class NamedFormat:
    """One of upstream's named string formats (`format.dns1123Label()`)."""

    name: str


KUBE_TYPES: dict[type, str] = {
    Semver: "kubernetes.Semver", Quantity: "kubernetes.Quantity", IP: "net.IP",
    CIDR: "net.CIDR", URL: "kubernetes.URL", NamedFormat: "kubernetes.NamedFormat",
}


def type_name(value: Any) -> str:
    """cel-go's name of a value's type (for `CEL result of type X` messages)."""
    kube = KUBE_TYPES.get(type(value))
    if kube:
        return kube
    return {bool: "bool", int: "int", str: "string", float: "double", list: "list",
            dict: "map", bytes: "bytes", type(None): "null_type"}.get(type(value),
                                                                      type(value).__name__)


def plain(value: Any) -> Any:
    """A result as plain Python: semver, IP, CIDR, URL as strings; a quantity in upstream's
    canonical DecimalSI form (its format does not survive every engine: cel-expr-python
    carries a quantity as its value alone)."""
    if isinstance(value, Quantity):
        return canonical(value.value, DECIMAL_SI)
    if isinstance(value, Semver | IP | CIDR | URL):
        return str(value)
    if isinstance(value, NamedFormat):
        return value.name
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value
