"""Tests for fakeapi.http.tables and fakeapi.printers.columns: column specs, cells per kind,
HumanDuration,
Accept negotiation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import orjson
import pytest

from fakeapi.http import tables
from fakeapi.printers import columns
from fakeapi.printers.spec import human_duration, since
from fakeapi.registry.kinds import KINDS
from fakeapi.registry.rest import Kind

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
KIND = {k.kind: k for k in KINDS if k.group != "events.k8s.io"}  # Event: the core one
WIDGET = Kind(group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True)


def ago(**delta: float) -> str:
    """RFC 3339 timestamp `delta` before NOW."""
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, *, age: timedelta = timedelta(minutes=5), **extra: Any) -> dict[str, Any]:
    """Object metadata created `age` before NOW."""
    created = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"name": name, "creationTimestamp": created, **extra}


# --- HumanDuration ----------------------------------------------------------------------------

DURATIONS = [
    (timedelta(seconds=-3), "<invalid>"),
    (timedelta(seconds=-2), "<invalid>"),
    (timedelta(seconds=-1.5), "0s"),
    (timedelta(seconds=-1), "0s"),
    (timedelta(0), "0s"),
    (timedelta(milliseconds=999), "0s"),
    (timedelta(seconds=5), "5s"),
    (timedelta(seconds=119), "119s"),
    (timedelta(minutes=2), "2m"),
    (timedelta(minutes=3, seconds=20), "3m20s"),
    (timedelta(minutes=9, seconds=59), "9m59s"),
    (timedelta(minutes=10), "10m"),
    (timedelta(minutes=10, seconds=59), "10m"),
    (timedelta(minutes=179), "179m"),
    (timedelta(hours=3), "3h"),
    (timedelta(hours=3, minutes=30), "3h30m"),
    (timedelta(hours=7, minutes=59), "7h59m"),
    (timedelta(hours=8), "8h"),
    (timedelta(hours=47, minutes=59), "47h"),
    (timedelta(hours=48), "2d"),
    (timedelta(days=2, hours=3), "2d3h"),
    (timedelta(days=7, hours=23), "7d23h"),
    (timedelta(days=8), "8d"),
    (timedelta(days=729), "729d"),
    (timedelta(days=730), "2y"),
    (timedelta(days=731), "2y1d"),
    (timedelta(days=365 * 8 - 1), "7y364d"),
    (timedelta(days=365 * 8), "8y"),
    (timedelta(days=365 * 20 + 100), "20y"),
]


@pytest.mark.parametrize(("delta", "expected"), DURATIONS, ids=[e for _, e in DURATIONS])
def test_human_duration(delta: timedelta, expected: str) -> None:
    assert human_duration(delta) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "<unknown>"),
        ("", "<unknown>"),
        ("not-a-time", "<unknown>"),
        (ago(seconds=30), "30s"),
        ("2026-03-01T13:59:00+02:00", "60s"),  # offsets are honoured
        ("2026-03-01T11:59:58.500000Z", "1s"),  # MicroTime, truncated
    ],
)
def test_since(value: object, expected: str) -> None:
    assert since(value, NOW) == expected


def test_since_accepts_naive_now_as_utc() -> None:
    assert since(ago(hours=3), NOW.replace(tzinfo=None)) == "3h"


# --- column definitions -----------------------------------------------------------------------

# (kind, [(column name, priority)]) — upstream's columns where upstream has a printer.
COLUMNS = [
    (KIND["Namespace"], [("Name", 0), ("Status", 0), ("Age", 0)]),
    (KIND["Node"], [("Name", 0), ("Status", 0), ("Roles", 0), ("Age", 0), ("Version", 0),
                    ("Internal-IP", 1), ("External-IP", 1), ("OS-Image", 1),
                    ("Kernel-Version", 1), ("Container-Runtime", 1)]),
    (KIND["Pod"], [("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0),
                   ("IP", 1), ("Node", 1), ("Nominated Node", 1), ("Readiness Gates", 1)]),
    (KIND["Event"], [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0),
                     ("Subobject", 1), ("Source", 1), ("Message", 0), ("First Seen", 1),
                     ("Count", 1), ("Name", 1)]),
    (KIND["ServiceAccount"], [("Name", 0), ("Age", 0)]),
    (KIND["ConfigMap"], [("Name", 0), ("Data", 0), ("Age", 0)]),
    (KIND["Lease"], [("Name", 0), ("Holder", 0), ("Age", 0)]),
    (KIND["PriorityClass"], [("Name", 0), ("Value", 0), ("Global-Default", 0), ("Age", 0),
                             ("PreemptionPolicy", 0)]),
    (KIND["Role"], [("Name", 0), ("Created At", 0)]),
    (KIND["ClusterRole"], [("Name", 0), ("Created At", 0)]),
    (KIND["RoleBinding"], [("Name", 0), ("Role", 0), ("Age", 0), ("Users", 1), ("Groups", 1),
                           ("ServiceAccounts", 1)]),
    (KIND["ClusterRoleBinding"], [("Name", 0), ("Role", 0), ("Age", 0), ("Users", 1),
                                  ("Groups", 1), ("ServiceAccounts", 1)]),
    (KIND["DeviceClass"], [("Name", 0), ("Age", 0)]),
    (KIND["ResourceClaim"], [("Name", 0), ("State", 0), ("Age", 0)]),
    (KIND["ResourceClaimTemplate"], [("Name", 0), ("Age", 0)]),
    (KIND["ResourceSlice"], [("Name", 0), ("Node", 0), ("Driver", 0), ("Pool", 0), ("Age", 0)]),
    (KIND["DeviceTaintRule"], [("Name", 0), ("Driver", 0), ("Pool", 0), ("Device", 0),
                               ("Taint", 0), ("Age", 0), ("Evicting", 1)]),
    (KIND["ResourcePoolStatusRequest"], [("Name", 0), ("Driver", 0), ("Pools", 0),
                                         ("Status", 0), ("Age", 0), ("Pool", 1), ("Limit", 1),
                                         ("Available", 1)]),
    (KIND["PodGroup"], [("Name", 0), ("Policy", 0), ("Min Count", 0), ("Scheduled", 0),
                        ("Age", 0), ("Workload", 1), ("Priority Class", 1), ("Claims", 1)]),
    (KIND["Workload"], [("Name", 0), ("Templates", 0), ("Controller", 0), ("Age", 0)]),
    (WIDGET, [("Name", 0), ("Age", 0)]),
]


@pytest.mark.parametrize(("kind", "expected"), COLUMNS, ids=[k.kind for k, _ in COLUMNS])
def test_column_definitions(kind: Kind, expected: list[tuple[str, int]]) -> None:
    defs = tables.column_definitions(kind)
    assert [(d["name"], d["priority"]) for d in defs] == expected
    for d in defs:
        assert set(d) == {"name", "type", "format", "description", "priority"}
        assert d["type"] in ("string", "integer", "boolean", "date")
        assert d["description"]
    names = [d for d in defs if d["name"] == "Name"]
    assert names and names[0]["format"] == "name"


def test_column_types_of_typed_cells() -> None:
    types = {d["name"]: d["type"] for d in tables.column_definitions(KIND["PriorityClass"])}
    assert types == {"Name": "string", "Value": "integer", "Global-Default": "boolean",
                     "Age": "string", "PreemptionPolicy": "string"}
    created = tables.column_definitions(KIND["Role"])[1]
    assert created["type"] == "date"


# --- pods -------------------------------------------------------------------------------------


def running(name: str, *, ready: bool = True, restarts: int = 0, last: str | None = None
            ) -> dict[str, Any]:
    """A running container status."""
    status: dict[str, Any] = {"name": name, "ready": ready, "restartCount": restarts,
                              "started": True, "state": {"running": {"startedAt": ago(hours=1)}}}
    if last:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": last}}
    return status


def waiting(name: str, reason: str, *, restarts: int = 0, last: str | None = None
            ) -> dict[str, Any]:
    """A waiting container status."""
    status: dict[str, Any] = {"name": name, "ready": False, "restartCount": restarts,
                              "state": {"waiting": {"reason": reason}}}
    if last:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": last}}
    return status


def terminated(name: str, exit_code: int, reason: str = "", signal: int = 0) -> dict[str, Any]:
    """A terminated container status."""
    state: dict[str, Any] = {"exitCode": exit_code}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": name, "ready": False, "restartCount": 0, "state": {"terminated": state}}


def pod(*, containers: int = 1, init: list[dict[str, Any]] | None = None,
        metadata: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    """A pod with `containers` app containers, optional init containers and a status."""
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}"} for i in range(containers)]}
    if init is not None:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {**meta("p"), **(metadata or {})},
            "spec": spec, "status": status}


DELETING = {"deletionTimestamp": ago(seconds=10)}
INIT2 = [{"name": "i0"}, {"name": "i1"}]

# (id, pod, (ready, status, restarts))
POD_CASES = [
    ("pending", pod(phase="Pending"), ("0/1", "Pending", "0")),
    ("no-status", pod(), ("0/1", "", "0")),
    ("running", pod(phase="Running", containerStatuses=[running("c0")]),
     ("1/1", "Running", "0")),
    ("not-ready", pod(phase="Running", containerStatuses=[running("c0", ready=False)]),
     ("0/1", "Running", "0")),
    ("crashloop", pod(containers=2, phase="Running", containerStatuses=[
        running("c0"),
        waiting("c1", "CrashLoopBackOff", restarts=3, last=ago(minutes=5))]),
     ("1/2", "CrashLoopBackOff", "3 (5m ago)")),
    ("restarts-without-date", pod(phase="Running", containerStatuses=[
        running("c0", restarts=2)]), ("1/1", "Running", "2")),
    ("latest-restart-wins", pod(containers=2, phase="Running", containerStatuses=[
        running("c0", restarts=1, last=ago(hours=2)),
        running("c1", restarts=1, last=ago(seconds=40))]), ("2/2", "Running", "2 (40s ago)")),
    ("image-pull", pod(phase="Pending", containerStatuses=[
        waiting("c0", "ImagePullBackOff")]), ("0/1", "ImagePullBackOff", "0")),
    ("exit-code", pod(phase="Running", containerStatuses=[terminated("c0", 137)]),
     ("0/1", "ExitCode:137", "0")),
    ("signal", pod(phase="Running", containerStatuses=[terminated("c0", 0, signal=9)]),
     ("0/1", "Signal:9", "0")),
    ("init-progress", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        terminated("i0", 0, "Completed"), running("i1", ready=False)]),
     ("0/1", "Init:1/2", "0")),
    ("init-error", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        terminated("i0", 1, "Error")]), ("0/1", "Init:Error", "0")),
    ("init-exit-code", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        terminated("i0", 2)]), ("0/1", "Init:ExitCode:2", "0")),
    ("init-signal", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        terminated("i0", 3, signal=15)]), ("0/1", "Init:Signal:15", "0")),
    ("init-crashloop", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        waiting("i0", "CrashLoopBackOff", restarts=4, last=ago(minutes=1))]),
     ("0/1", "Init:CrashLoopBackOff", "4 (60s ago)")),
    ("init-pod-initializing", pod(init=INIT2, phase="Pending", initContainerStatuses=[
        waiting("i0", "PodInitializing")]), ("0/1", "Init:0/2", "0")),
    ("init-done", pod(init=INIT2, phase="Running", initContainerStatuses=[
        terminated("i0", 0, "Completed"), terminated("i1", 0, "Completed")],
        containerStatuses=[running("c0")]), ("1/1", "Running", "0")),
    ("sidecar", pod(init=[{"name": "proxy", "restartPolicy": "Always"}], phase="Running",
                    initContainerStatuses=[running("proxy", restarts=1, last=ago(hours=1))],
                    containerStatuses=[running("c0")]),
     ("2/2", "Running", "1 (60m ago)")),
    ("sidecar-not-started", pod(init=[{"name": "proxy", "restartPolicy": "Always"}],
                                phase="Pending", initContainerStatuses=[
                                    waiting("proxy", "ContainerCreating")]),
     ("0/2", "Init:ContainerCreating", "0")),
    ("terminating", pod(metadata=DELETING, phase="Running", containerStatuses=[running("c0")]),
     ("1/1", "Terminating", "0")),
    ("node-lost", pod(metadata=DELETING, phase="Running", reason="NodeLost"),
     ("0/1", "Unknown", "0")),
    ("succeeded", pod(phase="Succeeded", containerStatuses=[terminated("c0", 0, "Completed")]),
     ("0/1", "Completed", "0")),
    ("succeeded-while-deleting", pod(metadata=DELETING, phase="Succeeded", containerStatuses=[
        terminated("c0", 0, "Completed")]), ("0/1", "Completed", "0")),
    ("evicted", pod(phase="Failed", reason="Evicted"), ("0/1", "Evicted", "0")),
    ("scheduling-gated", pod(phase="Pending", conditions=[
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]),
     ("0/1", "SchedulingGated", "0")),
    ("completed-but-running-not-ready", pod(containers=2, phase="Running", containerStatuses=[
        terminated("c0", 0, "Completed"), running("c1")]), ("1/2", "NotReady", "0")),
    ("completed-but-running-ready", pod(
        containers=2, phase="Running", conditions=[{"type": "Ready", "status": "True"}],
        containerStatuses=[terminated("c0", 0, "Completed"), running("c1")]),
     ("1/2", "Running", "0")),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in POD_CASES],
                         ids=[c[0] for c in POD_CASES])
def test_pod_ready_status_restarts(obj: dict[str, Any], expected: tuple[str, str, str]) -> None:
    assert tuple(tables.cells(KIND["Pod"], obj, now=NOW)[1:4]) == expected


# --- cells per kind ---------------------------------------------------------------------------

NODE = {
    "metadata": meta("gpu-1", age=timedelta(days=3), labels={
        "node-role.kubernetes.io/worker": "", "node-role.kubernetes.io/gpu": "",
        "kubernetes.io/role": "edge", "node-role.kubernetes.io/": ""}),
    "spec": {"unschedulable": True},
    "status": {
        "conditions": [{"type": "MemoryPressure", "status": "False"},
                       {"type": "Ready", "status": "True"}],
        "addresses": [{"type": "Hostname", "address": "gpu-1"},
                      {"type": "InternalIP", "address": "10.0.0.7"},
                      {"type": "InternalIP", "address": "10.0.0.8"}],
        "nodeInfo": {"kubeletVersion": "v1.37.0", "osImage": "Ubuntu 24.04"},
    },
}

POD_WIDE = {
    "metadata": meta("web", age=timedelta(seconds=42)),
    "spec": {"containers": [{"name": "c"}], "nodeName": "gpu-1",
             "readinessGates": [{"conditionType": "x/a"}, {"conditionType": "x/b"}]},
    "status": {"phase": "Running", "podIP": "10.1.0.9",
               "podIPs": [{"ip": "10.1.0.9"}, {"ip": "fd00::9"}],
               "conditions": [{"type": "x/a", "status": "True"},
                              {"type": "x/b", "status": "False"}],
               "containerStatuses": [running("c")]},
}

OLD_EVENT = {
    "metadata": meta("web.17a", namespace="default"),
    "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{c}"},
    "reason": "BackOff", "message": "  Back-off restarting failed container\n", "type": "Warning",
    "firstTimestamp": ago(hours=2), "lastTimestamp": ago(minutes=3), "count": 7,
    "source": {"component": "kubelet", "host": "gpu-1"},
}

NEW_EVENT = {
    "metadata": meta("claim.17b", namespace="default"),
    "involvedObject": {"kind": "ResourceClaim"},
    "reason": "Allocated", "message": "ok", "type": "Normal",
    "eventTime": "2026-03-01T11:59:30.000000Z",
    "reportingComponent": "kube-scheduler", "reportingInstance": "",
}

SERIES_EVENT = {
    **NEW_EVENT,
    "series": {"count": 4, "lastObservedTime": "2026-03-01T11:59:55.000000Z"},
}

ALLOCATION = {
    "devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-1", "device": "gpu-0"},
        {"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-1", "device": "gpu-1"},
        {"request": "nic", "driver": "nic.example.com", "pool": "gpu-1", "device": "nic-0"},
    ]},
    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]},
}
RESERVED = [{"resource": "pods", "name": "web", "uid": "u1"},
            {"resource": "podgroups", "apiGroup": "scheduling.k8s.io", "name": "g", "uid": "u2"}]


def claim(status: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    """A ResourceClaim with the given status."""
    return {"metadata": meta("c", **metadata), "spec": {}, "status": status or {}}


# (id, kind, object, all cells)
CELL_CASES = [
    ("namespace", "Namespace", {"metadata": meta("dev", age=timedelta(days=40)),
                                "status": {"phase": "Active"}}, ["dev", "Active", "40d"]),
    ("namespace-terminating", "Namespace", {"metadata": meta("old"),
                                            "status": {"phase": "Terminating"}},
     ["old", "Terminating", "5m"]),
    ("node", "Node", NODE, ["gpu-1", "Ready,SchedulingDisabled", "edge,gpu,worker", "3d",
                            "v1.37.0", "10.0.0.7", "<none>", "Ubuntu 24.04", "<unknown>",
                            "<unknown>"]),
    ("node-not-ready", "Node", {"metadata": meta("n"), "status": {
        "conditions": [{"type": "Ready", "status": "Unknown"}]}},
     ["n", "NotReady", "<none>", "5m", "", "<none>", "<none>", "<unknown>", "<unknown>",
      "<unknown>"]),
    ("node-no-conditions", "Node", {"metadata": meta("n")},
     ["n", "Unknown", "<none>", "5m", "", "<none>", "<none>", "<unknown>", "<unknown>",
      "<unknown>"]),
    ("pod-wide", "Pod", POD_WIDE, ["web", "1/1", "Running", "0", "42s", "10.1.0.9", "gpu-1",
                                   "<none>", "1/2"]),
    ("pod-legacy-ip", "Pod", {"metadata": meta("p"), "spec": {"containers": [{"name": "c"}]},
                              "status": {"podIP": "10.1.0.3", "nominatedNodeName": "gpu-2"}},
     ["p", "0/1", "", "0", "5m", "10.1.0.3", "<none>", "gpu-2", "<none>"]),
    ("event-core", "Event", OLD_EVENT, ["3m", "Warning", "BackOff", "pod/web",
                                        "spec.containers{c}", "kubelet, gpu-1",
                                        "Back-off restarting failed container", "120m", 7,
                                        "web.17a"]),
    ("event-new-api", "Event", NEW_EVENT, ["30s", "Normal", "Allocated", "resourceclaim", "",
                                           "kube-scheduler", "ok", "30s", 1, "claim.17b"]),
    ("event-series", "Event", SERIES_EVENT, ["5s", "Normal", "Allocated", "resourceclaim", "",
                                             "kube-scheduler", "ok", "30s", 4, "claim.17b"]),
    ("event-no-times", "Event", {"metadata": meta("e")},
     ["<unknown>", "", "", "", "", "", "", "<unknown>", 1, "e"]),
    ("serviceaccount", "ServiceAccount", {"metadata": meta("default"),
                                          "secrets": [{"name": "tok"}]}, ["default", "5m"]),
    ("configmap", "ConfigMap", {"metadata": meta("cfg"), "data": {"a": "1", "b": "2"},
                                "binaryData": {"c": "AA=="}}, ["cfg", 3, "5m"]),
    ("configmap-empty", "ConfigMap", {"metadata": meta("cfg")}, ["cfg", 0, "5m"]),
    ("lease", "Lease", {"metadata": meta("kube-scheduler"),
                        "spec": {"holderIdentity": "sched-1_abc"}},
     ["kube-scheduler", "sched-1_abc", "5m"]),
    ("lease-free", "Lease", {"metadata": meta("l"), "spec": {}}, ["l", "", "5m"]),
    ("priorityclass", "PriorityClass", {"metadata": meta("high"), "value": 1000,
                                        "preemptionPolicy": "PreemptLowerPriority"},
     ["high", 1000, False, "5m", "PreemptLowerPriority"]),
    ("priorityclass-default", "PriorityClass", {"metadata": meta("low"), "value": -5,
                                                "globalDefault": True},
     ["low", -5, True, "5m", ""]),
    ("role", "Role", {"metadata": {"name": "r", "creationTimestamp": "2026-03-01T13:00:00+02:00"}},
     ["r", "2026-03-01T11:00:00Z"]),
    ("clusterrole-no-timestamp", "ClusterRole", {"metadata": {"name": "admin"}},
     ["admin", "0001-01-01T00:00:00Z"]),
    ("rolebinding", "RoleBinding", {
        "metadata": meta("rb"), "roleRef": {"kind": "Role", "name": "edit"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"},
                     {"kind": "Group", "name": "devs"},
                     {"kind": "ServiceAccount", "name": "driver", "namespace": "dra"}]},
     ["rb", "Role/edit", "5m", "alice, bob", "devs", "dra/driver"]),
    ("clusterrolebinding", "ClusterRoleBinding", {
        "metadata": meta("crb"), "roleRef": {"kind": "ClusterRole", "name": "view"}},
     ["crb", "ClusterRole/view", "5m", "", "", ""]),
    ("deviceclass", "DeviceClass", {"metadata": meta("gpu.example.com")},
     ["gpu.example.com", "5m"]),
    ("claim-pending", "ResourceClaim", claim(), ["c", "pending", "5m"]),
    ("claim-allocated", "ResourceClaim", claim({"allocation": ALLOCATION}),
     ["c", "allocated", "5m"]),
    ("claim-reserved", "ResourceClaim", claim({"allocation": ALLOCATION, "reservedFor": RESERVED}),
     ["c", "allocated,reserved", "5m"]),
    ("claim-deleted", "ResourceClaim", claim(deletionTimestamp=ago(seconds=1)),
     ["c", "deleted", "5m"]),
    ("claim-deleted-reserved", "ResourceClaim",
     claim({"allocation": ALLOCATION, "reservedFor": RESERVED}, deletionTimestamp=ago(seconds=1)),
     ["c", "deleted,allocated,reserved", "5m"]),
    ("claimtemplate", "ResourceClaimTemplate", {"metadata": meta("t"), "spec": {}}, ["t", "5m"]),
    ("slice", "ResourceSlice", {"metadata": meta("gpu-1-gpu.example.com-x"), "spec": {
        "driver": "gpu.example.com", "nodeName": "gpu-1",
        "pool": {"name": "gpu-1", "generation": 1, "resourceSliceCount": 1}}},
     ["gpu-1-gpu.example.com-x", "gpu-1", "gpu.example.com", "gpu-1", "5m"]),
    ("slice-all-nodes", "ResourceSlice", {"metadata": meta("s"), "spec": {
        "driver": "net.example.com", "allNodes": True, "pool": {"name": "fabric"}}},
     ["s", "", "net.example.com", "fabric", "5m"]),
    ("taintrule", "DeviceTaintRule", {"metadata": meta("drain"), "spec": {
        "deviceSelector": {"driver": "gpu.example.com", "pool": "gpu-1"},
        "taint": {"key": "example.com/unhealthy", "value": "ecc", "effect": "NoExecute"}},
        "status": {"conditions": [{"type": "EvictionInProgress", "status": "True"}]}},
     ["drain", "gpu.example.com", "gpu-1", "*", "example.com/unhealthy=ecc:NoExecute", "5m",
      "True"]),
    ("taintrule-no-value", "DeviceTaintRule", {"metadata": meta("t"), "spec": {
        "deviceSelector": {}, "taint": {"key": "maintenance", "effect": "NoSchedule"}}},
     ["t", "*", "*", "*", "maintenance:NoSchedule", "5m", None]),
    ("poolstatus-pending", "ResourcePoolStatusRequest", {
        "metadata": meta("check"), "spec": {"driver": "gpu.example.com"}},
     ["check", "gpu.example.com", None, "Pending", "5m", "*", 100, None]),
    ("poolstatus-complete", "ResourcePoolStatusRequest", {
        "metadata": meta("check"), "spec": {"driver": "gpu.example.com", "poolName": "gpu-1",
                                            "limit": 10},
        "status": {"poolCount": 2, "conditions": [{"type": "Complete", "status": "True"}],
                   "pools": [{"driver": "gpu.example.com", "poolName": "a", "totalDevices": 8,
                              "availableDevices": 6},
                             {"driver": "gpu.example.com", "poolName": "b", "totalDevices": 4,
                              "availableDevices": 0, "allocatedDevices": 4}]}},
     ["check", "gpu.example.com", 2, "Complete", "5m", "gpu-1", 10, "6/12"]),
    ("poolstatus-failed", "ResourcePoolStatusRequest", {
        "metadata": meta("check"), "spec": {"driver": "gpu.example.com"},
        "status": {"poolCount": 0, "conditions": [{"type": "Failed", "status": "True"}]}},
     ["check", "gpu.example.com", 0, "Failed", "5m", "*", 100, None]),
    ("podgroup-gang", "PodGroup", {
        "metadata": meta("train"),
        "spec": {"schedulingPolicy": {"gang": {"minCount": 4}},
                 "workloadRef": {"workloadName": "job", "templateName": "workers"},
                 "priorityClassName": "high",
                 "resourceClaims": [{"name": "a", "resourceClaimName": "x"}]},
        "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True"}]}},
     ["train", "Gang", 4, "True", "5m", "job/workers", "high", 1]),
    ("podgroup-basic", "PodGroup", {"metadata": meta("g"),
                                    "spec": {"schedulingPolicy": {"basic": {}}}},
     ["g", "Basic", None, None, "5m", "<none>", "<none>", 0]),
    ("workload", "Workload", {"metadata": meta("job"), "spec": {
        "controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
        "podGroupTemplates": [{"name": "a"}, {"name": "b"}]}},
     ["job", 2, "job.batch/train", "5m"]),
    ("workload-no-controller", "Workload", {"metadata": meta("w"), "spec": {
        "controllerRef": {"kind": "Pod", "name": "p"}}}, ["w", 0, "pod/p", "5m"]),
]


@pytest.mark.parametrize(("kind", "obj", "expected"), [c[1:] for c in CELL_CASES],
                         ids=[c[0] for c in CELL_CASES])
def test_cells(kind: str, obj: dict[str, Any], expected: list[Any]) -> None:
    got = tables.cells(KIND[kind], obj, now=NOW)
    assert got == expected
    assert len(got) == len(tables.column_definitions(KIND[kind]))


def test_cells_of_kind_without_spec() -> None:
    assert tables.cells(WIDGET, {"metadata": meta("w")}, now=NOW) == ["w", "5m"]


def test_resource_claim_state_names_upstream_states() -> None:
    assert columns.resource_claim_state(claim()) == "pending"
    assert columns.resource_claim_state(claim({"allocation": ALLOCATION})) == "allocated"


# --- building the Table -----------------------------------------------------------------------

PODS = [
    pod(metadata={"name": "a", "namespace": "ns1", "uid": "u-a", "resourceVersion": "7"},
        phase="Running", containerStatuses=[running("c0")]),
    pod(metadata={"name": "b", "namespace": "ns2", "uid": "u-b", "resourceVersion": "9"},
        phase="Succeeded"),
]


def test_table_envelope() -> None:
    got = tables.table(KIND["Pod"], PODS, now=NOW, resource_version="12", continue_token="tok",
                       remaining_item_count=3)
    assert got["kind"] == "Table"
    assert got["apiVersion"] == "meta.k8s.io/v1"
    assert got["metadata"] == {"resourceVersion": "12", "continue": "tok",
                               "remainingItemCount": 3}
    assert got["columnDefinitions"] == tables.column_definitions(KIND["Pod"])
    assert [r["cells"][:3] for r in got["rows"]] == [["a", "1/1", "Running"],
                                                     ["b", "0/1", "Succeeded"]]
    orjson.dumps(got)  # wire-serializable


def test_table_minimal_metadata() -> None:
    got = tables.table(KIND["Node"], [], now=NOW)
    assert got["metadata"] == {}
    assert got["rows"] == []


def test_row_conditions_mark_finished_pods() -> None:
    rows = tables.table(KIND["Pod"], PODS, now=NOW)["rows"]
    assert "conditions" not in rows[0]
    assert rows[1]["conditions"] == [{"type": "Completed", "status": "True",
                                      "reason": "Succeeded",
                                      "message": "The pod has completed successfully."}]


def test_watch_events_after_the_first_omit_headers() -> None:
    got = tables.table(KIND["Pod"], PODS[:1], now=NOW, with_headers=False)
    assert "columnDefinitions" not in got
    assert len(got["rows"]) == 1


@pytest.mark.parametrize("include", ["Metadata", "", None])
def test_include_object_metadata(include: str | None) -> None:
    rows = tables.table(KIND["Pod"], PODS, now=NOW, include_object=include)["rows"]
    assert rows[0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                 "metadata": PODS[0]["metadata"]}
    assert rows[1]["object"]["metadata"]["namespace"] == "ns2"  # kubectl -A reads it here
    assert rows[0]["object"]["metadata"] is not PODS[0]["metadata"]


def test_include_object_object() -> None:
    rows = tables.table(KIND["Pod"], PODS, now=NOW, include_object="Object")["rows"]
    assert [r["object"] for r in rows] == PODS
    assert rows[0]["object"] is PODS[0]


def test_include_object_object_fills_in_type_meta() -> None:
    bare = {"metadata": meta("c", namespace="ns"), "spec": {}}
    rows = tables.table(KIND["ResourceClaim"], [bare], now=NOW, include_object="Object")["rows"]
    assert rows[0]["object"] == {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                                 **bare}
    assert "kind" not in bare


def test_include_object_none() -> None:
    rows = tables.table(KIND["Pod"], PODS, now=NOW, include_object="None")["rows"]
    assert all("object" not in r for r in rows)


def test_v1beta1_table() -> None:
    got = tables.table(KIND["Pod"], PODS, now=NOW, table_version="v1beta1")
    assert got["apiVersion"] == "meta.k8s.io/v1beta1"
    assert got["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"


class TableOptions(TypedDict, total=False):
    """The options of `tables.table` the bad-option cases set."""

    include_object: str
    table_version: str


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"include_object": "Everything"}, 'unrecognized includeObject value: "Everything"'),
    ({"include_object": "metadata"}, 'unrecognized includeObject value: "metadata"'),
    ({"table_version": "v2"}, "unsupported Table version"),
])
def test_table_rejects_bad_options(kwargs: TableOptions, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tables.table(KIND["Pod"], PODS, now=NOW, **kwargs)


@pytest.mark.parametrize(("value", "expected"), [
    (None, "Metadata"), ("", "Metadata"), ("None", "None"), ("Metadata", "Metadata"),
    ("Object", "Object"),
])
def test_parse_include_object(value: str | None, expected: str) -> None:
    assert tables.parse_include_object(value) == expected


# --- Accept negotiation -----------------------------------------------------------------------

KUBECTL_GET = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
               "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")

ACCEPTS = [
    ("kubectl-get", KUBECTL_GET, "v1"),
    ("v1beta1-only", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1"),
    ("unsupported-version-falls-through",
     "application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
     "g=meta.k8s.io", "v1beta1"),
    ("spaces-and-case", " Application/JSON ; AS=Table ; v=v1 ; g=meta.k8s.io ", "v1"),
    ("quoted", 'application/json;as="Table";v="v1";g="meta.k8s.io"', "v1"),
    ("plain-json", "application/json", None),
    ("none", None, None),
    ("empty", "", None),
    ("wildcard", "*/*", None),
    ("plain-first", "application/json,application/json;as=Table;v=v1;g=meta.k8s.io", None),
    ("q-prefers-table", "application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io",
     "v1"),
    ("q-zero-excluded", "application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json",
     None),
    ("wrong-group", "application/json;as=Table;v=v1;g=example.com", None),
    ("partial-metadata", "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,"
                         "application/json", None),
    ("protobuf-table-skipped", "application/vnd.kubernetes.protobuf;as=Table;v=v1;"
                               "g=meta.k8s.io,application/json", None),
    ("yaml-then-table", "application/yaml,application/json;as=Table;v=v1;g=meta.k8s.io", "v1"),
]


@pytest.mark.parametrize(("accept", "expected"), [a[1:] for a in ACCEPTS],
                         ids=[a[0] for a in ACCEPTS])
def test_table_version_from_accept(accept: str | None, expected: str | None) -> None:
    assert tables.table_version_from_accept(accept) == expected


@pytest.mark.parametrize(("accept", "expected"), [a[1:] for a in ACCEPTS],
                         ids=[a[0] for a in ACCEPTS])
def test_wants_table(accept: str | None, expected: str | None) -> None:
    assert tables.wants_table(accept) is (expected is not None)
