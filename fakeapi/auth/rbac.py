"""RBAC: the rule evaluator, the policy index over stored roles and bindings, and the
bootstrap roles a fresh cluster starts with.

Semantics follow kube-apiserver's RBAC authorizer: a request is allowed when any rule of any
role bound to the user allows it; ClusterRoleBindings apply everywhere, RoleBindings only in
their namespace (to a Role there or to a ClusterRole); rules match verbs, API groups,
resources (`res/sub` for subresources, `*` and `*/sub` wildcards), resourceNames and
non-resource URLs (`*` or a trailing `*` prefix). ClusterRoles with an aggregationRule take
the rules of every ClusterRole their selectors match (resolved when the policy is indexed, so
a new `aggregate-to-view` role counts at once). Nothing is ever denied explicitly: no matching
rule means no.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from fakeapi.auth.authn import MASTERS, UserInfo, service_account_username
from fakeapi.machinery.selectors import label_selector_matches

Obj = dict[str, Any]

GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLES = f"clusterroles.{GROUP}"
ROLES = f"roles.{GROUP}"
CLUSTER_ROLE_BINDINGS = f"clusterrolebindings.{GROUP}"
ROLE_BINDINGS = f"rolebindings.{GROUP}"
RESOURCES = (CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS)
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
class Rule:
    """One PolicyRule, compiled for matching."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, rule: Any) -> Rule:
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


def verb_matches(rule: Rule, verb: str) -> bool:
    """`*` or the exact verb."""
    return ALL in rule.verbs or verb in rule.verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    """`*` or the exact group (`""` is the core group)."""
    return ALL in rule.api_groups or group in rule.api_groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """`*`, the exact `res` or `res/sub`, or `*/sub` for any resource's subresource `sub`."""
    for r in rule.resources:
        if r == ALL or r == combined:
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def resource_name_matches(rule: Rule, name: str) -> bool:
    """No resourceNames allows every name; otherwise the name must be listed."""
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    """`*`, the exact path, or a prefix ending in `*`."""
    for url in rule.non_resource_urls:
        if url == ALL or url == path:
            return True
        if url.endswith("*") and path.startswith(url[:-1]):
            return True
    return False


# --- the policy index -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Subject:
    """One binding subject."""

    kind: str
    name: str
    namespace: str = ""

    def applies_to(self, user: UserInfo, binding_namespace: str) -> bool:
        """Same as upstream: users by name, groups by membership, service accounts by their
        username (the namespace defaults to the binding's)."""
        if self.kind == "User":
            return user.name == self.name
        if self.kind == "Group":
            return self.name in user.groups
        if self.kind == "ServiceAccount":
            ns = self.namespace or binding_namespace
            return bool(ns) and user.name == service_account_username(ns, self.name)
        return False

    def describe(self, binding_namespace: str) -> str:
        """`User "alice"`, `ServiceAccount "name/namespace"`, as upstream's reasons print it."""
        if self.kind == "ServiceAccount":
            return f'ServiceAccount "{self.name}/{self.namespace or binding_namespace}"'
        return f'{self.kind} "{self.name}"'


@dataclasses.dataclass(frozen=True)
class Binding:
    """A RoleBinding (namespace set) or ClusterRoleBinding (namespace empty)."""

    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_wire(cls, obj: Obj) -> Binding:
        """Index a stored binding (tolerating malformed subjects)."""
        meta = obj.get("metadata") or {}
        ref = obj.get("roleRef") or {}
        subjects = tuple(
            Subject(str(s.get("kind", "")), str(s.get("name", "")), str(s.get("namespace", "")))
            for s in obj.get("subjects") or [] if isinstance(s, dict))
        return cls(name=meta.get("name", ""), namespace=meta.get("namespace", ""),
                   role_kind=str(ref.get("kind", "")), role_name=str(ref.get("name", "")),
                   subjects=subjects)

    def describe(self, subject: Subject) -> str:
        """`ClusterRoleBinding "x" of ClusterRole "y" to User "z"` (upstream's reason text)."""
        if self.namespace:
            head = f'RoleBinding "{self.name}/{self.namespace}"'
        else:
            head = f'ClusterRoleBinding "{self.name}"'
        return f'{head} of {self.role_kind} "{self.role_name}" to ' \
               f"{subject.describe(self.namespace)}"


@dataclasses.dataclass
class RulesResult:
    """Every rule that applies to a user in a namespace, and what could not be resolved."""

    rules: list[Rule]
    errors: list[str]


def not_found_message(kind: str, name: str) -> str:
    """How upstream's RBAC reports a missing role: `clusterrole.rbac... "x" not found`."""
    return f'{kind.lower()}.{GROUP} "{name}" not found'


class _Scope(NamedTuple):
    """The bindings that apply to one user in one namespace, and whether any of their
    rules is limited to resourceNames (then a decision depends on the object name)."""

    entries: tuple[tuple[Binding, Subject, tuple[Rule, ...] | None], ...]
    named: bool

    @classmethod
    def of(cls, entries: Iterable[tuple[Binding, Subject, tuple[Rule, ...] | None]]
           ) -> _Scope:
        """Index the applicable bindings."""
        found = tuple(entries)
        return cls(found, any(r.resource_names for _, _, rules in found for r in rules or ()))


class Policy:
    """An immutable index of roles and bindings, with aggregation resolved.

    It remembers its decisions: a change of any role or binding builds a new Policy.
    """

    MAX_DECISIONS = 65536

    def __init__(self, *, cluster_roles: Iterable[Obj] = (), roles: Iterable[Obj] = (),
                 cluster_role_bindings: Iterable[Obj] = (),
                 role_bindings: Iterable[Obj] = ()) -> None:
        self.cluster_roles = _resolve_aggregation(list(cluster_roles))
        self.roles: dict[tuple[str, str], tuple[Rule, ...]] = {}
        for obj in roles:
            meta = obj.get("metadata") or {}
            self.roles[(meta.get("namespace", ""), meta.get("name", ""))] = tuple(
                Rule.from_wire(r) for r in obj.get("rules") or [])
        self.cluster_bindings = sorted((Binding.from_wire(o) for o in cluster_role_bindings),
                                       key=lambda b: b.name)
        self.namespace_bindings: dict[str, list[Binding]] = {}
        for obj in role_bindings:
            b = Binding.from_wire(obj)
            self.namespace_bindings.setdefault(b.namespace, []).append(b)
        for bindings in self.namespace_bindings.values():
            bindings.sort(key=lambda b: b.name)
        self._decisions: dict[tuple[Any, ...], Decision] = {}
        self._scopes: dict[tuple[str, tuple[str, ...], str], _Scope] = {}

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[Rule, ...] | None:
        """Rules of a roleRef (a Role resolves in `namespace`); None when it doesn't exist."""
        if kind == "ClusterRole":
            return self.cluster_roles.get(name)
        if kind == "Role" and namespace:
            return self.roles.get((namespace, name))
        return None

    def _applicable(self, user: UserInfo, namespace: str) -> _Scope:
        """(binding, subject, rules) for each binding that applies, cluster-wide ones first;
        remembered per user name, groups and namespace (all a subject matches on)."""
        key = (user.name, user.groups, namespace)
        scope = self._scopes.get(key)
        if scope is None:
            if len(self._scopes) >= self.MAX_DECISIONS:
                self._scopes.clear()
            scope = self._scopes[key] = _Scope.of(self._matching(user, namespace))
        return scope

    def _matching(self, user: UserInfo, namespace: str
                  ) -> Iterator[tuple[Binding, Subject, tuple[Rule, ...] | None]]:
        groups = [self.cluster_bindings]
        if namespace:
            groups.append(self.namespace_bindings.get(namespace, []))
        for bindings in groups:
            for b in bindings:
                subject = next((s for s in b.subjects if s.applies_to(user, b.namespace)), None)
                if subject is None:
                    continue
                yield b, subject, self.role_rules(b.role_kind, b.role_name, b.namespace)

    def authorize(self, a: Attributes) -> Decision:
        """Allowed when a rule of a bound role allows it; the reason names the binding.

        Decisions are remembered by what RBAC reads: the user's name and groups (not uid or
        extra) and the request, with the object name left out when no applicable rule names
        resources (so one decision covers every pod a component writes)."""
        try:
            scope = self._applicable(a.user, a.namespace)
            key = (a.user.name, a.user.groups, a.verb, a.resource_request, a.api_group,
                   a.namespace, a.resource, a.subresource, a.name if scope.named else "",
                   a.path)
            decision = self._decisions.get(key)
        except TypeError:  # unhashable attributes (from a review body): not remembered
            return self._decide(a)
        if decision is None:
            if len(self._decisions) >= self.MAX_DECISIONS:
                self._decisions.clear()
            decision = self._decisions[key] = self._decide(a, scope)
        return decision

    def _decide(self, a: Attributes, scope: _Scope | None = None) -> Decision:
        errors: list[str] = []
        entries = scope.entries if scope is not None else tuple(
            self._matching(a.user, a.namespace))
        for binding, subject, rules in entries:
            if rules is None:
                errors.append(not_found_message(binding.role_kind, binding.role_name))
                continue
            if any(rule.allows(a) for rule in rules):
                return Decision(True, f"RBAC: allowed by {binding.describe(subject)}")
        return Decision(False, "RBAC: " + _aggregate(errors) if errors else "")

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """Every rule that applies to `user` in `namespace` (cluster bindings included)."""
        out = RulesResult([], [])
        for binding, _subject, rules in self._matching(user, namespace):
            if rules is None:
                out.errors.append(not_found_message(binding.role_kind, binding.role_name))
            else:
                out.rules.extend(rules)
        return out


def _aggregate(errors: Sequence[str]) -> str:
    """Go's utilerrors aggregate: one message, or `[a, b]`."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _resolve_aggregation(objects: list[Obj]) -> dict[str, tuple[Rule, ...]]:
    """Rules per ClusterRole name; aggregated roles take the rules of every role they select
    (transitively, each rule once, roles in name order, as the aggregation controller does)."""
    by_name = {(o.get("metadata") or {}).get("name", ""): o for o in objects}
    own = {name: tuple(Rule.from_wire(r) for r in o.get("rules") or [])
           for name, o in by_name.items()}
    labels = {name: (o.get("metadata") or {}).get("labels") or {} for name, o in by_name.items()}
    resolved: dict[str, tuple[Rule, ...]] = {}

    def resolve(name: str, visiting: frozenset[str]) -> tuple[Rule, ...]:
        if name in resolved:
            return resolved[name]
        agg = by_name[name].get("aggregationRule")
        if not isinstance(agg, dict) or name in visiting:
            return own[name]
        selectors = agg.get("clusterRoleSelectors") or []
        rules: list[Rule] = []
        for other in sorted(by_name):
            if other == name or not any(label_selector_matches(s, labels[other])
                                        for s in selectors):
                continue
            for rule in resolve(other, visiting | {name}):
                if rule not in rules:
                    rules.append(rule)
        resolved[name] = tuple(rules)
        return resolved[name]

    for name in by_name:
        resolve(name, frozenset())
    return {name: resolved.get(name, own[name]) for name in by_name}


# --- the authorizer ---------------------------------------------------------------------


class Authorizer:
    """system:masters first (always allowed, like upstream's privileged-group authorizer),
    then RBAC over a policy that is re-indexed only when a role or binding changed."""

    def __init__(self, policy: Callable[[], Policy], *,
                 privileged_groups: tuple[str, ...] = (MASTERS,)) -> None:
        self._policy = policy
        self.privileged_groups = frozenset(privileged_groups)

    @classmethod
    def for_store(cls, store: Any) -> Authorizer:
        """An authorizer reading roles and bindings from a `fakeapi.storage.store.Store`."""
        cache: list[Any] = [None, None]

        def policy() -> Policy:
            version = tuple(store.log.last_change(r) for r in RESOURCES)
            if cache[0] != version:
                objs = {r: [_object(i) for i in store.scan(r)] for r in RESOURCES}
                cache[1] = Policy(cluster_roles=objs[CLUSTER_ROLES], roles=objs[ROLES],
                                  cluster_role_bindings=objs[CLUSTER_ROLE_BINDINGS],
                                  role_bindings=objs[ROLE_BINDINGS])
                cache[0] = version
            return cache[1]

        return cls(policy)

    @property
    def policy(self) -> Policy:
        """The current policy index."""
        return self._policy()

    def privileged(self, user: UserInfo) -> bool:
        """Whether the user is in a group that may do anything."""
        return not self.privileged_groups.isdisjoint(user.groups)

    def authorize(self, a: Attributes) -> Decision:
        """The decision for one request."""
        if self.privileged(a.user):
            return ALLOWED
        return self._policy().authorize(a)

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """The rules RBAC gives a user in a namespace (SelfSubjectRulesReview, escalation
        checks); system:masters has its rules through the cluster-admin binding."""
        return self._policy().rules_for(user, namespace)


def _object(item: Any) -> Obj:
    return item.object if hasattr(item, "object") else item


# --- escalation checks ------------------------------------------------------------------


def _covers_resource(owner: Rule, verb: str, group: str, resource: str, name: str) -> bool:
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


def _covers_url(owner: Rule, verb: str, url: str) -> bool:
    if not (ALL in owner.verbs or verb in owner.verbs):
        return False
    return any(u == ALL or u == url or (u.endswith("*") and url.startswith(u[:-1]))
               for u in owner.non_resource_urls)


def uncovered(owner: Sequence[Rule], servant: Iterable[Rule]) -> list[Rule]:
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
            out.append(Rule(verbs=tuple(verbs), non_resource_urls=(a,)))
        else:
            out.append(Rule(verbs=tuple(verbs), api_groups=(a,), resources=(b,),
                            resource_names=(name,) if name else ()))
    return out


def compact_string(rule: Rule) -> str:
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


# --- bootstrap policy -------------------------------------------------------------------

READ = ("get", "list", "watch")
WRITE = ("create", "update", "patch", "delete", "deletecollection")
READ_WRITE = READ + WRITE
BOOTSTRAP_LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AUTOUPDATE = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-"

_CORE, _RESOURCE, _SCHEDULING = "", "resource.k8s.io", "scheduling.k8s.io"
_COORDINATION, _EVENTS = "coordination.k8s.io", "events.k8s.io"
_EMULATOR_GROUP = "emulator.fakeapi.dev"


def rule(verbs: Iterable[str], groups: Iterable[str] = (), resources: Iterable[str] = (),
         names: Iterable[str] = (), urls: Iterable[str] = ()) -> Obj:
    """A PolicyRule dict."""
    return Rule(verbs=tuple(verbs), api_groups=tuple(groups), resources=tuple(resources),
                resource_names=tuple(names), non_resource_urls=tuple(urls)).to_wire()


def _events() -> list[Obj]:
    return [rule(("create", "patch", "update"), (_CORE, _EVENTS), ("events",))]


_VIEW = [
    rule(READ, (_CORE,), ("pods", "replicationcontrollers", "replicationcontrollers/scale",
                          "serviceaccounts", "services", "services/status", "endpoints",
                          "persistentvolumeclaims", "persistentvolumeclaims/status",
                          "configmaps")),
    rule(READ, (_CORE,), ("limitranges", "resourcequotas", "bindings", "events", "pods/status",
                          "resourcequotas/status", "namespaces/status",
                          "replicationcontrollers/status", "pods/log")),
    rule(READ, (_CORE,), ("namespaces",)),
    rule(READ, ("discovery.k8s.io",), ("endpointslices",)),
    rule(READ, ("apps",), ("controllerrevisions", "statefulsets", "statefulsets/status",
                           "statefulsets/scale", "daemonsets", "daemonsets/status", "deployments",
                           "deployments/status", "deployments/scale", "replicasets",
                           "replicasets/status", "replicasets/scale")),
    rule(READ, ("autoscaling",), ("horizontalpodautoscalers", "horizontalpodautoscalers/status")),
    rule(READ, ("batch",), ("jobs", "cronjobs", "cronjobs/status", "jobs/status")),
    rule(READ, ("policy",), ("poddisruptionbudgets", "poddisruptionbudgets/status")),
    rule(READ, ("networking.k8s.io",), ("networkpolicies", "ingresses", "ingresses/status")),
    # DRA (since 1.33): users read claims, their status, and claim templates.
    rule(READ, (_RESOURCE,), ("resourceclaims", "resourceclaims/status",
                              "resourceclaimtemplates")),
]
_EDIT = [
    rule(READ, (_CORE,), ("pods/attach", "pods/proxy", "pods/exec", "pods/portforward",
                          "secrets", "services/proxy")),
    rule(("impersonate",), (_CORE,), ("serviceaccounts",)),
    rule(WRITE, (_CORE,), ("pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward")),
    rule(("create",), (_CORE,), ("pods/eviction",)),
    rule(WRITE, (_CORE,), ("replicationcontrollers", "replicationcontrollers/scale",
                           "serviceaccounts", "services", "services/proxy",
                           "persistentvolumeclaims", "configmaps", "secrets")),
    rule(("create",), (_CORE,), ("serviceaccounts/token",)),
    rule(WRITE, ("apps",), ("statefulsets", "statefulsets/scale", "daemonsets", "deployments",
                            "deployments/scale", "deployments/rollback", "replicasets",
                            "replicasets/scale")),
    rule(WRITE, ("autoscaling",), ("horizontalpodautoscalers",)),
    rule(WRITE, ("batch",), ("jobs", "cronjobs")),
    rule(WRITE, ("policy",), ("poddisruptionbudgets",)),
    rule(WRITE, ("networking.k8s.io",), ("networkpolicies", "ingresses")),
    rule(WRITE, (_RESOURCE,), ("resourceclaims", "resourceclaimtemplates")),
]
_ADMIN = [
    rule(("create",), ("authorization.k8s.io",), ("localsubjectaccessreviews",)),
    rule(READ_WRITE, (GROUP,), ("roles", "rolebindings")),
]

_SCHEDULER = [
    *_events(),
    rule(("create",), (_COORDINATION,), ("leases",)),
    rule(("get", "update"), (_COORDINATION,), ("leases",), names=("kube-scheduler",)),
    rule(READ, (_CORE,), ("nodes", "namespaces", "services", "replicationcontrollers",
                          "persistentvolumeclaims", "persistentvolumes", "configmaps")),
    rule(("delete", *READ), (_CORE,), ("pods",)),
    rule(("create",), (_CORE,), ("bindings", "pods/binding")),
    rule(("patch", "update"), (_CORE,), ("pods/status",)),
    rule(("create",), ("authentication.k8s.io",), ("tokenreviews",)),
    rule(("create",), ("authorization.k8s.io",), ("subjectaccessreviews",)),
    rule(READ, (_SCHEDULING,), ("priorityclasses", "workloads", "podgroups")),
    rule(("patch", "update"), (_SCHEDULING,), ("podgroups/status",)),
    rule(READ, (_RESOURCE,), ("deviceclasses", "resourceslices", "devicetaintrules")),
    rule(("create", "delete", "patch", "update", *READ), (_RESOURCE,), ("resourceclaims",)),
    rule(("patch", "update"), (_RESOURCE,), ("resourceclaims/status",)),
    # Granular status authorization (1.36+): allocation and reservedFor.
    rule(("patch", "update"), (_RESOURCE,), ("resourceclaims/binding",)),
]

_CONTROLLERS: dict[str, list[Obj]] = {
    "namespace-controller": [
        rule(("get", "list", "watch", "delete"), (_CORE,), ("namespaces",)),
        rule(("update",), (_CORE,), ("namespaces/finalize", "namespaces/status")),
        rule(("get", "list", "delete", "deletecollection"), (ALL,), (ALL,)),
    ],
    "generic-garbage-collector": [
        rule(("get", "list", "watch", "patch", "update", "delete"), (ALL,), (ALL,)),
        *_events(),
    ],
    "node-controller": [
        rule(("delete", "get", "list", "patch", "update", "watch"), (_CORE,), ("nodes",)),
        rule(("patch", "update"), (_CORE,), ("nodes/status", "pods/status")),
        rule(("delete", "list", "watch"), (_CORE,), ("pods",)),
        rule(READ, (_COORDINATION,), ("leases",)),
        *_events(),
    ],
    "taint-eviction-controller": [
        rule(("delete", "get", "list", "watch"), (_CORE,), ("pods",)),
        rule(("patch",), (_CORE,), ("pods/status",)),
        rule(READ, (_CORE,), ("nodes",)),
        *_events(),
    ],
    "resource-claim-controller": [
        rule(READ, (_CORE,), ("pods",)),
        rule(("update",), (_CORE,), ("pods/finalizers",)),
        rule(("patch", "update"), (_CORE,), ("pods/status",)),
        rule(("create", "delete", *READ), (_RESOURCE,), ("resourceclaims",)),
        rule(READ, (_RESOURCE,), ("resourceclaimtemplates",)),
        rule(("patch", "update"), (_RESOURCE,), ("resourceclaims", "resourceclaims/status",
                                                 "resourceclaims/binding")),
        rule(READ, (_SCHEDULING,), ("podgroups",)),
        # DRAWorkloadResourceClaims: claims generated for a PodGroup are recorded in its status
        rule(("patch", "update"), (_SCHEDULING,), ("podgroups/status",)),
        *_events(),
    ],
    "device-taint-eviction-controller": [
        rule(("delete", *READ), (_CORE,), ("pods",)),
        rule(("patch", "update"), (_CORE,), ("pods/status",)),
        rule(READ, (_RESOURCE,), ("resourceclaims", "resourceslices", "deviceclasses",
                                  "devicetaintrules")),
        rule(("patch", "update"), (_RESOURCE,), ("devicetaintrules/status",)),
        *_events(),
    ],
    "serviceaccount-controller": [
        rule(("create",), (_CORE,), ("serviceaccounts",)),
        *_events(),
    ],
    "deployment-controller": [
        rule(("get", "list", "watch", "update"), ("apps",), ("deployments",)),
        rule(("update",), ("apps",), ("deployments/status", "deployments/finalizers")),
        rule(("create", "delete", "get", "list", "patch", "update", "watch"), ("apps",),
             ("replicasets",)),
        rule(("get", "list", "watch", "update"), (_CORE,), ("pods",)),
        *_events(),
    ],
    "replicaset-controller": [
        rule(("get", "list", "watch", "update"), ("apps",), ("replicasets",)),
        rule(("update",), ("apps",), ("replicasets/status", "replicasets/finalizers")),
        rule(("create", "delete", "list", "patch", "watch"), (_CORE,), ("pods",)),
        *_events(),
    ],
    "statefulset-controller": [
        rule(("get", "list", "watch"), ("apps",), ("statefulsets",)),
        rule(("update",), ("apps",), ("statefulsets/status", "statefulsets/finalizers")),
        rule(("create", "delete", "get", "list", "patch", "update", "watch"), (_CORE,),
             ("pods",)),
        rule(("create", "get", "list", "watch"), (_CORE,), ("persistentvolumeclaims",)),
        rule(("create", "delete", "get", "list", "patch", "update", "watch"), ("apps",),
             ("controllerrevisions",)),
        *_events(),
    ],
    "daemonset-controller": [
        rule(("get", "list", "watch", "update"), ("apps",), ("daemonsets",)),
        rule(("update",), ("apps",), ("daemonsets/status", "daemonsets/finalizers")),
        rule(READ, (_CORE,), ("nodes",)),
        rule(("create", "delete", "list", "patch", "watch"), (_CORE,), ("pods",)),
        rule(("create",), (_CORE,), ("pods/binding",)),
        *_events(),
    ],
    "job-controller": [
        rule(("get", "list", "watch", "update", "patch"), ("batch",), ("jobs",)),
        rule(("update", "patch"), ("batch",), ("jobs/status", "jobs/finalizers")),
        rule(("create", "delete", "list", "patch", "watch"), (_CORE,), ("pods",)),
        *_events(),
    ],
    "cronjob-controller": [
        rule(("get", "list", "watch", "update"), ("batch",), ("cronjobs",)),
        rule(("update",), ("batch",), ("cronjobs/status", "cronjobs/finalizers")),
        rule(("create", "delete", "get", "list", "patch", "update", "watch"), ("batch",),
             ("jobs",)),
        *_events(),
    ],
    "endpointslice-controller": [
        rule(READ, (_CORE,), ("services", "pods", "nodes")),
        rule(("create", "delete", "get", "list", "update", "watch"), ("discovery.k8s.io",),
             ("endpointslices",)),
        rule(("create", "delete", "get", "list", "update", "watch"), (_CORE,),
             ("endpoints",)),
        *_events(),
    ],
    "disruption-controller": [
        rule(READ, ("apps",), ("deployments", "replicasets", "statefulsets")),
        rule(READ, (_CORE,), ("pods", "replicationcontrollers")),
        rule(READ, ("policy",), ("poddisruptionbudgets",)),
        rule(("update",), ("policy",), ("poddisruptionbudgets/status",)),
        *_events(),
    ],
    "resourcepoolstatusrequest-controller": [
        rule(("delete", *READ), (_RESOURCE,), ("resourcepoolstatusrequests",)),
        rule(("patch", "update"), (_RESOURCE,), ("resourcepoolstatusrequests/status",)),
        rule(READ, (_RESOURCE,), ("resourceslices", "resourceclaims", "devicetaintrules")),
        *_events(),
    ],
}

# The emulator's node agents (not upstream roles, hence the fakeapi: prefix): they act as
# service accounts whose tokens are bound to a node (the node-name extra).
_EMULATOR: dict[str, list[Obj]] = {
    "kubelet": [
        rule(("create", "patch", "update", *READ), (_CORE,), ("nodes",)),
        rule(("patch", "update"), (_CORE,), ("nodes/status",)),
        rule(("create", "delete", *READ), (_CORE,), ("pods",)),
        rule(("patch", "update"), (_CORE,), ("pods/status",)),
        rule(("get",), (_CORE,), ("configmaps", "secrets", "serviceaccounts")),
        rule(READ_WRITE, (_COORDINATION,), ("leases",)),
        rule(READ, (_RESOURCE,), ("resourceclaims", "resourceslices", "deviceclasses")),
        rule(("delete", "deletecollection"), (_RESOURCE,), ("resourceslices",)),
        rule(READ, (_EMULATOR_GROUP,), ("devicefaults", "nodefaults")),
        *_events(),
    ],
    "dra-kubelet-plugin": [
        rule(READ, (_CORE,), ("nodes", "pods")),
        rule(READ_WRITE, (_RESOURCE,), ("resourceslices",)),
        rule(READ, (_RESOURCE,), ("resourceclaims", "deviceclasses")),
        rule(("get", "patch", "update"), (_RESOURCE,), ("resourceclaims/status",)),
        # Granular status authorization: status.devices of claims on the plugin's own node.
        rule(("associated-node:patch", "associated-node:update"), (_RESOURCE,),
             ("resourceclaims/driver",)),
        *_events(),
    ],
    # Installs the fake drivers' DeviceClasses, as the drivers' Helm charts do.
    "dra-driver-installer": [
        rule(("create", "get"), (_RESOURCE,), ("deviceclasses",)),
    ],
}

COMPONENT_NAMESPACE = "kube-system"
COMPONENT_ROLES: dict[str, str] = {
    **{name: f"system:controller:{name}" for name in _CONTROLLERS},
    "kube-scheduler": "system:kube-scheduler",
    **{name: f"fakeapi:{name}" for name in _EMULATOR},
}
"""Service accounts (in kube-system) of the emulator's components → the ClusterRole each is
bound to. A new in-process component gets a row here (and a role above)."""


def _meta(name: str, labels: Mapping[str, str] | None = None) -> Obj:
    return {"name": name, "labels": {**BOOTSTRAP_LABELS, **(labels or {})},
            "annotations": dict(AUTOUPDATE)}


def _cluster_role(name: str, rules: list[Obj], labels: Mapping[str, str] | None = None,
                  aggregate: str | None = None) -> Obj:
    obj: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole",
                "metadata": _meta(name, labels)}
    if aggregate:
        obj["aggregationRule"] = {"clusterRoleSelectors": [
            {"matchLabels": {AGGREGATE_TO + aggregate: "true"}}]}
    obj["rules"] = rules
    return obj


def _cluster_role_binding(name: str, role: str, subjects: list[Obj]) -> Obj:
    return {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding",
            "metadata": _meta(name),
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": role},
            "subjects": subjects}


def _group(name: str) -> Obj:
    return {"apiGroup": GROUP, "kind": "Group", "name": name}


def _service_account(name: str, namespace: str = COMPONENT_NAMESPACE) -> Obj:
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


@functools.cache
def _bootstrap() -> tuple[tuple[Obj, ...], tuple[Obj, ...]]:
    discovery_urls = ("/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi",
                      "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")
    public_urls = ("/livez", "/readyz", "/healthz", "/version", "/version/")
    roles = [
        _cluster_role("cluster-admin", [rule((ALL,), (ALL,), (ALL,)),
                                        rule((ALL,), urls=(ALL,))]),
        _cluster_role("system:discovery", [rule(("get",), urls=discovery_urls)]),
        _cluster_role("system:public-info-viewer", [rule(("get",), urls=public_urls)]),
        _cluster_role("system:basic-user", [
            rule(("create",), ("authorization.k8s.io",), ("selfsubjectaccessreviews",
                                                          "selfsubjectrulesreviews")),
            rule(("create",), ("authentication.k8s.io",), ("selfsubjectreviews",))]),
        _cluster_role("system:monitoring", [rule(("get",), urls=(
            "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*",
            "/readyz/*", "/healthz/*"))]),
        _cluster_role("system:auth-delegator", [
            rule(("create",), ("authentication.k8s.io",), ("tokenreviews",)),
            rule(("create",), ("authorization.k8s.io",), ("subjectaccessreviews",))]),
        _cluster_role("admin", [], aggregate="admin"),
        _cluster_role("edit", [], {AGGREGATE_TO + "admin": "true"}, aggregate="edit"),
        _cluster_role("view", [], {AGGREGATE_TO + "edit": "true"}, aggregate="view"),
        _cluster_role("system:aggregate-to-admin", _ADMIN, {AGGREGATE_TO + "admin": "true"}),
        _cluster_role("system:aggregate-to-edit", _EDIT, {AGGREGATE_TO + "edit": "true"}),
        _cluster_role("system:aggregate-to-view", _VIEW, {AGGREGATE_TO + "view": "true"}),
        _cluster_role("system:kube-scheduler", _SCHEDULER),
        *(_cluster_role(f"system:controller:{n}", r) for n, r in _CONTROLLERS.items()),
        *(_cluster_role(f"fakeapi:{n}", r) for n, r in _EMULATOR.items()),
    ]
    # Aggregated roles carry their rules as the aggregation controller would have written.
    resolved = _resolve_aggregation(roles)
    for role in roles:
        if "aggregationRule" in role:
            role["rules"] = [r.to_wire() for r in resolved[role["metadata"]["name"]]]
    bindings = [
        _cluster_role_binding("cluster-admin", "cluster-admin", [_group(MASTERS)]),
        _cluster_role_binding("system:discovery", "system:discovery",
                              [_group("system:authenticated")]),
        _cluster_role_binding("system:basic-user", "system:basic-user",
                              [_group("system:authenticated")]),
        _cluster_role_binding("system:public-info-viewer", "system:public-info-viewer",
                              [_group("system:authenticated"),
                               _group("system:unauthenticated")]),
        _cluster_role_binding("system:monitoring", "system:monitoring",
                              [_group("system:monitoring")]),
        _cluster_role_binding("system:kube-scheduler", "system:kube-scheduler", [
            {"apiGroup": GROUP, "kind": "User", "name": "system:kube-scheduler"},
            _service_account("kube-scheduler")]),
        *(_cluster_role_binding(role, role, [_service_account(sa)])
          for sa, role in COMPONENT_ROLES.items() if sa != "kube-scheduler"),
    ]
    return tuple(roles), tuple(bindings)


def bootstrap_cluster_roles() -> list[Obj]:
    """The ClusterRoles a new cluster starts with (fresh copies)."""
    return copy.deepcopy(list(_bootstrap()[0]))


def bootstrap_cluster_role_bindings() -> list[Obj]:
    """The ClusterRoleBindings a new cluster starts with (fresh copies)."""
    return copy.deepcopy(list(_bootstrap()[1]))
