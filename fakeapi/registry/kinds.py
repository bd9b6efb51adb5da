"""The kind table: one row per served kind, the single source of every per-kind fact.

A row (`fakeapi.registry.rest.Kind`) drives routing, discovery, OpenAPI and RBAC names, and
names the strategy class of its objects and of each subresource, its `kubectl get` columns,
its field selectors and the fields its feature gates drop; go-to-definition on a row's
strategy lands on the class. Adding a kind is adding a row here (and a strategy in
`fakeapi.registry` when the defaults don't do), never touching the HTTP layer.

Each row is a module constant (`PODS`, `RESOURCE_CLAIMS`, ...) that `KINDS` lists; code that
names a resource uses the row (`RESOURCE_CLAIMS.resource_id`), never a spelled-out id. The
table sits above the strategies it names: no strategy imports it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fakeapi.machinery import names, selectors
from fakeapi.machinery.features import FeatureGates, GateReader
from fakeapi.machinery.runtimeconfig import RuntimeConfig
from fakeapi.printers import columns
from fakeapi.printers import platform as pc
from fakeapi.printers import workloads as wc
from fakeapi.registry import reviews
from fakeapi.registry import workload_defaults as wd
from fakeapi.registry.admissionregistration import (
    PolicyBindingStrategy,
    ValidatingAdmissionPolicyStrategy,
)
from fakeapi.registry.core import (
    NamespaceFinalizeStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PodBindingStrategy,
    PodStrategy,
)
from fakeapi.registry.custom import CustomResourceDefinitionStrategy
from fakeapi.registry.emulator import (
    ClockAdvanceStrategy,
    ClockStrategy,
    DeviceFaultStrategy,
    NodeFaultStrategy,
)
from fakeapi.registry.identity import (
    CertificateApprovalStrategy,
    CertificateSigningRequestStrategy,
    TokenRequestStrategy,
)
from fakeapi.registry.pods import (
    EphemeralContainersStrategy,
    EvictionStrategy,
    PodAttachStrategy,
    PodExecStrategy,
    PodLogStrategy,
    PodPortForwardStrategy,
)
from fakeapi.registry.rbac import RoleBindingStrategy, RoleStrategy
from fakeapi.registry.resource import (
    DeviceClassStrategy,
    DeviceTaintRuleStatusStrategy,
    DeviceTaintRuleStrategy,
    ResourceClaimStatusStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourcePoolStatusRequestStatusStrategy,
    ResourcePoolStatusRequestStrategy,
    ResourceSliceStrategy,
)
from fakeapi.registry.rest import (
    ALL_VERBS,
    Kind,
    Obj,
    PostsTo,
    Review,
    ReviewContext,
    StatusStrategy,
)
from fakeapi.registry.scheduling import PodGroupStatusStrategy, PodGroupStrategy, WorkloadStrategy
from fakeapi.registry.validation import claims, poolstatus
from fakeapi.registry.workloads import (
    JobStrategy,
    PodControllerStrategy,
    ScaleStrategy,
    SecretStrategy,
    ServiceStrategy,
)
from fakeapi.schema import dropfields
from fakeapi.schema.schemas import get_schemas


def _k(group: str, version: str, kind: str, plural: str, namespaced: bool, **kw: Any) -> Kind:
    return Kind(group=group, version=version, kind=kind, plural=plural, namespaced=namespaced,
                **kw)


def _review(group: str, kind: str, namespaced: bool,
            answer: Callable[[Kind, Obj, ReviewContext], Obj]) -> Kind:
    """A create-only review kind, answered by `answer` (`fakeapi.registry.reviews`); never
    stored."""
    return _k(group, "v1", kind, kind.lower() + "s", namespaced, verbs=("create",),
              has_generation=False, handler=Review(answer=answer))


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
ADMISSION = "admissionregistration.k8s.io"
STORAGE = "storage.k8s.io"
FLOWCONTROL = "flowcontrol.apiserver.k8s.io"
STATUS = {"status": StatusStrategy}
"""The subresources of a kind with only the default `/status`."""
SCALED = {"status": StatusStrategy, "scale": ScaleStrategy}
"""The subresources of a kind that `kubectl scale` can scale."""

# ----- core/v1 --------------------------------------------------------------------------------

NAMESPACES = _k(
    "", "v1", "Namespace", "namespaces", False, short_names=("ns",),
    subresources={"status": StatusStrategy, "finalize": NamespaceFinalizeStrategy},
    verbs=ALL_VERBS[:2] + ALL_VERBS[3:], has_generation=False, strategy=NamespaceStrategy,
    columns=columns.NAMESPACE, field_selectors=selectors.NAMESPACE_FIELDS,
    name_rule=names.name_is_dns_label)
NODES = _k(
    "", "v1", "Node", "nodes", False, short_names=("no",), subresources=STATUS,
    has_generation=False, strategy=NodeStrategy, columns=columns.NODE,
    field_selectors=selectors.NODE_FIELDS)
PODS = _k(
    "", "v1", "Pod", "pods", True, short_names=("po",), categories=("all",),
    subresources={"status": StatusStrategy, "binding": PodBindingStrategy,
                  "eviction": EvictionStrategy, "log": PodLogStrategy,
                  "exec": PodExecStrategy, "attach": PodAttachStrategy,
                  "portforward": PodPortForwardStrategy,
                  "ephemeralcontainers": EphemeralContainersStrategy},
    returns_deleted=True, strategy=PodStrategy, columns=columns.POD,
    field_selectors=selectors.POD_FIELDS, drop_fields=dropfields.POD, defaulter=wd.default_pod
)
BINDINGS = _k(
    "", "v1", "Binding", "bindings", True, verbs=("create",), has_generation=False,
    handler=PostsTo(target=PODS, subresource="binding"))
EVENTS = _k(
    "", "v1", "Event", "events", True, short_names=("ev",), has_generation=False,
    columns=columns.EVENT, field_selectors=selectors.EVENT_FIELDS,
    name_rule=names.name_is_path_segment)  # legacy event validation skips the name rules
SERVICE_ACCOUNTS = _k(
    "", "v1", "ServiceAccount", "serviceaccounts", True, short_names=("sa",),
    subresources={"token": TokenRequestStrategy}, has_generation=False, returns_deleted=True,
    columns=columns.SERVICE_ACCOUNT)
SECRETS = _k(
    "", "v1", "Secret", "secrets", True, has_generation=False, columns=wc.SECRET,
    strategy=SecretStrategy, field_selectors=selectors.SECRET_FIELDS, defaulter=wd.default_secret
)
SERVICES = _k(
    "", "v1", "Service", "services", True, short_names=("svc",), categories=("all",),
    subresources=STATUS, has_generation=False, strategy=ServiceStrategy, columns=wc.SERVICE,
    field_selectors=selectors.SERVICE_FIELDS, defaulter=wd.default_service,
    returns_deleted=True,  # as upstream's service storage (the official client decodes it)
)
ENDPOINTS = _k(
    "", "v1", "Endpoints", "endpoints", True, short_names=("ep",), has_generation=False,
    columns=wc.ENDPOINTS)
PERSISTENT_VOLUME_CLAIMS = _k(
    "", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, short_names=("pvc",),
    subresources=STATUS, has_generation=False, columns=wc.PERSISTENT_VOLUME_CLAIM,
    defaulter=wd.default_persistent_volume_claim
)
PERSISTENT_VOLUMES = _k(
    "", "v1", "PersistentVolume", "persistentvolumes", False, short_names=("pv",),
    subresources=STATUS, has_generation=False, columns=wc.PERSISTENT_VOLUME,
    defaulter=wd.default_persistent_volume
)
REPLICATION_CONTROLLERS = _k(
    "", "v1", "ReplicationController", "replicationcontrollers", True, short_names=("rc",),
    categories=("all",), subresources=SCALED, columns=wc.REPLICATION_CONTROLLER,
    field_selectors=selectors.REPLICATION_CONTROLLER_FIELDS,
    defaulter=wd.default_replication_controller
)
POD_TEMPLATES = _k(
    "", "v1", "PodTemplate", "podtemplates", True, has_generation=False,
    columns=wc.POD_TEMPLATE, defaulter=wd.default_pod_template
)
RESOURCE_QUOTAS = _k(
    "", "v1", "ResourceQuota", "resourcequotas", True, short_names=("quota",),
    subresources=STATUS, has_generation=False, columns=wc.RESOURCE_QUOTA)
LIMIT_RANGES = _k(
    "", "v1", "LimitRange", "limitranges", True, short_names=("limits",), has_generation=False,
    columns=wc.LIMIT_RANGE)
CONFIG_MAPS = _k(
    "", "v1", "ConfigMap", "configmaps", True, short_names=("cm",), has_generation=False,
    columns=columns.CONFIG_MAP)

# ----- the everyday groups ---------------------------------------------------------------------

LEASES = _k(
    "coordination.k8s.io", "v1", "Lease", "leases", True, has_generation=False,
    columns=columns.LEASE)
DEPLOYMENTS = _k(
    APPS, "v1", "Deployment", "deployments", True, short_names=("deploy",),
    categories=("all",), subresources=SCALED, strategy=PodControllerStrategy,
    columns=wc.DEPLOYMENT, defaulter=wd.default_deployment
)
REPLICA_SETS = _k(
    APPS, "v1", "ReplicaSet", "replicasets", True, short_names=("rs",), categories=("all",),
    subresources=SCALED, strategy=PodControllerStrategy, columns=wc.REPLICA_SET,
    field_selectors=selectors.REPLICA_SET_FIELDS, defaulter=wd.default_replica_set
)
STATEFUL_SETS = _k(
    APPS, "v1", "StatefulSet", "statefulsets", True, short_names=("sts",), categories=("all",),
    subresources=SCALED, strategy=PodControllerStrategy, columns=wc.STATEFUL_SET,
    defaulter=wd.default_stateful_set
)
DAEMON_SETS = _k(
    APPS, "v1", "DaemonSet", "daemonsets", True, short_names=("ds",), categories=("all",),
    subresources=STATUS, strategy=PodControllerStrategy, columns=wc.DAEMON_SET,
    defaulter=wd.default_daemon_set
)
CONTROLLER_REVISIONS = _k(
    APPS, "v1", "ControllerRevision", "controllerrevisions", True, has_generation=False,
    columns=wc.CONTROLLER_REVISION)
JOBS = _k(
    BATCH, "v1", "Job", "jobs", True, categories=("all",), subresources=STATUS,
    strategy=JobStrategy, columns=wc.JOB, field_selectors=selectors.JOB_FIELDS,
    defaulter=wd.default_job
)
CRON_JOBS = _k(
    BATCH, "v1", "CronJob", "cronjobs", True, short_names=("cj",), categories=("all",),
    subresources=STATUS, columns=wc.CRON_JOB, defaulter=wd.default_cron_job
)
HORIZONTAL_POD_AUTOSCALERS = _k(
    "autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", True,
    short_names=("hpa",), categories=("all",), subresources=STATUS,
    columns=wc.HORIZONTAL_POD_AUTOSCALER, defaulter=wd.default_horizontal_pod_autoscaler
)
POD_DISRUPTION_BUDGETS = _k(
    "policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, short_names=("pdb",),
    subresources=STATUS, columns=wc.POD_DISRUPTION_BUDGET)
ENDPOINT_SLICES = _k(
    "discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", True, has_generation=False,
    columns=wc.ENDPOINT_SLICE)
INGRESSES = _k(
    NETWORKING, "v1", "Ingress", "ingresses", True, short_names=("ing",), subresources=STATUS,
    columns=wc.INGRESS)
INGRESS_CLASSES = _k(
    NETWORKING, "v1", "IngressClass", "ingressclasses", False, columns=wc.INGRESS_CLASS)
NETWORK_POLICIES = _k(
    NETWORKING, "v1", "NetworkPolicy", "networkpolicies", True, short_names=("netpol",),
    columns=wc.NETWORK_POLICY)
# its shortName "ev" is the core Event's here (kubectl resolves "ev" to core/v1 anyway)
EVENTS_K8S_IO = _k(
    "events.k8s.io", "v1", "Event", "events", True, has_generation=False,
    columns=wc.EVENTS_V1)
CUSTOM_RESOURCE_DEFINITIONS = _k(
    APIEXTENSIONS, "v1", "CustomResourceDefinition", "customresourcedefinitions", False,
    short_names=("crd", "crds"), categories=("api-extensions",), subresources=STATUS,
    strategy=CustomResourceDefinitionStrategy, columns=wc.CUSTOM_RESOURCE_DEFINITION)
CERTIFICATE_SIGNING_REQUESTS = _k(
    CERTIFICATES, "v1", "CertificateSigningRequest", "certificatesigningrequests", False,
    short_names=("csr",),
    subresources={"status": StatusStrategy, "approval": CertificateApprovalStrategy},
    has_generation=True, strategy=CertificateSigningRequestStrategy,
    columns=wc.CERTIFICATE_SIGNING_REQUEST, field_selectors=selectors.CSR_FIELDS)

# ----- the platform groups charts and tools install objects of --------------------------------

VALIDATING_WEBHOOK_CONFIGURATIONS = _k(
    ADMISSION, "v1", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False,
    categories=("api-extensions",), columns=pc.WEBHOOK_CONFIGURATION)
MUTATING_WEBHOOK_CONFIGURATIONS = _k(
    ADMISSION, "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False,
    categories=("api-extensions",), columns=pc.WEBHOOK_CONFIGURATION)
VALIDATING_ADMISSION_POLICIES = _k(
    ADMISSION, "v1", "ValidatingAdmissionPolicy", "validatingadmissionpolicies", False,
    categories=("api-extensions",), subresources=STATUS,
    strategy=ValidatingAdmissionPolicyStrategy, columns=pc.VALIDATING_ADMISSION_POLICY)
VALIDATING_ADMISSION_POLICY_BINDINGS = _k(
    ADMISSION, "v1", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings",
    False, categories=("api-extensions",), strategy=PolicyBindingStrategy,
    columns=pc.ADMISSION_POLICY_BINDING)
# GA in 1.36 and on by default; stored, never enforced here (the README says so)
MUTATING_ADMISSION_POLICIES = _k(
    ADMISSION, "v1", "MutatingAdmissionPolicy", "mutatingadmissionpolicies", False,
    categories=("api-extensions",), columns=pc.MUTATING_ADMISSION_POLICY)
MUTATING_ADMISSION_POLICY_BINDINGS = _k(
    ADMISSION, "v1", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings",
    False, categories=("api-extensions",), strategy=PolicyBindingStrategy,
    columns=pc.ADMISSION_POLICY_BINDING)
STORAGE_CLASSES = _k(
    STORAGE, "v1", "StorageClass", "storageclasses", False, short_names=("sc",),
    has_generation=False, columns=pc.STORAGE_CLASS)
CSI_DRIVERS = _k(
    STORAGE, "v1", "CSIDriver", "csidrivers", False, has_generation=False,
    columns=pc.CSI_DRIVER)
CSI_NODES = _k(
    STORAGE, "v1", "CSINode", "csinodes", False, has_generation=False, columns=pc.CSI_NODE)
VOLUME_ATTACHMENTS = _k(
    STORAGE, "v1", "VolumeAttachment", "volumeattachments", False, subresources=STATUS,
    has_generation=False, columns=pc.VOLUME_ATTACHMENT)
CSI_STORAGE_CAPACITIES = _k(
    STORAGE, "v1", "CSIStorageCapacity", "csistoragecapacities", True, has_generation=False,
    columns=pc.CSI_STORAGE_CAPACITY)
VOLUME_ATTRIBUTES_CLASSES = _k(
    STORAGE, "v1", "VolumeAttributesClass", "volumeattributesclasses", False,
    short_names=("vac",), has_generation=False, columns=pc.VOLUME_ATTRIBUTES_CLASS)
RUNTIME_CLASSES = _k(
    "node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False, has_generation=False,
    columns=pc.RUNTIME_CLASS)
FLOW_SCHEMAS = _k(
    FLOWCONTROL, "v1", "FlowSchema", "flowschemas", False, subresources=STATUS,
    columns=pc.FLOW_SCHEMA)
PRIORITY_LEVEL_CONFIGURATIONS = _k(
    FLOWCONTROL, "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", False,
    subresources=STATUS, columns=pc.PRIORITY_LEVEL_CONFIGURATION)
API_SERVICES = _k(
    "apiregistration.k8s.io", "v1", "APIService", "apiservices", False,
    categories=("api-extensions",), subresources=STATUS, has_generation=False,
    columns=pc.API_SERVICE)

# ----- DRA and scheduling ----------------------------------------------------------------------

DEVICE_CLASSES = _k(
    RESOURCE, "v1", "DeviceClass", "deviceclasses", False, returns_deleted=True,
    strategy=DeviceClassStrategy, columns=columns.DEVICE_CLASS,
    drop_fields=dropfields.DEVICE_CLASS)
RESOURCE_CLAIMS = _k(
    RESOURCE, "v1", "ResourceClaim", "resourceclaims", True,
    subresources={"status": ResourceClaimStatusStrategy}, returns_deleted=True,
    strategy=ResourceClaimStrategy, columns=columns.RESOURCE_CLAIM,
    drop_fields=dropfields.RESOURCE_CLAIM, defaulter=claims.default_resource_claim
)
RESOURCE_CLAIM_TEMPLATES = _k(
    RESOURCE, "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True,
    returns_deleted=True, strategy=ResourceClaimTemplateStrategy,
    columns=columns.RESOURCE_CLAIM_TEMPLATE, drop_fields=dropfields.RESOURCE_CLAIM_TEMPLATE,
    defaulter=claims.default_resource_claim_template
)
RESOURCE_SLICES = _k(
    RESOURCE, "v1", "ResourceSlice", "resourceslices", False, returns_deleted=True,
    strategy=ResourceSliceStrategy, columns=columns.RESOURCE_SLICE,
    field_selectors=selectors.RESOURCE_SLICE_FIELDS, drop_fields=dropfields.RESOURCE_SLICE)
DEVICE_TAINT_RULES = _k(
    RESOURCE, "v1", "DeviceTaintRule", "devicetaintrules", False,
    subresources={"status": DeviceTaintRuleStatusStrategy}, feature_gate="DRADeviceTaintRules",
    strategy=DeviceTaintRuleStrategy, columns=columns.DEVICE_TAINT_RULE)
RESOURCE_POOL_STATUS_REQUESTS = _k(
    RESOURCE, "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", False,
    subresources={"status": ResourcePoolStatusRequestStatusStrategy},
    feature_gate="DRAResourcePoolStatus", returns_deleted=True, pointer_fields=("status",),
    strategy=ResourcePoolStatusRequestStrategy, columns=columns.RESOURCE_POOL_STATUS_REQUEST,
    drop_fields=dropfields.RESOURCE_POOL_STATUS_REQUEST,
    defaulter=poolstatus.default_resource_pool_status_request
)
POD_GROUPS = _k(
    SCHEDULING, "v1beta1", "PodGroup", "podgroups", True,
    subresources={"status": PodGroupStatusStrategy}, feature_gate="GenericWorkload",
    strategy=PodGroupStrategy, columns=columns.POD_GROUP, drop_fields=dropfields.POD_GROUP)
WORKLOADS = _k(
    SCHEDULING, "v1beta1", "Workload", "workloads", True, feature_gate="GenericWorkload",
    strategy=WorkloadStrategy, columns=columns.WORKLOAD, drop_fields=dropfields.WORKLOAD)
PRIORITY_CLASSES = _k(
    SCHEDULING, "v1", "PriorityClass", "priorityclasses", False, short_names=("pc",),
    has_generation=False, columns=columns.PRIORITY_CLASS)

# ----- RBAC ------------------------------------------------------------------------------------

ROLES = _k(
    RBAC, "v1", "Role", "roles", True, has_generation=False, strategy=RoleStrategy,
    columns=columns.ROLE, name_rule=names.name_is_rbac)
CLUSTER_ROLES = _k(
    RBAC, "v1", "ClusterRole", "clusterroles", False, has_generation=False,
    strategy=RoleStrategy, columns=columns.ROLE, name_rule=names.name_is_rbac)
ROLE_BINDINGS = _k(
    RBAC, "v1", "RoleBinding", "rolebindings", True, has_generation=False,
    strategy=RoleBindingStrategy, columns=columns.ROLE_BINDING, name_rule=names.name_is_rbac)
CLUSTER_ROLE_BINDINGS = _k(
    RBAC, "v1", "ClusterRoleBinding", "clusterrolebindings", False, has_generation=False,
    strategy=RoleBindingStrategy, columns=columns.CLUSTER_ROLE_BINDING,
    name_rule=names.name_is_rbac)

# ----- the emulator's fault injection and clock (fakeapi.schema.emulator) ----------------------

DEVICE_FAULTS = _k(
    EMULATOR, "v1alpha1", "DeviceFault", "devicefaults", False, categories=("faults",),
    subresources=STATUS,
    strategy=DeviceFaultStrategy, columns=columns.DEVICE_FAULT,
    field_selectors=selectors.FAULT_FIELDS)
NODE_FAULTS = _k(
    EMULATOR, "v1alpha1", "NodeFault", "nodefaults", False, categories=("faults",),
    subresources=STATUS,
    strategy=NodeFaultStrategy, columns=columns.NODE_FAULT,
    field_selectors=selectors.FAULT_FIELDS)
CLOCKS = _k(
    EMULATOR, "v1alpha1", "Clock", "clocks", False, verbs=("get", "list", "watch"),
    subresources={"advance": ClockAdvanceStrategy}, has_generation=False, strategy=ClockStrategy,
    columns=columns.CLOCK)

# ----- create-only reviews, answered by fakeapi.registry.reviews, never stored or listed ------

SELF_SUBJECT_REVIEWS = _review(AUTHENTICATION, "SelfSubjectReview", False,
                               reviews.self_subject_review)
TOKEN_REVIEWS = _review(AUTHENTICATION, "TokenReview", False, reviews.token_review)
LOCAL_SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "LocalSubjectAccessReview", True,
                                       reviews.subject_access_review)
SELF_SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "SelfSubjectAccessReview", False,
                                      reviews.self_subject_access_review)
SELF_SUBJECT_RULES_REVIEWS = _review(AUTHORIZATION, "SelfSubjectRulesReview", False,
                                     reviews.self_subject_rules_review)
SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "SubjectAccessReview", False,
                                 reviews.subject_access_review)

KINDS: tuple[Kind, ...] = (
    NAMESPACES, NODES, PODS, BINDINGS, EVENTS, SERVICE_ACCOUNTS, SECRETS, SERVICES, ENDPOINTS,
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, REPLICATION_CONTROLLERS, POD_TEMPLATES,
    RESOURCE_QUOTAS, LIMIT_RANGES, CONFIG_MAPS, LEASES, DEPLOYMENTS, REPLICA_SETS,
    STATEFUL_SETS, DAEMON_SETS, CONTROLLER_REVISIONS, JOBS, CRON_JOBS,
    HORIZONTAL_POD_AUTOSCALERS, POD_DISRUPTION_BUDGETS, ENDPOINT_SLICES, INGRESSES,
    INGRESS_CLASSES, NETWORK_POLICIES, EVENTS_K8S_IO, CUSTOM_RESOURCE_DEFINITIONS,
    CERTIFICATE_SIGNING_REQUESTS, VALIDATING_WEBHOOK_CONFIGURATIONS,
    MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_ADMISSION_POLICIES,
    VALIDATING_ADMISSION_POLICY_BINDINGS, MUTATING_ADMISSION_POLICIES,
    MUTATING_ADMISSION_POLICY_BINDINGS, STORAGE_CLASSES, CSI_DRIVERS, CSI_NODES,
    VOLUME_ATTACHMENTS, CSI_STORAGE_CAPACITIES, VOLUME_ATTRIBUTES_CLASSES, RUNTIME_CLASSES,
    FLOW_SCHEMAS, PRIORITY_LEVEL_CONFIGURATIONS, API_SERVICES, DEVICE_CLASSES, RESOURCE_CLAIMS,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_SLICES, DEVICE_TAINT_RULES, RESOURCE_POOL_STATUS_REQUESTS, POD_GROUPS, WORKLOADS,
    PRIORITY_CLASSES, ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS, DEVICE_FAULTS,
    NODE_FAULTS, CLOCKS, SELF_SUBJECT_REVIEWS, TOKEN_REVIEWS, LOCAL_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, SUBJECT_ACCESS_REVIEWS,
)
"""Every built-in row, in the order discovery lists them."""


def _also_at(row: Kind, version: str) -> Kind:
    """The row served at another version of its group, its objects stored at the row's."""
    return dataclasses.replace(row, version=version, storage_version=row.version)


ON_BY_DEFAULT: tuple[Kind, ...] = (_also_at(HORIZONTAL_POD_AUTOSCALERS, "v1"),)
"""Other versions of stored kinds a 1.37 kube-apiserver serves by default: autoscaling/v1
HorizontalPodAutoscalers, stored at v2 and converted (`fakeapi.registry.hpa_conversion`)."""

_DRA_KINDS = (DEVICE_CLASSES, RESOURCE_CLAIMS, RESOURCE_CLAIM_TEMPLATES, RESOURCE_SLICES)
OFF_BY_DEFAULT: tuple[Kind, ...] = (
    *(_also_at(row, "v1beta2") for row in (*_DRA_KINDS, DEVICE_TAINT_RULES)),
    *(_also_at(row, "v1beta1") for row in _DRA_KINDS),
    _also_at(POD_GROUPS, "v1alpha3"), _also_at(WORKLOADS, "v1alpha3"),
)
"""The older (or alpha) versions a 1.37 kube-apiserver still serves when `--runtime-config`
turns them on (off by default, as upstream's beta and alpha group/versions): each a row of
a stored kind at another version, converted on the way in and out. resource.k8s.io/v1beta1
(deprecated in 1.35, removed in 1.38: k8s.io/api's prerelease-lifecycle tags) has no
DeviceTaintRule."""


class KindTable:
    """Lookups over the served kinds (those whose feature gate is on)."""

    def __init__(self, kinds: Iterable[Kind], unserved: Iterable[Kind] = ()) -> None:
        self._unserved = tuple(unserved)
        """Stored rows whose own version is off while another version of theirs is served:
        found by resource id (the store, the components), never routed or discovered."""
        self._index(tuple(kinds))

    def _index(self, kinds: tuple[Kind, ...]) -> None:
        self.kinds = kinds
        self._by_resource = {(k.group, k.version, k.plural): k for k in self.kinds}
        self._by_gvk = {(k.group, k.version, k.kind): k for k in self.kinds}
        self._by_id = {k.resource_id: k for k in (*self._unserved, *self.kinds)
                       if not k.storage_version}

    @property
    def stored(self) -> tuple[Kind, ...]:
        """The stored row of every kind served at some version (its strategies run)."""
        return (*self._unserved, *(k for k in self.kinds if not k.storage_version))

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


def served_kinds(gates: GateReader | Mapping[str, bool] | None = None,
                 runtime: RuntimeConfig | None = None) -> KindTable:
    """The kinds a server with these gates and `--runtime-config` serves (gates as a
    mapping: overrides of the 1.37 defaults); `RuntimeConfigError` for a config upstream
    refuses.

    Without gates: every row of `KINDS`, as docs and schema tests want the whole table.
    """
    if gates is None:
        return KindTable((*KINDS, *ON_BY_DEFAULT))
    reader = FeatureGates(gates) if isinstance(gates, Mapping) else gates
    rows = [k for k in (*KINDS, *ON_BY_DEFAULT, *OFF_BY_DEFAULT)
            if not k.feature_gate or reader.enabled(k.feature_gate)]
    defaults: dict[tuple[str, str], bool] = {}
    for k in rows:
        defaults[k.group_version] = (defaults.get(k.group_version, False)
                                     or not k.storage_version or k in ON_BY_DEFAULT)
    versions, resources = (runtime or RuntimeConfig()).resolve(registered_versions(), defaults)
    served = [k for k in rows if versions[k.group_version]
              and resources.get((k.group, k.version, k.plural), True)]
    ids = {k.resource_id for k in served}
    unserved = [k for k in rows if not k.storage_version and k.resource_id in ids
                and k not in served]
    return KindTable(served, unserved)


def registered_versions() -> dict[str, set[str]]:
    """Every version each group of the table registers in 1.37 (kube-apiserver's scheme:
    the versions its OpenAPI has kinds of, served or not)."""
    found: dict[str, set[str]] = {k.group: set() for k in KINDS}
    for definition in get_schemas().definitions.values():
        for gvk in definition.get("x-kubernetes-group-version-kind") or ():
            if gvk.get("group") in found:
                found[gvk["group"]].add(gvk["version"])
    for k in KINDS:
        found[k.group].add(k.version)
    return found
