"""Node filters before DRA, as kube-scheduler's default plugins run them (pure functions).

Order and reasons follow upstream's Filter plugins: NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity, NodeResourcesFit. The first plugin that rejects a node
decides its reasons; `resolvable` says whether preemption could help (upstream's
Unschedulable) or not (UnschedulableAndUnresolvable).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from fakeapi.kube import nodeselector, taints
from fakeapi.machinery.quantity import parse_quantity

Obj = dict[str, Any]
Resources = dict[str, Fraction]
CPU, MEMORY, PODS, EPHEMERAL = "cpu", "memory", "pods", "ephemeral-storage"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": taints.NO_SCHEDULE}

NODE_NAME_MISMATCH = "node(s) didn't match the requested node name"
NODE_UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY_MISMATCH = "node(s) didn't match Pod's node affinity/selector"
TOO_MANY_PODS = "Too many pods"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Rejection:
    """Why a node can't take the pod: upstream's reasons of the first plugin that said no."""

    plugin: str
    reasons: tuple[str, ...]
    resolvable: bool = False
    """True when preemption might make room (resources), False when it can't help."""


def _quantity(value: Any) -> Fraction:
    """A stored quantity's value (validation admitted it, so it parses: a failure is a bug to
    see, never a request of zero)."""
    return parse_quantity(str(value))


def _container_requests(container: Obj) -> Resources:
    res = container.get("resources") or {}
    requests = res.get("requests") or {}
    limits = res.get("limits") or {}
    # same as upstream's defaulting: a limit without a request is the request
    return {name: _quantity(v) for name, v in {**limits, **requests}.items()}


def _add(into: Resources, more: Mapping[str, Fraction]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, Fraction(0)) + value


def _max(into: Resources, other: Mapping[str, Fraction]) -> None:
    for name, value in other.items():
        if value > into.get(name, Fraction(0)):
            into[name] = value


def pod_requests(pod: Obj) -> Resources:
    """What the pod asks of a node, as upstream's PodRequests: the containers' sum, at least
    each init container's need (sidecars, restartPolicy Always, run alongside), plus the
    pod overhead."""
    spec = pod.get("spec") or {}
    total: Resources = {}
    for c in spec.get("containers") or ():
        _add(total, _container_requests(c))
    sidecars: Resources = {}
    init_peak: Resources = {}
    for c in spec.get("initContainers") or ():
        need = _container_requests(c)
        if c.get("restartPolicy") == "Always":
            _add(sidecars, need)
            need = dict(sidecars)
        else:
            _add(need, sidecars)
        _max(init_peak, need)
    _add(total, sidecars)
    _max(total, init_peak)
    _add(total, {k: _quantity(v) for k, v in (spec.get("overhead") or {}).items()})
    return total


def allocatable(node: Obj) -> Resources:
    """The node's `status.allocatable` (capacity when it has none), as quantities."""
    status = node.get("status") or {}
    raw = status.get("allocatable") or status.get("capacity") or {}
    return {k: _quantity(v) for k, v in raw.items()}


def _node_unschedulable(pod: Obj, node: Obj) -> Rejection | None:
    if not (node.get("spec") or {}).get("unschedulable"):
        return None
    if taints.tolerated((pod.get("spec") or {}).get("tolerations") or (), UNSCHEDULABLE_TAINT):
        return None
    return Rejection(plugin="NodeUnschedulable", reasons=(NODE_UNSCHEDULABLE,))


def _node_name(pod: Obj, node: Obj) -> Rejection | None:
    wanted = (pod.get("spec") or {}).get("nodeName")
    if wanted and wanted != node["metadata"]["name"]:
        return Rejection(plugin="NodeName", reasons=(NODE_NAME_MISMATCH,))
    return None


def _taint_toleration(pod: Obj, node: Obj) -> Rejection | None:
    found = taints.untolerated((node.get("spec") or {}).get("taints") or (),
                               (pod.get("spec") or {}).get("tolerations") or ())
    if found is None:
        return None
    return Rejection(plugin="TaintToleration", reasons=(
        f"node(s) had untolerated taint {{{found.get('key', '')}: {found.get('value', '')}}}",))


def _node_affinity(pod: Obj, node: Obj) -> Rejection | None:
    spec = pod.get("spec") or {}
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if nodeselector.labels_match(spec.get("nodeSelector"), node) and (
            required is None or nodeselector.selector_matches(required, node)):
        return None
    return Rejection(plugin="NodeAffinity", reasons=(AFFINITY_MISMATCH,))


def fits(requests: Mapping[str, Fraction], free: Mapping[str, Fraction], pods_free: int
         ) -> tuple[str, ...]:
    """NodeResourcesFit's reasons (empty when the pod fits): `Too many pods`, then
    `Insufficient <resource>` in request order. Zero requests always fit."""
    reasons: list[str] = []
    if pods_free < 1:
        reasons.append(TOO_MANY_PODS)
    for name, value in requests.items():
        if value > 0 and value > free.get(name, Fraction(0)):
            reasons.append(f"Insufficient {name}")
    return tuple(reasons)


def run_filters(pod: Obj, node: Obj, *, requests: Mapping[str, Fraction],
                used: Mapping[str, Fraction], pod_count: int,
                capacity: Mapping[str, Fraction] | None = None) -> Rejection | None:
    """Every non-DRA filter in upstream's order; the first rejection, or None.

    `used` is what the pods already on the node request, `pod_count` how many there are;
    `capacity` the node's `allocatable(node)` when the caller keeps it parsed.
    """
    rejection = placement_rejection(pod, node)
    if rejection is not None:
        return rejection
    return resources_rejection(requests, allocatable(node) if capacity is None else capacity,
                               used, pod_count)


PLACEMENT_FIELDS = ("nodeName", "nodeSelector", "affinity", "tolerations")
"""The pod spec fields the placement filters read (what their verdict depends on)."""


def placement_rejection(pod: Obj, node: Obj) -> Rejection | None:
    """NodeUnschedulable, NodeName, TaintToleration and NodeAffinity: they depend only on
    the node and the pod's PLACEMENT_FIELDS."""
    for check in (_node_unschedulable, _node_name, _taint_toleration, _node_affinity):
        rejection = check(pod, node)
        if rejection is not None:
            return rejection
    return None


def resources_rejection(requests: Mapping[str, Fraction], cap: Mapping[str, Fraction],
                        used: Mapping[str, Fraction], pod_count: int) -> Rejection | None:
    """NodeResourcesFit against the node's parsed allocatable `cap`."""
    if not cap:
        # A node that reports no capacity at all (created with kubectl, no kubelet has
        # written its status): fakeapi treats it as unconstrained, so such nodes are
        # ordinary schedulable nodes (upstream would see 0 allocatable pods).
        return None
    free = {name: cap.get(name, Fraction(0)) - used.get(name, Fraction(0))
            for name in requests}
    pods_cap = cap.get(PODS)
    pods_free = int(pods_cap) - pod_count if pods_cap is not None else 1_000_000
    reasons = fits(requests, free, pods_free)
    if reasons:
        return Rejection(plugin="NodeResourcesFit", reasons=reasons, resolvable=True)
    return None


def histogram(rejections: Iterable[Rejection]) -> list[str]:
    """`N reason` for each reason over the nodes, sorted as upstream's FitError sorts them."""
    counts: dict[str, int] = {}
    for r in rejections:
        for reason in r.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return sorted(f"{n} {reason}" for reason, n in counts.items())
