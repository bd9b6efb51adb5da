"""The kind table: one row per served kind, the single source of every per-kind fact.

A row drives routing, discovery, OpenAPI and RBAC names, and names its registry strategy and
the strategy of each subresource, its `kubectl get` columns, its field selectors and the
fields its feature gates drop. Adding a kind is adding a row here (and a strategy in
`fakeapi.registry` when the defaults don't do), never touching the HTTP layer.

Strategies are named by class name (resolved by `fakeapi.registry.strategies`), as they sit
above this module: the registry imports the table, never the other way round.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from fakeapi.machinery import selectors
from fakeapi.machinery.features import FeatureGates, GateReader
from fakeapi.machinery.gvk import ResourceType
from fakeapi.machinery.selectors import FieldRules
from fakeapi.printers import columns
from fakeapi.printers import workloads as wc
from fakeapi.printers.spec import TableSpec
from fakeapi.schema import dropfields

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
STATUS_VERBS = ("get", "patch", "update")
STRATEGY = "Strategy"
"""The default strategy of an object (the common upstream rules only)."""
STATUS = "StatusStrategy"
"""The default strategy of `/status` (status changes, nothing else)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Kind(ResourceType):
    """One served group/version/kind and how it is exposed over REST."""

    short_names: tuple[str, ...] = ()
    subresources: Mapping[str, str] = dataclasses.field(default_factory=dict, compare=False)
    """Each subresource (`status`, `finalize`, `binding`) and the name of its strategy."""
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    feature_gate: str | None = None
    has_generation: bool = True
    returns_deleted: bool = False
    """DELETE answers with the deleted object (upstream ReturnDeletedObject), else a Status."""
    strategy: str = dataclasses.field(default=STRATEGY, compare=False)
    """The name of the object's strategy class (see `fakeapi.registry.strategies`)."""
    columns: TableSpec = dataclasses.field(default=columns.DEFAULT_SPEC, compare=False)
    """What `kubectl get` shows."""
    field_selectors: FieldRules = dataclasses.field(default=selectors.DEFAULT_FIELDS,
                                                    compare=False)
    """The field labels `fieldSelector` accepts (upstream's field-label conversion)."""
    drop_fields: tuple[dropfields.Rule, ...] = dataclasses.field(default=(), compare=False)
    """Fields dropped while their feature gate is off (upstream dropDisabledFields)."""
    pointer_fields: tuple[str, ...] = ()
    """Top-level `spec`/`status` fields that are Go pointers (omitted while unset; every
    other struct field goes on the wire as `{}` at least)."""
    custom_schema: str = ""
    """A custom resource's facts from its CRD as JSON (schema, scale paths; see
    `fakeapi.registry.custom_kinds.custom`), "" for built-in kinds. Compared, so caches keyed
    by kinds see a changed schema."""
    posts_to: tuple[str, str] | None = None
    """A create-only kind whose POST is a subresource of another kind's object named by the
    body (`namespaces/NS/bindings` binds the pod the Binding names): (resource id,
    subresource)."""

    @property
    def has_status(self) -> bool:
        """Whether `/status` is a subresource (status then changes only through it)."""
        return "status" in self.subresources


def _k(group: str, version: str, kind: str, plural: str, namespaced: bool, **kw: object) -> Kind:
    return Kind(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced,
                **kw)  # type: ignore[arg-type]


RESOURCE = "resource.k8s.io"
SCHEDULING = "scheduling.k8s.io"
RBAC = "rbac.authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"
AUTHORIZATION = "authorization.k8s.io"
EMULATOR = "emulator.fakeapi.dev"
APPS = "apps"
BATCH = "batch"
NETWORKING = "networking.k8s.io"
APIEXTENSIONS = "apiextensions.k8s.io"
CERTIFICATES = "certificates.k8s.io"
SCALED = {"status": STATUS, "scale": "ScaleStrategy"}
"""The subresources of a kind that `kubectl scale` can scale."""

KINDS: tuple[Kind, ...] = (
    _k("", "v1", "Namespace", "namespaces", False, short_names=("ns",),
       subresources={"status": STATUS, "finalize": "NamespaceFinalizeStrategy"},
       verbs=ALL_VERBS[:2] + ALL_VERBS[3:], has_generation=False,
       strategy="NamespaceStrategy", columns=columns.NAMESPACE,
       field_selectors=selectors.NAMESPACE_FIELDS),
    _k("", "v1", "Node", "nodes", False, short_names=("no",), subresources={"status": STATUS},
       has_generation=False, strategy="NodeStrategy", columns=columns.NODE,
       field_selectors=selectors.NODE_FIELDS),
    _k("", "v1", "Pod", "pods", True, short_names=("po",), categories=("all",),
       subresources={"status": STATUS, "binding": "PodBindingStrategy",
                     "eviction": "EvictionStrategy", "log": "PodLogStrategy",
                     "exec": "PodExecStrategy", "attach": "PodAttachStrategy",
                     "portforward": "PodPortForwardStrategy",
                     "ephemeralcontainers": "EphemeralContainersStrategy"},
       returns_deleted=True, strategy="PodStrategy", columns=columns.POD,
       field_selectors=selectors.POD_FIELDS, drop_fields=dropfields.POD),
    _k("", "v1", "Binding", "bindings", True, verbs=("create",), has_generation=False,
       posts_to=("pods", "binding")),
    _k("", "v1", "Event", "events", True, short_names=("ev",), has_generation=False,
       columns=columns.EVENT, field_selectors=selectors.EVENT_FIELDS),
    _k("", "v1", "ServiceAccount", "serviceaccounts", True, short_names=("sa",),
       subresources={"token": "TokenRequestStrategy"},
       has_generation=False, returns_deleted=True, columns=columns.SERVICE_ACCOUNT),
    _k("", "v1", "Secret", "secrets", True, has_generation=False, columns=wc.SECRET,
       strategy="SecretStrategy", field_selectors=selectors.SECRET_FIELDS),
    _k("", "v1", "Service", "services", True, short_names=("svc",), categories=("all",),
       subresources={"status": STATUS}, has_generation=False, strategy="ServiceStrategy",
       columns=wc.SERVICE, field_selectors=selectors.SERVICE_FIELDS),
    _k("", "v1", "Endpoints", "endpoints", True, short_names=("ep",), has_generation=False,
       columns=wc.ENDPOINTS),
    _k("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, short_names=("pvc",),
       subresources={"status": STATUS}, has_generation=False,
       columns=wc.PERSISTENT_VOLUME_CLAIM),
    _k("", "v1", "PersistentVolume", "persistentvolumes", False, short_names=("pv",),
       subresources={"status": STATUS}, has_generation=False, columns=wc.PERSISTENT_VOLUME,
       field_selectors=selectors.CLUSTER_FIELDS),
    _k("", "v1", "ReplicationController", "replicationcontrollers", True, short_names=("rc",),
       categories=("all",), subresources=SCALED, columns=wc.REPLICATION_CONTROLLER),
    _k("", "v1", "PodTemplate", "podtemplates", True, has_generation=False,
       columns=wc.POD_TEMPLATE),
    _k("", "v1", "ResourceQuota", "resourcequotas", True, short_names=("quota",),
       subresources={"status": STATUS}, has_generation=False, columns=wc.RESOURCE_QUOTA),
    _k("", "v1", "LimitRange", "limitranges", True, short_names=("limits",),
       has_generation=False, columns=wc.LIMIT_RANGE),
    _k("", "v1", "ConfigMap", "configmaps", True, short_names=("cm",), has_generation=False,
       columns=columns.CONFIG_MAP),
    _k("coordination.k8s.io", "v1", "Lease", "leases", True, has_generation=False,
       columns=columns.LEASE),
    _k(APPS, "v1", "Deployment", "deployments", True, short_names=("deploy",),
       categories=("all",), subresources=SCALED,
       strategy="PodControllerStrategy", columns=wc.DEPLOYMENT),
    _k(APPS, "v1", "ReplicaSet", "replicasets", True, short_names=("rs",), categories=("all",),
       subresources=SCALED, strategy="PodControllerStrategy", columns=wc.REPLICA_SET,
       field_selectors=selectors.REPLICA_SET_FIELDS),
    _k(APPS, "v1", "StatefulSet", "statefulsets", True, short_names=("sts",),
       categories=("all",), subresources=SCALED,
       strategy="PodControllerStrategy", columns=wc.STATEFUL_SET),
    _k(APPS, "v1", "DaemonSet", "daemonsets", True, short_names=("ds",), categories=("all",),
       subresources={"status": STATUS},
       strategy="PodControllerStrategy", columns=wc.DAEMON_SET),
    _k(APPS, "v1", "ControllerRevision", "controllerrevisions", True, has_generation=False,
       columns=wc.CONTROLLER_REVISION),
    _k(BATCH, "v1", "Job", "jobs", True, categories=("all",), subresources={"status": STATUS},
       strategy="JobStrategy", columns=wc.JOB, field_selectors=selectors.JOB_FIELDS),
    _k(BATCH, "v1", "CronJob", "cronjobs", True, short_names=("cj",), categories=("all",),
       subresources={"status": STATUS}, columns=wc.CRON_JOB),
    _k("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True,
       short_names=("hpa",), categories=("all",), subresources={"status": STATUS},
       columns=wc.HORIZONTAL_POD_AUTOSCALER),
    _k("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True,
       short_names=("pdb",), subresources={"status": STATUS},
       columns=wc.POD_DISRUPTION_BUDGET),
    _k("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True,
       has_generation=False, columns=wc.ENDPOINT_SLICE),
    _k(NETWORKING, "v1", "Ingress", "ingresses", True, short_names=("ing",),
       subresources={"status": STATUS}, columns=wc.INGRESS),
    _k(NETWORKING, "v1", "IngressClass", "ingressclasses", False, columns=wc.INGRESS_CLASS),
    _k(NETWORKING, "v1", "NetworkPolicy", "networkpolicies", True, short_names=("netpol",),
       columns=wc.NETWORK_POLICY),
    # its shortName "ev" is the core Event's here (kubectl resolves "ev" to core/v1 anyway)
    _k("events.k8s.io", "v1", "Event", "events", True, has_generation=False,
       columns=wc.EVENTS_V1),
    _k(APIEXTENSIONS, "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
       short_names=("crd", "crds"), categories=("api-extensions",),
       subresources={"status": STATUS}, strategy="CustomResourceDefinitionStrategy",
       columns=wc.CUSTOM_RESOURCE_DEFINITION),
    _k(CERTIFICATES, "v1", "CertificateSigningRequest", "certificatesigningrequests", False,
       short_names=("csr",),
       subresources={"status": STATUS, "approval": "CertificateApprovalStrategy"},
       has_generation=True, strategy="CertificateSigningRequestStrategy",
       columns=wc.CERTIFICATE_SIGNING_REQUEST, field_selectors=selectors.CSR_FIELDS),
    _k(RESOURCE, "v1", "DeviceClass", "deviceclasses", False, returns_deleted=True,
       strategy="DeviceClassStrategy", columns=columns.DEVICE_CLASS,
       drop_fields=dropfields.DEVICE_CLASS),
    _k(RESOURCE, "v1", "ResourceClaim", "resourceclaims", True,
       subresources={"status": "ResourceClaimStatusStrategy"}, returns_deleted=True,
       strategy="ResourceClaimStrategy", columns=columns.RESOURCE_CLAIM,
       drop_fields=dropfields.RESOURCE_CLAIM),
    _k(RESOURCE, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True,
       returns_deleted=True, strategy="ResourceClaimTemplateStrategy",
       columns=columns.RESOURCE_CLAIM_TEMPLATE, drop_fields=dropfields.RESOURCE_CLAIM_TEMPLATE),
    _k(RESOURCE, "v1", "ResourceSlice", "resourceslices", False, returns_deleted=True,
       strategy="ResourceSliceStrategy", columns=columns.RESOURCE_SLICE,
       field_selectors=selectors.RESOURCE_SLICE_FIELDS, drop_fields=dropfields.RESOURCE_SLICE),
    _k(RESOURCE, "v1", "DeviceTaintRule", "devicetaintrules", False,
       subresources={"status": "DeviceTaintRuleStatusStrategy"},
       feature_gate="DRADeviceTaintRules", strategy="DeviceTaintRuleStrategy",
       columns=columns.DEVICE_TAINT_RULE),
    _k(RESOURCE, "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", False,
       subresources={"status": "ResourcePoolStatusRequestStatusStrategy"},
       feature_gate="DRAResourcePoolStatus", returns_deleted=True, pointer_fields=("status",),
       strategy="ResourcePoolStatusRequestStrategy",
       columns=columns.RESOURCE_POOL_STATUS_REQUEST,
       drop_fields=dropfields.RESOURCE_POOL_STATUS_REQUEST),
    _k(SCHEDULING, "v1beta1", "PodGroup", "podgroups", True,
       subresources={"status": "PodGroupStatusStrategy"}, feature_gate="GenericWorkload",
       strategy="PodGroupStrategy", columns=columns.POD_GROUP, drop_fields=dropfields.POD_GROUP),
    _k(SCHEDULING, "v1beta1", "Workload", "workloads", True, feature_gate="GenericWorkload",
       strategy="WorkloadStrategy", columns=columns.WORKLOAD, drop_fields=dropfields.WORKLOAD),
    _k(SCHEDULING, "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",),
       has_generation=False, columns=columns.PRIORITY_CLASS),
    _k(RBAC, "v1", "Role", "roles", True, has_generation=False, strategy="RoleStrategy",
       columns=columns.ROLE),
    _k(RBAC, "v1", "ClusterRole", "clusterroles", False, has_generation=False,
       strategy="RoleStrategy", columns=columns.ROLE),
    _k(RBAC, "v1", "RoleBinding", "rolebindings", True, has_generation=False,
       strategy="RoleBindingStrategy", columns=columns.ROLE_BINDING),
    _k(RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", False, has_generation=False,
       strategy="RoleBindingStrategy", columns=columns.CLUSTER_ROLE_BINDING),
    # The emulator's fault injection (fakeapi.schema.emulator).
    _k(EMULATOR, "v1alpha1", "DeviceFault", "devicefaults", False, categories=("faults",),
       strategy="DeviceFaultStrategy", columns=columns.DEVICE_FAULT,
       field_selectors=selectors.FAULT_FIELDS),
    _k(EMULATOR, "v1alpha1", "NodeFault", "nodefaults", False, categories=("faults",),
       strategy="NodeFaultStrategy", columns=columns.NODE_FAULT,
       field_selectors=selectors.FAULT_FIELDS),
    # Create-only reviews, answered by fakeapi.registry.reviews and never stored or listed.
    *(_k(group, "v1", kind, kind.lower() + "s", namespaced, verbs=("create",),
         has_generation=False) for group, kind, namespaced in (
        (AUTHENTICATION, "SelfSubjectReview", False),
        (AUTHENTICATION, "TokenReview", False),
        (AUTHORIZATION, "LocalSubjectAccessReview", True),
        (AUTHORIZATION, "SelfSubjectAccessReview", False),
        (AUTHORIZATION, "SelfSubjectRulesReview", False),
        (AUTHORIZATION, "SubjectAccessReview", False))),
)


class KindTable:
    """Lookups over the served kinds (those whose feature gate is on)."""

    def __init__(self, kinds: Iterable[Kind]) -> None:
        self._index(tuple(kinds))

    def _index(self, kinds: tuple[Kind, ...]) -> None:
        self.kinds = kinds
        self._by_resource = {(k.group, k.version, k.plural): k for k in self.kinds}
        self._by_gvk = {(k.group, k.version, k.kind): k for k in self.kinds}
        self._by_id = {k.resource_id: k for k in self.kinds}

    def replace_custom(self, crd_name: str, kinds: Iterable[Kind]) -> None:
        """Serve the kinds of one CRD (`plural.group`) instead of the ones it served before
        (none: the CRD is gone). Built-in rows are never replaced."""
        builtin = {k.group_version + (k.plural,) for k in self.kinds if not k.custom_schema}
        new = [k for k in kinds if k.group_version + (k.plural,) not in builtin]
        kept = [k for k in self.kinds if not (k.custom_schema and k.resource_id == crd_name)]
        self._index((*kept, *new))

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
