"""What `kubectl get` shows for each kind: declarative column specs, one per kind row
(core/v1, DRA, scheduling and the emulator's kinds; the everyday workload kinds are
`fakeapi.printers.workloads`, how a spec is declared and evaluated `fakeapi.printers.spec`).

Column semantics follow upstream's printers (pkg/printers/internalversion) for kinds that have
one; DRA and scheduling kinds without an upstream printer get columns of our own. Each row of
the kind table (`fakeapi.registry.kinds`) names its spec here; `fakeapi.http.tables` renders them as
`meta.k8s.io` Tables. Time only enters through `RowContext.now` (the injected clock).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from fakeapi.machinery.timestamps import parse_time_or_none, rfc3339_micro
from fakeapi.printers.spec import (
    AGE,
    CREATED_AT,
    NAME,
    Cell,
    CellFn,
    Obj,
    RowContext,
    TableSpec,
    col,
    condition,
    condition_status,
    condition_true,
    dict_at,
    elapsed,
    get_path,
    list_at,
    wide,
)

DEFAULT_SPEC = TableSpec((NAME, AGE))
"""The columns of a kind without a spec of its own."""


# --- core/v1 ----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PodSummary:
    """The Ready, Status and Restarts cells of a pod, derived as upstream's pod printer does."""

    ready: str
    status: str
    restarts: str


def _finished_at(container_status: dict[str, Any]) -> datetime | None:
    return parse_time_or_none(get_path(container_status, "lastState.terminated.finishedAt"))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


def _terminated_reason(term: dict[str, Any], prefix: str) -> str:
    if term.get("reason"):
        return prefix + str(term["reason"])
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode') or 0}"


def summarize_pod(pod: Obj, now: datetime) -> PodSummary:
    """Aggregate container states into kubectl's READY / STATUS / RESTARTS for one pod.

    Init containers decide while the pod initializes ("Init:1/2", "Init:CrashLoopBackOff");
    then the first container (from the end) with a waiting or terminated reason names the
    status; a deletionTimestamp on a non-terminal pod reads "Terminating" ("Unknown" when the
    pod's reason is NodeLost). Restartable init containers (sidecars) count as containers.
    """
    spec, status = dict_at(pod, "spec"), dict_at(pod, "status")
    conditions = list_at(status, "conditions")
    init_specs = list_at(spec, "initContainers")
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    total = len(list_at(spec, "containers")) + len(sidecars)

    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in conditions):
        reason = "SchedulingGated"

    ready = restarts = sidecar_restarts = 0
    last_restart: datetime | None = None
    last_sidecar_restart: datetime | None = None
    initializing = False
    for index, cs in enumerate(list_at(status, "initContainerStatuses")):
        count, finished = int(cs.get("restartCount") or 0), _finished_at(cs)
        restarts += count
        last_restart = _later(last_restart, finished)
        is_sidecar = cs.get("name") in sidecars
        if is_sidecar:
            sidecar_restarts += count
            last_sidecar_restart = _later(last_sidecar_restart, finished)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if is_sidecar and cs.get("started") is True:
            ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            reason = _terminated_reason(term, "Init:")
        elif waiting is not None and waiting.get("reason") not in (None, "", "PodInitializing"):
            reason = f"Init:{waiting['reason']}"
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break

    if not initializing or condition_true(conditions, "Initialized"):
        restarts, last_restart = sidecar_restarts, last_sidecar_restart
        has_running = False
        for cs in reversed(list_at(status, "containerStatuses")):
            restarts += int(cs.get("restartCount") or 0)
            last_restart = _later(last_restart, _finished_at(cs))
            state = cs.get("state") or {}
            term, waiting = state.get("terminated"), state.get("waiting")
            if waiting is not None and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif term is not None:
                reason = _terminated_reason(term, "")
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if condition_true(conditions, "Ready") else "NotReady"

    if get_path(pod, "metadata.deletionTimestamp") is not None:
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"

    restarts_cell = str(restarts)
    if restarts and last_restart is not None:
        restarts_cell = f"{restarts} ({elapsed(last_restart, now)} ago)"
    return PodSummary(ready=f"{ready}/{total}", status=reason, restarts=restarts_cell)


def _pod_summary(pod: Obj, ctx: RowContext) -> PodSummary:
    summary: PodSummary = ctx.memo("pod", lambda: summarize_pod(pod, ctx.now))
    return summary


def _pod_ready(pod: Obj, ctx: RowContext) -> Cell:
    return _pod_summary(pod, ctx).ready


def _pod_status(pod: Obj, ctx: RowContext) -> Cell:
    return _pod_summary(pod, ctx).status


def _pod_restarts(pod: Obj, ctx: RowContext) -> Cell:
    return _pod_summary(pod, ctx).restarts


def _pod_ip(pod: Obj, _: RowContext) -> Cell:
    # Same as upstream's v1→internal conversion: podIPs[0], else the legacy podIP field.
    ips = list_at(pod, "status.podIPs")
    return (ips[0].get("ip") if ips else get_path(pod, "status.podIP")) or "<none>"


def _readiness_gates(pod: Obj, _: RowContext) -> Cell:
    gates = list_at(pod, "spec.readinessGates")
    if not gates:
        return "<none>"
    conditions = list_at(pod, "status.conditions")
    passed = sum(1 for g in gates if condition_true(conditions, g.get("conditionType")))
    return f"{passed}/{len(gates)}"


def _pod_row_conditions(pod: Obj) -> list[dict[str, str]]:
    messages = {"Succeeded": "The pod has completed successfully.", "Failed": "The pod failed."}
    phase = get_path(pod, "status.phase")
    if phase not in messages:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": messages[phase]}]


POD = TableSpec(
    (
        NAME,
        col("Ready", _pod_ready, "Ready containers out of all containers (sidecars included)."),
        col("Status", _pod_status, "Aggregate status of the pod's containers."),
        col("Restarts", _pod_restarts, "Container restarts, and time since the last one."),
        AGE,
        wide("IP", _pod_ip, "First IP address of the pod."),
        wide("Node", "spec.nodeName", "Node the pod is bound to.", default="<none>"),
        wide("Nominated Node", "status.nominatedNodeName", "Node nominated by preemption.",
             default="<none>"),
        wide("Readiness Gates", _readiness_gates, "Readiness gates that are True, of all."),
    ),
    row_conditions=_pod_row_conditions,
)

_ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"


def _node_status(node: Obj, _: RowContext) -> Cell:
    ready = condition(node, "Ready")
    if ready is None:
        parts = ["Unknown"]
    else:
        parts = ["Ready" if ready.get("status") == "True" else "NotReady"]
    if get_path(node, "spec.unschedulable"):
        parts.append("SchedulingDisabled")
    return ",".join(parts)


def _node_roles(node: Obj, _: RowContext) -> Cell:
    roles = set()
    for key, value in dict_at(node, "metadata.labels").items():
        if key.startswith(_ROLE_LABEL_PREFIX) and key != _ROLE_LABEL_PREFIX:
            roles.add(key.removeprefix(_ROLE_LABEL_PREFIX))
        elif key == "kubernetes.io/role" and value:
            roles.add(str(value))
    return ",".join(sorted(roles)) or "<none>"


def _node_address(kind: str) -> CellFn:
    def cell(node: Obj, _: RowContext) -> Cell:
        for address in list_at(node, "status.addresses"):
            if address.get("type") == kind:
                return address.get("address") or ""
        return "<none>"

    return cell


NODE = TableSpec(
    (
        NAME,
        col("Status", _node_status, "Ready condition, plus SchedulingDisabled when cordoned."),
        col("Roles", _node_roles, "Roles from node-role.kubernetes.io/<role> labels."),
        AGE,
        col("Version", "status.nodeInfo.kubeletVersion", "Kubelet version."),
        wide("Internal-IP", _node_address("InternalIP"), "First InternalIP of the node."),
        wide("External-IP", _node_address("ExternalIP"), "First ExternalIP of the node."),
        wide("OS-Image", "status.nodeInfo.osImage", "Operating system image.",
             default="<unknown>"),
        wide("Kernel-Version", "status.nodeInfo.kernelVersion", "Kernel version.",
             default="<unknown>"),
        wide("Container-Runtime", "status.nodeInfo.containerRuntimeVersion",
             "Container runtime and version.", default="<unknown>"),
    )
)


def _event_first_seen(ev: Obj, ctx: RowContext) -> Cell:
    return ctx.age(ev.get("firstTimestamp") or ev.get("eventTime"))


def _event_last_seen(ev: Obj, ctx: RowContext) -> Cell:
    series = ev.get("series")
    if isinstance(series, dict):
        return ctx.age(series.get("lastObservedTime"))
    if ev.get("lastTimestamp"):
        return ctx.age(ev["lastTimestamp"])
    return _event_first_seen(ev, ctx)


def _event_count(ev: Obj, _: RowContext) -> Cell:
    series = ev.get("series")
    if isinstance(series, dict):
        return int(series.get("count") or 0)
    return int(ev.get("count") or 0) or 1  # singleton events of the new API have no count


def _event_object(ev: Obj, _: RowContext) -> Cell:
    kind = str(get_path(ev, "involvedObject.kind") or "").lower()
    name = get_path(ev, "involvedObject.name")
    return f"{kind}/{name}" if name else kind


def _event_source(ev: Obj, _: RowContext) -> Cell:
    component = get_path(ev, "source.component") or ev.get("reportingComponent") or ""
    instance = get_path(ev, "source.host") or ev.get("reportingInstance") or ""
    return f"{component}, {instance}" if instance else component


def _event_message(ev: Obj, _: RowContext) -> Cell:
    return str(ev.get("message") or "").strip()


EVENT = TableSpec(
    (
        col("Last Seen", _event_last_seen, "Time since the event last occurred."),
        col("Type", "type", "Normal or Warning."),
        col("Reason", "reason", "Short machine-readable reason."),
        col("Object", _event_object, "The object the event is about (kind/name)."),
        wide("Subobject", "involvedObject.fieldPath", "Field path within the object."),
        wide("Source", _event_source, "Reporting component and host."),
        col("Message", _event_message, "Human-readable description."),
        wide("First Seen", _event_first_seen, "Time since the event first occurred."),
        wide("Count", _event_count, "How many times the event occurred."),
        dataclasses.replace(NAME, priority=1),
    )
)


def _config_map_data(cm: Obj, _: RowContext) -> Cell:
    return len(dict_at(cm, "data")) + len(dict_at(cm, "binaryData"))


def _role_ref(binding: Obj, _: RowContext) -> Cell:
    return f"{get_path(binding, 'roleRef.kind') or ''}/{get_path(binding, 'roleRef.name') or ''}"


def _subjects(kind: str) -> CellFn:
    """Cell: names of one kind of binding subject (service accounts as namespace/name)."""

    def cell(binding: Obj, _: RowContext) -> Cell:
        names = []
        for s in list_at(binding, "subjects"):
            if s.get("kind") == kind:
                name = str(s.get("name") or "")
                names.append(f"{s.get('namespace') or ''}/{name}" if kind == "ServiceAccount"
                             else name)
        return ", ".join(names)

    return cell


def _binding_spec(scope: str) -> TableSpec:
    return TableSpec(
        (
            NAME,
            col("Role", _role_ref, "Kind/name of the bound role."),
            AGE,
            wide("Users", _subjects("User"), f"Users in the {scope}."),
            wide("Groups", _subjects("Group"), f"Groups in the {scope}."),
            wide("ServiceAccounts", _subjects("ServiceAccount"), f"SAs in the {scope}."),
        )
    )


NAMESPACE = TableSpec((NAME, col("Status", "status.phase", "Namespace phase."), AGE))

# The Secrets count went away upstream (kubernetes#117160, 1.35): core components stopped
# populating serviceaccount.secrets in 1.24.
SERVICE_ACCOUNT = TableSpec((NAME, AGE))

CONFIG_MAP = TableSpec((NAME, col("Data", _config_map_data, "Keys in data and binaryData."), AGE))

LEASE = TableSpec((NAME, col("Holder", "spec.holderIdentity", "Current lease holder."), AGE))

PRIORITY_CLASS = TableSpec(
    (
        NAME,
        col("Value", "value", "Priority of pods in this class.", type="integer", default=0),
        col("Global-Default", "globalDefault", "Whether pods without a class get this one.",
            type="boolean", default=False),
        AGE,
        col("PreemptionPolicy", "preemptionPolicy", "Never or PreemptLowerPriority."),
    )
)

# Roles have no upstream printer: the apiserver's default convertor shows Name and Created At.
ROLE = TableSpec((NAME, CREATED_AT))


# --- resource.k8s.io --------------------------------------------------------------------------


def resource_claim_state(claim: Obj) -> str:
    """Upstream's claim STATE: "deleted" while being deleted, then "pending" or "allocated",
    plus "reserved" when status.reservedFor is not empty ("allocated,reserved")."""
    states = []
    deleting = get_path(claim, "metadata.deletionTimestamp") is not None
    if deleting:
        states.append("deleted")
    if get_path(claim, "status.allocation") is None:
        if not deleting:
            states.append("pending")
    else:
        states.append("allocated")
        if list_at(claim, "status.reservedFor"):
            states.append("reserved")
    return ",".join(states)


def _claim_state(claim: Obj, _: RowContext) -> Cell:
    return resource_claim_state(claim)


RESOURCE_CLAIM = TableSpec(
    (
        NAME,
        col("State", _claim_state,
            "A summary of the current state (allocated, pending, reserved, etc.)."),
        AGE,  # upstream's printer has these three only, wide or not
    )
)

RESOURCE_SLICE = TableSpec(
    (
        NAME,
        col("Node", "spec.nodeName", "Node providing the devices of the slice."),
        col("Driver", "spec.driver", "DRA driver publishing the slice."),
        col("Pool", "spec.pool.name", "Resource pool the slice belongs to."),
        AGE,
    )
)


def _taint(rule: Obj, _: RowContext) -> Cell:
    taint = dict_at(rule, "spec.taint")
    key, value, effect = taint.get("key") or "", taint.get("value"), taint.get("effect") or ""
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


DEVICE_TAINT_RULE = TableSpec(
    (
        NAME,
        col("Driver", "spec.deviceSelector.driver", "Driver of the tainted devices (* any).",
            default="*"),
        col("Pool", "spec.deviceSelector.pool", "Pool of the tainted devices (* any).",
            default="*"),
        col("Device", "spec.deviceSelector.device", "Tainted device (* any).", default="*"),
        col("Taint", _taint, "The taint, as key=value:effect."),
        AGE,
        wide("Evicting", condition_status("EvictionInProgress"),
             "Status of the EvictionInProgress condition."),
    )
)


def _request_status(req: Obj, _: RowContext) -> Cell:
    for cond_type in ("Failed", "Complete"):
        cond = condition(req, cond_type)
        if cond is not None and cond.get("status") == "True":
            return cond_type
    return "Pending"


def _pool_devices(req: Obj, _: RowContext) -> Cell:
    pools = list_at(req, "status.pools")
    if not pools:
        return None
    available = sum(int(p.get("availableDevices") or 0) for p in pools)
    total = sum(int(p.get("totalDevices") or 0) for p in pools)
    return f"{available}/{total}"


RESOURCE_POOL_STATUS_REQUEST = TableSpec(
    (
        NAME,
        col("Driver", "spec.driver", "Driver whose pools are reported."),
        col("Pools", "status.poolCount", "Pools matching the request.", type="integer",
            default=None),
        col("Status", _request_status, "Complete or Failed once processed, else Pending."),
        AGE,
        wide("Pool", "spec.poolName", "Pool filter (* for every pool).", default="*"),
        wide("Limit", "spec.limit", "Maximum number of pools listed.", type="integer",
             default=100),
        wide("Available", _pool_devices, "Available of total devices in the listed pools."),
    )
)


# --- scheduling.k8s.io ------------------------------------------------------------------------


def _group_policy(group: Obj, _: RowContext) -> Cell:
    policy = dict_at(group, "spec.schedulingPolicy")
    if "gang" in policy:
        return "Gang"
    return "Basic" if "basic" in policy else "<none>"


def _group_workload(group: Obj, _: RowContext) -> Cell:
    ref = dict_at(group, "spec.workloadRef")
    if not ref:
        return "<none>"
    return f"{ref.get('workloadName') or ''}/{ref.get('templateName') or ''}"


def _group_claims(group: Obj, _: RowContext) -> Cell:
    return len(list_at(group, "spec.resourceClaims"))


POD_GROUP = TableSpec(
    (
        NAME,
        col("Policy", _group_policy, "Gang or Basic scheduling."),
        col("Min Count", "spec.schedulingPolicy.gang.minCount",
            "Pods that must be schedulable together (gang policy).", type="integer",
            default=None),
        col("Scheduled", condition_status("PodGroupInitiallyScheduled", "PodGroupScheduled"),
            "Status of the PodGroupInitiallyScheduled condition."),
        AGE,
        wide("Workload", _group_workload, "Workload/template the group was created from."),
        wide("Priority Class", "spec.priorityClassName", "Priority class of the group.",
             default="<none>"),
        wide("Claims", _group_claims, "ResourceClaims shared by the group's pods.",
             type="integer"),
    )
)


def _workload_templates(workload: Obj, _: RowContext) -> Cell:
    spec = dict_at(workload, "spec")
    return (len(list_at(spec, "podGroupTemplates"))
            + len(list_at(spec, "compositePodGroupTemplates")))


def _workload_controller(workload: Obj, _: RowContext) -> Cell:
    ref = dict_at(workload, "spec.controllerRef")
    if not ref:
        return "<none>"
    kind, group, name = str(ref.get("kind") or "").lower(), ref.get("apiGroup"), ref.get("name")
    return f"{kind}.{group}/{name or ''}" if group else f"{kind}/{name or ''}"


WORKLOAD = TableSpec(
    (
        NAME,
        col("Templates", _workload_templates, "Number of (composite) pod group templates.",
            type="integer"),
        col("Controller", _workload_controller, "The controlling object, if any."),
        AGE,
    )
)


ROLE_BINDING = _binding_spec("role binding")
CLUSTER_ROLE_BINDING = _binding_spec("cluster role binding")
DEVICE_CLASS = TableSpec((NAME, AGE))
RESOURCE_CLAIM_TEMPLATE = TableSpec((NAME, AGE))


# --- the emulator's faults ------------------------------------------------------------------

DEVICE_FAULT = TableSpec((
    NAME,
    col("Node", "spec.nodeName", "The emulated node."),
    col("Driver", "spec.driver", "The driver of the device."),
    col("Device", "spec.device", "The broken device."),
    col("Mode", "spec.mode", "Unhealthy or StopReporting.", default="Unhealthy"),
    AGE,
    wide("Message", "spec.message", "The health message."),
))

NODE_FAULT = TableSpec((
    NAME,
    col("Node", "spec.nodeName", "The node that stops heartbeating."),
    col("Mode", "spec.mode", "StopHeartbeat.", default="StopHeartbeat"),
    AGE,
))


def _clock_now(_: Obj, ctx: RowContext) -> Cell:
    return rfc3339_micro(ctx.now)


CLOCK = TableSpec((
    NAME,
    col("Now", _clock_now, "The clock's time now (status.now is its reading at the last "
        "advance or start)."),
    col("Mode", "status.mode", "real, virtual or virtual:auto."),
    AGE,
))
