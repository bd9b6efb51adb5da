"""Validation of scheduling.k8s.io/v1beta1 PodGroup and Workload (the DRA-relevant basics).

PodGroup: one scheduling policy (`basic` or `gang` with minCount >= 1), unique claim names
that each name exactly one of a ResourceClaim or a template; on update everything in the spec
is immutable except `schedulingPolicy.gang.minCount` (1.37 field docs: "This field is
immutable"), reported like upstream's declarative `+k8s:immutable` (`Forbidden: field is
immutable`). Status: claim statuses must name an entry of `spec.resourceClaims`.
"""

from __future__ import annotations

from typing import Any

from fakeapi.machinery.errors import Cause
from fakeapi.machinery.field import (
    Raw,
    child,
    forbidden,
    immutable_forbidden,
    index,
    invalid,
    required,
)
from fakeapi.registry.validation import common
from fakeapi.registry.validation.common import Obj, dns_label, dns_subdomain, name_key, validate_set

POD_GROUP_CLAIMS_MAX = 4  # same as the Pod's resourceClaims limit
WORKLOAD_TEMPLATES_MAX = 8  # same as upstream WorkloadMaxPodGroupTemplates
POD_GROUP_IMMUTABLE = ("disruptionMode", "parentCompositePodGroupName", "preemptionPolicy",
                       "priority", "priorityClassName", "resourceClaims",
                       "schedulingConstraints", "workloadRef")


def _policy(policy: Any, path: str) -> list[Cause]:
    """Exactly one of `basic` / `gang`; gang needs minCount >= 1."""
    if policy is None:
        return [required(path)]
    chosen = [k for k in ("basic", "gang") if (policy or {}).get(k) is not None]
    if len(chosen) != 1:
        return [invalid(path, Raw("{" + ", ".join(chosen) + "}"),
                        "must specify exactly one of: `basic`, `gang`")]
    if chosen == ["gang"]:
        min_count = (policy["gang"] or {}).get("minCount")
        if min_count is None:
            return [required(child(path, "gang", "minCount"))]
        if min_count < 1:
            return [invalid(child(path, "gang", "minCount"), min_count,
                            "must be greater than or equal to 1")]
    return []


def _claim(claim: Any, path: str) -> list[Cause]:
    """Same as the Pod's claim rules: a DNS label name and exactly one source."""
    claim = claim or {}
    causes = dns_label(claim.get("name") or "", child(path, "name")) if claim.get("name") else [
        required(child(path, "name"))]
    sources = [k for k in ("resourceClaimName", "resourceClaimTemplateName")
               if claim.get(k) is not None]
    if not sources:
        causes.append(invalid(path, claim, "must specify one of: `resourceClaimName`, "
                              "`resourceClaimTemplateName`"))
    elif len(sources) > 1:
        causes.append(invalid(path, claim, "at most one of `resourceClaimName` or "
                              "`resourceClaimTemplateName` may be specified"))
    for k in sources:
        causes += dns_subdomain(claim[k], child(path, k))
    return causes


def validate_pod_group_spec(spec: Any) -> list[Cause]:
    """A new PodGroup's spec."""
    spec = spec or {}
    path = "spec"
    causes = _policy(spec.get("schedulingPolicy"), child(path, "schedulingPolicy"))
    causes += validate_set(spec.get("resourceClaims"), POD_GROUP_CLAIMS_MAX, _claim, name_key,
                           child(path, "resourceClaims"))
    return causes


def validate_pod_group_update(spec: Any, old_spec: Any) -> list[Cause]:
    """Only `schedulingPolicy.gang.minCount` may change."""
    spec, old_spec = spec or {}, old_spec or {}
    causes: list[Cause] = []
    for f in POD_GROUP_IMMUTABLE:
        if spec.get(f) != old_spec.get(f):
            causes.append(immutable_forbidden(child("spec", f)))
    policy = spec.get("schedulingPolicy") or {}
    old_policy = old_spec.get("schedulingPolicy") or {}
    ppath = "spec.schedulingPolicy"
    if policy.get("basic") != old_policy.get("basic"):
        causes.append(immutable_forbidden(child(ppath, "basic")))
    if (policy.get("gang") is None) != (old_policy.get("gang") is None):
        causes.append(immutable_forbidden(child(ppath, "gang")))
    return causes + validate_pod_group_spec(spec)


def validate_pod_group_status(obj: Obj) -> list[Cause]:
    """Same as upstream ValidatePodGroupStatusUpdate."""
    status = obj.get("status") or {}
    causes = common.conditions(status.get("conditions"), "status.conditions")
    claims = {(c or {}).get("name") for c in (obj.get("spec") or {}).get("resourceClaims") or []}
    for i, st in enumerate(status.get("resourceClaimStatuses") or []):
        st = st or {}
        spath = index("status.resourceClaimStatuses", i)
        if st.get("name") not in claims:
            causes.append(invalid(child(spath, "name"), st.get("name", ""),
                                  "must match the name of an entry in `spec.resourceClaims`"))
        if st.get("resourceClaimName"):
            causes += dns_subdomain(st["resourceClaimName"], child(spath, "resourceClaimName"))
    return causes


def validate_workload_spec(spec: Any) -> list[Cause]:
    """Exactly one template list, at most 8 templates with unique DNS-label names."""
    spec = spec or {}
    path = "spec"
    templates = spec.get("podGroupTemplates")
    composite = spec.get("compositePodGroupTemplates")
    if templates is None and composite is None:
        return [required(path, "exactly one of `podGroupTemplates`, "
                         "`compositePodGroupTemplates` is required")]
    if templates is not None and composite is not None:
        return [invalid(path, Raw("{podGroupTemplates, compositePodGroupTemplates}"),
                        "must specify exactly one of: `podGroupTemplates`, "
                        "`compositePodGroupTemplates`")]
    tpath = child(path, "podGroupTemplates" if templates is not None else
                  "compositePodGroupTemplates")

    def template(t: Any, p: str) -> list[Cause]:
        t = t or {}
        causes = dns_label(t["name"], child(p, "name")) if t.get("name") else [
            required(child(p, "name"))]
        if templates is not None:
            causes += _policy(t.get("schedulingPolicy"), child(p, "schedulingPolicy"))
        return causes

    return validate_set(templates if templates is not None else composite,
                        WORKLOAD_TEMPLATES_MAX, template, name_key, tpath)


def validate_workload_update(spec: Any, old_spec: Any) -> list[Cause]:
    """Templates can't be added or removed; names and controllerRef never change."""
    spec, old_spec = spec or {}, old_spec or {}
    causes: list[Cause] = []
    if old_spec.get("controllerRef") is not None and \
            spec.get("controllerRef") != old_spec.get("controllerRef"):
        causes.append(immutable_forbidden("spec.controllerRef"))
    if spec.get("compositePodGroupTemplates") != old_spec.get("compositePodGroupTemplates"):
        causes.append(immutable_forbidden("spec.compositePodGroupTemplates"))
    new_t = spec.get("podGroupTemplates") or []
    old_t = old_spec.get("podGroupTemplates") or []
    if len(new_t) != len(old_t):
        causes.append(forbidden("spec.podGroupTemplates", "number of items should not be "
                                "modified"))
    for i, (a, b) in enumerate(zip(new_t, old_t, strict=False)):
        if (a or {}).get("name") != (b or {}).get("name"):
            causes.append(immutable_forbidden(child(index("spec.podGroupTemplates", i),
                                                    "name")))
    return causes + validate_workload_spec(spec)
