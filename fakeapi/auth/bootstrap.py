"""The bootstrap policy a fresh cluster starts with: upstream's default ClusterRoles
(view, edit, admin and their aggregation, the system: roles), the roles of the emulated
components and the emulator's own, and their ClusterRoleBindings.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from fakeapi.auth.authn import MASTERS
from fakeapi.auth.rbac import GROUP, resolve_aggregation
from fakeapi.auth.rules import ALL, PolicyRule

Obj = dict[str, Any]


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
    return PolicyRule(verbs=tuple(verbs), api_groups=tuple(groups), resources=tuple(resources),
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
    rule(READ, ("storage.k8s.io",), ("storageclasses", "csinodes", "csidrivers",
                                     "csistoragecapacities", "volumeattachments")),
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
    "replication-controller": [  # upstream's system:controller:replication-controller
        rule(("get", "list", "watch", "update"), (_CORE,), ("replicationcontrollers",)),
        rule(("update",), (_CORE,), ("replicationcontrollers/status",
                                     "replicationcontrollers/finalizers")),
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
        rule(("patch", "update"), (_EMULATOR_GROUP,), ("devicefaults/status",
                                                       "nodefaults/status")),
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
        _cluster_role("system:service-account-issuer-discovery", [rule(("get",), urls=(
            "/.well-known/openid-configuration", "/.well-known/openid-configuration/",
            "/openid/v1/jwks", "/openid/v1/jwks/"))]),
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
    resolved = resolve_aggregation(roles)
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
        _cluster_role_binding("system:service-account-issuer-discovery",
                              "system:service-account-issuer-discovery",
                              [_group("system:serviceaccounts")]),
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
