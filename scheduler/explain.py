"""Why is my pod pending? fakeapi's answer beyond upstream: for each node, the first filter
that rejected it and, for DRA, per claim request how many devices each cause ruled out.

`explain` computes the report on demand from the scheduler's cache and its cycle's filters,
read-only: it reserves nothing, remembers no outcome and draws no randomness, so asking
never changes what the scheduler does. `report`, `node_entry` and `text` shape and print it.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from scheduler.allocator import AllocationError, Diagnostics
from scheduler.claims import ClaimsNotReady, PodClaim, claim_key, pod_claims, requested_classes
from scheduler.cycle import CANNOT_ALLOCATE, DRA_PLUGIN, SchedulingCycle
from scheduler.filters import Rejection, pod_requests, run_filters

Obj = dict[str, Any]
KIND = "PodSchedulingExplanation"
API_VERSION = "fakeapi.dev/v1alpha1"
NO_CANDIDATES = "no candidate devices"
FUNNEL = {"matchedByClass": "match the class", "matchedBySelectors": "match its selectors too",
          "free": "of them free", "needed": "needed"}
"""A request's devices narrowed down, and how `text` words each step."""
SHARE_ID = "00000000-0000-4000-8000-000000000000"
"""The share id an explanation's trial allocations use (they are thrown away)."""


def explain(pod: Obj, *, ours: bool, waiting_node: str | None,
            get_claim: Callable[[str, str], Obj | None], group: Obj | None,
            cycle: SchedulingCycle) -> Obj:
    """Every node's verdict for the pod, as the scheduler would reach it now: `ours` when
    the pod is this scheduler's, `waiting_node` the node it waits on for binding conditions
    (None when it doesn't); `get_claim` and `group` find its claims. Read-only: nothing is
    reserved, no randomness is drawn."""
    meta = pod["metadata"]
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    current: Obj = next((c for c in (pod.get("status") or {}).get("conditions") or ()
                         if c.get("type") == "PodScheduled"), {})
    common = {"namespace": meta.get("namespace", ""), "name": meta["name"],
              "message": current.get("message", "")}
    if node_name:
        return report(**common, node_name=node_name, state="scheduled")
    if not ours:
        return report(**common, state="not for this scheduler")
    if waiting_node is not None:
        return report(**common, node_name=waiting_node, state="waiting for binding conditions")
    try:
        claims = pod_claims(pod, get_claim=get_claim, group=group)
        to_allocate = cycle.prefilter(claims)
    except (ClaimsNotReady, AllocationError) as e:
        return report(**common, state="pending", prefilter=str(e))
    requests = pod_requests(pod)
    nodes = [_node_verdict(cycle, pod, name, claims, to_allocate, requests)
             for name in cycle.cache.node_names]
    return report(**common, state="pending", nodes=nodes)


def _node_verdict(cycle: SchedulingCycle, pod: Obj, name: str, claims: list[PodClaim],
                  to_allocate: list[PodClaim], requests: dict[str, Fraction]) -> Obj:
    """One node's entry: the first filter that rejects the pod there, with the DRA
    allocator's diagnostics when DynamicResources does."""
    node = cycle.nodes.get(name) or {"metadata": {"name": name}}
    usage = cycle.cache.usage
    rejection = run_filters(pod, node, requests=requests, used=usage.used(name),
                            pod_count=usage.pods(name))
    if rejection is not None:
        return node_entry(name, plugin=rejection.plugin, reasons=rejection.reasons)
    if not claims:
        return node_entry(name)
    diagnostics = Diagnostics()
    try:
        rejection, _ = cycle.filter_dra(pod, node, claims, to_allocate, diagnostics,
                                        share_id=lambda: SHARE_ID)
    except AllocationError as e:
        rejection = Rejection(plugin=DRA_PLUGIN, reasons=(f"error: {e}",))
    if rejection is None:
        return node_entry(name)
    devices = [{"claim": r.claim, "request": r.request, "ruledOut": r.counts(), **r.funnel()}
               for r in diagnostics.requests()]
    if not devices and rejection.reasons == (CANNOT_ALLOCATE,):
        devices = [{"claim": claim_key(c.claim), "request": r, "ruledOut": {}}
                   for c in to_allocate for r, _ in requested_classes(c.claim)]
    return node_entry(name, plugin=rejection.plugin, reasons=rejection.reasons,
                      devices=devices)


def report(*, namespace: str, name: str, node_name: str = "", state: str, message: str = "",
           prefilter: str = "", nodes: list[Obj] | None = None) -> Obj:
    """The explanation object (JSON at `/explain/namespaces/NS/pods/NAME`)."""
    return {"kind": KIND, "apiVersion": API_VERSION,
            "pod": {"namespace": namespace, "name": name}, "state": state,
            "nodeName": node_name or None, "message": message or None,
            "preFilter": prefilter or None, "nodes": nodes or []}


def node_entry(node: str, *, plugin: str = "", reasons: tuple[str, ...] = (),
               devices: list[Obj] | None = None) -> Obj:
    """One node's verdict: feasible, or the plugin and reasons that rejected it, with the
    per-request device counts when DRA did."""
    entry: Obj = {"node": node, "feasible": not plugin}
    if plugin:
        entry["plugin"] = plugin
        entry["reasons"] = list(reasons)
    if devices:
        entry["devices"] = devices
    return entry


def text(explanation: Obj) -> str:
    """The report as `fakeapi explain pod` prints it."""
    pod = explanation["pod"]
    lines = [f"pod {pod['namespace']}/{pod['name']}: {explanation['state']}"
             + (f" on {explanation['nodeName']}" if explanation.get("nodeName") else "")]
    if explanation.get("message"):
        lines.append(f"  last message: {explanation['message']}")
    if explanation.get("preFilter"):
        lines.append(f"  before any node: {explanation['preFilter']}")
    for n in explanation.get("nodes") or ():
        if n["feasible"]:
            lines.append(f"  {n['node']}: fits")
            continue
        lines.append(f"  {n['node']}: {n['plugin']}: {', '.join(n['reasons'])}")
        for d in n.get("devices") or ():
            causes = d["ruledOut"]
            counts = (", ".join(f"{count} {cause}" for cause, count in causes.items())
                      if causes else NO_CANDIDATES)
            lines.append(f"    claim {d['claim']}, request {d['request']}: {counts}")
            if d.get("needed") is not None:
                lines.append("      " + ", ".join(f"{d[k]} {words}"
                                                  for k, words in FUNNEL.items()))
    return "\n".join(lines) + "\n"
