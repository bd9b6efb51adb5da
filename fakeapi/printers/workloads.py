"""`kubectl get` columns of the everyday kinds (workloads, services, secrets, volumes,
policy, networking, events.k8s.io, CRDs, CSRs), as upstream's printers
(pkg/printers/internalversion) show them. The DRA and core kinds' specs are in
`fakeapi.printers.columns`; both use `fakeapi.printers.spec`'s helpers.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fakeapi.machinery.timestamps import parse_time_or_none
from fakeapi.printers.spec import (
    AGE,
    CREATED_AT,
    NAME,
    Cell,
    Obj,
    RowContext,
    TableSpec,
    col,
    dict_at,
    get_path,
    list_at,
    wide,
)
from fakeapi.printers.spec import human_duration as _human


def _ratio(ready: str, total: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return f"{get_path(obj, ready) or 0}/{get_path(obj, total) or 0}"

    return cell


def _int(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return int(get_path(obj, path) or 0)

    return cell


def _containers(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return ",".join(str(c.get("name") or "") for c in list_at(obj, path))

    return cell


def _images(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return ",".join(str(c.get("image") or "") for c in list_at(obj, path))

    return cell


def format_label_selector(selector: Any) -> str:
    """Upstream's metav1.FormatLabelSelector: `a=b,c in (d,e)`, `<none>` when empty."""
    if not isinstance(selector, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for req in selector.get("matchExpressions") or []:
        op, key = str(req.get("operator") or ""), str(req.get("key") or "")
        values = ",".join(req.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def _selector(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        return format_label_selector(get_path(obj, path))

    return cell


def _map_selector(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        found = dict_at(obj, path)
        return ",".join(f"{k}={v}" for k, v in sorted(found.items())) or "<none>"

    return cell


def _template_columns(prefix: str) -> tuple[Any, ...]:
    containers = f"{prefix}.containers"
    return (wide("Containers", _containers(containers), "Names of the containers."),
            wide("Images", _images(containers), "Images of the containers."))


_POD_TEMPLATE = "spec.template.spec"

DEPLOYMENT = TableSpec((
    NAME,
    col("Ready", _ratio("status.readyReplicas", "spec.replicas"), "Ready of desired pods."),
    col("Up-to-date", _int("status.updatedReplicas"), "Pods of the newest template.",
        type="integer"),
    col("Available", _int("status.availableReplicas"), "Pods available to users.",
        type="integer"),
    AGE,
    *_template_columns(_POD_TEMPLATE),
    wide("Selector", _selector("spec.selector"), "The label selector of its pods."),
))

def _replica_counts(selector: Any) -> TableSpec:
    """ReplicaSet and ReplicationController columns (their selectors differ in shape)."""
    return TableSpec((
        NAME,
        col("Desired", _int("spec.replicas"), "Desired pods.", type="integer"),
        col("Current", _int("status.replicas"), "Current pods.", type="integer"),
        col("Ready", _int("status.readyReplicas"), "Ready pods.", type="integer"),
        AGE,
        *_template_columns(_POD_TEMPLATE),
        wide("Selector", selector, "The label selector of its pods."),
    ))


REPLICA_SET = _replica_counts(_selector("spec.selector"))
REPLICATION_CONTROLLER = _replica_counts(_map_selector("spec.selector"))

STATEFUL_SET = TableSpec((
    NAME,
    col("Ready", _ratio("status.readyReplicas", "spec.replicas"), "Ready of desired pods."),
    AGE,
    *_template_columns(_POD_TEMPLATE),
))

DAEMON_SET = TableSpec((
    NAME,
    col("Desired", _int("status.desiredNumberScheduled"), "Nodes that should run it.",
        type="integer"),
    col("Current", _int("status.currentNumberScheduled"), "Nodes running it.",
        type="integer"),
    col("Ready", _int("status.numberReady"), "Nodes where it is ready.", type="integer"),
    col("Up-to-date", _int("status.updatedNumberScheduled"), "Nodes with the newest template.",
        type="integer"),
    col("Available", _int("status.numberAvailable"), "Nodes where it is available.",
        type="integer"),
    col("Node Selector", _map_selector("spec.template.spec.nodeSelector"),
        "Nodes it is limited to."),
    AGE,
    *_template_columns(_POD_TEMPLATE),
    wide("Selector", _selector("spec.selector"), "The label selector of its pods."),
))


def _controller(obj: Obj, _: RowContext) -> Cell:
    for ref in list_at(obj, "metadata.ownerReferences"):
        if ref.get("controller"):
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "").lower()
            return f"{kind}.{group}/{ref.get('name')}" if group else f"{kind}/{ref.get('name')}"
    return "<none>"


CONTROLLER_REVISION = TableSpec((
    NAME,
    col("Controller", _controller, "The owning controller."),
    col("Revision", _int("revision"), "Revision number.", type="integer"),
    AGE,
))


def _conditions_true(obj: Obj) -> set[str]:
    return {str(c.get("type")) for c in list_at(obj, "status.conditions")
            if c.get("status") == "True"}


def job_status(job: Obj) -> str:
    """Upstream's job STATUS (1.33+): the terminal or transitional condition, else Running."""
    true = _conditions_true(job)
    for condition in ("Failed", "Complete", "Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if condition in true:
            return condition
    if get_path(job, "metadata.deletionTimestamp") is not None:
        return "Terminating"
    return "Running"


def _job_status(job: Obj, _: RowContext) -> Cell:
    return job_status(job)


def _completions(job: Obj, _: RowContext) -> Cell:
    succeeded = int(get_path(job, "status.succeeded") or 0)
    completions = get_path(job, "spec.completions")
    if completions is None:
        parallelism = int(get_path(job, "spec.parallelism") or 0)
        return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    return f"{succeeded}/{completions}"


def _duration(job: Obj, ctx: RowContext) -> Cell:
    start = parse_time_or_none(get_path(job, "status.startTime"))
    if start is None:
        return ""
    end = parse_time_or_none(get_path(job, "status.completionTime"))
    now = ctx.now if ctx.now.tzinfo else ctx.now.replace(tzinfo=start.tzinfo)
    return _human((end or now) - start)


JOB = TableSpec((
    NAME,
    col("Status", _job_status, "Complete, Failed, Suspended or Running."),
    col("Completions", _completions, "Succeeded of desired completions."),
    col("Duration", _duration, "Time the job ran."),
    AGE,
    *_template_columns(_POD_TEMPLATE),
    wide("Selector", _selector("spec.selector"), "The label selector of its pods."),
))


def _last_schedule(cron: Obj, ctx: RowContext) -> Cell:
    when = get_path(cron, "status.lastScheduleTime")
    return ctx.age(when) if when else "<none>"


def _active(cron: Obj, _: RowContext) -> Cell:
    return len(list_at(cron, "status.active"))


CRON_JOB = TableSpec((
    NAME,
    col("Schedule", "spec.schedule", "The cron schedule."),
    col("Timezone", "spec.timeZone", "Time zone of the schedule.", default="<none>"),
    col("Suspend", "spec.suspend", "Whether new runs are suspended.", type="boolean",
        default=False),
    col("Active", _active, "Running jobs.", type="integer"),
    col("Last Schedule", _last_schedule, "Time since the last run was scheduled."),
    AGE,
    *_template_columns("spec.jobTemplate.spec.template.spec"),
    wide("Selector", _selector("spec.jobTemplate.spec.selector"), "Selector of its pods."),
))


def _external_ip(svc: Obj, _: RowContext) -> Cell:
    kind = get_path(svc, "spec.type") or "ClusterIP"
    external = [str(x) for x in get_path(svc, "spec.externalIPs") or []]
    if kind == "ExternalName":
        return str(get_path(svc, "spec.externalName") or "<none>")
    if kind == "LoadBalancer":
        ingress = [str(i.get("ip") or i.get("hostname") or "")
                   for i in list_at(svc, "status.loadBalancer.ingress")]
        found = ingress + external
        return ",".join(found) if found else "<pending>"
    return ",".join(external) or "<none>"


def _ports(svc: Obj, _: RowContext) -> Cell:
    parts = []
    for port in list_at(svc, "spec.ports"):
        text = f"{port.get('port')}"
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        parts.append(f"{text}/{port.get('protocol') or 'TCP'}")
    return ",".join(parts) or "<none>"


SERVICE = TableSpec((
    NAME,
    col("Type", "spec.type", "ClusterIP, NodePort, LoadBalancer or ExternalName."),
    col("Cluster-IP", "spec.clusterIP", "The virtual IP of the service.", default="<none>"),
    col("External-IP", _external_ip, "External addresses."),
    col("Port(s)", _ports, "Ports the service exposes."),
    AGE,
    wide("Selector", _map_selector("spec.selector"), "Pods it routes to."),
))


def _endpoints(ep: Obj, _: RowContext) -> Cell:
    found = []
    for subset in list_at(ep, "subsets"):
        ports = [p.get("port") for p in list_at(subset, "ports")] or [None]
        for address in list_at(subset, "addresses"):
            for port in ports:
                found.append(f"{address.get('ip')}:{port}" if port else str(address.get("ip")))
    shown = ",".join(found[:3])
    return (shown + f" + {len(found) - 3} more...") if len(found) > 3 else shown or "<none>"


ENDPOINTS = TableSpec((NAME, col("Endpoints", _endpoints, "Addresses and ports."), AGE))


def _slice_ports(es: Obj, _: RowContext) -> Cell:
    ports = [str(p.get("port")) for p in list_at(es, "ports") if p.get("port") is not None]
    return ",".join(ports) or "<unset>"


def _slice_endpoints(es: Obj, _: RowContext) -> Cell:
    found = [str(a) for e in list_at(es, "endpoints") for a in e.get("addresses") or []]
    shown = ",".join(found[:3])
    return (shown + f" + {len(found) - 3} more...") if len(found) > 3 else shown or "<unset>"


ENDPOINT_SLICE = TableSpec((
    NAME,
    col("AddressType", "addressType", "IPv4, IPv6 or FQDN."),
    col("Ports", _slice_ports, "Ports of the endpoints."),
    col("Endpoints", _slice_endpoints, "Addresses of the endpoints."),
    AGE,
))


def _secret_data(secret: Obj, _: RowContext) -> Cell:
    return len(dict_at(secret, "data"))


SECRET = TableSpec((
    NAME,
    col("Type", "type", "The secret type."),
    col("Data", _secret_data, "Keys in data.", type="integer"),
    AGE,
))


def _access_modes(path: str) -> Any:
    short = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX",
             "ReadWriteOncePod": "RWOP"}

    def cell(obj: Obj, _: RowContext) -> Cell:
        return ",".join(short.get(str(m), str(m)) for m in get_path(obj, path) or [])

    return cell


def _claim_ref(pv: Obj, _: RowContext) -> Cell:
    ref = dict_at(pv, "spec.claimRef")
    return f"{ref.get('namespace')}/{ref.get('name')}" if ref else ""


PERSISTENT_VOLUME_CLAIM = TableSpec((
    NAME,
    col("Status", "status.phase", "Pending, Bound or Lost."),
    col("Volume", "spec.volumeName", "The bound volume."),
    col("Capacity", "status.capacity.storage", "Capacity of the bound volume."),
    col("Access Modes", _access_modes("status.accessModes"), "Access modes of the volume."),
    col("StorageClass", "spec.storageClassName", "The storage class.", default="<unset>"),
    col("VolumeAttributesClass", "spec.volumeAttributesClassName",
        "The volume attributes class.", default="<unset>"),
    AGE,
    wide("VolumeMode", "spec.volumeMode", "Filesystem or Block."),
))

PERSISTENT_VOLUME = TableSpec((
    NAME,
    col("Capacity", "spec.capacity.storage", "Capacity of the volume."),
    col("Access Modes", _access_modes("spec.accessModes"), "Access modes."),
    col("Reclaim Policy", "spec.persistentVolumeReclaimPolicy", "Retain, Delete or Recycle."),
    col("Status", "status.phase", "Available, Bound, Released or Failed."),
    col("Claim", _claim_ref, "The claim bound to it."),
    col("StorageClass", "spec.storageClassName", "The storage class."),
    col("VolumeAttributesClass", "spec.volumeAttributesClassName",
        "The volume attributes class.", default="<unset>"),
    col("Reason", "status.reason", "Why it is in its phase."),
    AGE,
    wide("VolumeMode", "spec.volumeMode", "Filesystem or Block."),
))


def _labels(path: str) -> Any:
    return _map_selector(path)


POD_TEMPLATE = TableSpec((
    col("Template", "metadata.name", "Name of the pod template.", format="name"),
    col("Containers", _containers("template.spec.containers"), "Names of the containers."),
    col("Images", _images("template.spec.containers"), "Images of the containers."),
    col("Pod Labels", _labels("template.metadata.labels"), "Labels of its pods."),
))


def _budget(path: str) -> Any:
    def cell(obj: Obj, _: RowContext) -> Cell:
        found = get_path(obj, path)
        return "N/A" if found is None else str(found)

    return cell


POD_DISRUPTION_BUDGET = TableSpec((
    NAME,
    col("Min Available", _budget("spec.minAvailable"), "Pods that must stay available."),
    col("Max Unavailable", _budget("spec.maxUnavailable"), "Pods that may be unavailable."),
    col("Allowed Disruptions", _int("status.disruptionsAllowed"), "Evictions allowed now.",
        type="integer"),
    AGE,
))


def _ingress_hosts(ing: Obj, _: RowContext) -> Cell:
    hosts = [str(r.get("host")) for r in list_at(ing, "spec.rules") if r.get("host")]
    return ",".join(hosts) or "*"


def _ingress_address(ing: Obj, _: RowContext) -> Cell:
    return ",".join(str(i.get("ip") or i.get("hostname") or "")
                    for i in list_at(ing, "status.loadBalancer.ingress"))


def _ingress_ports(ing: Obj, _: RowContext) -> Cell:
    return "80, 443" if list_at(ing, "spec.tls") else "80"


INGRESS = TableSpec((
    NAME,
    col("Class", "spec.ingressClassName", "The ingress class.", default="<none>"),
    col("Hosts", _ingress_hosts, "Hosts it serves."),
    col("Address", _ingress_address, "Addresses of the load balancer."),
    col("Ports", _ingress_ports, "Ports it listens on."),
    AGE,
))


def _parameters(ic: Obj, _: RowContext) -> Cell:
    ref = dict_at(ic, "spec.parameters")
    if not ref:
        return "<none>"
    group = ref.get("apiGroup")
    kind = f"{ref.get('kind')}.{group}" if group else str(ref.get("kind"))
    return f"{kind}/{ref.get('name')}"


INGRESS_CLASS = TableSpec((
    NAME,
    col("Controller", "spec.controller", "The controller implementing the class."),
    col("Parameters", _parameters, "Parameters of the class."),
    AGE,
))

NETWORK_POLICY = TableSpec((
    NAME,
    col("Pod-Selector", _selector("spec.podSelector"), "Pods the policy applies to."),
    AGE,
))


def _regarding(ev: Obj, _: RowContext) -> Cell:
    kind = str(get_path(ev, "regarding.kind") or "").lower()
    name = get_path(ev, "regarding.name")
    return f"{kind}/{name}" if name else kind


def _last_seen(ev: Obj, ctx: RowContext) -> Cell:
    when = (get_path(ev, "series.lastObservedTime") or ev.get("deprecatedLastTimestamp")
            or ev.get("eventTime") or get_path(ev, "metadata.creationTimestamp"))
    return ctx.age(when)


EVENTS_V1 = TableSpec((
    col("Last Seen", _last_seen, "Time since the event last occurred."),
    col("Type", "type", "Normal or Warning."),
    col("Reason", "reason", "Short machine-readable reason."),
    col("Object", _regarding, "The object the event is about (kind/name)."),
    col("Message", "note", "Human-readable description."),
    wide("Name", "metadata.name", "Name of the event.", format="name"),
))

CUSTOM_RESOURCE_DEFINITION = TableSpec((NAME, CREATED_AT))


def _csr_condition(csr: Obj, _: RowContext) -> Cell:
    found = [str(c.get("type")) for c in list_at(csr, "status.conditions")
             if c.get("status", "True") == "True"]
    if get_path(csr, "status.certificate"):
        found.append("Issued")
    return ",".join(found) or "Pending"


def _requested_duration(csr: Obj, _: RowContext) -> Cell:
    seconds = get_path(csr, "spec.expirationSeconds")
    if seconds is None:
        return "<none>"
    return _human(timedelta(seconds=int(seconds)))


CERTIFICATE_SIGNING_REQUEST = TableSpec((
    NAME,
    AGE,
    col("SignerName", "spec.signerName", "Who signs the certificate."),
    col("Requestor", "spec.username", "Who asked for it."),
    col("RequestedDuration", _requested_duration, "Requested validity."),
    col("Condition", _csr_condition, "Approved, Denied, Failed, Issued or Pending."),
))


def _hpa_reference(hpa: Obj, _: RowContext) -> Cell:
    ref = dict_at(hpa, "spec.scaleTargetRef")
    return f"{ref.get('kind') or ''}/{ref.get('name') or ''}"


def _hpa_targets(hpa: Obj, _: RowContext) -> Cell:
    """Same as upstream's formatHPAMetrics for the common resource metrics: current/target
    (`<unknown>` until the metrics pipeline reports)."""
    current = {str(get_path(m, "resource.name")): m.get("resource") or {}
               for m in list_at(hpa, "status.currentMetrics") if m.get("type") == "Resource"}
    parts = []
    for metric in list_at(hpa, "spec.metrics"):
        if metric.get("type") != "Resource":
            parts.append("<unknown>/<unknown>")
            continue
        name = str(get_path(metric, "resource.name"))
        target = dict_at(metric, "resource.target")
        seen = dict_at(current.get(name) or {}, "current")
        if target.get("averageUtilization") is not None:
            now = seen.get("averageUtilization")
            parts.append(f"{name}: {now if now is not None else '<unknown>'}%/"
                         f"{target['averageUtilization']}%")
        else:
            goal = target.get("averageValue") or target.get("value")
            parts.append(f"{name}: {seen.get('averageValue') or '<unknown>'}/{goal}")
    return ", ".join(parts) or "<none>"


HORIZONTAL_POD_AUTOSCALER = TableSpec((
    NAME,
    col("Reference", _hpa_reference, "The scaled workload."),
    col("Targets", _hpa_targets, "Current and target metrics."),
    col("MinPods", "spec.minReplicas", "Lower bound of replicas.", type="integer", default=1),
    col("MaxPods", "spec.maxReplicas", "Upper bound of replicas.", type="integer", default=0),
    col("Replicas", _int("status.currentReplicas"), "Current replicas.", type="integer"),
    AGE,
))


def _quota(limits: bool) -> Any:
    def cell(quota: Obj, _: RowContext) -> Cell:
        hard, used = dict_at(quota, "spec.hard"), dict_at(quota, "status.used")
        return ", ".join(f"{name}: {used.get(name, '0')}/{value}"
                         for name, value in sorted(hard.items())
                         if name.startswith("limits.") is limits)

    return cell


RESOURCE_QUOTA = TableSpec((
    NAME,
    AGE,
    col("Request", _quota(False), "Used of hard request quotas."),
    col("Limit", _quota(True), "Used of hard limit quotas."),
))

LIMIT_RANGE = TableSpec((NAME, CREATED_AT))
