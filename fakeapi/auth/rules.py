"""RBAC's rule evaluator: what a request asks (Attributes), the answer (Decision), one
PolicyRule compiled for matching, and the escalation check (which rules a role would grant
that its creator does not hold), as kube-apiserver's RBAC authorizer and rbac/validation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from fakeapi.auth.authn import UserInfo

Obj = dict[str, Any]
ALL = "*"


# --- attributes and decisions -----------------------------------------------------------


class Attributes(NamedTuple):
    """What a request asks to do (upstream's authorizer.Attributes); a tuple because one is
    made for every request."""

    user: UserInfo
    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


@dataclasses.dataclass(frozen=True)
class Decision:
    """Allowed or not, with the authorizer's reason (empty for a plain "no")."""

    allowed: bool
    reason: str = ""


ALLOWED = Decision(True)


# --- rules ------------------------------------------------------------------------------


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


@dataclasses.dataclass(frozen=True)
class PolicyRule:
    """One PolicyRule, compiled for matching."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, rule: Any) -> PolicyRule:
        """Compile a PolicyRule dict (tolerating missing or malformed fields)."""
        if not isinstance(rule, dict):
            return cls()
        return cls(verbs=_strings(rule.get("verbs")), api_groups=_strings(rule.get("apiGroups")),
                   resources=_strings(rule.get("resources")),
                   resource_names=_strings(rule.get("resourceNames")),
                   non_resource_urls=_strings(rule.get("nonResourceURLs")))

    def to_wire(self) -> Obj:
        """The PolicyRule dict (empty lists left out, as upstream serializes them)."""
        out: Obj = {"verbs": list(self.verbs)}
        for key, value in (("apiGroups", self.api_groups), ("resources", self.resources),
                           ("resourceNames", self.resource_names),
                           ("nonResourceURLs", self.non_resource_urls)):
            if value:
                out[key] = list(value)
        return out

    def allows(self, a: Attributes) -> bool:
        """Whether this rule allows the request."""
        if not verb_matches(self, a.verb):
            return False
        if not a.resource_request:
            return non_resource_url_matches(self, a.path)
        combined = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
        return (api_group_matches(self, a.api_group)
                and resource_matches(self, combined, a.subresource)
                and resource_name_matches(self, a.name))


def verb_matches(rule: PolicyRule, verb: str) -> bool:
    """`*` or the exact verb."""
    return ALL in rule.verbs or verb in rule.verbs


def api_group_matches(rule: PolicyRule, group: str) -> bool:
    """`*` or the exact group (`""` is the core group)."""
    return ALL in rule.api_groups or group in rule.api_groups


def resource_matches(rule: PolicyRule, combined: str, subresource: str) -> bool:
    """`*`, the exact `res` or `res/sub`, or `*/sub` for any resource's subresource `sub`."""
    for r in rule.resources:
        if r == ALL or r == combined:
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def resource_name_matches(rule: PolicyRule, name: str) -> bool:
    """No resourceNames allows every name; otherwise the name must be listed."""
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: PolicyRule, path: str) -> bool:
    """`*`, the exact path, or a prefix ending in `*`."""
    for url in rule.non_resource_urls:
        if url == ALL or url == path:
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


# --- escalation checks ------------------------------------------------------------------


def _covers_resource(owner: PolicyRule, verb: str, group: str, resource: str, name: str) -> bool:
    if not (ALL in owner.verbs or verb in owner.verbs):
        return False
    if not (ALL in owner.api_groups or group in owner.api_groups):
        return False
    base, _, sub = resource.partition("/")
    if not any(r == ALL or r == resource or (sub and r in (f"*/{sub}", f"{base}/*"))
               for r in owner.resources):
        return False
    if owner.resource_names:
        return bool(name) and name in owner.resource_names
    return True


def _covers_url(owner: PolicyRule, verb: str, url: str) -> bool:
    if not (ALL in owner.verbs or verb in owner.verbs):
        return False
    return any(u == ALL or u == url or (u.endswith("*") and url.startswith(u[:-1]))
               for u in owner.non_resource_urls)


def uncovered(owner: Sequence[PolicyRule], servant: Iterable[PolicyRule]) -> list[PolicyRule]:
    """The parts of `servant` that no rule of `owner` grants (upstream's Covers), merged per
    group/resource/name so the error lists each missing permission once."""
    missing: dict[tuple[str, str, str, str], list[str]] = {}
    for rule in servant:
        for verb in rule.verbs:
            for url in rule.non_resource_urls:
                if not any(_covers_url(o, verb, url) for o in owner):
                    missing.setdefault(("url", url, "", ""), []).append(verb)
            for group in rule.api_groups:
                for resource in rule.resources:
                    for name in rule.resource_names or ("",):
                        if not any(_covers_resource(o, verb, group, resource, name)
                                   for o in owner):
                            missing.setdefault(("res", group, resource, name), []).append(verb)
    out = []
    for (kind, a, b, name), verbs in missing.items():
        verbs = list(dict.fromkeys(verbs))
        if kind == "url":
            out.append(PolicyRule(verbs=tuple(verbs), non_resource_urls=(a,)))
        else:
            out.append(PolicyRule(verbs=tuple(verbs), api_groups=(a,), resources=(b,),
                            resource_names=(name,) if name else ()))
    return out


def compact_string(rule: PolicyRule) -> str:
    """`{APIGroups:["g"], Resources:["r"], Verbs:["get"]}` as upstream prints missing rules."""
    def q(values: Sequence[str]) -> str:
        return "[" + " ".join(f'"{v}"' for v in values) + "]"

    parts = []
    for label, values in (("APIGroups", rule.api_groups), ("Resources", rule.resources),
                          ("NonResourceURLs", rule.non_resource_urls),
                          ("ResourceNames", rule.resource_names), ("Verbs", rule.verbs)):
        if values:
            parts.append(f"{label}:{q(values)}")
    return "{" + ", ".join(parts) + "}"
