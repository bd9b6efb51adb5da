"""What an emulated kubelet writes about its node: the Node it registers (or the status it
gives an adopted one), its heartbeat Lease, and the node's addresses.

Pure functions of the node's name, index, profile and the time, after upstream's kubelet
(pkg/kubelet/kubelet_node_status.go, nodestatus setters, nodelease): four conditions with
the kubelet's reasons, nodeInfo, addresses, a Lease in kube-node-lease renewed every 10 s
(a quarter of its 40 s duration).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import ipaddress
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fakeapi import KUBERNETES_VERSION
from fakeapi.machinery.timestamps import parse_time_or_none
from kubelet_emu.settings import PROCESS_ANNOTATION

if TYPE_CHECKING:
    from kubelet_emu.profile import NodeProfile

Obj = dict[str, Any]

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION_SECONDS = 40
LEASE_RENEW_SECONDS = LEASE_DURATION_SECONDS / 4
STATUS_REPORT_SECONDS = 300.0
"""Upstream's nodeStatusReportFrequency: an unchanged status is re-posted this often."""
KUBELET_PORT = 10250
POD_CIDR_BASE = ipaddress.ip_network("10.64.0.0/10")
NODE_IP_BASE = ipaddress.ip_address("172.16.0.2")

NODE_INDEX = "emulator:nodeName"
"""The name of the pods-by-node index the emulator's components share."""


def pod_node(pod: Obj) -> list[str]:
    """Index values of a pod by its node (none while unscheduled)."""
    node = (pod.get("spec") or {}).get("nodeName")
    return [node] if node else []


CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
"""The conditions a healthy kubelet reports (type, status, reason, message)."""


@dataclasses.dataclass(frozen=True)
class Addressing:
    """A node's place in the emulated network: its IP and the /24 its pods get IPs from, or
    the address of a real kubelet API serving it."""

    index: int
    kubelet: tuple[str, int] | None = None
    """Where the kubelet API of the node listens (None: nowhere, the emulated address)."""

    @property
    def internal_ip(self) -> str:
        """The node's InternalIP: its kubelet API's address, else 172.16.0.2 onwards."""
        return self.kubelet[0] if self.kubelet else str(NODE_IP_BASE + self.index)

    @property
    def kubelet_port(self) -> int:
        """The port the node advertises for its kubelet API."""
        return self.kubelet[1] if self.kubelet else KUBELET_PORT

    def endpoint(self) -> Obj:
        """status.daemonEndpoints."""
        return {"kubeletEndpoint": {"Port": self.kubelet_port}}

    @property
    def pod_cidr(self) -> str:
        """The node's pod CIDR (10.64.0.0/24 onwards)."""
        return str(ipaddress.ip_network(
            (int(POD_CIDR_BASE.network_address) + (self.index << 8), 24)))

    def pod_ip(self, slot: int) -> str:
        """The IP of pod slot `slot` (1..253) in the node's CIDR."""
        return str(ipaddress.IPv4Address(int(POD_CIDR_BASE.network_address)
                                         + (self.index << 8) + 1 + slot))


def _stable_uuid(*parts: str) -> str:
    return str(uuid.UUID(bytes=hashlib.sha256("/".join(parts).encode()).digest()[:16]))


def node_info(name: str) -> Obj:
    """status.nodeInfo of an emulated kubelet (identifiers derived from the node's name)."""
    return {
        "machineID": _stable_uuid("machine", name).replace("-", ""),
        "systemUUID": _stable_uuid("system", name),
        "bootID": _stable_uuid("boot", name),
        "kernelVersion": "6.8.0-fakeapi",
        "osImage": "fakeapi emulated node",
        "containerRuntimeVersion": "containerd://2.1.0",
        "kubeletVersion": KUBERNETES_VERSION,
        # deprecated and unset by 1.37's kubelet, but a Go field without omitempty: a real
        # kubelet sends "" (and the Python client's model requires the key)
        "kubeProxyVersion": "",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


def ready_conditions(now: str, previous: list[Obj] | None = None) -> list[Obj]:
    """The healthy conditions, heartbeat `now`; a condition whose status stays keeps its
    lastTransitionTime (as upstream's setters do)."""
    before = {c.get("type"): c for c in previous or []}
    out = []
    for type_, status, reason, message in CONDITIONS:
        old = before.get(type_) or {}
        since = old.get("lastTransitionTime") if old.get("status") == status else None
        out.append({"type": type_, "status": status, "lastHeartbeatTime": now,
                    "lastTransitionTime": since or now, "reason": reason, "message": message})
    return out


def addresses(name: str, where: Addressing) -> list[Obj]:
    """InternalIP and Hostname."""
    return [{"type": "InternalIP", "address": where.internal_ip},
            {"type": "Hostname", "address": name}]


def default_labels(name: str) -> dict[str, str]:
    """The labels every kubelet sets on its Node."""
    return {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux"}


def node_object(name: str, profile: NodeProfile, where: Addressing, now: str,
                *, profile_annotation: str) -> Obj:
    """The Node an emulated kubelet registers, status included."""
    capacity = dict(profile.node.capacity)
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {**default_labels(name), **profile.node.labels},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                            profile_annotation: profile.name, **profile.node.annotations},
        },
        "spec": {"podCIDR": where.pod_cidr, "podCIDRs": [where.pod_cidr],
                 "providerID": f"fakeapi://{name}"},
        "status": {
            "capacity": capacity,
            "allocatable": dict(profile.node.allocatable or capacity),
            "conditions": ready_conditions(now),
            "addresses": addresses(name, where),
            "daemonEndpoints": where.endpoint(),
            "nodeInfo": node_info(name),
        },
    }


def adopted_status(node: Obj, profile: NodeProfile | None, where: Addressing, now: str,
                   default_capacity: Mapping[str, str]) -> Obj:
    """The status an emulated kubelet gives a Node a client created: its capacity and
    allocatable kept (from the profile it names, or defaults, when it has none), the
    conditions, addresses (those it has, unless the kubelet listens somewhere), nodeInfo and
    daemon endpoint a kubelet reports."""
    status = dict(node.get("status") or {})
    capacity = status.get("capacity") or dict(
        profile.node.capacity if profile else default_capacity)
    status["capacity"] = capacity
    status["allocatable"] = status.get("allocatable") or dict(
        (profile.node.allocatable if profile else None) or capacity)
    status["conditions"] = ready_conditions(now, status.get("conditions"))
    if where.kubelet or not status.get("addresses"):  # a listening kubelet says where it is
        status["addresses"] = addresses(node["metadata"]["name"], where)
    status["daemonEndpoints"] = where.endpoint()
    status["nodeInfo"] = {**node_info(node["metadata"]["name"]), **(status.get("nodeInfo") or {})}
    return status


def lease_object(node: Obj, now_micro: str, process: str = "") -> Obj:
    """The node's Lease in kube-node-lease, owned by the Node (upstream's nodelease), and
    annotated with the emulate process renewing it (when one is named)."""
    name = node["metadata"]["name"]
    owner = {"annotations": {PROCESS_ANNOTATION: process}} if process else {}
    return {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [{
            "apiVersion": "v1", "kind": "Node", "name": name,
            "uid": node["metadata"]["uid"]}], **owner},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                 "renewTime": now_micro},
    }


def lease_owner(lease: Obj | None, process: str, now: dt.datetime) -> str:
    """The other emulate process that runs the node of `lease`: the one its annotation names,
    while its renewal holds (renewTime plus leaseDurationSeconds not passed); "" when none
    does (no Lease, this process's, one no process annotated, or expired)."""
    if not lease:
        return ""
    owner = str((lease["metadata"].get("annotations") or {}).get(PROCESS_ANNOTATION) or "")
    spec = lease.get("spec") or {}
    renewed = parse_time_or_none(spec.get("renewTime"))
    if not owner or owner == process or renewed is None:
        return ""
    holds = dt.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))
    return owner if now < renewed + holds else ""
