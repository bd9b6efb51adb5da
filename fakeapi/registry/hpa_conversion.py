"""autoscaling/v1 HorizontalPodAutoscalers as upstream converts them to and from the stored
autoscaling/v2 (pkg/apis/autoscaling/v1/conversion.go): v1's one CPU utilization target is
v2's cpu Resource metric; what v1 has no field for (other metrics, behavior, conditions,
other current metrics) travels in upstream's `autoscaling.alpha.kubernetes.io/*` annotations
as JSON, and comes back out of them on the way in.
"""

from __future__ import annotations

import json
from typing import Any

Obj = dict[str, Any]
METRICS = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"
_ANNOTATIONS = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)


def _is_cpu(metric: Any, key: str) -> bool:
    """A cpu Resource metric whose target (or current value) is a utilization."""
    resource = metric.get("resource") or {} if isinstance(metric, dict) else {}
    inner = resource.get(key) or {}
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and (inner.get("type") == "Utilization" if key == "target"
                 else inner.get("averageUtilization") is not None))


def to_v1(obj: Obj) -> Obj:
    """A stored v2 object as autoscaling/v1 (a new dict; the stored one is unchanged)."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    spec = dict(out.get("spec") or {})
    metrics = spec.pop("metrics", None) or []
    other = [m for m in metrics if not _is_cpu(m, "target")]
    for m in metrics:
        if _is_cpu(m, "target"):
            spec["targetCPUUtilizationPercentage"] = m["resource"]["target"][
                "averageUtilization"]
    behavior = spec.pop("behavior", None)
    _annotate(annotations, METRICS, other)
    _annotate(annotations, BEHAVIOR, behavior)
    out["spec"] = spec
    if isinstance(out.get("status"), dict):
        status = dict(out["status"])
        current = status.pop("currentMetrics", None) or []
        for m in current:
            if _is_cpu(m, "current"):
                status["currentCPUUtilizationPercentage"] = m["resource"]["current"][
                    "averageUtilization"]
        _annotate(annotations, CURRENT_METRICS,
                  [m for m in current if not _is_cpu(m, "current")])
        _annotate(annotations, CONDITIONS, status.pop("conditions", None))
        out["status"] = status
    if annotations:
        meta["annotations"] = annotations
    out["metadata"] = meta
    return out


def to_v2(obj: Obj) -> Obj:
    """A v1 body as the stored v2 holds it (a new dict; the annotations are read back)."""
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    spec = dict(out.get("spec") or {})
    target = spec.pop("targetCPUUtilizationPercentage", None)
    metrics = _read(annotations, METRICS) or []
    if target is not None:
        metrics = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": target}}}, *metrics]
    if metrics:
        spec["metrics"] = metrics
    behavior = _read(annotations, BEHAVIOR)
    if behavior:
        spec["behavior"] = behavior
    out["spec"] = spec
    status_extra = {"currentMetrics": _read(annotations, CURRENT_METRICS),
                    "conditions": _read(annotations, CONDITIONS)}
    if isinstance(out.get("status"), dict) or any(status_extra.values()):
        status = dict(out.get("status") or {})
        current = status.pop("currentCPUUtilizationPercentage", None)
        currents = status_extra["currentMetrics"] or []
        if current is not None:
            currents = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": current}}}, *currents]
        if currents:
            status["currentMetrics"] = currents
        if status_extra["conditions"]:
            status["conditions"] = status_extra["conditions"]
        out["status"] = status
    for key in _ANNOTATIONS:
        annotations.pop(key, None)
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out["metadata"] = meta
    return out


def _annotate(annotations: Obj, key: str, value: Any) -> None:
    if value:
        annotations[key] = json.dumps(value, separators=(",", ":"))


def _read(annotations: Obj, key: str) -> Any:
    try:
        return json.loads(annotations[key]) if key in annotations else None
    except ValueError:
        return None
