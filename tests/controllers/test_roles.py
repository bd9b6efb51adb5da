"""The DRA controllers act with upstream's rights only: what each may and may not do, checked
by the cluster's RBAC against its kube-system service account (bootstrap roles)."""

from __future__ import annotations

import pytest

from fakeapi.auth import authz
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.features import FeatureGates
from fakeapi.registry.kinds import served_kinds

KINDS = served_kinds(FeatureGates({"DRAResourcePoolStatus": True, "GenericWorkload": True}))
CASES = [
    # component, verb, resource id, subresource, allowed
    ("resource-claim-controller", "create", "resourceclaims.resource.k8s.io", "", True),
    ("resource-claim-controller", "update", "resourceclaims.resource.k8s.io", "binding", True),
    ("resource-claim-controller", "patch", "pods", "status", True),
    ("resource-claim-controller", "patch", "podgroups.scheduling.k8s.io", "status", True),
    ("resource-claim-controller", "create", "events", "", True),
    ("resource-claim-controller", "delete", "pods", "", False),
    ("resource-claim-controller", "create", "resourceclaimtemplates.resource.k8s.io", "", False),
    ("resource-claim-controller", "update", "podgroups.scheduling.k8s.io", "", False),
    ("resourcepoolstatusrequest-controller", "delete",
     "resourcepoolstatusrequests.resource.k8s.io", "", True),
    ("resourcepoolstatusrequest-controller", "update",
     "resourcepoolstatusrequests.resource.k8s.io", "status", True),
    ("resourcepoolstatusrequest-controller", "list", "devicetaintrules.resource.k8s.io", "",
     True),
    ("resourcepoolstatusrequest-controller", "create",
     "resourcepoolstatusrequests.resource.k8s.io", "", False),
    ("resourcepoolstatusrequest-controller", "update", "resourceclaims.resource.k8s.io",
     "status", False),
    ("device-taint-eviction-controller", "delete", "pods", "", True),
    ("device-taint-eviction-controller", "patch", "pods", "status", True),
    ("device-taint-eviction-controller", "update", "devicetaintrules.resource.k8s.io",
     "status", True),
    ("device-taint-eviction-controller", "update", "devicetaintrules.resource.k8s.io", "",
     False),
    ("device-taint-eviction-controller", "update", "resourceclaims.resource.k8s.io", "status",
     False),
    ("device-taint-eviction-controller", "create", "pods", "", False),
]


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    return Cluster(ClusterConfig(feature_gates={"DRAResourcePoolStatus": True,
                                                "GenericWorkload": True}))


@pytest.mark.parametrize("component,verb,resource,subresource,allowed", CASES)
def test_controller_rights(cluster: Cluster, component: str, verb: str, resource: str,
                           subresource: str, allowed: bool) -> None:
    client = cluster.component_client(component)
    kind = KINDS.by_id(resource)
    assert kind is not None
    namespace = "default" if kind.namespaced else ""
    try:
        authz.authorize(cluster.authorizer, client.info, verb, kind, namespace, "x",
                        subresource)
        granted = True
    except ApiError as e:
        assert e.code == 403
        granted = False
    assert granted == allowed
