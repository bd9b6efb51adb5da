"""The kind table: one row per served kind drives routing, discovery, OpenAPI and RBAC names.

Adding a kind is adding a row here (and a strategy in `fakeapi.registry`), never touching
the HTTP layer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from fakeapi.features import FeatureGates, GateReader

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")


@dataclasses.dataclass(frozen=True)
class Kind:
    """One served group/version/kind and how it is exposed over REST."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    feature_gate: str | None = None
    has_generation: bool = True
    returns_deleted: bool = False
    """DELETE answers with the deleted object (upstream ReturnDeletedObject), else a Status."""

    @property
    def singular(self) -> str:
        """Lower-case kind, as upstream's singularResource."""
        return self.kind.lower()

    @property
    def api_version(self) -> str:
        """`group/version`, or just `version` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> tuple[str, str]:
        """(group, version) pair."""
        return (self.group, self.version)

    @property
    def resource_id(self) -> str:
        """Storage prefix: `plural.group` (as in RBAC and error messages), `plural` for core."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def has_status(self) -> bool:
        """Whether `/status` is a subresource (status then changes only through it)."""
        return "status" in self.subresources


def _k(group: str, version: str, kind: str, plural: str, namespaced: bool, **kw: object) -> Kind:
    return Kind(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced, **kw)  # type: ignore[arg-type]


RESOURCE = "resource.k8s.io"
SCHEDULING = "scheduling.k8s.io"
RBAC = "rbac.authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"

KINDS: tuple[Kind, ...] = (
    _k("", "v1", "Namespace", "namespaces", False, short_names=("ns",),
       subresources=("status", "finalize"), verbs=ALL_VERBS[:2] + ALL_VERBS[3:],
       has_generation=False),
    _k("", "v1", "Node", "nodes", False, short_names=("no",), subresources=("status",),
       has_generation=False),
    _k("", "v1", "Pod", "pods", True, short_names=("po",), categories=("all",),
       subresources=("status", "binding"), returns_deleted=True),
    _k("", "v1", "Event", "events", True, short_names=("ev",), has_generation=False),
    _k("", "v1", "ServiceAccount", "serviceaccounts", True, short_names=("sa",),
       has_generation=False, returns_deleted=True),
    _k("", "v1", "ConfigMap", "configmaps", True, short_names=("cm",), has_generation=False),
    _k("coordination.k8s.io", "v1", "Lease", "leases", True, has_generation=False),
    _k(RESOURCE, "v1", "DeviceClass", "deviceclasses", False,
       returns_deleted=True),
    _k(RESOURCE, "v1", "ResourceClaim", "resourceclaims", True, subresources=("status",),
       returns_deleted=True),
    _k(RESOURCE, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True,
       returns_deleted=True),
    _k(RESOURCE, "v1", "ResourceSlice", "resourceslices", False,
       returns_deleted=True),
    _k(RESOURCE, "v1", "DeviceTaintRule", "devicetaintrules", False, subresources=("status",),
       feature_gate="DRADeviceTaintRules"),
    _k(RESOURCE, "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", False,
       subresources=("status",), feature_gate="DRAResourcePoolStatus",
       returns_deleted=True),
    _k(SCHEDULING, "v1beta1", "PodGroup", "podgroups", True, subresources=("status",),
       feature_gate="GenericWorkload"),
    _k(SCHEDULING, "v1beta1", "Workload", "workloads", True, feature_gate="GenericWorkload"),
    _k(SCHEDULING, "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",),
       has_generation=False),
    _k(RBAC, "v1", "Role", "roles", True, has_generation=False),
    _k(RBAC, "v1", "ClusterRole", "clusterroles", False, has_generation=False),
    _k(RBAC, "v1", "RoleBinding", "rolebindings", True, has_generation=False),
    _k(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", False, has_generation=False),
    # Create-only reviews, answered by fakeapi.reviews and never stored.
    *(_k(group, "v1", kind, kind.lower() + "s", namespaced, verbs=("create",),
         has_generation=False) for group, kind, namespaced in (
        (AUTHENTICATION, "SelfSubjectReview", False),
        (AUTHORIZATION, "LocalSubjectAccessReview", True),
        (AUTHORIZATION, "SelfSubjectAccessReview", False),
        (AUTHORIZATION, "SelfSubjectRulesReview", False),
        (AUTHORIZATION, "SubjectAccessReview", False))),
)


class KindTable:
    """Lookups over the served kinds (those whose feature gate is on)."""

    def __init__(self, kinds: Iterable[Kind]) -> None:
        self.kinds = tuple(kinds)
        self._by_resource = {(k.group, k.version, k.plural): k for k in self.kinds}
        self._by_gvk = {(k.group, k.version, k.kind): k for k in self.kinds}
        self._by_id = {k.resource_id: k for k in self.kinds}

    def by_resource(self, group: str, version: str, plural: str) -> Kind | None:
        """The kind served at /apis/group/version/plural."""
        return self._by_resource.get((group, version, plural))

    def by_gvk(self, api_version: str, kind: str) -> Kind | None:
        """The kind for an object's apiVersion and kind."""
        group, _, version = api_version.rpartition("/")
        return self._by_gvk.get((group, version, kind))

    def by_id(self, resource_id: str) -> Kind | None:
        """The kind stored under a resource id (`plural.group`)."""
        return self._by_id.get(resource_id)

    def group_versions(self) -> list[tuple[str, str]]:
        """Served (group, version) pairs in table order, without duplicates."""
        return list(dict.fromkeys(k.group_version for k in self.kinds))

    def in_group_version(self, group: str, version: str) -> list[Kind]:
        """Kinds served in one group/version."""
        return [k for k in self.kinds if k.group_version == (group, version)]


def served_kinds(gates: GateReader | Mapping[str, bool] | None = None) -> KindTable:
    """The kinds a server with these gates serves (a mapping: overrides of the 1.37 defaults).

    Without gates: every row, as docs and schema tests want the whole table.
    """
    if gates is None:
        return KindTable(KINDS)
    reader = FeatureGates(gates) if isinstance(gates, Mapping) else gates
    return KindTable(k for k in KINDS if not k.feature_gate or reader.enabled(k.feature_gate))
