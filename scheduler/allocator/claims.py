"""A ResourceClaim's spec in the form the search reads: parsed once per claim (the spec is
immutable), with its CEL selectors and derived attributes compiled."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakeapi import cel
from fakeapi.machinery.quantity import Quantity, parse

from .selectors import Expression

Obj = Mapping[str, Any]

EXACT_COUNT = "ExactCount"
ALL = "All"


def object_ref(obj: Obj) -> str:
    """klog.KObj's spelling of an object: `namespace/name`, or `name` without a namespace."""
    meta = obj.get("metadata") or {}
    name, ns = meta.get("name") or "", meta.get("namespace") or ""
    return f"{ns}/{name}" if ns else name


class Request:
    """One request (`exactly`) or one subrequest of a `firstAvailable` list."""

    __slots__ = ("name", "full_name", "parent", "class_name", "mode", "count", "admin",
                 "has_admin", "selectors", "empty_selector", "tolerations", "capacity",
                 "derived", "wire")

    def __init__(self, wire: Obj, *, name: str, parent: str | None, claim_ref: str) -> None:
        self.wire = wire
        self.name = name
        self.parent = parent
        self.full_name = f"{parent}/{name}" if parent else name
        self.class_name: str = wire.get("deviceClassName") or ""
        self.mode: str = wire.get("allocationMode") or ""
        self.count = int(wire.get("count") or 0)
        self.has_admin = wire.get("adminAccess") is not None and parent is None
        self.admin = bool(wire.get("adminAccess")) and parent is None
        owner = f"claim {claim_ref}"
        selectors = [s or {} for s in wire.get("selectors") or []]
        self.empty_selector = next((i for i, s in enumerate(selectors)
                                    if not (s.get("cel") or {}).get("expression")), None)
        self.selectors = tuple(Expression((s.get("cel") or {}).get("expression"), owner, i)
                               for i, s in enumerate(selectors))
        self.tolerations: list[Obj] = list(wire.get("tolerations") or [])
        requests = (wire.get("capacity") or {}).get("requests")
        self.capacity: dict[str, Quantity] | None = (
            {n: parse(q) for n, q in requests.items()} if requests is not None else None)
        self.derived = tuple(
            ((d or {}).get("name") or "",
             Expression((d or {}).get("expression"), f"claim {claim_ref}, request "
                        f"{self.full_name}", i, purpose=cel.DERIVED))
            for i, d in enumerate(wire.get("derivedAttributes") or []))


class ConstraintSpec:
    """A constraint as written: its kind (match, distinct or "" when neither), attribute and
    request names."""

    __slots__ = ("kind", "attribute", "requests")

    def __init__(self, wire: Obj) -> None:
        if wire.get("matchAttribute"):
            self.kind, self.attribute = "match", str(wire["matchAttribute"])
        elif wire.get("distinctAttribute"):
            self.kind, self.attribute = "distinct", str(wire["distinctAttribute"])
        else:
            self.kind, self.attribute = "", ""
        self.requests = frozenset(wire.get("requests") or ())


class ClaimPlan:
    """Everything about one claim that doesn't change between nodes or scheduling attempts."""

    __slots__ = ("ref", "requests", "names", "constraints", "configs", "wire")

    def __init__(self, claim: Obj) -> None:
        self.wire = claim
        self.ref = object_ref(claim)
        devices = (claim.get("spec") or {}).get("devices") or {}
        self.requests: list[tuple[Request, ...]] = []
        """Per request: one entry for `exactly`, one per subrequest for `firstAvailable`."""
        self.names: list[str] = []
        for wire in devices.get("requests") or []:
            wire = wire or {}
            name = wire.get("name") or ""
            self.names.append(name)
            subs = wire.get("firstAvailable") or []
            if subs:
                self.requests.append(tuple(
                    Request(s or {}, name=(s or {}).get("name") or "", parent=name,
                            claim_ref=self.ref) for s in subs))
            else:
                self.requests.append((Request(wire.get("exactly") or {}, name=name,
                                              parent=None, claim_ref=self.ref),))
        self.constraints = [ConstraintSpec(c or {}) for c in devices.get("constraints") or []]
        self.configs: list[Obj] = [c or {} for c in devices.get("config") or []]
