"""RBAC: the policy index over stored roles and bindings, and the authorizer over it (the
rule evaluator is `fakeapi.auth.rules`, the bootstrap roles `fakeapi.auth.bootstrap`).

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

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from fakeapi.auth.authn import MASTERS, UserInfo, service_account_username
from fakeapi.auth.rules import ALLOWED, Attributes, Decision, PolicyRule
from fakeapi.machinery.selectors import label_selector_matches

Obj = dict[str, Any]

GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLES = f"clusterroles.{GROUP}"
ROLES = f"roles.{GROUP}"
CLUSTER_ROLE_BINDINGS = f"clusterrolebindings.{GROUP}"
ROLE_BINDINGS = f"rolebindings.{GROUP}"
RESOURCES = (CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS)


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
class RoleBinding:
    """A RoleBinding (namespace set) or ClusterRoleBinding (namespace empty)."""

    name: str
    namespace: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_wire(cls, obj: Obj) -> RoleBinding:
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

    rules: list[PolicyRule]
    errors: list[str]


def not_found_message(kind: str, name: str) -> str:
    """How upstream's RBAC reports a missing role: `clusterrole.rbac... "x" not found`."""
    return f'{kind.lower()}.{GROUP} "{name}" not found'


class _Scope(NamedTuple):
    """The bindings that apply to one user in one namespace, and whether any of their
    rules is limited to resourceNames (then a decision depends on the object name)."""

    entries: tuple[tuple[RoleBinding, Subject, tuple[PolicyRule, ...] | None], ...]
    named: bool

    @classmethod
    def of(cls, entries: Iterable[tuple[RoleBinding, Subject, tuple[PolicyRule, ...] | None]]
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
        self.cluster_roles = resolve_aggregation(list(cluster_roles))
        self.roles: dict[tuple[str, str], tuple[PolicyRule, ...]] = {}
        for obj in roles:
            meta = obj.get("metadata") or {}
            self.roles[(meta.get("namespace", ""), meta.get("name", ""))] = tuple(
                PolicyRule.from_wire(r) for r in obj.get("rules") or [])
        self.cluster_bindings = sorted((RoleBinding.from_wire(o) for o in cluster_role_bindings),
                                       key=lambda b: b.name)
        self.namespace_bindings: dict[str, list[RoleBinding]] = {}
        for obj in role_bindings:
            b = RoleBinding.from_wire(obj)
            self.namespace_bindings.setdefault(b.namespace, []).append(b)
        for bindings in self.namespace_bindings.values():
            bindings.sort(key=lambda b: b.name)
        self._decisions: dict[tuple[Any, ...], Decision] = {}
        self._scopes: dict[tuple[str, tuple[str, ...], str], _Scope] = {}

    def role_rules(self, kind: str, name: str, namespace: str) -> tuple[PolicyRule, ...] | None:
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
                  ) -> Iterator[tuple[RoleBinding, Subject, tuple[PolicyRule, ...] | None]]:
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


def resolve_aggregation(objects: list[Obj]) -> dict[str, tuple[PolicyRule, ...]]:
    """Rules per ClusterRole name; aggregated roles take the rules of every role they select
    (transitively, each rule once, roles in name order, as the aggregation controller does)."""
    by_name = {(o.get("metadata") or {}).get("name", ""): o for o in objects}
    own = {name: tuple(PolicyRule.from_wire(r) for r in o.get("rules") or [])
           for name, o in by_name.items()}
    labels = {name: (o.get("metadata") or {}).get("labels") or {} for name, o in by_name.items()}
    resolved: dict[str, tuple[PolicyRule, ...]] = {}

    def resolve(name: str, visiting: frozenset[str]) -> tuple[PolicyRule, ...]:
        if name in resolved:
            return resolved[name]
        agg = by_name[name].get("aggregationRule")
        if not isinstance(agg, dict) or name in visiting:
            return own[name]
        selectors = agg.get("clusterRoleSelectors") or []
        rules: list[PolicyRule] = []
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


