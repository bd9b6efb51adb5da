"""Why is my pod pending? fakeapi's answer beyond upstream: for each node, the first filter
that rejected it and, for DRA, per claim request how many devices each cause ruled out.

The report is computed on demand from the scheduler's caches, read-only: it reserves
nothing and draws no randomness, so asking never changes what the scheduler does.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
KIND = "PodSchedulingExplanation"
API_VERSION = "fakeapi.dev/v1alpha1"
NO_CANDIDATES = "no candidate devices"


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
    return "\n".join(lines) + "\n"
