"""The protobuf field tables of meta/v1 and core/v1 messages, and the field type itself.

Interop data derived from the upstream k8s.io/api and k8s.io/apimachinery `generated.proto`
files: per message, field number → JSON name, wire kind and JSON visibility. The other API
groups' messages are `fakeapi.http.protobuf_groups`; decoding is `fakeapi.http.protobuf`.
"""

from __future__ import annotations

import dataclasses

KEEP = True  # readability marker for MessageField.keep in the tables


@dataclasses.dataclass(frozen=True, slots=True)
class MessageField:
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


def s(name: str, keep: bool = False) -> MessageField:
    """A string field."""
    return MessageField(name, "string", keep=keep)


def i32(name: str, keep: bool = False) -> MessageField:
    """An int32 field."""
    return MessageField(name, "int32", keep=keep)


def i64(name: str, keep: bool = False) -> MessageField:
    """An int64 field."""
    return MessageField(name, "int64", keep=keep)


def b(name: str, keep: bool = False) -> MessageField:
    """A bool field."""
    return MessageField(name, "bool", keep=keep)


def by(name: str, keep: bool = False) -> MessageField:
    """A bytes field (base64 in JSON)."""
    return MessageField(name, "bytes", keep=keep)


def m(name: str, ref: str) -> MessageField:
    """A nested message field."""
    return MessageField(name, "msg", ref)


def inline(ref: str) -> MessageField:
    """An embedded struct serialized inline (`json:",inline"`)."""
    return MessageField("", "inline", ref)


def t(name: str) -> MessageField:
    """A metav1.Time field (RFC 3339, seconds precision)."""
    return MessageField(name, "time")


def mt(name: str) -> MessageField:
    """A metav1.MicroTime field (RFC 3339 with microseconds)."""
    return MessageField(name, "microtime")


def q(name: str) -> MessageField:
    """A resource.Quantity field."""
    return MessageField(name, "quantity")


def ios(name: str) -> MessageField:
    """An intstr.IntOrString field."""
    return MessageField(name, "intorstr")


def rs(name: str) -> MessageField:
    """A repeated string field."""
    return MessageField(name, "string", repeated=True)


def ri32(name: str) -> MessageField:
    """A repeated int32 field (packed or not)."""
    return MessageField(name, "int32", repeated=True)


def ri64(name: str) -> MessageField:
    """A repeated int64 field (packed or not)."""
    return MessageField(name, "int64", repeated=True)


def rm(name: str, ref: str) -> MessageField:
    """A repeated message field."""
    return MessageField(name, "msg", ref, repeated=True)


def smap(name: str) -> MessageField:
    """A map<string, string> field."""
    return MessageField(name, "map", "string")


def bmap(name: str) -> MessageField:
    """A map<string, bytes> field (values base64 in JSON)."""
    return MessageField(name, "map", "bytes")


def qmap(name: str) -> MessageField:
    """A map<string, Quantity> field (a ResourceList)."""
    return MessageField(name, "map", "quantity")


# ----- the messages --------------------------------------------------------------------------

META: dict[str, dict[int, MessageField]] = {
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
        6: s("fieldsType"), 7: MessageField("fieldsV1", "fieldsv1"), 8: s("subresource"),
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

CORE_OBJECTS: dict[str, dict[int, MessageField]] = {
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

POD: dict[str, dict[int, MessageField]] = {
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

VOLUMES: dict[str, dict[int, MessageField]] = {
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
