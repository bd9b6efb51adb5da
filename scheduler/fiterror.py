"""The messages of a pod that can't be scheduled, in upstream's FitError shape.

`0/N nodes are available: <prefilter message | sorted reason histogram>. <post-filter
reasons>` where the last part is the DynamicResources PostFilter's reason (pods with
claims) then DefaultPreemption's `preemption: 0/N nodes are available: ...`. fakeapi has
no lower-priority victims to preempt, so preemption reports, per node, that it can't help
(unresolvable reasons) or found no victims (resource shortages).
"""

from __future__ import annotations

from collections.abc import Iterable

from scheduler.filters import Rejection, histogram

NO_NODES = "no nodes available to schedule pods"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS = "No preemption victims found for incoming pod"


def _preemption(total: int, rejections: Iterable[Rejection]) -> str:
    counts: dict[str, int] = {}
    for r in rejections:
        reason = NO_VICTIMS if r.resolvable else NOT_HELPFUL
        counts[reason] = counts.get(reason, 0) + 1
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    return f"preemption: 0/{total} nodes are available: {', '.join(parts)}."


def fit_error(total: int, *, prefilter: str = "", rejections: Iterable[Rejection] = (),
              post_filter: str = "") -> str:
    """The message of a pod no node can take. With `prefilter`, every node counts as
    rejected by it (unresolvable); else `rejections` holds one entry per node."""
    if total == 0:
        return NO_NODES
    nodes = list(rejections)
    if prefilter:
        head = f"0/{total} nodes are available: {prefilter}."
        nodes = [Rejection(plugin="PreFilter", reasons=(prefilter,))] * total
    else:
        head = f"0/{total} nodes are available: {', '.join(histogram(nodes))}."
    tail = _preemption(total, nodes)
    if post_filter:
        tail = f"{post_filter}, {tail}"
    return f"{head} {tail}"
