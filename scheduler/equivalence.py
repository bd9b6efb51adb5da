"""Per-node verdicts shared by pods that ask alike (kube-scheduler's old equivalence cache).

Pods of one shape (the same placement fields, requests and claim specs: replicas of one
template) get the same answer from a node until something about that node changes: its
object, the pods counted on it, the devices in use in its pools, or the allocator's inputs.
The scheduler drops a node's verdict on each such change, so a cycle re-evaluates only the
nodes that changed since the last pod of the same shape, and the verdicts it reuses are the
ones it would compute again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One node's answer for the shape: the rejection, or the allocations and the score."""

    rejection: Any
    results: list[Obj]
    score: float


class EquivalenceCache:
    """The verdicts of the last shape seen, node by node."""

    def __init__(self) -> None:
        self.shape: bytes = b""
        self._verdicts: dict[str, Verdict] = {}

    def use(self, shape: bytes) -> dict[str, Verdict]:
        """The verdicts for `shape` (none kept when the shape differs from the last one)."""
        if shape != self.shape:
            self.shape = shape
            self._verdicts = {}
        return self._verdicts

    def forget(self, nodes: Iterable[str] | None = None) -> None:
        """Drop the verdicts of `nodes` (None: of every node)."""
        if nodes is None:
            self._verdicts.clear()
            return
        for node in nodes:
            self._verdicts.pop(node, None)


def allocation_nodes(allocation: Obj | None) -> list[str] | None:
    """The nodes an allocation's devices are local to (the names of its `metadata.name`
    field selector), or None when they may be reachable from any node (network-attached,
    all nodes): then every node's verdict depends on it."""
    if not allocation:
        return []
    terms = (allocation.get("nodeSelector") or {}).get("nodeSelectorTerms") or []
    names: list[str] = []
    for term in terms:
        fields = term.get("matchFields") or []
        if term.get("matchExpressions") or len(fields) != 1:
            return None
        req = fields[0]
        if req.get("key") != "metadata.name" or req.get("operator") != "In":
            return None
        names.extend(req.get("values") or ())
    return names if terms else None
