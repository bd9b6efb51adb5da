"""RBAC and authorization: rule matching, bindings and aggregation, the bootstrap roles,
request attributes, 403 messages, impersonation, escalation checks, the synthetic
claim-status permissions, the review kinds, and in-process clients."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from fakeapi.auth import authz, bootstrap, rbac, rules
from fakeapi.auth.authn import NODE_NAME_KEY, UserInfo, service_account
from fakeapi.auth.bootstrap import rule
from fakeapi.auth.rbac import Authorizer, Policy
from fakeapi.auth.rules import Attributes, PolicyRule
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import RealClock
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.features import FeatureGates
from fakeapi.machinery.selectors import label_selector_matches
from fakeapi.machinery.watchtypes import ADDED, DELETED, MODIFIED
from fakeapi.registry.context import RequestContext
from fakeapi.registry.kinds import KindTable, served_kinds
from fakeapi.registry.rest import Kind, Review, ReviewContext, StrategyEnv
from fakeapi.storage.log import EventLog
from fakeapi.storage.store import Store

Obj = dict[str, Any]
ALICE = UserInfo("alice", groups=("dev", "system:authenticated"))
RC = "resource.k8s.io"
CLAIMS = "resourceclaims.resource.k8s.io"


def attrs(verb: str = "get", resource: str = "pods", *, group: str = "", ns: str = "",
          name: str = "", sub: str = "", user: UserInfo = ALICE) -> Attributes:
    return Attributes(user=user, verb=verb, api_group=group, api_version="v1", namespace=ns,
                      resource=resource, subresource=sub, name=name)


def url(verb: str, path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=False, path=path)


# --- rule matching ----------------------------------------------------------------------

RULES = [
    # (id, rule, request, allowed)
    ("exact", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, attrs(), True),
    ("other verb", {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}, attrs(), False),
    ("verb *", {"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}, attrs(), True),
    ("other group", {"verbs": ["get"], "apiGroups": [RC], "resources": ["pods"]}, attrs(), False),
    ("group *", {"verbs": ["get"], "apiGroups": ["*"], "resources": ["pods"]}, attrs(), True),
    ("no groups", {"verbs": ["get"], "resources": ["pods"]}, attrs(), False),
    ("resource *", {"verbs": ["get"], "apiGroups": [""], "resources": ["*"]},
     attrs(sub="status"), True),
    ("resource does not cover subresource",
     {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}, attrs(sub="status"), False),
    ("res/sub", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/status"]},
     attrs(sub="status"), True),
    ("res/sub is not res", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/status"]},
     attrs(), False),
    ("*/sub", {"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
     attrs(sub="status"), True),
    ("*/sub other sub", {"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
     attrs(sub="log"), False),
    ("*/sub without sub", {"verbs": ["get"], "apiGroups": [""], "resources": ["*/status"]},
     attrs(), False),
    ("res/* is literal", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]},
     attrs(sub="status"), False),
    ("resourceNames match", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                             "resourceNames": ["a", "b"]}, attrs(name="b"), True),
    ("resourceNames miss", {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                            "resourceNames": ["a"]}, attrs(name="c"), False),
    ("resourceNames need a name", {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"],
                                   "resourceNames": ["a"]}, attrs("list"), False),
    ("synthetic verb", {"verbs": ["associated-node:patch"], "apiGroups": [RC],
                        "resources": ["resourceclaims/driver"], "resourceNames": ["gpu.x"]},
     attrs("associated-node:patch", "resourceclaims", group=RC, sub="driver", name="gpu.x"),
     True),
    ("synthetic verb is not its base", {"verbs": ["patch"], "apiGroups": [RC],
                                        "resources": ["resourceclaims/driver"]},
     attrs("arbitrary-node:patch", "resourceclaims", group=RC, sub="driver"), False),
    ("url exact", {"verbs": ["get"], "nonResourceURLs": ["/version"]}, url("get", "/version"),
     True),
    ("url other", {"verbs": ["get"], "nonResourceURLs": ["/version"]}, url("get", "/versions"),
     False),
    ("url prefix", {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]},
     url("get", "/apis/resource.k8s.io/v1"), True),
    ("url prefix needs its slash", {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]},
     url("get", "/apis"), False),
    ("url *", {"verbs": ["*"], "nonResourceURLs": ["*"]}, url("post", "/x"), True),
    ("url rule vs resource request", {"verbs": ["*"], "nonResourceURLs": ["*"]}, attrs(), False),
    ("resource rule vs url request", {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
     url("get", "/version"), False),
    ("malformed fields", {"verbs": "get", "apiGroups": None, "resources": [1, "pods"]},
     attrs(), False),
]


@pytest.mark.parametrize(("rule", "request_", "allowed"), [r[1:] for r in RULES],
                         ids=[r[0] for r in RULES])
def test_rule_allows(rule: Obj, request_: Attributes, allowed: bool) -> None:
    assert PolicyRule.from_wire(rule).allows(request_) is allowed


SELECTORS = [
    ({}, {"a": "1"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"},
     True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
    ({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, {"a": ""}, False),
    (None, {}, False),
]


@pytest.mark.parametrize(("selector", "labels", "match"), SELECTORS)
def test_aggregation_selectors(selector: Any, labels: dict, match: bool) -> None:
    assert label_selector_matches(selector, labels) is match


# --- bindings ---------------------------------------------------------------------------


def role(name: str, rules: list[Obj], ns: str = "", labels: dict | None = None,
         aggregate: list[dict] | None = None) -> Obj:
    meta: Obj = {"name": name, "labels": labels or {}}
    if ns:
        meta["namespace"] = ns
    obj: Obj = {"metadata": meta, "rules": rules}
    if aggregate is not None:
        obj["aggregationRule"] = {"clusterRoleSelectors": aggregate}
    return obj


def binding(name: str, kind: str, role_name: str, subjects: list[Obj], ns: str = "") -> Obj:
    meta: Obj = {"name": name}
    if ns:
        meta["namespace"] = ns
    return {"metadata": meta, "subjects": subjects,
            "roleRef": {"apiGroup": rbac.GROUP, "kind": kind, "name": role_name}}


def user(name: str) -> Obj:
    return {"kind": "User", "name": name}


def group(name: str) -> Obj:
    return {"kind": "Group", "name": name}


def sa(name: str, ns: str = "") -> Obj:
    out = {"kind": "ServiceAccount", "name": name}
    if ns:
        out["namespace"] = ns
    return out


READ_PODS = rule(bootstrap.READ, ("",), ("pods",))
READ_CLAIMS = rule(bootstrap.READ, (RC,), ("resourceclaims",))
WRITE_CMS = rule(bootstrap.WRITE, ("",), ("configmaps",))
POLICY = Policy(
    cluster_roles=[
        role("pod-reader", [READ_PODS]),
        role("claims", [READ_CLAIMS], labels={"agg": "yes"}),
        role("cms", [WRITE_CMS], labels={"agg": "yes", "outer": "yes"}),
        role("aggregated", [rule(("*",), ("*",), ("*",))],  # stored rules are replaced
             aggregate=[{"matchLabels": {"agg": "yes"}}], labels={"outer": "yes"}),
        role("outer", [], aggregate=[{"matchLabels": {"outer": "yes"}}]),
        role("urls", [rule(("get",), urls=("/healthz", "/apis/*"))]),
    ],
    roles=[role("ns-cms", [WRITE_CMS], ns="team")],
    cluster_role_bindings=[
        binding("urls", "ClusterRole", "urls", [group("dev")]),
        binding("gone", "ClusterRole", "does-not-exist", [user("carol")]),
        binding("sa-no-ns", "ClusterRole", "pod-reader", [sa("nobody")]),
        binding("sa-crb", "ClusterRole", "pod-reader", [sa("drv", "kube-system")]),
    ],
    role_bindings=[
        binding("alice-pods", "ClusterRole", "pod-reader", [user("alice")], ns="team"),
        binding("alice-cms", "Role", "ns-cms", [user("alice")], ns="team"),
        binding("bob-agg", "ClusterRole", "outer", [user("bob")], ns="team"),
        binding("local-sa", "ClusterRole", "pod-reader", [sa("builder")], ns="ci"),
        binding("missing-role", "Role", "nope", [user("carol")], ns="team"),
        binding("role-elsewhere", "Role", "ns-cms", [user("dave")], ns="other"),
    ],
)
BOB = UserInfo("bob", groups=("system:authenticated",))
CAROL = UserInfo("carol", groups=("system:authenticated",))
DAVE = UserInfo("dave", groups=("system:authenticated",))
BUILDER = service_account("ci", "builder")
DRV = service_account("kube-system", "drv")

DECISIONS = [
    # (id, request, allowed, reason)
    ("rolebinding to clusterrole in its namespace", attrs(ns="team"), True,
     'RBAC: allowed by RoleBinding "alice-pods/team" of ClusterRole "pod-reader" to '
     'User "alice"'),
    ("not in another namespace", attrs(ns="other"), False, ""),
    ("not cluster-wide", attrs(), False, ""),
    ("rolebinding to role", attrs("create", "configmaps", ns="team"), True,
     'RBAC: allowed by RoleBinding "alice-cms/team" of Role "ns-cms" to User "alice"'),
    ("a Role only resolves in the binding's namespace", attrs("create", "configmaps", ns="other",
                                                            user=DAVE), False,
     'RBAC: role.rbac.authorization.k8s.io "ns-cms" not found'),
    ("group binding for urls", url("get", "/apis/x"), True,
     'RBAC: allowed by ClusterRoleBinding "urls" of ClusterRole "urls" to Group "dev"'),
    ("url verb", url("post", "/healthz"), False, ""),
    ("aggregated rules replace stored ones", attrs("get", "resourceclaims", group=RC,
                                                   ns="team", user=BOB), True, None),
    ("aggregation is transitive", attrs("delete", "configmaps", ns="team", user=BOB), True,
     None),
    ("aggregated role does not keep its own rules", attrs("get", "secrets", ns="team",
                                                          user=BOB), False, ""),
    ("missing roles are reported", attrs(ns="team", user=CAROL), False,
     'RBAC: [clusterrole.rbac.authorization.k8s.io "does-not-exist" not found, '
     'role.rbac.authorization.k8s.io "nope" not found]'),
    ("one missing role", attrs(ns="x", user=CAROL), False,
     'RBAC: clusterrole.rbac.authorization.k8s.io "does-not-exist" not found'),
    ("service account in a clusterrolebinding", attrs(ns="any", user=DRV), True,
     'RBAC: allowed by ClusterRoleBinding "sa-crb" of ClusterRole "pod-reader" to '
     'ServiceAccount "drv/kube-system"'),
    ("service account defaults to the binding's namespace", attrs(ns="ci", user=BUILDER), True,
     'RBAC: allowed by RoleBinding "local-sa/ci" of ClusterRole "pod-reader" to '
     'ServiceAccount "builder/ci"'),
    ("namespace-less SA subject in a clusterrolebinding matches nobody",
     attrs(ns="x", user=service_account("", "nobody")), False, ""),
]


@pytest.mark.parametrize(("request_", "allowed", "reason"), [d[1:] for d in DECISIONS],
                         ids=[d[0] for d in DECISIONS])
def test_policy_decisions(request_: Attributes, allowed: bool, reason: str | None) -> None:
    decision = POLICY.authorize(request_)
    assert decision.allowed is allowed
    if reason is not None:
        assert decision.reason == reason


def test_rules_for_lists_cluster_then_namespace_rules_by_binding_name() -> None:
    result = POLICY.rules_for(ALICE, "team")
    assert result.rules == [PolicyRule.from_wire(rule(("get",), urls=("/healthz", "/apis/*"))),
                            PolicyRule.from_wire(WRITE_CMS), PolicyRule.from_wire(READ_PODS)]
    assert result.errors == []
    assert POLICY.rules_for(CAROL, "team").errors == [
        'clusterrole.rbac.authorization.k8s.io "does-not-exist" not found',
        'role.rbac.authorization.k8s.io "nope" not found']


def test_masters_are_allowed_without_bindings() -> None:
    authorizer = Authorizer(lambda: Policy())
    admin = UserInfo("root", groups=("system:masters",))
    assert authorizer.authorize(attrs("delete", "anything", user=admin)).allowed
    assert not authorizer.authorize(attrs("get", "pods")).allowed


def _store() -> Store:
    return Store(log=EventLog(), clock=RealClock())


def test_store_authorizer_reindexes_on_rbac_changes_only() -> None:
    store = _store()
    authorizer = Authorizer.for_store(store)
    ask = attrs(ns="team")
    assert not authorizer.authorize(ask).allowed
    first = authorizer.policy
    store.commit(ADDED, "configmaps", {"metadata": {"name": "x", "namespace": "team"}}, actor="t")
    assert authorizer.policy is first
    store.commit(ADDED, rbac.CLUSTER_ROLES, role("pod-reader", [READ_PODS]), actor="t")
    store.commit(ADDED, rbac.ROLE_BINDINGS,
                 binding("b", "ClusterRole", "pod-reader", [user("alice")], ns="team"), actor="t")
    assert authorizer.policy is not first
    assert authorizer.authorize(ask).allowed


def test_remembered_decisions_follow_role_and_binding_changes() -> None:
    store = _store()
    authorizer = Authorizer.for_store(store)
    ask = attrs(ns="team")
    store.commit(ADDED, rbac.CLUSTER_ROLES, role("pod-reader", [READ_PODS]), actor="t")
    bound = binding("b", "ClusterRole", "pod-reader", [user("alice")], ns="team")
    store.commit(ADDED, rbac.ROLE_BINDINGS, bound, actor="t")
    assert authorizer.authorize(ask).allowed
    assert authorizer.authorize(ask) is authorizer.authorize(ask)  # remembered
    store.commit(MODIFIED, rbac.CLUSTER_ROLES, role("pod-reader", [WRITE_CMS]), actor="t")
    assert not authorizer.authorize(ask).allowed
    store.commit(MODIFIED, rbac.CLUSTER_ROLES, role("pod-reader", [READ_PODS]), actor="t")
    assert authorizer.authorize(ask).allowed
    store.commit(DELETED, rbac.ROLE_BINDINGS, bound, actor="t")
    assert not authorizer.authorize(ask).allowed


NAMED = Policy(
    cluster_roles=[role("one-cm", [rule(("get",), ("",), ("configmaps",), names=("a",))]),
                   role("pod-reader", [READ_PODS])],
    role_bindings=[binding("named", "ClusterRole", "one-cm", [user("alice")], ns="team"),
                   binding("pods", "ClusterRole", "pod-reader", [user("erin")], ns="team")])
ALICE_ON_NODE = dataclasses.replace(ALICE, extra={NODE_NAME_KEY: ("worker-1",)})


@pytest.mark.parametrize(("request_", "allowed"), [
    (attrs(resource="configmaps", ns="team", name="a"), True),
    (attrs(resource="configmaps", ns="team", name="b"), False),  # not the name it remembered
    (attrs(resource="configmaps", ns="team", name="a", user=ALICE_ON_NODE), True),
    (attrs(resource="configmaps", ns="team"), False),
    (attrs(ns="team", name="p-1", user=UserInfo("erin")), True),
    (attrs(ns="team", name="p-2", user=UserInfo("erin")), True),
    (attrs(ns="other", name="p-1", user=UserInfo("erin")), False),
], ids=lambda v: getattr(v, "name", None) or str(v))
def test_remembered_decisions_respect_resource_names(request_: Attributes,
                                                     allowed: bool) -> None:
    # Asked twice, in every order the table gives: a remembered decision must not leak
    # across names when a rule lists resourceNames.
    for _ in range(2):
        assert NAMED.authorize(request_).allowed is allowed


def test_decisions_are_shared_by_identities_that_rbac_cannot_tell_apart() -> None:
    policy = Policy(cluster_roles=[role("pod-reader", [READ_PODS])],
                    role_bindings=[binding("b", "ClusterRole", "pod-reader", [user("alice")],
                                           ns="team")])
    first = policy.authorize(attrs(ns="team", name="x"))
    assert policy.authorize(attrs(ns="team", name="y", user=ALICE_ON_NODE)) is first
    assert hash(ALICE) != hash(ALICE_ON_NODE) and ALICE != ALICE_ON_NODE


def test_unhashable_attributes_are_decided_without_being_remembered() -> None:
    odd = UserInfo("alice", groups=(["dev"],))  # type: ignore[arg-type]  # from a review body
    assert not POLICY.authorize(attrs(user=odd)).allowed
    assert POLICY.authorize(attrs(ns="team", user=UserInfo("alice"))).allowed


# --- the bootstrap policy ---------------------------------------------------------------

BOOT = Authorizer(lambda: Policy(cluster_roles=bootstrap.bootstrap_cluster_roles(),
                                 cluster_role_bindings=bootstrap.bootstrap_cluster_role_bindings(),
                                 role_bindings=[
                                     binding(r, "ClusterRole", r, [user(r)], ns="team")
                                     for r in ("view", "edit", "admin")]))


def as_(name: str) -> UserInfo:
    return UserInfo(name, groups=("system:authenticated",))


BOOTSTRAP = [
    # (id, request, allowed)
    ("view reads claims", attrs("list", "resourceclaims", group=RC, ns="team",
                                user=as_("view")), True),
    ("view reads claim status", attrs("get", "resourceclaims", group=RC, ns="team",
                                      sub="status", user=as_("view")), True),
    ("view cannot create claims", attrs("create", "resourceclaims", group=RC, ns="team",
                                        user=as_("view")), False),
    ("view reads pods", attrs("watch", "pods", ns="team", user=as_("view")), True),
    ("view cannot read secrets", attrs("get", "secrets", ns="team", user=as_("view")), False),
    ("edit creates claims", attrs("create", "resourceclaims", group=RC, ns="team",
                                  user=as_("edit")), True),
    ("edit creates templates", attrs("delete", "resourceclaimtemplates", group=RC, ns="team",
                                     user=as_("edit")), True),
    ("edit reads what view reads", attrs("get", "resourceclaims", group=RC, ns="team",
                                         sub="status", user=as_("edit")), True),
    ("edit cannot write claim status", attrs("patch", "resourceclaims", group=RC, ns="team",
                                             sub="status", user=as_("edit")), False),
    ("edit cannot bind claims", attrs("update", "resourceclaims", group=RC, sub="binding",
                                      user=as_("edit")), False),
    ("edit cannot write roles", attrs("create", "roles", group=rbac.GROUP, ns="team",
                                      user=as_("edit")), False),
    ("admin writes roles", attrs("create", "rolebindings", group=rbac.GROUP, ns="team",
                                 user=as_("admin")), True),
    ("admin edits too", attrs("update", "configmaps", ns="team", user=as_("admin")), True),
    ("admin only in its namespace", attrs("update", "configmaps", ns="x", user=as_("admin")),
     False),
    ("no default role grants RPSRs", attrs("create", "resourcepoolstatusrequests", group=RC,
                                           user=as_("admin")), False),
    ("nor deviceclasses", attrs("create", "deviceclasses", group=RC, user=as_("admin")), False),
    ("authenticated users discover", url("get", "/apis/resource.k8s.io/v1", user=as_("x")),
     True),
    ("authenticated users read openapi", url("get", "/openapi/v3", user=as_("x")), True),
    ("authenticated users ask can-i", attrs("create", "selfsubjectaccessreviews",
                                            group="authorization.k8s.io", user=as_("x")), True),
    ("and whoami", attrs("create", "selfsubjectreviews", group="authentication.k8s.io",
                         user=as_("x")), True),
    ("but not about others", attrs("create", "subjectaccessreviews",
                                   group="authorization.k8s.io", user=as_("x")), False),
    ("anonymous reads /version", url("get", "/version", user=UserInfo(
        "system:anonymous", groups=("system:unauthenticated",))), True),
    ("monitoring reads /metrics", url("get", "/metrics", user=UserInfo(
        "prom", groups=("system:monitoring",))), True),
    ("others don't", url("get", "/metrics", user=as_("x")), False),
    ("anonymous cannot discover", url("get", "/api", user=UserInfo(
        "system:anonymous", groups=("system:unauthenticated",))), False),
    ("scheduler binds claims", attrs("patch", "resourceclaims", group=RC, sub="binding",
                                     user=as_("system:kube-scheduler")), True),
    ("scheduler SA too", attrs("update", "resourceclaims", group=RC, sub="binding",
                               user=service_account("kube-system", "kube-scheduler")), True),
    ("plugin: associated-node only", attrs("associated-node:update", "resourceclaims", group=RC,
                                           sub="driver", name="gpu.example.com", ns="a",
                                           user=service_account("kube-system",
                                                                "dra-kubelet-plugin")), True),
    ("plugin: not arbitrary-node", attrs("arbitrary-node:update", "resourceclaims", group=RC,
                                         sub="driver", name="gpu.example.com", ns="a",
                                         user=service_account("kube-system",
                                                              "dra-kubelet-plugin")), False),
    ("namespace controller finalizes", attrs("update", "namespaces", sub="finalize", name="x",
                                             user=service_account("kube-system",
                                                                  "namespace-controller")),
     True),
    ("garbage collector deletes anything", attrs("delete", "resourceclaims", group=RC, ns="x",
                                                 user=service_account(
                                                     "kube-system",
                                                     "generic-garbage-collector")), True),
    ("other kube-system SAs get nothing", attrs("get", "pods", ns="x", user=service_account(
        "kube-system", "random")), False),
]


@pytest.mark.parametrize(("request_", "allowed"), [b[1:] for b in BOOTSTRAP],
                         ids=[b[0] for b in BOOTSTRAP])
def test_bootstrap_policy(request_: Attributes, allowed: bool) -> None:
    assert BOOT.authorize(request_).allowed is allowed


def test_bootstrap_objects() -> None:
    roles = {r["metadata"]["name"]: r for r in bootstrap.bootstrap_cluster_roles()}
    bindings = {b["metadata"]["name"]: b for b in bootstrap.bootstrap_cluster_role_bindings()}
    assert {"cluster-admin", "admin", "edit", "view", "system:basic-user", "system:discovery",
            "system:public-info-viewer"} <= set(roles)
    assert bindings["cluster-admin"]["subjects"] == [
        {"apiGroup": rbac.GROUP, "kind": "Group", "name": "system:masters"}]
    for name in ("admin", "edit", "view"):
        assert roles[name]["rules"], name  # written as the aggregation controller would
        assert roles[name]["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
    for sa_name, role_name in bootstrap.COMPONENT_ROLES.items():
        assert role_name in roles, sa_name
    # every copy is fresh
    roles["view"]["rules"].clear()
    assert next(r for r in bootstrap.bootstrap_cluster_roles()
                if r["metadata"]["name"] == "view")["rules"]


# --- request attributes -----------------------------------------------------------------

REQUESTS = [
    # (method, path, query, (verb, namespace, resource, subresource, name) or None=non-resource)
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "1"}, ("watch", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "false"}, ("list", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name=p1"},
     ("list", "ns", "pods", "", "p1")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "spec.nodeName=n,metadata.name==p"},
     ("list", "ns", "pods", "", "p")),
    ("GET", "/api/v1/namespaces/ns/pods", {"fieldSelector": "metadata.name!=p"},
     ("list", "ns", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods/p1", {}, ("get", "ns", "pods", "", "p1")),
    ("GET", "/api/v1/namespaces/ns/pods/p1/status", {}, ("get", "ns", "pods", "status", "p1")),
    ("POST", "/api/v1/namespaces/ns/pods", {}, ("create", "ns", "pods", "", "")),
    ("POST", "/api/v1/namespaces/ns/pods/p1/binding", {}, ("create", "ns", "pods", "binding",
                                                            "p1")),
    ("PUT", "/api/v1/namespaces/ns/pods/p1", {}, ("update", "ns", "pods", "", "p1")),
    ("PATCH", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c/status", {},
     ("patch", "ns", "resourceclaims", "status", "c")),
    ("DELETE", "/api/v1/namespaces/ns/pods/p1", {}, ("delete", "ns", "pods", "", "p1")),
    ("DELETE", "/api/v1/namespaces/ns/pods", {}, ("deletecollection", "ns", "pods", "", "")),
    ("GET", "/apis/resource.k8s.io/v1/resourceslices", {}, ("list", "", "resourceslices", "",
                                                            "")),
    ("GET", "/apis/resource.k8s.io/v1/watch/namespaces/ns/resourceclaims/c", {},
     ("watch", "ns", "resourceclaims", "", "c")),
    ("GET", "/api/v1/pods", {}, ("list", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces", {}, ("list", "", "namespaces", "", "")),
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "ns", "namespaces", "", "ns")),
    ("PUT", "/api/v1/namespaces/ns/finalize", {}, ("update", "ns", "namespaces", "finalize",
                                                   "ns")),
    ("PUT", "/api/v1/namespaces/ns/status", {}, ("update", "ns", "namespaces", "status", "ns")),
    ("DELETE", "/api/v1/namespaces/ns", {}, ("delete", "ns", "namespaces", "", "ns")),
    ("GET", "/api", {}, None),
    ("GET", "/api/v1", {}, None),
    ("GET", "/apis", {}, None),
    ("GET", "/apis/resource.k8s.io", {}, None),
    ("GET", "/apis/resource.k8s.io/v1", {}, None),
    ("GET", "/version", {}, None),
    ("GET", "/openapi/v3/apis/resource.k8s.io/v1", {}, None),
    ("POST", "/healthz", {}, None),
]


@pytest.mark.parametrize(("method", "path", "query", "want"), REQUESTS,
                         ids=[f"{r[0]} {r[1]} {r[2]}" for r in REQUESTS])
def test_request_attributes(method: str, path: str, query: dict, want: tuple | None) -> None:
    a = authz.request_attributes(ALICE, method, path, query)
    if want is None:
        assert (a.resource_request, a.verb, a.path) == (False, method.lower(), path)
    else:
        assert a.resource_request
        assert (a.verb, a.namespace, a.resource, a.subresource, a.name) == want


# --- 403 --------------------------------------------------------------------------------

FORBIDDEN = [
    (attrs("get", "resourceclaims", group=RC, ns="default", name="x"), "",
     'resourceclaims.resource.k8s.io "x" is forbidden: User "alice" cannot get resource '
     '"resourceclaims" in API group "resource.k8s.io" in the namespace "default"',
     {"name": "x", "group": RC, "kind": "resourceclaims"}),
    (attrs("list", "pods", ns="default"), "",
     'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the '
     'namespace "default"', {"kind": "pods"}),
    (attrs("create", "deviceclasses", group=RC), "",
     'deviceclasses.resource.k8s.io is forbidden: User "alice" cannot create resource '
     '"deviceclasses" in API group "resource.k8s.io" at the cluster scope',
     {"group": RC, "kind": "deviceclasses"}),
    (attrs("update", "resourceclaims", group=RC, sub="binding"), "",
     'resourceclaims.resource.k8s.io is forbidden: User "alice" cannot update resource '
     '"resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope',
     {"group": RC, "kind": "resourceclaims"}),
    (url("get", "/metrics"), "", 'forbidden: User "alice" cannot get path "/metrics"', {}),
    (attrs("get", "pods", ns="a"), 'RBAC: role.rbac.authorization.k8s.io "r" not found',
     'pods is forbidden: User "alice" cannot get resource "pods" in API group "" in the '
     'namespace "a": RBAC: role.rbac.authorization.k8s.io "r" not found', {"kind": "pods"}),
]


@pytest.mark.parametrize(("request_", "reason", "message", "details"), FORBIDDEN)
def test_forbidden_status(request_: Attributes, reason: str, message: str, details: Obj
                          ) -> None:
    status = authz.forbidden(request_, reason).to_status()
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                      "status": "Failure", "message": message, "reason": "Forbidden",
                      "details": details, "code": 403}


# --- impersonation ----------------------------------------------------------------------

IMPERSONATOR_POLICY = Policy(
    cluster_roles=[
        role("users", [rule(("impersonate",), ("",), ("users", "groups"))]),
        role("sas", [rule(("impersonate",), ("",), ("serviceaccounts",))]),
        role("extras", [rule(("impersonate",), ("authentication.k8s.io",),
                                  ("userextras/" + NODE_NAME_KEY, "uids"))]),
        role("only-alice", [rule(("impersonate",), ("",), ("users",), names=("alice",))]),
    ],
    cluster_role_bindings=[
        binding("u", "ClusterRole", "users", [user("boss")]),
        binding("s", "ClusterRole", "sas", [user("boss")]),
        binding("e", "ClusterRole", "extras", [user("boss")]),
        binding("a", "ClusterRole", "only-alice", [user("helper")]),
    ])
IMP = Authorizer(lambda: IMPERSONATOR_POLICY)
BOSS = UserInfo("boss", groups=("system:authenticated",))
HELPER = UserInfo("helper", groups=("system:authenticated",))

IMPERSONATIONS = [
    ("none", BOSS, {}, BOSS),
    ("user", BOSS, {"Impersonate-User": "alice"},
     UserInfo("alice", groups=("system:authenticated",))),
    ("user and groups", BOSS, {"Impersonate-User": "alice", "Impersonate-Group": "dev"},
     UserInfo("alice", groups=("dev", "system:authenticated"))),
    ("unauthenticated group keeps authenticated out", BOSS,
     {"Impersonate-User": "alice", "Impersonate-Group": "system:unauthenticated"},
     UserInfo("alice", groups=("system:unauthenticated",))),
    ("anonymous", BOSS, {"Impersonate-User": "system:anonymous"},
     UserInfo("system:anonymous", groups=("system:unauthenticated",))),
    ("service account gets its groups", BOSS,
     {"Impersonate-User": "system:serviceaccount:kube-system:drv"},
     service_account("kube-system", "drv")),
    ("extra, escaped key", BOSS, {"Impersonate-User": "system:serviceaccount:ns:drv",
                                  "Impersonate-Extra-Authentication.kubernetes.io%2fnode-Name":
                                  "node-1"},
     service_account("ns", "drv", node="node-1")),
    ("uid", BOSS, {"Impersonate-User": "alice", "Impersonate-Uid": "u-1"},
     UserInfo("alice", uid="u-1", groups=("system:authenticated",))),
    ("resourceNames on users", HELPER, {"Impersonate-User": "alice"},
     UserInfo("alice", groups=("system:authenticated",))),
]


@pytest.mark.parametrize(("who", "headers", "want"), [i[1:] for i in IMPERSONATIONS],
                         ids=[i[0] for i in IMPERSONATIONS])
def test_impersonation(who: UserInfo, headers: dict[str, str], want: UserInfo) -> None:
    assert authz.impersonate(IMP, who, headers) == want


REFUSED = [
    ("no rights", ALICE, {"Impersonate-User": "bob"},
     'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API '
     'group "" at the cluster scope'),
    ("not that user", HELPER, {"Impersonate-User": "bob"},
     'users "bob" is forbidden: User "helper" cannot impersonate resource "users" in API '
     'group "" at the cluster scope'),
    ("groups need their own right", HELPER, {"Impersonate-User": "alice",
                                             "Impersonate-Group": "dev"},
     'groups "dev" is forbidden: User "helper" cannot impersonate resource "groups" in API '
     'group "" at the cluster scope'),
    ("service accounts are namespaced", ALICE,
     {"Impersonate-User": "system:serviceaccount:kube-system:drv"},
     'serviceaccounts "drv" is forbidden: User "alice" cannot impersonate resource '
     '"serviceaccounts" in API group "" in the namespace "kube-system"'),
    ("extras by key", BOSS, {"Impersonate-User": "alice", "Impersonate-Extra-foo": "x"},
     'userextras.authentication.k8s.io "x" is forbidden: User "boss" cannot impersonate '
     'resource "userextras/foo" in API group "authentication.k8s.io" at the cluster scope'),
]


@pytest.mark.parametrize(("who", "headers", "message"), [r[1:] for r in REFUSED],
                         ids=[r[0] for r in REFUSED])
def test_impersonation_refused(who: UserInfo, headers: dict[str, str], message: str) -> None:
    with pytest.raises(ApiError) as e:
        authz.impersonate(IMP, who, headers)
    assert (e.value.code, e.value.message) == (403, message)


def test_impersonating_groups_without_a_user_is_an_error() -> None:
    with pytest.raises(ApiError) as e:
        authz.impersonate(IMP, BOSS, {"Impersonate-Group": "dev"})
    assert e.value.code == 500


# --- escalation -------------------------------------------------------------------------

UNCOVERED = [
    ("covered exactly", [READ_PODS], [READ_PODS], []),
    ("star covers all", [rule(("*",), ("*",), ("*",))], [WRITE_CMS, READ_CLAIMS], []),
    ("verb missing", [READ_PODS], [rule(("get", "delete"), ("",), ("pods",))],
     ['{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}']),
    ("*/sub covers res/sub", [rule(("get",), ("",), ("*/status",))],
     [rule(("get",), ("",), ("pods/status",))], []),
    ("res/* covers res/sub", [rule(("get",), ("",), ("pods/*",))],
     [rule(("get",), ("",), ("pods/status",))], []),
    ("names restrict", [rule(("get",), ("",), ("pods",), names=("a",))],
     [rule(("get",), ("",), ("pods",), names=("a", "b"))],
     ['{APIGroups:[""], Resources:["pods"], ResourceNames:["b"], Verbs:["get"]}']),
    ("named rule cannot cover all names", [rule(("get",), ("",), ("pods",), names=("a",))],
     [READ_PODS], ['{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "watch"]}']),
    ("urls by prefix", [rule(("get",), urls=("/apis/*",))],
     [rule(("get",), urls=("/apis/x", "/api"))],
     ['{NonResourceURLs:["/api"], Verbs:["get"]}']),
]


@pytest.mark.parametrize(("owner", "servant", "missing"), [u[1:] for u in UNCOVERED],
                         ids=[u[0] for u in UNCOVERED])
def test_uncovered(owner: list[Obj], servant: list[Obj], missing: list[str]) -> None:
    got = rules.uncovered([PolicyRule.from_wire(r) for r in owner],
                          [PolicyRule.from_wire(r) for r in servant])
    assert [rules.compact_string(r) for r in got] == missing


def _admit(authorizer: Authorizer, kind_id: str, new: Obj, old: Obj | None, who: UserInfo,
           sub: str = "", verb: str = "update", gates: FeatureGates | None = None) -> None:
    """Run the admission checks of the strategy the kind's row names (its subresource's for
    `sub`), as every write path of the registry does."""
    kind = served_kinds().by_id(kind_id)
    assert kind is not None
    env = StrategyEnv(gates=gates or FeatureGates(), lookup=lambda *_: None,
                      now=RealClock().now, authorizer=authorizer)
    ctx = RequestContext(user=who.name, groups=who.groups, extra=who.extra, verb=verb)
    if sub:
        subresource = kind.subresources[sub](kind, env)
        assert old is not None and hasattr(subresource, "admit")
        subresource.admit(new, old, ctx)
    else:
        kind.strategy(kind, env).admit(new, old, ctx)


ESC_AUTHORIZER = Authorizer(lambda: Policy(
    cluster_roles=[role("pod-reader", [READ_PODS]), role("bindable", [WRITE_CMS]),
                   role("binder", [rule(("bind",), (rbac.GROUP,), ("clusterroles",),
                                             names=("bindable",))]),
                   role("escalator", [rule(("escalate",), (rbac.GROUP,), ("roles",))])],
    role_bindings=[binding("a", "ClusterRole", "pod-reader", [user("alice")], ns="team"),
                   binding("b", "ClusterRole", "binder", [user("alice")], ns="team"),
                   binding("c", "ClusterRole", "escalator", [user("alice")], ns="esc")]))
ESCALATIONS = [
    ("role within own rights", rbac.ROLES, role("r", [READ_PODS], ns="team"), None, None),
    ("role beyond own rights", rbac.ROLES, role("r", [WRITE_CMS], ns="team"), None,
     'roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["dev" '
     '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
     '{APIGroups:[""], Resources:["configmaps"], Verbs:["create" "update" "patch" "delete" '
     '"deletecollection"]}'),
    ("escalate verb", rbac.ROLES, role("r", [WRITE_CMS], ns="esc"), None, None),
    ("unchanged rules are not checked", rbac.ROLES, role("r", [WRITE_CMS], ns="team"),
     role("r", [WRITE_CMS], ns="team"), None),
    ("clusterrole needs cluster-wide rights", rbac.CLUSTER_ROLES, role("r", [READ_PODS]), None,
     'clusterroles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["dev" '
     '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
     '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "watch"]}'),
    ("aggregation rule", rbac.CLUSTER_ROLES, role("r", [], aggregate=[{}]), None,
     'clusterroles.rbac.authorization.k8s.io "r" is forbidden: must have cluster-admin '
     "privileges to use the aggregationRule"),
    ("binding a role I hold", rbac.ROLE_BINDINGS,
     binding("x", "ClusterRole", "pod-reader", [user("bob")], ns="team"), None, None),
    ("binding a role I don't hold", rbac.ROLE_BINDINGS,
     binding("x", "ClusterRole", "bindable", [user("bob")], ns="other"), None,
     'rolebindings.rbac.authorization.k8s.io "x" is forbidden: user "alice" (groups=["dev" '
     '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
     '{APIGroups:[""], Resources:["configmaps"], Verbs:["create" "update" "patch" "delete" '
     '"deletecollection"]}'),
    ("bind verb", rbac.ROLE_BINDINGS,
     binding("x", "ClusterRole", "bindable", [user("bob")], ns="team"), None, None),
    ("binding a missing role", rbac.CLUSTER_ROLE_BINDINGS,
     binding("x", "ClusterRole", "ghost", [user("bob")]), None,
     'clusterrolebindings.rbac.authorization.k8s.io "x" is forbidden: '
     'clusterrole.rbac.authorization.k8s.io "ghost" not found'),
]


@pytest.mark.parametrize(("kind_id", "new", "old", "message"), [e[1:] for e in ESCALATIONS],
                         ids=[e[0] for e in ESCALATIONS])
def test_escalation(kind_id: str, new: Obj, old: Obj | None, message: str | None) -> None:
    if message is None:
        _admit(ESC_AUTHORIZER, kind_id, new, old, ALICE)
        return
    with pytest.raises(ApiError) as e:
        _admit(ESC_AUTHORIZER, kind_id, new, old, ALICE)
    assert (e.value.code, e.value.message) == (403, message)


def test_masters_may_escalate() -> None:
    _admit(ESC_AUTHORIZER, rbac.CLUSTER_ROLES, role("r", [rule(("*",), ("*",), ("*",))]),
           None, UserInfo("root", groups=("system:masters",)))


# --- synthetic claim-status permissions -------------------------------------------------


def node_selector(*nodes: str, field: str = "metadata.name") -> Obj:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": field, "operator": "In", "values": list(nodes)}]}]}


@pytest.mark.parametrize(("allocation", "node"), [
    (None, ""),
    ({}, ""),
    ({"nodeSelector": node_selector("n1")}, "n1"),
    ({"nodeSelector": node_selector("n1", "n2")}, ""),
    ({"nodeSelector": node_selector("n1", field="metadata.namespace")}, ""),
    ({"nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["n1"]}],
        "matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}, ""),
    ({"nodeSelector": {"nodeSelectorTerms": [node_selector("n1")["nodeSelectorTerms"][0]] * 2}},
     ""),
])
def test_allocated_node(allocation: Obj | None, node: str) -> None:
    assert authz.allocated_node({"allocation": allocation}) == node


def dev(driver: str, device: str = "d", **more: Any) -> Obj:
    return {"driver": driver, "pool": "p", "device": device, **more}


@pytest.mark.parametrize(("new", "old", "drivers"), [
    ([], [], []),
    ([dev("a")], [dev("a")], []),
    ([dev("a"), dev("b")], [dev("a")], ["b"]),
    ([dev("a")], [dev("a"), dev("b")], ["b"]),
    ([dev("a", conditions=[{"type": "Ready"}])], [dev("a")], ["a"]),
    ([dev("a", "d2")], [dev("a", "d1")], ["a"]),
    ([dev("a", shareID="s1")], [dev("a", shareID="s2")], ["a"]),
    ([dev("b"), dev("a", "x")], [dev("a"), dev("c")], ["a", "b", "c"]),
])
def test_modified_drivers(new: list[Obj], old: list[Obj], drivers: list[str]) -> None:
    assert authz.modified_drivers({"devices": new}, {"devices": old}) == drivers


@pytest.mark.parametrize(("who", "node", "associated"), [
    (service_account("ns", "drv", node="n1"), "n1", True),
    (service_account("ns", "drv", node="n1"), "n2", False),
    (service_account("ns", "drv", node="n1"), "", False),
    (service_account("ns", "drv"), "n1", False),
    (UserInfo("alice", extra={NODE_NAME_KEY: ("n1",)}), "n1", False),
    (UserInfo("system:serviceaccount:ns:drv", extra={NODE_NAME_KEY: ("n1", "n1")}), "n1",
     False),
    (UserInfo("system:serviceaccount:ns:drv", extra={NODE_NAME_KEY: ("N1",)}), "N1", False),
])
def test_associated_with_node(who: UserInfo, node: str, associated: bool) -> None:
    assert authz.associated_with_node(who, node) is associated


CLAIM_POLICY = Authorizer(lambda: Policy(
    cluster_roles=[
        role("binder", [rule(("update",), (RC,), ("resourceclaims/binding",))]),
        role("assoc", [rule(("associated-node:update",), (RC,), ("resourceclaims/driver",),
                                 names=("gpu",))]),
        role("arbitrary", [rule(("arbitrary-node:update",), (RC,),
                                     ("resourceclaims/driver",))]),
    ],
    cluster_role_bindings=[
        binding("b", "ClusterRole", "binder", [user("sched")]),
        binding("p", "ClusterRole", "assoc", [sa("plugin", "kube-system")]),
        binding("c", "ClusterRole", "arbitrary", [user("ctrl")]),
    ]))


def claim(**status: Any) -> Obj:
    return {"metadata": {"name": "c", "namespace": "ns"}, "status": status}


ALLOC = {"devices": {"results": [{"request": "r", "driver": "gpu", "pool": "p",
                                  "device": "d"}]}, "nodeSelector": node_selector("n1")}
PLUGIN_N1 = service_account("kube-system", "plugin", node="n1")
PLUGIN_N2 = service_account("kube-system", "plugin", node="n2")
BINDING_DENIED = (
    "status", 'Forbidden: changing status.allocation or status.reservedFor requires extra '
    'permission: resourceclaims.resource.k8s.io is forbidden: User "{user}" cannot {verb} '
    'resource "resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope')
DRIVER_DENIED = (
    "status.devices", 'Forbidden: changing status.devices requires extra permission: '
    'resourceclaims.resource.k8s.io "{driver}" is forbidden: User "{user}" cannot {verb} '
    'resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace "ns"')
SCHED = UserInfo("sched", groups=("system:authenticated",))
CTRL = UserInfo("ctrl", groups=("system:authenticated",))

CLAIM_CASES = [
    # (id, who, verb, new status, old status, expected causes)
    ("allocate with binding", SCHED, "update", {"allocation": ALLOC}, {}, []),
    ("allocate without binding", ALICE, "update", {"allocation": ALLOC}, {},
     [(BINDING_DENIED[0], BINDING_DENIED[1].format(user="alice", verb="update"))]),
    ("binding is per verb", SCHED, "patch", {"allocation": ALLOC}, {},
     [(BINDING_DENIED[0], BINDING_DENIED[1].format(user="sched", verb="patch"))]),
    ("reserve", ALICE, "update", {"allocation": ALLOC, "reservedFor": [{"resource": "pods"}]},
     {"allocation": ALLOC}, [(BINDING_DENIED[0], BINDING_DENIED[1].format(user="alice",
                                                                           verb="update"))]),
    ("empty list equals unset", ALICE, "update", {"allocation": ALLOC, "reservedFor": []},
     {"allocation": ALLOC}, []),
    ("deallocate", ALICE, "update", {}, {"allocation": ALLOC},
     [(BINDING_DENIED[0], BINDING_DENIED[1].format(user="alice", verb="update"))]),
    ("other status fields need nothing", ALICE, "update",
     {"allocation": ALLOC, "conditions": [{"type": "x"}]}, {"allocation": ALLOC}, []),
    ("plugin on the allocated node", PLUGIN_N1, "update",
     {"allocation": ALLOC, "devices": [dev("gpu")]}, {"allocation": ALLOC}, []),
    ("plugin on another node", PLUGIN_N2, "update",
     {"allocation": ALLOC, "devices": [dev("gpu")]}, {"allocation": ALLOC},
     [(DRIVER_DENIED[0], DRIVER_DENIED[1].format(
         driver="gpu", user=PLUGIN_N2.name, verb="arbitrary-node:update"))]),
    ("plugin for another driver: first refusal reported", PLUGIN_N1, "update",
     {"allocation": ALLOC, "devices": [dev("nic")]}, {"allocation": ALLOC},
     [(DRIVER_DENIED[0], DRIVER_DENIED[1].format(
         driver="nic", user=PLUGIN_N1.name, verb="associated-node:update"))]),
    ("plugin, associated verb is per request verb", PLUGIN_N1, "patch",
     {"allocation": ALLOC, "devices": [dev("gpu")]}, {"allocation": ALLOC},
     [(DRIVER_DENIED[0], DRIVER_DENIED[1].format(
         driver="gpu", user=PLUGIN_N1.name, verb="associated-node:patch"))]),
    ("controller with arbitrary-node", CTRL, "update",
     {"allocation": ALLOC, "devices": [dev("gpu"), dev("nic")]}, {"allocation": ALLOC}, []),
    ("removing a device counts", ALICE, "update", {"allocation": ALLOC},
     {"allocation": ALLOC, "devices": [dev("gpu")]},
     [(DRIVER_DENIED[0], DRIVER_DENIED[1].format(
         driver="gpu", user="alice", verb="arbitrary-node:update"))]),
    ("both refused", ALICE, "update", {"allocation": ALLOC, "devices": [dev("gpu")]}, {},
     [(BINDING_DENIED[0], BINDING_DENIED[1].format(user="alice", verb="update")),
      (DRIVER_DENIED[0], DRIVER_DENIED[1].format(driver="gpu", user="alice",
                                                 verb="arbitrary-node:update"))]),
    ("masters bypass", UserInfo("root", groups=("system:masters",)), "update",
     {"allocation": ALLOC, "devices": [dev("gpu")]}, {}, []),
]


@pytest.mark.parametrize(("who", "verb", "new", "old", "causes"), [c[1:] for c in CLAIM_CASES],
                         ids=[c[0] for c in CLAIM_CASES])
def test_claim_status_permissions(who: UserInfo, verb: str, new: Obj, old: Obj,
                                  causes: list[tuple[str, str]]) -> None:
    def admit() -> None:
        _admit(CLAIM_POLICY, CLAIMS, claim(**new), claim(**old), who, "status", verb)

    if not causes:
        admit()
        return
    with pytest.raises(ApiError) as e:
        admit()
    assert e.value.code == 422 and e.value.reason == "Invalid"
    assert [(c.field, c.message) for c in e.value.causes] == causes
    assert e.value.message.startswith('ResourceClaim.resource.k8s.io "c" is invalid: ')


@pytest.mark.parametrize(("op", "sub", "gate"), [("UPDATE", "", True), ("CREATE", "", True),
                                                 ("UPDATE", "status", False)])
def test_claim_status_permissions_apply_to_status_updates_with_the_gate(
        op: str, sub: str, gate: bool) -> None:
    gates = FeatureGates({authz.GRANULAR_GATE: gate}, check=False)
    _admit(CLAIM_POLICY, CLAIMS, claim(allocation=ALLOC), claim() if op == "UPDATE" else None,
           ALICE, sub, gates=gates)


# --- reviews ----------------------------------------------------------------------------

KINDS: KindTable = served_kinds()


def _answer(kind: Kind, body: Any, who: UserInfo, ns: str) -> Obj:
    """A review POST as HTTP answers it: through the handler the kind's row names."""
    assert isinstance(kind.handler, Review)
    asker = ReviewContext(user=who, namespace=ns, authorizer=POLICY_AUTH,
                          authenticate=lambda *_: None)
    return kind.handler.create(kind, body, asker)


def review(kind_id: str, body: Obj, who: UserInfo = ALICE, ns: str = "") -> Obj:
    kind = KINDS.by_id(kind_id)
    assert kind is not None
    return _answer(kind, copy.deepcopy(body), who, ns)


POLICY_AUTH = Authorizer(lambda: POLICY)
SSAR = "selfsubjectaccessreviews.authorization.k8s.io"
SAR = "subjectaccessreviews.authorization.k8s.io"
LSAR = "localsubjectaccessreviews.authorization.k8s.io"


@pytest.mark.parametrize(("spec", "status"), [
    ({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "team"}},
     {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "alice-pods/team" of '
                                 'ClusterRole "pod-reader" to User "alice"'}),
    ({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "x"}},
     {"allowed": False}),
    ({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}},
     {"allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "urls" of ClusterRole '
                                 '"urls" to Group "dev"'}),
])
def test_self_subject_access_review(spec: Obj, status: Obj) -> None:
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": spec}
    assert review(SSAR, body) == {**body, "metadata": {"creationTimestamp": None},
                                  "status": status}


@pytest.mark.parametrize(("kind_id", "spec", "ns", "message"), [
    (SSAR, {}, "", 'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: '
     'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or '
     "resourceAttributes must be specified"),
    (SSAR, {"resourceAttributes": {}, "nonResourceAttributes": {}}, "",
     'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: '
     'Invalid value: "object": cannot be specified in combination with resourceAttributes'),
    (SAR, {"resourceAttributes": {"verb": "get"}}, "",
     'SubjectAccessReview.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": '
     "at least one of user or group must be specified"),
    (LSAR, {"user": "a", "resourceAttributes": {"namespace": "other"}}, "team",
     'LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
     'spec.resourceAttributes.namespace: Invalid value: "other": must match metadata.namespace'),
])
def test_access_review_validation(kind_id: str, spec: Obj, ns: str, message: str) -> None:
    with pytest.raises(ApiError) as e:
        review(kind_id, {"spec": spec}, ns=ns)
    assert (e.value.code, e.value.message) == (422, message)


@pytest.mark.parametrize(("kind_id", "spec", "ns", "allowed"), [
    (SAR, {"user": "bob", "resourceAttributes": {"verb": "delete", "resource": "configmaps",
                                                 "namespace": "team"}}, "", True),
    (SAR, {"user": "bob", "groups": ["dev"], "nonResourceAttributes": {"verb": "get",
                                                                        "path": "/healthz"}},
     "", True),
    (SAR, {"groups": ["nobody"], "nonResourceAttributes": {"verb": "get", "path": "/x"}}, "",
     False),
    (LSAR, {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods",
                                                    "namespace": "team"}}, "team", True),
])
def test_subject_access_reviews(kind_id: str, spec: Obj, ns: str, allowed: bool) -> None:
    assert review(kind_id, {"spec": spec}, ns=ns)["status"]["allowed"] is allowed


def test_self_subject_rules_review() -> None:
    got = review("selfsubjectrulesreviews.authorization.k8s.io",
                 {"spec": {"namespace": "team"}}, CAROL)
    assert got["status"] == {
        "resourceRules": [], "nonResourceRules": [], "incomplete": True,
        "evaluationError": 'clusterrole.rbac.authorization.k8s.io "does-not-exist" not found, '
                           'role.rbac.authorization.k8s.io "nope" not found'}
    status = review("selfsubjectrulesreviews.authorization.k8s.io",
                    {"spec": {"namespace": "team"}})["status"]
    assert status["incomplete"] is False
    assert status["nonResourceRules"] == [{"verbs": ["get"],
                                           "nonResourceURLs": ["/healthz", "/apis/*"]}]
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]} in (
        status["resourceRules"])


def test_self_subject_review() -> None:
    who = service_account("kube-system", "drv", node="n1")
    got = review("selfsubjectreviews.authentication.k8s.io", {}, who)
    assert got == {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                   "metadata": {"creationTimestamp": None},
                   "status": {"userInfo": who.to_wire()}}


@pytest.mark.parametrize(("body", "message"), [
    ([], "Object 'SelfSubjectAccessReview' is missing in request body: expected a JSON object"),
    ({"apiVersion": "authorization.k8s.io/v1beta1"}, "the API version in the data "
     "(authorization.k8s.io/v1beta1) does not match the expected API version "
     "(authorization.k8s.io/v1)"),
    ({"kind": "SubjectAccessReview"}, "the kind in the data (SubjectAccessReview) does not "
     "match the expected kind (SelfSubjectAccessReview)"),
])
def test_review_body_errors(body: Any, message: str) -> None:
    kind = KINDS.by_id(SSAR)
    assert kind is not None
    with pytest.raises(ApiError) as e:
        _answer(kind, body, ALICE, "")
    assert (e.value.code, e.value.message) == (400, message)


# --- in-process clients and the HTTP layer ----------------------------------------------


async def test_in_process_clients() -> None:
    cluster = Cluster(ClusterConfig(seed=3))
    # a plain identity is a privileged loopback client
    await cluster.client("test").create("configmaps", {"metadata": {"name": "a",
                                                                    "namespace": "default"}})
    # an SA without a binding is refused like an HTTP client
    with pytest.raises(ApiError) as e:
        await cluster.client("system:serviceaccount:default:nobody").list("configmaps",
                                                                         "default")
    assert e.value.message == (
        'configmaps is forbidden: User "system:serviceaccount:default:nobody" cannot list '
        'resource "configmaps" in API group "" in the namespace "default"')
    # explicit groups are taken as given
    with pytest.raises(ApiError):
        await cluster.client("alice", ("dev",)).get("configmaps", "a", "default")
    # components act under their bootstrap roles
    gc = cluster.component_client("generic-garbage-collector")
    assert (await gc.get("configmaps", "a", "default"))["metadata"]["name"] == "a"
    with pytest.raises(ApiError):
        await gc.create("configmaps", {"metadata": {"name": "b", "namespace": "default"}})
    plugin = cluster.component_client("dra-kubelet-plugin", node="n1")
    assert plugin.info.extra == {NODE_NAME_KEY: ("n1",)}


@pytest.fixture
async def api(aiohttp_client: Any) -> Any:
    cluster = Cluster(ClusterConfig(seed=2))
    from fakeapi.auth.authn import UNSECURED, Authenticator

    tokens = {"a": UserInfo("alice"), "b": UserInfo("bob")}
    client = await aiohttp_client(create_app(cluster, authenticator=Authenticator(
        tokens=tokens, fallback=UNSECURED)))
    client.cluster = cluster
    return client


CLAIMS_URL = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"


async def test_http_forbidden_then_allowed(api: Any) -> None:
    alice = {"Authorization": "Bearer a"}
    async with api.get(f"{CLAIMS_URL}/x", headers=alice) as resp:
        assert resp.status == 403
        assert await resp.json() == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'resourceclaims.resource.k8s.io "x" is forbidden: User "alice" cannot '
                       'get resource "resourceclaims" in API group "resource.k8s.io" in the '
                       'namespace "default"',
            "reason": "Forbidden",
            "details": {"name": "x", "group": "resource.k8s.io", "kind": "resourceclaims"},
            "code": 403}
    await api.cluster.client("test").create(
        "rolebindings.rbac.authorization.k8s.io",
        binding("alice-view", "ClusterRole", "view", [user("alice")], ns="default"))
    async with api.get(f"{CLAIMS_URL}/x", headers=alice) as resp:
        assert resp.status == 404  # allowed now: the claim just doesn't exist


async def test_http_unknown_resource_is_refused_before_routing(api: Any) -> None:
    async with api.get("/apis/example.com/v1/widgets", headers={"Authorization": "Bearer a"}
                       ) as resp:
        assert resp.status == 403


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
async def test_http_reviews_are_create_only(api: Any, method: str) -> None:
    async with api.request(method, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
                           ) as resp:
        assert resp.status == 405


async def test_http_local_subject_access_review(api: Any) -> None:
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
            "metadata": {"namespace": "default"},
            "spec": {"user": "alice", "resourceAttributes": {
                "namespace": "default", "verb": "get", "resource": "pods"}}}
    async with api.post("/apis/authorization.k8s.io/v1/namespaces/default/"
                        "localsubjectaccessreviews", json=body) as resp:
        assert resp.status == 201
        assert (await resp.json())["status"] == {"allowed": False}


async def test_http_impersonation_via_headers(api: Any) -> None:
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    headers = {"Impersonate-User": "carol", "Impersonate-Group": "g1"}
    async with api.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=body,
                        headers=headers) as resp:  # the unsecured superuser may impersonate
        assert (await resp.json())["status"]["userInfo"] == {
            "username": "carol", "groups": ["g1", "system:authenticated"]}
    async with api.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=body,
                        headers={**headers, "Authorization": "Bearer b"}) as resp:
        assert resp.status == 403
