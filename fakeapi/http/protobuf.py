"""Decode `application/vnd.kubernetes.protobuf` request bodies into JSON-shaped dicts.

kubectl's typed clients (`kubectl create namespace|configmap|role|...`) send their bodies as
Kubernetes protobuf: the magic `k8s\\x00`, then a `runtime.Unknown` envelope (typeMeta, raw,
contentEncoding, contentType) whose `raw` is the object's message. A declarative table maps each
message's field numbers to JSON names and wire types; decoding yields the dict the object's JSON
form would give. Go's JSON rules decide what shows: zero scalars of `omitempty` value fields are
dropped, while pointer fields and fields without `omitempty` (marked KEEP) show even when zero;
embedded structs always show (an unset metav1.Time becomes null, as in JSON).

The field numbers and types below are interop data derived from the upstream k8s.io/api and
k8s.io/apimachinery `generated.proto` files. Unknown field numbers are skipped; malformed bytes
and unknown kinds are 400 BadRequest errors worded like the apiserver's.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
from collections.abc import Iterator
from typing import Any

import orjson

from fakeapi.machinery.errors import ApiError, bad_request

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
SCHEME = "pkg/api/legacyscheme/scheme.go:30"
KEEP = True  # readability marker for Field.keep in the table below

_MASK64 = (1 << 64) - 1
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_VARINT_TYPES = frozenset({"int32", "int64", "bool"})
_ZERO: tuple[Any, ...] = ("", 0, False)


@dataclasses.dataclass(frozen=True, slots=True)
class Field:
    """One message field: its JSON name, wire kind, referenced message and JSON visibility.

    `type` is one of string, int32, int64, bool, bytes, msg, inline (an embedded struct whose
    fields merge into the parent), time, microtime, quantity, intorstr, rawext, fieldsv1, map.
    For msg/inline `ref` names the message; for map it names the value kind (string, bytes,
    quantity). `keep` marks Go pointer and non-omitempty fields, whose zero values still show.
    """

    name: str
    type: str
    ref: str = ""
    repeated: bool = False
    keep: bool = False


# ----- table helpers: one short constructor per wire kind ---------------------------------------


def s(name: str, keep: bool = False) -> Field:
    """A string field."""
    return Field(name, "string", keep=keep)


def i32(name: str, keep: bool = False) -> Field:
    """An int32 field."""
    return Field(name, "int32", keep=keep)


def i64(name: str, keep: bool = False) -> Field:
    """An int64 field."""
    return Field(name, "int64", keep=keep)


def b(name: str, keep: bool = False) -> Field:
    """A bool field."""
    return Field(name, "bool", keep=keep)


def by(name: str, keep: bool = False) -> Field:
    """A bytes field (base64 in JSON)."""
    return Field(name, "bytes", keep=keep)


def m(name: str, ref: str) -> Field:
    """A nested message field."""
    return Field(name, "msg", ref)


def inline(ref: str) -> Field:
    """An embedded struct serialized inline (`json:",inline"`)."""
    return Field("", "inline", ref)


def t(name: str) -> Field:
    """A metav1.Time field (RFC 3339, seconds precision)."""
    return Field(name, "time")


def mt(name: str) -> Field:
    """A metav1.MicroTime field (RFC 3339 with microseconds)."""
    return Field(name, "microtime")


def q(name: str) -> Field:
    """A resource.Quantity field."""
    return Field(name, "quantity")


def ios(name: str) -> Field:
    """An intstr.IntOrString field."""
    return Field(name, "intorstr")


def rs(name: str) -> Field:
    """A repeated string field."""
    return Field(name, "string", repeated=True)


def ri32(name: str) -> Field:
    """A repeated int32 field (packed or not)."""
    return Field(name, "int32", repeated=True)


def ri64(name: str) -> Field:
    """A repeated int64 field (packed or not)."""
    return Field(name, "int64", repeated=True)


def rm(name: str, ref: str) -> Field:
    """A repeated message field."""
    return Field(name, "msg", ref, repeated=True)


def smap(name: str) -> Field:
    """A map<string, string> field."""
    return Field(name, "map", "string")


def bmap(name: str) -> Field:
    """A map<string, bytes> field (values base64 in JSON)."""
    return Field(name, "map", "bytes")


def qmap(name: str) -> Field:
    """A map<string, Quantity> field (a ResourceList)."""
    return Field(name, "map", "quantity")


# ----- the message table --------------------------------------------------------------------------

_META: dict[str, dict[int, Field]] = {
    "ObjectMeta": {
        1: s("name"), 2: s("generateName"), 3: s("namespace"), 4: s("selfLink"), 5: s("uid"),
        6: s("resourceVersion"), 7: i64("generation"), 8: t("creationTimestamp"),
        9: t("deletionTimestamp"), 10: i64("deletionGracePeriodSeconds", KEEP),
        11: smap("labels"), 12: smap("annotations"),
        13: rm("ownerReferences", "OwnerReference"), 14: rs("finalizers"),
        17: rm("managedFields", "ManagedFieldsEntry"),
    },
    "OwnerReference": {
        5: s("apiVersion", KEEP), 1: s("kind", KEEP), 3: s("name", KEEP), 4: s("uid", KEEP),
        6: b("controller", KEEP), 7: b("blockOwnerDeletion", KEEP),
    },
    "ManagedFieldsEntry": {
        1: s("manager"), 2: s("operation"), 3: s("apiVersion"), 4: t("time"),
        6: s("fieldsType"), 7: Field("fieldsV1", "fieldsv1"), 8: s("subresource"),
    },
    "LabelSelector": {
        1: smap("matchLabels"), 2: rm("matchExpressions", "LabelSelectorRequirement"),
    },
    "LabelSelectorRequirement": {1: s("key", KEEP), 2: s("operator", KEEP), 3: rs("values")},
    "DeleteOptions": {
        1: i64("gracePeriodSeconds", KEEP), 2: m("preconditions", "Preconditions"),
        3: b("orphanDependents", KEEP), 4: s("propagationPolicy", KEEP), 5: rs("dryRun"),
        6: b("ignoreStoreReadErrorWithClusterBreakingPotential", KEEP),
    },
    "Preconditions": {1: s("uid", KEEP), 2: s("resourceVersion", KEEP)},
    "CreateOptions": {1: rs("dryRun"), 3: s("fieldManager"), 4: s("fieldValidation")},
}

_CORE_OBJECTS: dict[str, dict[int, Field]] = {
    "Namespace": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "NamespaceSpec"),
        3: m("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {1: rs("finalizers")},
    "NamespaceStatus": {1: s("phase"), 2: rm("conditions", "NamespaceCondition")},
    "NamespaceCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 4: t("lastTransitionTime"), 5: s("reason"),
        6: s("message"),
    },
    "ConfigMap": {
        1: m("metadata", "ObjectMeta"), 2: smap("data"), 3: bmap("binaryData"),
        4: b("immutable", KEEP),
    },
    "ServiceAccount": {
        1: m("metadata", "ObjectMeta"), 2: rm("secrets", "ObjectReference"),
        3: rm("imagePullSecrets", "LocalObjectReference"),
        4: b("automountServiceAccountToken", KEEP),
    },
    "ObjectReference": {
        1: s("kind"), 2: s("namespace"), 3: s("name"), 4: s("uid"), 5: s("apiVersion"),
        6: s("resourceVersion"), 7: s("fieldPath"),
    },
    "LocalObjectReference": {1: s("name")},
    "Binding": {1: m("metadata", "ObjectMeta"), 2: m("target", "ObjectReference")},
    "Event": {
        1: m("metadata", "ObjectMeta"), 2: m("involvedObject", "ObjectReference"),
        3: s("reason"), 4: s("message"), 5: m("source", "EventSource"),
        6: t("firstTimestamp"), 7: t("lastTimestamp"), 8: i32("count"), 9: s("type"),
        10: mt("eventTime"), 11: m("series", "EventSeries"), 12: s("action"),
        13: m("related", "ObjectReference"), 14: s("reportingComponent", KEEP),
        15: s("reportingInstance", KEEP),
    },
    "EventSource": {1: s("component"), 2: s("host")},
    "EventSeries": {1: i32("count"), 2: mt("lastObservedTime")},
    "Node": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "NodeSpec"), 3: m("status", "NodeStatus"),
    },
    "NodeSpec": {
        1: s("podCIDR"), 7: rs("podCIDRs"), 3: s("providerID"), 4: b("unschedulable"),
        5: rm("taints", "Taint"), 6: m("configSource", "NodeConfigSource"), 2: s("externalID"),
    },
    "Taint": {1: s("key", KEEP), 2: s("value"), 3: s("effect", KEEP), 4: t("timeAdded")},
    "NodeConfigSource": {2: m("configMap", "ConfigMapNodeConfigSource")},
    "ConfigMapNodeConfigSource": {
        1: s("namespace", KEEP), 2: s("name", KEEP), 3: s("uid"), 4: s("resourceVersion"),
        5: s("kubeletConfigKey", KEEP),
    },
    "NodeStatus": {
        1: qmap("capacity"), 2: qmap("allocatable"), 3: s("phase"),
        4: rm("conditions", "NodeCondition"), 5: rm("addresses", "NodeAddress"),
        6: m("daemonEndpoints", "NodeDaemonEndpoints"), 7: m("nodeInfo", "NodeSystemInfo"),
        8: rm("images", "ContainerImage"), 9: rs("volumesInUse"),
        10: rm("volumesAttached", "AttachedVolume"),
        12: rm("runtimeHandlers", "NodeRuntimeHandler"), 13: m("features", "NodeFeatures"),
        14: rs("declaredFeatures"),
    },
    "NodeCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 3: t("lastHeartbeatTime"),
        4: t("lastTransitionTime"), 5: s("reason"), 6: s("message"),
    },
    "NodeAddress": {1: s("type", KEEP), 2: s("address", KEEP)},
    "NodeDaemonEndpoints": {1: m("kubeletEndpoint", "DaemonEndpoint")},
    "DaemonEndpoint": {1: i32("Port", KEEP)},
    "NodeSystemInfo": {
        1: s("machineID", KEEP), 2: s("systemUUID", KEEP), 3: s("bootID", KEEP),
        4: s("kernelVersion", KEEP), 5: s("osImage", KEEP),
        6: s("containerRuntimeVersion", KEEP), 7: s("kubeletVersion", KEEP),
        8: s("kubeProxyVersion", KEEP), 9: s("operatingSystem", KEEP),
        10: s("architecture", KEEP), 11: m("swap", "NodeSwapStatus"),
    },
    "NodeSwapStatus": {1: i64("capacity", KEEP)},
    "ContainerImage": {1: rs("names"), 2: i64("sizeBytes")},
    "AttachedVolume": {1: s("name", KEEP), 2: s("devicePath", KEEP)},
    "NodeRuntimeHandler": {1: s("name", KEEP), 2: m("features", "NodeRuntimeHandlerFeatures")},
    "NodeRuntimeHandlerFeatures": {
        1: b("recursiveReadOnlyMounts", KEEP), 2: b("userNamespaces", KEEP),
    },
    "NodeFeatures": {1: b("supplementalGroupsPolicy", KEEP), 2: b("containerUlimits", KEEP)},
}

_POD: dict[str, dict[int, Field]] = {
    "Pod": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "PodSpec"), 3: m("status", "PodStatus"),
    },
    "PodTemplateSpec": {1: m("metadata", "ObjectMeta"), 2: m("spec", "PodSpec")},
    "PodSpec": {
        1: rm("volumes", "Volume"), 20: rm("initContainers", "Container"),
        2: rm("containers", "Container"), 34: rm("ephemeralContainers", "EphemeralContainer"),
        3: s("restartPolicy"), 4: i64("terminationGracePeriodSeconds", KEEP),
        5: i64("activeDeadlineSeconds", KEEP), 6: s("dnsPolicy"), 7: smap("nodeSelector"),
        8: s("serviceAccountName"), 9: s("serviceAccount"),
        21: b("automountServiceAccountToken", KEEP), 10: s("nodeName"), 11: b("hostNetwork"),
        12: b("hostPID"), 13: b("hostIPC"), 27: b("shareProcessNamespace", KEEP),
        14: m("securityContext", "PodSecurityContext"),
        15: rm("imagePullSecrets", "LocalObjectReference"), 16: s("hostname"),
        17: s("subdomain"), 18: m("affinity", "Affinity"), 19: s("schedulerName"),
        22: rm("tolerations", "Toleration"), 23: rm("hostAliases", "HostAlias"),
        24: s("priorityClassName"), 25: i32("priority", KEEP),
        26: m("dnsConfig", "PodDNSConfig"), 28: rm("readinessGates", "PodReadinessGate"),
        29: s("runtimeClassName", KEEP), 30: b("enableServiceLinks", KEEP),
        31: s("preemptionPolicy", KEEP), 32: qmap("overhead"),
        33: rm("topologySpreadConstraints", "TopologySpreadConstraint"),
        35: b("setHostnameAsFQDN", KEEP), 36: m("os", "PodOS"), 37: b("hostUsers", KEEP),
        38: rm("schedulingGates", "PodSchedulingGate"),
        39: rm("resourceClaims", "PodResourceClaim"),
        40: m("resources", "ResourceRequirements"), 41: s("hostnameOverride", KEEP),
        42: m("workloadRef", "WorkloadReference"),
    },
    "Container": {
        1: s("name", KEEP), 2: s("image"), 3: rs("command"), 4: rs("args"),
        5: s("workingDir"), 6: rm("ports", "ContainerPort"), 19: rm("envFrom", "EnvFromSource"),
        7: rm("env", "EnvVar"), 8: m("resources", "ResourceRequirements"),
        23: rm("resizePolicy", "ContainerResizePolicy"), 24: s("restartPolicy", KEEP),
        25: rm("restartPolicyRules", "ContainerRestartRule"),
        9: rm("volumeMounts", "VolumeMount"), 21: rm("volumeDevices", "VolumeDevice"),
        10: m("livenessProbe", "Probe"), 11: m("readinessProbe", "Probe"),
        22: m("startupProbe", "Probe"), 12: m("lifecycle", "Lifecycle"),
        13: s("terminationMessagePath"), 20: s("terminationMessagePolicy"),
        14: s("imagePullPolicy"), 15: m("securityContext", "SecurityContext"),
        16: b("stdin"), 17: b("stdinOnce"), 18: b("tty"),
    },
    "EphemeralContainer": {1: inline("Container"), 2: s("targetContainerName")},
    "ContainerPort": {
        1: s("name"), 2: i32("hostPort"), 3: i32("containerPort", KEEP), 4: s("protocol"),
        5: s("hostIP"),
    },
    "EnvFromSource": {
        1: s("prefix"), 2: m("configMapRef", "ConfigMapEnvSource"),
        3: m("secretRef", "SecretEnvSource"),
    },
    "ConfigMapEnvSource": {1: inline("LocalObjectReference"), 2: b("optional", KEEP)},
    "SecretEnvSource": {1: inline("LocalObjectReference"), 2: b("optional", KEEP)},
    "EnvVar": {1: s("name", KEEP), 2: s("value"), 3: m("valueFrom", "EnvVarSource")},
    "EnvVarSource": {
        1: m("fieldRef", "ObjectFieldSelector"),
        2: m("resourceFieldRef", "ResourceFieldSelector"),
        3: m("configMapKeyRef", "ConfigMapKeySelector"),
        4: m("secretKeyRef", "SecretKeySelector"), 5: m("fileKeyRef", "FileKeySelector"),
    },
    "ObjectFieldSelector": {1: s("apiVersion"), 2: s("fieldPath", KEEP)},
    "ResourceFieldSelector": {1: s("containerName"), 2: s("resource", KEEP), 3: q("divisor")},
    "ConfigMapKeySelector": {
        1: inline("LocalObjectReference"), 2: s("key", KEEP), 3: b("optional", KEEP),
    },
    "SecretKeySelector": {
        1: inline("LocalObjectReference"), 2: s("key", KEEP), 3: b("optional", KEEP),
    },
    "FileKeySelector": {
        1: s("volumeName", KEEP), 2: s("path", KEEP), 3: s("key", KEEP), 4: b("optional", KEEP),
    },
    "ResourceRequirements": {
        1: qmap("limits"), 2: qmap("requests"), 3: rm("claims", "ResourceClaim"),
    },
    "ResourceClaim": {1: s("name", KEEP), 2: s("request")},
    "ContainerResizePolicy": {1: s("resourceName", KEEP), 2: s("restartPolicy", KEEP)},
    "ContainerRestartRule": {
        1: s("action", KEEP), 2: m("exitCodes", "ContainerRestartRuleOnExitCodes"),
    },
    "ContainerRestartRuleOnExitCodes": {1: s("operator", KEEP), 2: ri32("values")},
    "VolumeMount": {
        1: s("name", KEEP), 2: b("readOnly"), 7: s("recursiveReadOnly", KEEP),
        3: s("mountPath", KEEP), 4: s("subPath"), 5: s("mountPropagation", KEEP),
        6: s("subPathExpr"),
    },
    "VolumeDevice": {1: s("name", KEEP), 2: s("devicePath", KEEP)},
    "Probe": {
        1: inline("ProbeHandler"), 2: i32("initialDelaySeconds"), 3: i32("timeoutSeconds"),
        4: i32("periodSeconds"), 5: i32("successThreshold"), 6: i32("failureThreshold"),
        7: i64("terminationGracePeriodSeconds", KEEP),
    },
    "ProbeHandler": {
        1: m("exec", "ExecAction"), 2: m("httpGet", "HTTPGetAction"),
        3: m("tcpSocket", "TCPSocketAction"), 4: m("grpc", "GRPCAction"),
    },
    "ExecAction": {1: rs("command")},
    "HTTPGetAction": {
        1: s("path"), 2: ios("port"), 3: s("host"), 4: s("scheme"),
        5: rm("httpHeaders", "HTTPHeader"),
    },
    "HTTPHeader": {1: s("name", KEEP), 2: s("value", KEEP)},
    "TCPSocketAction": {1: ios("port"), 2: s("host")},
    "GRPCAction": {1: i32("port", KEEP), 2: s("service", KEEP)},
    "Lifecycle": {
        1: m("postStart", "LifecycleHandler"), 2: m("preStop", "LifecycleHandler"),
        3: s("stopSignal", KEEP),
    },
    "LifecycleHandler": {
        1: m("exec", "ExecAction"), 2: m("httpGet", "HTTPGetAction"),
        3: m("tcpSocket", "TCPSocketAction"), 4: m("sleep", "SleepAction"),
    },
    "SleepAction": {1: i64("seconds", KEEP)},
    "SecurityContext": {
        1: m("capabilities", "Capabilities"), 2: b("privileged", KEEP),
        3: m("seLinuxOptions", "SELinuxOptions"),
        10: m("windowsOptions", "WindowsSecurityContextOptions"),
        4: i64("runAsUser", KEEP), 8: i64("runAsGroup", KEEP), 5: b("runAsNonRoot", KEEP),
        6: b("readOnlyRootFilesystem", KEEP), 7: b("allowPrivilegeEscalation", KEEP),
        9: s("procMount", KEEP), 11: m("seccompProfile", "SeccompProfile"),
        12: m("appArmorProfile", "AppArmorProfile"), 13: rm("ulimits", "Ulimit"),
    },
    "Capabilities": {1: rs("add"), 2: rs("drop")},
    "SELinuxOptions": {1: s("user"), 2: s("role"), 3: s("type"), 4: s("level")},
    "WindowsSecurityContextOptions": {
        1: s("gmsaCredentialSpecName", KEEP), 2: s("gmsaCredentialSpec", KEEP),
        3: s("runAsUserName", KEEP), 4: b("hostProcess", KEEP),
    },
    "SeccompProfile": {1: s("type", KEEP), 2: s("localhostProfile", KEEP)},
    "AppArmorProfile": {1: s("type", KEEP), 2: s("localhostProfile", KEEP)},
    "Ulimit": {1: s("name", KEEP), 2: i64("hard", KEEP), 3: i64("soft", KEEP)},
    "PodSecurityContext": {
        1: m("seLinuxOptions", "SELinuxOptions"),
        8: m("windowsOptions", "WindowsSecurityContextOptions"),
        2: i64("runAsUser", KEEP), 6: i64("runAsGroup", KEEP), 3: b("runAsNonRoot", KEEP),
        4: ri64("supplementalGroups"), 12: s("supplementalGroupsPolicy", KEEP),
        5: i64("fsGroup", KEEP), 7: rm("sysctls", "Sysctl"),
        9: s("fsGroupChangePolicy", KEEP), 10: m("seccompProfile", "SeccompProfile"),
        11: m("appArmorProfile", "AppArmorProfile"), 13: s("seLinuxChangePolicy", KEEP),
    },
    "Sysctl": {1: s("name", KEEP), 2: s("value", KEEP)},
    "Affinity": {
        1: m("nodeAffinity", "NodeAffinity"), 2: m("podAffinity", "PodAffinity"),
        3: m("podAntiAffinity", "PodAffinity"),
    },
    "NodeAffinity": {
        1: m("requiredDuringSchedulingIgnoredDuringExecution", "NodeSelector"),
        2: rm("preferredDuringSchedulingIgnoredDuringExecution", "PreferredSchedulingTerm"),
    },
    "NodeSelector": {1: rm("nodeSelectorTerms", "NodeSelectorTerm")},
    "NodeSelectorTerm": {
        1: rm("matchExpressions", "NodeSelectorRequirement"),
        2: rm("matchFields", "NodeSelectorRequirement"),
    },
    "NodeSelectorRequirement": {1: s("key", KEEP), 2: s("operator", KEEP), 3: rs("values")},
    "PreferredSchedulingTerm": {1: i32("weight", KEEP), 2: m("preference", "NodeSelectorTerm")},
    "PodAffinity": {  # PodAntiAffinity has the same shape
        1: rm("requiredDuringSchedulingIgnoredDuringExecution", "PodAffinityTerm"),
        2: rm("preferredDuringSchedulingIgnoredDuringExecution", "WeightedPodAffinityTerm"),
    },
    "PodAffinityTerm": {
        1: m("labelSelector", "LabelSelector"), 2: rs("namespaces"),
        3: s("topologyKey", KEEP), 4: m("namespaceSelector", "LabelSelector"),
        5: rs("matchLabelKeys"), 6: rs("mismatchLabelKeys"),
    },
    "WeightedPodAffinityTerm": {
        1: i32("weight", KEEP), 2: m("podAffinityTerm", "PodAffinityTerm"),
    },
    "Toleration": {
        1: s("key"), 2: s("operator"), 3: s("value"), 4: s("effect"),
        5: i64("tolerationSeconds", KEEP),
    },
    "HostAlias": {1: s("ip", KEEP), 2: rs("hostnames")},
    "PodDNSConfig": {
        1: rs("nameservers"), 2: rs("searches"), 3: rm("options", "PodDNSConfigOption"),
    },
    "PodDNSConfigOption": {1: s("name"), 2: s("value", KEEP)},
    "PodReadinessGate": {1: s("conditionType", KEEP)},
    "TopologySpreadConstraint": {
        1: i32("maxSkew", KEEP), 2: s("topologyKey", KEEP), 3: s("whenUnsatisfiable", KEEP),
        4: m("labelSelector", "LabelSelector"), 5: i32("minDomains", KEEP),
        6: s("nodeAffinityPolicy", KEEP), 7: s("nodeTaintsPolicy", KEEP),
        8: rs("matchLabelKeys"),
    },
    "PodOS": {1: s("name", KEEP)},
    "PodSchedulingGate": {1: s("name", KEEP)},
    "PodResourceClaim": {
        1: s("name", KEEP), 3: s("resourceClaimName", KEEP),
        4: s("resourceClaimTemplateName", KEEP),
    },
    "WorkloadReference": {1: s("name", KEEP), 2: s("podGroup", KEEP), 3: s("podGroupReplicaKey")},
    "PodStatus": {
        17: i64("observedGeneration"), 1: s("phase"), 2: rm("conditions", "PodCondition"),
        3: s("message"), 4: s("reason"), 11: s("nominatedNodeName"), 5: s("hostIP"),
        16: rm("hostIPs", "HostIP"), 6: s("podIP"), 12: rm("podIPs", "PodIP"),
        7: t("startTime"), 10: rm("initContainerStatuses", "ContainerStatus"),
        8: rm("containerStatuses", "ContainerStatus"), 9: s("qosClass"),
        13: rm("ephemeralContainerStatuses", "ContainerStatus"), 14: s("resize"),
        15: rm("resourceClaimStatuses", "PodResourceClaimStatus"),
        19: qmap("allocatedResources"), 20: m("resources", "ResourceRequirements"),
    },
    "PodCondition": {
        1: s("type", KEEP), 7: i64("observedGeneration"), 2: s("status", KEEP),
        3: t("lastProbeTime"), 4: t("lastTransitionTime"), 5: s("reason"), 6: s("message"),
    },
    "HostIP": {1: s("ip", KEEP)},
    "PodIP": {1: s("ip", KEEP)},
    "PodResourceClaimStatus": {1: s("name", KEEP), 2: s("resourceClaimName", KEEP)},
    "ContainerStatus": {
        1: s("name", KEEP), 2: m("state", "ContainerState"), 3: m("lastState", "ContainerState"),
        4: b("ready", KEEP), 5: i32("restartCount", KEEP), 6: s("image", KEEP),
        7: s("imageID", KEEP), 8: s("containerID"), 9: b("started", KEEP),
        10: qmap("allocatedResources"), 11: m("resources", "ResourceRequirements"),
        12: rm("volumeMounts", "VolumeMountStatus"),
        14: rm("allocatedResourcesStatus", "ResourceStatus"), 15: s("stopSignal", KEEP),
    },
    "ContainerState": {
        1: m("waiting", "ContainerStateWaiting"), 2: m("running", "ContainerStateRunning"),
        3: m("terminated", "ContainerStateTerminated"),
    },
    "ContainerStateWaiting": {1: s("reason"), 2: s("message")},
    "ContainerStateRunning": {1: t("startedAt")},
    "ContainerStateTerminated": {
        1: i32("exitCode", KEEP), 2: i32("signal"), 3: s("reason"), 4: s("message"),
        5: t("startedAt"), 6: t("finishedAt"), 7: s("containerID"),
    },
    "VolumeMountStatus": {
        1: s("name", KEEP), 2: s("mountPath", KEEP), 3: b("readOnly"),
        4: s("recursiveReadOnly", KEEP),
    },
    "ResourceStatus": {1: s("name", KEEP), 2: rm("resources", "ResourceHealth")},
    "ResourceHealth": {1: s("resourceID", KEEP), 2: s("health"), 6: s("message", KEEP)},
}

_VOLUMES: dict[str, dict[int, Field]] = {
    "Volume": {1: s("name", KEEP), 2: inline("VolumeSource")},
    "VolumeSource": {
        1: m("hostPath", "HostPathVolumeSource"), 2: m("emptyDir", "EmptyDirVolumeSource"),
        6: m("secret", "SecretVolumeSource"), 7: m("nfs", "NFSVolumeSource"),
        10: m("persistentVolumeClaim", "PersistentVolumeClaimVolumeSource"),
        16: m("downwardAPI", "DownwardAPIVolumeSource"),
        19: m("configMap", "ConfigMapVolumeSource"),
        26: m("projected", "ProjectedVolumeSource"), 28: m("csi", "CSIVolumeSource"),
        29: m("ephemeral", "EphemeralVolumeSource"), 30: m("image", "ImageVolumeSource"),
    },
    "HostPathVolumeSource": {1: s("path", KEEP), 2: s("type", KEEP)},
    "EmptyDirVolumeSource": {1: s("medium"), 2: q("sizeLimit")},
    "SecretVolumeSource": {
        1: s("secretName"), 2: rm("items", "KeyToPath"), 3: i32("defaultMode", KEEP),
        4: b("optional", KEEP),
    },
    "NFSVolumeSource": {1: s("server", KEEP), 2: s("path", KEEP), 3: b("readOnly")},
    "PersistentVolumeClaimVolumeSource": {1: s("claimName", KEEP), 2: b("readOnly")},
    "DownwardAPIVolumeSource": {
        1: rm("items", "DownwardAPIVolumeFile"), 2: i32("defaultMode", KEEP),
    },
    "DownwardAPIVolumeFile": {
        1: s("path", KEEP), 2: m("fieldRef", "ObjectFieldSelector"),
        3: m("resourceFieldRef", "ResourceFieldSelector"), 4: i32("mode", KEEP),
    },
    "ConfigMapVolumeSource": {
        1: inline("LocalObjectReference"), 2: rm("items", "KeyToPath"),
        3: i32("defaultMode", KEEP), 4: b("optional", KEEP),
    },
    "KeyToPath": {1: s("key", KEEP), 2: s("path", KEEP), 3: i32("mode", KEEP)},
    "ProjectedVolumeSource": {
        1: rm("sources", "VolumeProjection"), 2: i32("defaultMode", KEEP),
    },
    "VolumeProjection": {
        1: m("secret", "SecretProjection"), 2: m("downwardAPI", "DownwardAPIProjection"),
        3: m("configMap", "ConfigMapProjection"),
        4: m("serviceAccountToken", "ServiceAccountTokenProjection"),
        5: m("clusterTrustBundle", "ClusterTrustBundleProjection"),
    },
    "SecretProjection": {
        1: inline("LocalObjectReference"), 2: rm("items", "KeyToPath"), 4: b("optional", KEEP),
    },
    "ConfigMapProjection": {
        1: inline("LocalObjectReference"), 2: rm("items", "KeyToPath"), 4: b("optional", KEEP),
    },
    "DownwardAPIProjection": {1: rm("items", "DownwardAPIVolumeFile")},
    "ServiceAccountTokenProjection": {
        1: s("audience"), 2: i64("expirationSeconds", KEEP), 3: s("path", KEEP),
    },
    "ClusterTrustBundleProjection": {
        1: s("name", KEEP), 2: s("signerName", KEEP), 3: m("labelSelector", "LabelSelector"),
        5: b("optional", KEEP), 4: s("path", KEEP),
    },
    "CSIVolumeSource": {
        1: s("driver", KEEP), 2: b("readOnly", KEEP), 3: s("fsType", KEEP),
        4: smap("volumeAttributes"), 5: m("nodePublishSecretRef", "LocalObjectReference"),
    },
    "EphemeralVolumeSource": {1: m("volumeClaimTemplate", "PersistentVolumeClaimTemplate")},
    "PersistentVolumeClaimTemplate": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "PersistentVolumeClaimSpec"),
    },
    "PersistentVolumeClaimSpec": {
        1: rs("accessModes"), 4: m("selector", "LabelSelector"),
        2: m("resources", "VolumeResourceRequirements"), 3: s("volumeName"),
        5: s("storageClassName", KEEP), 6: s("volumeMode", KEEP),
        7: m("dataSource", "TypedLocalObjectReference"),
        8: m("dataSourceRef", "TypedObjectReference"), 9: s("volumeAttributesClassName", KEEP),
    },
    "VolumeResourceRequirements": {1: qmap("limits"), 2: qmap("requests")},
    "TypedLocalObjectReference": {1: s("apiGroup", KEEP), 2: s("kind", KEEP), 3: s("name", KEEP)},
    "TypedObjectReference": {
        1: s("apiGroup", KEEP), 2: s("kind", KEEP), 3: s("name", KEEP), 4: s("namespace", KEEP),
    },
    "ImageVolumeSource": {1: s("reference"), 2: s("pullPolicy")},
}

_OTHER_GROUPS: dict[str, dict[int, Field]] = {
    # coordination.k8s.io/v1
    "Lease": {1: m("metadata", "ObjectMeta"), 2: m("spec", "LeaseSpec")},
    "LeaseSpec": {
        1: s("holderIdentity", KEEP), 2: i32("leaseDurationSeconds", KEEP),
        3: mt("acquireTime"), 4: mt("renewTime"), 5: i32("leaseTransitions", KEEP),
        6: s("strategy", KEEP), 7: s("preferredHolder", KEEP),
    },
    # scheduling.k8s.io/v1
    "PriorityClass": {
        1: m("metadata", "ObjectMeta"), 2: i32("value", KEEP), 3: b("globalDefault"),
        4: s("description"), 5: s("preemptionPolicy", KEEP),
    },
    # rbac.authorization.k8s.io/v1
    "Role": {1: m("metadata", "ObjectMeta"), 2: rm("rules", "PolicyRule")},
    "ClusterRole": {
        1: m("metadata", "ObjectMeta"), 2: rm("rules", "PolicyRule"),
        3: m("aggregationRule", "AggregationRule"),
    },
    "AggregationRule": {1: rm("clusterRoleSelectors", "LabelSelector")},
    "PolicyRule": {
        1: rs("verbs"), 2: rs("apiGroups"), 3: rs("resources"), 4: rs("resourceNames"),
        5: rs("nonResourceURLs"),
    },
    "RoleBinding": {
        1: m("metadata", "ObjectMeta"), 2: rm("subjects", "Subject"), 3: m("roleRef", "RoleRef"),
    },
    "ClusterRoleBinding": {
        1: m("metadata", "ObjectMeta"), 2: rm("subjects", "Subject"), 3: m("roleRef", "RoleRef"),
    },
    "RoleRef": {1: s("apiGroup", KEEP), 2: s("kind", KEEP), 3: s("name", KEEP)},
    "Subject": {1: s("kind", KEEP), 2: s("apiGroup"), 3: s("name", KEEP), 4: s("namespace")},
    # authentication.k8s.io/v1 (`kubectl create token`)
    "TokenRequest": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "TokenRequestSpec"),
        3: m("status", "TokenRequestStatus"),
    },
    "TokenRequestSpec": {
        1: rs("audiences"), 4: i64("expirationSeconds", KEEP),
        3: m("boundObjectRef", "BoundObjectReference"),
    },
    "BoundObjectReference": {1: s("kind"), 2: s("apiVersion"), 3: s("name"), 4: s("uid")},
    "TokenRequestStatus": {1: s("token", KEEP), 2: t("expirationTimestamp")},
    # authorization.k8s.io/v1 and authentication.k8s.io/v1 reviews (`kubectl auth`); the
    # status is the server's to fill, and field/label selector attributes are not read
    "SelfSubjectAccessReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SelfSubjectAccessReviewSpec"),
    },
    "SelfSubjectAccessReviewSpec": {
        1: m("resourceAttributes", "ResourceAttributes"),
        2: m("nonResourceAttributes", "NonResourceAttributes"),
    },
    "ResourceAttributes": {
        1: s("namespace"), 2: s("verb"), 3: s("group"), 4: s("version"), 5: s("resource"),
        6: s("subresource"), 7: s("name"),
    },
    "NonResourceAttributes": {1: s("path"), 2: s("verb")},
    "SubjectAccessReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SubjectAccessReviewSpec"),
    },
    "SubjectAccessReviewSpec": {
        1: m("resourceAttributes", "ResourceAttributes"),
        2: m("nonResourceAttributes", "NonResourceAttributes"), 3: s("user"), 4: rs("groups"),
        6: s("uid"),
    },
    "SelfSubjectRulesReview": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "SelfSubjectRulesReviewSpec"),
    },
    "SelfSubjectRulesReviewSpec": {1: s("namespace")},
    "SelfSubjectReview": {1: m("metadata", "ObjectMeta")},
}

_WORKLOADS: dict[str, dict[int, Field]] = {
    # apps/v1, batch/v1, core Secret/Service/ResourceQuota/LimitRange, policy/v1,
    # autoscaling/v2, certificates.k8s.io/v1 and networking.k8s.io/v1 Ingress: what kubectl
    # create/expose/autoscale/drain/certificate send
    "HorizontalPodAutoscaler": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "HorizontalPodAutoscalerSpec"),
    },
    "HorizontalPodAutoscalerSpec": {
        1: m("scaleTargetRef", "CrossVersionObjectReference"), 2: i32("minReplicas", KEEP),
        3: i32("maxReplicas", KEEP), 4: rm("metrics", "MetricSpec"),
        5: m("behavior", "HorizontalPodAutoscalerBehavior"),
    },
    "CrossVersionObjectReference": {1: s("kind", KEEP), 2: s("name", KEEP), 3: s("apiVersion")},
    "MetricSpec": {
        1: s("type", KEEP), 2: m("object", "ObjectMetricSource"),
        3: m("pods", "PodsMetricSource"), 4: m("resource", "ResourceMetricSource"),
        7: m("containerResource", "ContainerResourceMetricSource"),
        5: m("external", "ExternalMetricSource"),
    },
    "ObjectMetricSource": {
        1: m("describedObject", "CrossVersionObjectReference"), 2: m("target", "MetricTarget"),
        3: m("metric", "MetricIdentifier"),
    },
    "PodsMetricSource": {1: m("metric", "MetricIdentifier"), 2: m("target", "MetricTarget")},
    "ResourceMetricSource": {1: s("name", KEEP), 2: m("target", "MetricTarget")},
    "ContainerResourceMetricSource": {
        1: s("name", KEEP), 2: m("target", "MetricTarget"), 3: s("container", KEEP),
    },
    "ExternalMetricSource": {1: m("metric", "MetricIdentifier"), 2: m("target", "MetricTarget")},
    "MetricIdentifier": {1: s("name", KEEP), 2: m("selector", "LabelSelector")},
    "MetricTarget": {
        1: s("type", KEEP), 2: q("value"), 3: q("averageValue"),
        4: i32("averageUtilization", KEEP),
    },
    "HorizontalPodAutoscalerBehavior": {
        1: m("scaleUp", "HPAScalingRules"), 2: m("scaleDown", "HPAScalingRules"),
    },
    "HPAScalingRules": {
        3: i32("stabilizationWindowSeconds", KEEP), 1: s("selectPolicy", KEEP),
        2: rm("policies", "HPAScalingPolicy"), 4: q("tolerance"),
    },
    "HPAScalingPolicy": {1: s("type", KEEP), 2: i32("value", KEEP), 3: i32("periodSeconds", KEEP)},
    "ResourceQuota": {1: m("metadata", "ObjectMeta"), 2: m("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: qmap("hard"), 2: rs("scopes"), 3: m("scopeSelector", "ScopeSelector")},
    "ScopeSelector": {1: rm("matchExpressions", "ScopedResourceSelectorRequirement")},
    "ScopedResourceSelectorRequirement": {
        1: s("scopeName", KEEP), 2: s("operator", KEEP), 3: rs("values"),
    },
    "LimitRange": {1: m("metadata", "ObjectMeta"), 2: m("spec", "LimitRangeSpec")},
    "LimitRangeSpec": {1: rm("limits", "LimitRangeItem")},
    "LimitRangeItem": {
        1: s("type", KEEP), 2: qmap("max"), 3: qmap("min"), 4: qmap("default"),
        5: qmap("defaultRequest"), 6: qmap("maxLimitRequestRatio"),
    },
    "Deployment": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "DeploymentSpec"),
        3: m("status", "DeploymentStatus"),
    },
    "DeploymentSpec": {
        1: i32("replicas", KEEP), 2: m("selector", "LabelSelector"),
        3: m("template", "PodTemplateSpec"), 4: m("strategy", "DeploymentStrategy"),
        5: i32("minReadySeconds"), 6: i32("revisionHistoryLimit", KEEP), 7: b("paused"),
        9: i32("progressDeadlineSeconds", KEEP),
    },
    "DeploymentStrategy": {1: s("type"), 2: m("rollingUpdate", "RollingUpdateDeployment")},
    "RollingUpdateDeployment": {1: ios("maxUnavailable"), 2: ios("maxSurge")},
    "DeploymentStatus": {
        1: i64("observedGeneration"), 2: i32("replicas"), 3: i32("updatedReplicas"),
        7: i32("readyReplicas"), 4: i32("availableReplicas"), 5: i32("unavailableReplicas"),
        9: i32("terminatingReplicas", KEEP), 6: rm("conditions", "DeploymentCondition"),
        8: i32("collisionCount", KEEP),
    },
    "DeploymentCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 6: t("lastUpdateTime"),
        7: t("lastTransitionTime"), 4: s("reason"), 5: s("message"),
    },
    "ReplicaSet": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "ReplicaSetSpec"),
        3: m("status", "ReplicaSetStatus"),
    },
    "ReplicaSetSpec": {
        1: i32("replicas", KEEP), 4: i32("minReadySeconds"), 2: m("selector", "LabelSelector"),
        3: m("template", "PodTemplateSpec"),
    },
    "ReplicaSetStatus": {
        1: i32("replicas", KEEP), 2: i32("fullyLabeledReplicas"), 4: i32("readyReplicas"),
        5: i32("availableReplicas"), 7: i32("terminatingReplicas", KEEP),
        3: i64("observedGeneration"), 6: rm("conditions", "ReplicaSetCondition"),
    },
    "ReplicaSetCondition": {
        1: s("type", KEEP), 2: s("status", KEEP), 3: t("lastTransitionTime"), 4: s("reason"),
        5: s("message"),
    },
    "Job": {1: m("metadata", "ObjectMeta"), 2: m("spec", "JobSpec")},
    "JobSpec": {
        1: i32("parallelism", KEEP), 2: i32("completions", KEEP),
        3: i64("activeDeadlineSeconds", KEEP), 11: m("podFailurePolicy", "PodFailurePolicy"),
        16: m("successPolicy", "SuccessPolicy"), 7: i32("backoffLimit", KEEP),
        12: i32("backoffLimitPerIndex", KEEP), 13: i32("maxFailedIndexes", KEEP),
        4: m("selector", "LabelSelector"), 5: b("manualSelector", KEEP),
        6: m("template", "PodTemplateSpec"), 8: i32("ttlSecondsAfterFinished", KEEP),
        9: s("completionMode", KEEP), 10: b("suspend", KEEP), 14: s("podReplacementPolicy", KEEP),
        15: s("managedBy", KEEP),
    },
    "PodFailurePolicy": {1: rm("rules", "PodFailurePolicyRule")},
    "PodFailurePolicyRule": {
        1: s("action", KEEP), 2: m("onExitCodes", "PodFailurePolicyOnExitCodesRequirement"),
        3: rm("onPodConditions", "PodFailurePolicyOnPodConditionsPattern"),
    },
    "PodFailurePolicyOnExitCodesRequirement": {
        1: s("containerName", KEEP), 2: s("operator", KEEP), 3: ri32("values"),
    },
    "PodFailurePolicyOnPodConditionsPattern": {1: s("type", KEEP), 2: s("status", KEEP)},
    "SuccessPolicy": {1: rm("rules", "SuccessPolicyRule")},
    "SuccessPolicyRule": {1: s("succeededIndexes", KEEP), 2: i32("succeededCount", KEEP)},
    "CronJob": {1: m("metadata", "ObjectMeta"), 2: m("spec", "CronJobSpec")},
    "CronJobSpec": {
        1: s("schedule", KEEP), 8: s("timeZone", KEEP), 2: i64("startingDeadlineSeconds", KEEP),
        3: s("concurrencyPolicy"), 4: b("suspend", KEEP), 5: m("jobTemplate", "JobTemplateSpec"),
        6: i32("successfulJobsHistoryLimit", KEEP), 7: i32("failedJobsHistoryLimit", KEEP),
    },
    "JobTemplateSpec": {1: m("metadata", "ObjectMeta"), 2: m("spec", "JobSpec")},
    "Secret": {
        1: m("metadata", "ObjectMeta"), 5: b("immutable", KEEP), 2: bmap("data"),
        4: smap("stringData"), 3: s("type"),
    },
    "Service": {1: m("metadata", "ObjectMeta"), 2: m("spec", "ServiceSpec")},
    "ServiceSpec": {
        1: rm("ports", "ServicePort"), 2: smap("selector"), 3: s("clusterIP"),
        18: rs("clusterIPs"), 4: s("type"), 5: rs("externalIPs"), 7: s("sessionAffinity"),
        8: s("loadBalancerIP"), 9: rs("loadBalancerSourceRanges"), 10: s("externalName"),
        11: s("externalTrafficPolicy"), 12: i32("healthCheckNodePort"),
        13: b("publishNotReadyAddresses"),
        14: m("sessionAffinityConfig", "SessionAffinityConfig"), 19: rs("ipFamilies"),
        17: s("ipFamilyPolicy", KEEP), 20: b("allocateLoadBalancerNodePorts", KEEP),
        21: s("loadBalancerClass", KEEP), 22: s("internalTrafficPolicy", KEEP),
        23: s("trafficDistribution", KEEP),
    },
    "ServicePort": {
        1: s("name"), 2: s("protocol"), 6: s("appProtocol", KEEP), 3: i32("port", KEEP),
        4: ios("targetPort"), 5: i32("nodePort"),
    },
    "SessionAffinityConfig": {1: m("clientIP", "ClientIPConfig")},
    "ClientIPConfig": {1: i32("timeoutSeconds", KEEP)},
    "PodDisruptionBudget": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "PodDisruptionBudgetSpec"),
    },
    "PodDisruptionBudgetSpec": {
        1: ios("minAvailable"), 2: m("selector", "LabelSelector"), 3: ios("maxUnavailable"),
        4: s("unhealthyPodEvictionPolicy", KEEP),
    },
    "Eviction": {1: m("metadata", "ObjectMeta"), 2: m("deleteOptions", "DeleteOptions")},
    "CertificateSigningRequest": {
        1: m("metadata", "ObjectMeta"), 2: m("spec", "CertificateSigningRequestSpec"),
        3: m("status", "CertificateSigningRequestStatus"),
    },
    "CertificateSigningRequestSpec": {
        1: by("request", KEEP), 7: s("signerName", KEEP), 8: i32("expirationSeconds", KEEP),
        5: rs("usages"), 2: s("username"), 3: s("uid"), 4: rs("groups"),
    },
    "CertificateSigningRequestStatus": {
        1: rm("conditions", "CertificateSigningRequestCondition"), 2: by("certificate"),
    },
    "CertificateSigningRequestCondition": {
        1: s("type", KEEP), 6: s("status", KEEP), 2: s("reason"), 3: s("message"),
        4: t("lastUpdateTime"), 5: t("lastTransitionTime"),
    },
    "Ingress": {1: m("metadata", "ObjectMeta"), 2: m("spec", "IngressSpec")},
    "IngressSpec": {
        4: s("ingressClassName", KEEP), 1: m("defaultBackend", "IngressBackend"),
        2: rm("tls", "IngressTLS"), 3: rm("rules", "IngressRule"),
    },
    "IngressBackend": {
        4: m("service", "IngressServiceBackend"), 3: m("resource", "TypedLocalObjectReference"),
    },
    "IngressServiceBackend": {1: s("name", KEEP), 2: m("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: s("name"), 2: i32("number")},
    "IngressRule": {1: s("host"), 2: inline("IngressRuleValue")},
    "IngressRuleValue": {1: m("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: rm("paths", "HTTPIngressPath")},
    "HTTPIngressPath": {1: s("path"), 3: s("pathType", KEEP), 2: m("backend", "IngressBackend")},
    "IngressTLS": {1: rs("hosts"), 2: s("secretName")},
}

MESSAGES: dict[str, dict[int, Field]] = {
    **_META, **_CORE_OBJECTS, **_POD, **_VOLUMES, **_OTHER_GROUPS, **_WORKLOADS,
}
"""Message name → field number → Field, for every message reachable from a served kind."""

KINDS: dict[tuple[str, str], str] = {
    **{("v1", k): k for k in (
        "Namespace", "ConfigMap", "ServiceAccount", "Pod", "Node", "Event", "Binding")},
    ("coordination.k8s.io/v1", "Lease"): "Lease",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    **{("rbac.authorization.k8s.io/v1", k): k for k in (
        "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("authentication.k8s.io/v1", "TokenRequest"): "TokenRequest",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    **{("authorization.k8s.io/v1", k): k for k in (
        "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview")},
    ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): "SubjectAccessReview",
    **{("v1", k): k for k in ("Secret", "Service", "ResourceQuota", "LimitRange")},
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    **{("apps/v1", k): k for k in ("Deployment", "ReplicaSet")},
    **{("batch/v1", k): k for k in ("Job", "CronJob")},
    **{("policy/v1", k): k for k in ("PodDisruptionBudget", "Eviction")},
    ("certificates.k8s.io/v1", "CertificateSigningRequest"): "CertificateSigningRequest",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
}
"""(apiVersion, kind) → top-level message; meta/v1 options decode under any version."""

_ANY_VERSION = ("DeleteOptions", "CreateOptions")


# ----- wire decoding ----------------------------------------------------------------------------


class _Malformed(Exception):
    """The bytes are not a valid encoding; `message` is gogo-protobuf's wording."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if shift >= 64:
            raise _Malformed("proto: integer overflow")
        if pos >= len(buf):
            raise _Malformed("unexpected EOF")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & _MASK64, pos
        shift += 7


def _fields(buf: bytes, message: str) -> Iterator[tuple[int, int, Any]]:
    """Yield (field number, wire type, value) triples; value is int or bytes."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            raise _Malformed(f"proto: {message}: illegal tag {number} (wire type {wire})")
        value: int | bytes
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            if pos + 8 > end:
                raise _Malformed("unexpected EOF")
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if length >= 1 << 63:
                raise _Malformed("proto: negative length found during unmarshaling")
            if pos + length > end:
                raise _Malformed("unexpected EOF")
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            if pos + 4 > end:
                raise _Malformed("unexpected EOF")
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise _Malformed(f"proto: illegal wireType {wire}")
        yield number, wire, value


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _scalar(field: Field, value: int) -> Any:
    if field.type == "bool":
        return value != 0
    return _signed(value, 32 if field.type == "int32" else 64)


def _text(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "replace")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _time(raw: bytes, micro: bool) -> str | None:
    """metav1.Time/MicroTime: an empty message is the zero time (JSON null)."""
    if not raw:
        return None
    seconds = nanos = 0
    for number, wire, value in _fields(raw, "Timestamp"):
        if wire == 0 and number == 1:
            seconds = _signed(value, 64)
        elif wire == 0 and number == 2:
            nanos = _signed(value, 32)
    try:
        when = _EPOCH + datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise _Malformed(f"proto: timestamp seconds out of range: {seconds}") from None
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d}"
            f"T{when.hour:02d}:{when.minute:02d}:{when.second:02d}")
    # same as upstream: Time keeps whole seconds only, MicroTime keeps microseconds
    return f"{text}.{max(nanos, 0) // 1000:06d}Z" if micro else f"{text}Z"


def _quantity(raw: bytes) -> str:
    text = "0"
    for number, wire, value in _fields(raw, "Quantity"):
        if number == 1 and wire == 2:
            text = _text(value)
    return text


def _int_or_string(raw: bytes) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for number, wire, value in _fields(raw, "IntOrString"):
        if number == 1 and wire == 0:
            kind = _signed(value, 64)
        elif number == 2 and wire == 0:
            int_val = _signed(value, 32)
        elif number == 3 and wire == 2:
            str_val = _text(value)
    return str_val if kind == 1 else int_val


def _raw_json(raw: bytes, message: str) -> Any:
    """RawExtension/FieldsV1: field 1 holds JSON (or, for RawExtension, nested protobuf)."""
    data = b""
    for number, wire, value in _fields(raw, message):
        if number == 1 and wire == 2:
            data = bytes(value)
    if not data:
        return None
    if data.startswith(MAGIC):
        try:
            return decode_protobuf(data)
        except ApiError as e:
            raise _Malformed(e.message) from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise _Malformed(f"{message}: invalid JSON in raw bytes") from None


def _map_value(kind: str, raw: bytes) -> Any:
    if kind == "bytes":
        return _b64(raw)
    if kind == "quantity":
        return _quantity(raw)
    return _text(raw)


def _map_entry(field: Field, raw: bytes) -> tuple[str, Any]:
    key, value = "", _map_value(field.ref, b"")
    for number, wire, item in _fields(raw, "MapEntry"):
        if wire != 2 and number in (1, 2):
            raise _Malformed(f"proto: wrong wireType = {wire} for field {field.name}")
        if number == 1:
            key = _text(item)
        elif number == 2:
            value = _map_value(field.ref, item)
    return key, value


def _convert(field: Field, raw: bytes) -> Any:
    """A length-delimited value of a non-scalar field, as JSON."""
    kind = field.type
    if kind == "string":
        return _text(raw)
    if kind == "bytes":
        return _b64(raw)
    if kind in ("msg", "inline"):
        return _decode(raw, field.ref)
    if kind in ("time", "microtime"):
        return _time(raw, kind == "microtime")
    if kind == "quantity":
        return _quantity(raw)
    if kind == "intorstr":
        return _int_or_string(raw)
    if kind == "fieldsv1":
        return _raw_json(raw, "FieldsV1")
    return _raw_json(raw, "RawExtension")


def _wrong_wire(field: Field, wire: int) -> _Malformed:
    go_name = field.name[:1].upper() + field.name[1:] if field.name else field.ref
    return _Malformed(f"proto: wrong wireType = {wire} for field {go_name}")


def _decode(buf: bytes, message: str) -> dict[str, Any]:
    """Decode one message of the table into its JSON dict."""
    table = MESSAGES[message]
    out: dict[str, Any] = {}
    for number, wire, value in _fields(buf, message):
        field = table.get(number)
        if field is None:
            continue  # unknown field: skipped, as a newer client's additions would be
        if field.type in _VARINT_TYPES:
            if wire == 0:
                items = [_scalar(field, value)]
            elif wire == 2 and field.repeated:  # packed
                items, pos = [], 0
                while pos < len(value):
                    item, pos = _varint(value, pos)
                    items.append(_scalar(field, item))
            else:
                raise _wrong_wire(field, wire)
        elif wire != 2:
            raise _wrong_wire(field, wire)
        elif field.type == "map":
            key, item = _map_entry(field, value)
            out.setdefault(field.name, {})[key] = item
            continue
        else:
            items = [_convert(field, value)]
        if field.type == "inline":
            out.update(items[0])
        elif field.repeated:
            out.setdefault(field.name, []).extend(items)
        elif field.type == "msg" and isinstance(out.get(field.name), dict):
            out[field.name].update(items[0])  # a repeated singular message merges
        elif not field.keep and items[0] in _ZERO:
            out.pop(field.name, None)  # Go omitempty: a zero value field is left out
        else:
            out[field.name] = items[0]
    return out


def _envelope(buf: bytes) -> tuple[str, str, bytes]:
    """runtime.Unknown → (apiVersion, kind, raw)."""
    api_version = kind = ""
    raw = b""
    for number, wire, value in _fields(buf, "Unknown"):
        if wire != 2 and number in (1, 2, 3, 4):
            name = ("TypeMeta", "Raw", "ContentEncoding", "ContentType")[number - 1]
            raise _Malformed(f"proto: wrong wireType = {wire} for field {name}")
        if number == 1:
            for inner, inner_wire, item in _fields(value, "TypeMeta"):
                if inner in (1, 2) and inner_wire != 2:
                    name = ("APIVersion", "Kind")[inner - 1]
                    raise _Malformed(f"proto: wrong wireType = {inner_wire} for field {name}")
                if inner == 1:
                    api_version = _text(item)
                elif inner == 2:
                    kind = _text(item)
        elif number == 2:
            raw = bytes(value)
    return api_version, kind, raw


def _message_for(api_version: str, kind: str) -> str | None:
    if kind in _ANY_VERSION:
        return kind
    return KINDS.get((api_version, kind))


def decode_protobuf(raw: bytes, *, into: str | None = None) -> dict[str, Any]:
    """Decode a Kubernetes protobuf body into the dict its JSON form would give.

    `into` names the kind the endpoint expects, for the error wording (defaults to the kind in
    the envelope). Raises ApiError 400 BadRequest for malformed bytes or an unknown kind.
    """
    if not raw:
        raise bad_request("empty data")
    if not raw.startswith(MAGIC):
        expected = " ".join(str(c) for c in MAGIC)
        raise bad_request("provided data does not appear to be a protobuf message, "
                          f"expected prefix [{expected}]")
    if len(raw) == len(MAGIC):
        raise bad_request("empty body")
    try:
        api_version, kind, payload = _envelope(bytes(raw[len(MAGIC):]))
    except _Malformed as e:
        raise bad_request(e.message) from None
    type_meta = (f"runtime.TypeMeta{{APIVersion:{orjson.dumps(api_version).decode()}, "
                 f"Kind:{orjson.dumps(kind).decode()}}}")
    if not kind:
        raise bad_request(f"Object 'Kind' is missing in '{type_meta}'")
    if not api_version:
        raise bad_request(f"Object 'apiVersion' is missing in '{type_meta}'")
    version = api_version.rpartition("/")[2]
    prefix = f'{kind} in version "{version}" cannot be handled as a {into or kind}: '
    message = _message_for(api_version, kind)
    if message is None:
        raise bad_request(f'{prefix}no kind "{kind}" is registered for version '
                          f'"{api_version}" in scheme "{SCHEME}"')
    try:
        body = _decode(payload, message)
    except _Malformed as e:
        raise bad_request(prefix + e.message) from None
    except RecursionError:
        raise bad_request(prefix + "proto: message nested too deeply") from None
    return {"apiVersion": api_version, "kind": kind, **body}


__all__ = ["CONTENT_TYPE", "KINDS", "MAGIC", "MESSAGES", "Field", "decode_protobuf"]
