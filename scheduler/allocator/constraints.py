"""Claim constraints (matchAttribute, distinctAttribute), as upstream's allocator keeps them.

Both are stateful and assumed monotonic: `add` is called for each device about to be
allocated and says whether the constraint still holds; every successful `add` is undone by
exactly one `remove` with the same arguments when the search backtracks. Upstream's quirks
are kept on purpose, because they decide which devices a claim gets: a match constraint's
running value (or list intersection) is not restored by `remove`, and a distinct constraint
remembers one value per request name, so within one request only the last device counts.
"""

from __future__ import annotations

from collections.abc import Mapping

from .devices import Attribute, Device

Derived = Mapping[str, Attribute | None] | None
"""A request's derived attributes for one device; they shadow the device's own."""


class AttributeConstraint:
    """A claim constraint during one search (the base of MatchAttribute and DistinctAttribute):
    which requests it covers, the attribute it reads, and how many devices it counts."""

    __slots__ = ("requests", "attribute", "lists", "count")

    def __init__(self, *, requests: frozenset[str], attribute: str, lists: bool) -> None:
        self.requests = requests
        self.attribute = attribute
        self.lists = lists
        self.count = 0

    def lookup(self, device: Device, derived: Derived) -> Attribute | None:
        """The attribute's value for the device: a derived attribute of that name first."""
        if derived and self.attribute in derived:
            return derived[self.attribute]
        return device.attribute(self.attribute)

    def applies(self, request: str, sub: str) -> bool:
        """Same as upstream: no requests means all; `req` covers its subrequests too."""
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return bool(sub) and f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str, device: Device, derived: Derived = None) -> bool:
        """Whether `device` may join; if so it is counted."""
        raise NotImplementedError

    def remove(self, request: str, sub: str, device: Device) -> None:
        """Undo one successful `add`."""
        raise NotImplementedError


def _scalar_equal(new: Attribute, old: Attribute) -> bool:
    """Same as upstream's scalar comparison: the new value's kind decides, lists never match."""
    if new.is_list or old.is_list:
        return False
    return new.kind == old.kind and new.scalar == old.scalar


class MatchAttribute(AttributeConstraint):
    """All devices share one value (with list-type attributes: a common element)."""

    __slots__ = ("first", "intersection")

    def __init__(self, *, requests: frozenset[str], attribute: str, lists: bool) -> None:
        super().__init__(requests=requests, attribute=attribute, lists=lists)
        self.first: Attribute | None = None
        self.intersection: tuple[str, frozenset[object]] | None = None

    def add(self, request: str, sub: str, device: Device, derived: Derived = None) -> bool:
        if not self.applies(request, sub):
            return True
        attr = self.lookup(device, derived)
        if attr is None:
            return False
        if self.count == 0:
            if self.lists:
                self.intersection = (attr.kind, attr.values)
            else:
                self.first = attr
            self.count = 1
            return True
        if self.lists:
            assert self.intersection is not None
            kind, values = self.intersection
            if kind != attr.kind:
                return False
            common = values & attr.values
            if not common:
                return False
            self.intersection = (kind, common)
        else:
            assert self.first is not None
            if not _scalar_equal(attr, self.first):
                return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.count -= 1


class DistinctAttribute(AttributeConstraint):
    """All devices have different values (with list-type attributes: disjoint lists)."""

    __slots__ = ("seen",)

    def __init__(self, *, requests: frozenset[str], attribute: str, lists: bool) -> None:
        super().__init__(requests=requests, attribute=attribute, lists=lists)
        self.seen: dict[str, Attribute] = {}

    def add(self, request: str, sub: str, device: Device, derived: Derived = None) -> bool:
        if not self.applies(request, sub):
            return True
        attr = self.lookup(device, derived)
        if attr is None:
            return False
        if self.count and not self._distinct(attr):
            return False
        self.seen[request] = attr
        self.count += 1
        return True

    def _distinct(self, attr: Attribute) -> bool:
        if not self.seen:
            return True
        if self.lists:
            return all(old.kind != attr.kind or not (old.values & attr.values)
                       for old in self.seen.values())
        if attr.is_list:
            return False  # upstream: an unknown value type never satisfies the constraint
        return all(old.is_list or old.kind != attr.kind or old.scalar != attr.scalar
                   for old in self.seen.values())

    def remove(self, request: str, sub: str, device: Device) -> None:
        if self.applies(request, sub):
            self.seen.pop(request, None)
            self.count -= 1
