"""Per-node verdicts shared by pods that ask alike (kube-scheduler's old equivalence cache).

Pods of one shape (the same placement fields, requests and claim specs: replicas of one
template) get the same answer from a node until something about that node changes: its
object, the pods counted on it, the devices in use in its pools, or the allocator's inputs.
The scheduler's cache (`scheduler.cache`, where the rule and its events are listed) drops a
node's verdict on each such change, so a cycle re-evaluates only the nodes that changed since
the last pod of the same shape, and the verdicts it reuses are the ones it would compute
again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

Obj = dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Verdict:
    """One node's answer for the shape: the rejection, or the allocations and the score."""

    rejection: Any
    results: list[Obj]
    score: float


REJECTED = -1.0
"""A rejected node's place in the score list (scores are never negative)."""


class EquivalenceCache:
    """The verdicts of the last shape seen, node by node, and their scores in the
    scheduler's node order (`scores`: a score, REJECTED, or None when not known), so that a
    cycle can find its window of feasible nodes with list operations instead of a loop."""

    def __init__(self) -> None:
        self.shape: bytes = b""
        self._verdicts: dict[str, Verdict] = {}
        self._position: dict[str, int] = {}
        self.scores: list[float | None] = []

    def order(self, names: Iterable[str]) -> None:
        """The nodes in the scheduler's order (call it whenever they change)."""
        self._position = {name: i for i, name in enumerate(names)}
        self.scores = [None] * len(self._position)
        for name, i in self._position.items():
            verdict = self._verdicts.get(name)
            if verdict is not None:
                self.scores[i] = score_of(verdict)

    def use(self, shape: bytes) -> dict[str, Verdict]:
        """The verdicts for `shape` (none kept when the shape differs from the last one);
        read-only: add one with `put`."""
        if shape != self.shape:
            self.shape = shape
            self._verdicts = {}
            self.scores = [None] * len(self._position)
        return self._verdicts

    def verdict(self, name: str) -> Verdict:
        """A node's verdict for the current shape (KeyError when not known)."""
        return self._verdicts[name]

    def put(self, name: str, verdict: Verdict) -> None:
        """Remember a node's verdict for the current shape."""
        self._verdicts[name] = verdict
        i = self._position.get(name)
        if i is not None:
            self.scores[i] = score_of(verdict)

    def forget(self, nodes: Iterable[str] | None = None) -> None:
        """Drop the verdicts of `nodes` (None: of every node)."""
        if nodes is None:
            self._verdicts.clear()
            self.scores = [None] * len(self._position)
            return
        for node in nodes:
            self._verdicts.pop(node, None)
            i = self._position.get(node)
            if i is not None:
                self.scores[i] = None


def score_of(verdict: Verdict) -> float:
    """A verdict's place in the score list: its score, or REJECTED."""
    return REJECTED if verdict.rejection is not None else verdict.score


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
