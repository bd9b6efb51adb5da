"""`kubectl get` columns of the platform groups charts and tools install objects of:
admissionregistration.k8s.io, storage.k8s.io, node.k8s.io, flowcontrol.apiserver.k8s.io and
apiregistration.k8s.io, as upstream's printers (pkg/printers/internalversion, and
kube-aggregator's for APIService) show them.
"""

from __future__ import annotations

from typing import Any

from fakeapi.printers import spec as ps
from fakeapi.printers.spec import AGE, NAME, Cell, Obj, RowContext, TableSpec, col

UNSET = "<unset>"
DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class",
                 "storageclass.beta.kubernetes.io/is-default-class")


def _count(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return len(ps.list_at(obj, path))

    return cell


def _param_kind(policy: Obj, _: RowContext) -> Cell:
    """Same as upstream's printValidatingAdmissionPolicy: `apiVersion/kind`, `<unset>`."""
    kind = ps.dict_at(policy, "spec.paramKind")
    return f"{kind.get('apiVersion')}/{kind.get('kind')}" if kind else UNSET


def _param_ref(binding: Obj, _: RowContext) -> Cell:
    """`namespace/name` (`*` for a selector), `<unset>` without a paramRef."""
    ref = ps.dict_at(binding, "spec.paramRef")
    if not ref:
        return UNSET
    name = ref.get("name") or "*"
    return f"{ref['namespace']}/{name}" if ref.get("namespace") else name


WEBHOOK_CONFIGURATION = TableSpec((
    NAME, col("Webhooks", _count("webhooks"), "Webhooks of the configuration.",
              type="integer"), AGE))
VALIDATING_ADMISSION_POLICY = TableSpec((
    NAME, col("Validations", _count("spec.validations"), "Validations of the policy.",
              type="integer"),
    col("ParamKind", _param_kind, "The kind of the policy's parameters."), AGE))
MUTATING_ADMISSION_POLICY = TableSpec((
    NAME, col("Mutations", _count("spec.mutations"), "Mutations of the policy.",
              type="integer"),
    col("ParamKind", _param_kind, "The kind of the policy's parameters."), AGE))
ADMISSION_POLICY_BINDING = TableSpec((
    NAME, col("PolicyName", "spec.policyName", "The policy the binding binds."),
    col("ParamRef", _param_ref, "The parameters the binding passes."), AGE))


def _class_name(sc: Obj, _: RowContext) -> Cell:
    """Same as upstream's printStorageClass: the default class is marked `(default)`."""
    annotations = ps.dict_at(sc, "metadata.annotations")
    default = any(annotations.get(key) == "true" for key in DEFAULT_CLASS)
    return f"{ps.get_path(sc, 'metadata.name')}{' (default)' if default else ''}"


def _bool(path: str, default: bool) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        value = ps.get_path(obj, path)
        return str(default if value is None else bool(value)).lower()

    return cell


def _token_requests(driver: Obj, _: RowContext) -> Cell:
    audiences = [str(t.get("audience") or "<api-server-audience>")
                 for t in ps.list_at(driver, "spec.tokenRequests")]
    return ",".join(audiences) or "<unset>"


def _modes(driver: Obj, _: RowContext) -> Cell:
    modes = ps.get_path(driver, "spec.volumeLifecycleModes")
    return ",".join(str(m) for m in modes) if isinstance(modes, list) and modes else "<none>"


STORAGE_CLASS = TableSpec((
    col("Name", _class_name, "Name of the object.", format="name"),
    col("Provisioner", "provisioner", "The volume plugin that provisions volumes."),
    col("ReclaimPolicy", "reclaimPolicy", "What happens to released volumes.",
        default="Delete"),
    col("VolumeBindingMode", "volumeBindingMode", "When volumes are bound.",
        default="Immediate"),
    col("AllowVolumeExpansion", _bool("allowVolumeExpansion", False),
        "Whether volumes of the class can be expanded."),
    AGE,
))
CSI_DRIVER = TableSpec((
    NAME,
    col("AttachRequired", _bool("spec.attachRequired", True), "Whether attach is required."),
    col("PodInfoOnMount", _bool("spec.podInfoOnMount", False),
        "Whether pod information is passed on mount."),
    col("StorageCapacity", _bool("spec.storageCapacity", False),
        "Whether the driver publishes storage capacity."),
    col("TokenRequests", _token_requests, "Audiences of the tokens the driver receives."),
    col("RequiresRepublish", _bool("spec.requiresRepublish", False),
        "Whether volumes are republished periodically."),
    col("Modes", _modes, "The volume lifecycle modes the driver supports."),
    AGE,
))
CSI_NODE = TableSpec((
    NAME, col("Drivers", _count("spec.drivers"), "CSI drivers on the node.", type="integer"),
    AGE))
VOLUME_ATTACHMENT = TableSpec((
    NAME,
    col("Attacher", "spec.attacher", "The volume driver attaching the volume."),
    col("PV", "spec.source.persistentVolumeName", "The persistent volume attached."),
    col("Node", "spec.nodeName", "The node the volume is attached to."),
    col("Attached", _bool("status.attached", False), "Whether the volume is attached."),
    AGE,
))
CSI_STORAGE_CAPACITY = TableSpec((
    NAME,
    col("StorageClassName", "storageClassName", "The storage class of the capacity."),
    col("Capacity", "capacity", "The capacity reported.", default="<unset>"),
    AGE,
))
VOLUME_ATTRIBUTES_CLASS = TableSpec((
    NAME, col("DriverName", "driverName", "The CSI driver of the class."), AGE))
RUNTIME_CLASS = TableSpec((
    NAME, col("Handler", "handler", "The CRI handler of the class."), AGE))


def _distinguisher(fs: Obj, _: RowContext) -> Cell:
    return str(ps.get_path(fs, "spec.distinguisherMethod.type") or "<none>")


def _missing_pl(fs: Obj, _: RowContext) -> Cell:
    found = ps.condition(fs, "Dangling")
    return str(found.get("status")) if found else "Unknown"


def _limited(path: str) -> Any:
    def cell(pl: Obj, _: RowContext) -> Cell:
        value = ps.get_path(pl, "spec.limited." + path)
        return "<none>" if value is None else value

    return cell


def _queuing(path: str) -> Any:
    def cell(pl: Obj, _: RowContext) -> Cell:
        value = ps.get_path(pl, "spec.limited.limitResponse.queuing." + path)
        return "<none>" if value is None else value

    return cell


FLOW_SCHEMA = TableSpec((
    NAME,
    col("PriorityLevel", "spec.priorityLevelConfiguration.name",
        "The priority level the matching requests go to."),
    col("MatchingPrecedence", "spec.matchingPrecedence",
        "Lower values are matched first.", type="integer", default=1000),
    col("DistinguisherMethod", _distinguisher, "How flows are told apart."),
    AGE,
    col("MissingPL", _missing_pl, "Whether the priority level is missing."),
))
PRIORITY_LEVEL_CONFIGURATION = TableSpec((
    NAME,
    col("Type", "spec.type", "Exempt or Limited."),
    col("NominalConcurrencyShares", _limited("nominalConcurrencyShares"),
        "The level's share of the server's concurrency."),
    col("Queues", _queuing("queues"), "Number of queues."),
    col("HandSize", _queuing("handSize"), "Queues a flow is shuffle-sharded to."),
    col("QueueLengthLimit", _queuing("queueLengthLimit"), "Requests a queue may hold."),
    AGE,
))


def _service(api: Obj, _: RowContext) -> Cell:
    service = ps.dict_at(api, "spec.service")
    return f"{service.get('namespace')}/{service.get('name')}" if service else "Local"


def _available(api: Obj, _: RowContext) -> Cell:
    """Same as kube-aggregator's printer: the Available condition, its reason when False."""
    found = ps.condition(api, "Available")
    if not found:
        return "Unknown"
    status = str(found.get("status"))
    return status if status == "True" else f"{status} ({found.get('reason')})"


API_SERVICE = TableSpec((
    NAME, col("Service", _service, "The service serving the group version."),
    col("Available", _available, "Whether the group version is available."), AGE))
