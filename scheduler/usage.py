"""What the pods on each node request: the scheduler's node-resources accounting.

Kept incrementally from pod events (a pod counts on its node from binding, or from the
scheduler's assumption, until it is gone or has finished), so a fit check costs a lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from scheduler.filters import Resources, pod_requests

Obj = dict[str, Any]
TERMINAL = ("Succeeded", "Failed")


def counts_on_node(pod: Obj) -> str:
    """The node a pod's requests count on ("" when none: unbound or finished)."""
    if ((pod.get("status") or {}).get("phase")) in TERMINAL:
        return ""
    return (pod.get("spec") or {}).get("nodeName") or ""


class NodeUsage:
    """Per node: the summed requests and the number of pods that count there."""

    def __init__(self, *, on_change: Callable[[str], None] | None = None) -> None:
        self._on_change = on_change
        """Called with the name of every node whose usage changed."""
        self._by_pod: dict[str, tuple[str, Resources]] = {}
        self._used: dict[str, Resources] = {}
        self._pods: dict[str, int] = {}

    def set(self, key: str, node: str, requests: Mapping[str, Fraction] | None = None,
            pod: Obj | None = None) -> None:
        """Pod `key` counts on `node` ("" or no node: nowhere) with `requests` (computed from
        `pod` when not given)."""
        current = self._by_pod.get(key)
        if current is not None and current[0] == node:
            return
        if current is not None:
            self._drop(key, current)
        if not node:
            return
        req = dict(requests) if requests is not None else pod_requests(pod or {})
        self._by_pod[key] = (node, req)
        used = self._used.setdefault(node, {})
        for name, value in req.items():
            used[name] = used.get(name, Fraction(0)) + value
        self._pods[node] = self._pods.get(node, 0) + 1
        if self._on_change is not None:
            self._on_change(node)

    def _drop(self, key: str, current: tuple[str, Resources]) -> None:
        node, req = current
        del self._by_pod[key]
        used = self._used[node]
        for name, value in req.items():
            used[name] -= value
        self._pods[node] -= 1
        if not self._pods[node]:
            del self._pods[node], self._used[node]
        if self._on_change is not None:
            self._on_change(node)

    def forget(self, key: str) -> None:
        """Pod `key` is gone."""
        current = self._by_pod.get(key)
        if current is not None:
            self._drop(key, current)

    def node_of(self, key: str) -> str:
        """Where pod `key` counts ("" when nowhere)."""
        current = self._by_pod.get(key)
        return current[0] if current else ""

    def used(self, node: str) -> Resources:
        """The summed requests on `node` (read-only)."""
        return self._used.get(node, {})

    def pods(self, node: str) -> int:
        """How many pods count on `node`."""
        return self._pods.get(node, 0)
