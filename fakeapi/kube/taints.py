"""Taints and tolerations, as upstream's `ToleratesTaint` (core/v1 and resource.k8s.io alike).

One pure module for node taints (the scheduler's TaintToleration filter, the node lifecycle),
device taints (the allocator) and NoExecute eviction (the device-taint and node eviction
controllers). Objects are wire dicts; a missing operator is `Equal`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
BLOCKING = (NO_SCHEDULE, NO_EXECUTE)
"""The effects that keep a pod (or a device request) away unless tolerated."""

Obj = Mapping[str, Any]


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """Same as upstream's ToleratesTaint: an empty effect tolerates every effect; an empty key
    needs `Exists` (and then matches every key); `Exists` ignores the value; `Equal` (the
    default operator) compares values. Unknown operators tolerate nothing."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.get("key"):
        return False
    if operator == "Exists":
        return True
    if operator == "Equal":
        return bool(key) and (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerated(tolerations: Iterable[Obj], taint: Obj) -> bool:
    """Whether any of `tolerations` tolerates `taint`."""
    return any(tolerates(t, taint) for t in tolerations)


def untolerated(taints: Iterable[Obj], tolerations: Iterable[Obj],
                effects: tuple[str, ...] = BLOCKING) -> Obj | None:
    """The first taint with one of `effects` that no toleration tolerates, or None."""
    tols = list(tolerations)
    for taint in taints:
        if taint.get("effect") in effects and not tolerated(tols, taint):
            return taint
    return None


def toleration_seconds(tolerations: Iterable[Obj], taint: Obj) -> float | None:
    """How long a NoExecute `taint` is tolerated, as upstream's getMinTolerationTime over the
    matching tolerations: the shortest `tolerationSeconds` among them (≤ 0 means evict now),
    None (for ever) when none of them sets it. Raises LookupError when no toleration matches
    (evict now)."""
    matching = [t for t in tolerations if tolerates(t, taint)]
    if not matching:
        raise LookupError("taint not tolerated")
    bounds = [float(t["tolerationSeconds"]) for t in matching
              if t.get("tolerationSeconds") is not None]
    return max(0.0, min(bounds)) if bounds else None
