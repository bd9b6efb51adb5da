"""Upstream's decode-time defaults (`SetDefaults_*` of core/v1, apps/v1, batch/v1, ...) for the
everyday kinds: pods and pod templates, workloads, services, secrets.

They run while a body is decoded (create, update, patch results and apply configurations),
so a manifest read back shows what a real 1.37 cluster shows (`restartPolicy: Always`,
`imagePullPolicy`, `terminationMessagePath`, the RollingUpdate strategy of a Deployment...).
Every function defaults a JSON object in place and ignores what isn't an object; each kind's
row names its `default_<kind>` (`fakeapi.registry.kinds`).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

DEFAULT_TERMINATION_GRACE = 30
SCHEDULER = "default-scheduler"
DEFAULT_MODE = 0o644  # same as upstream: secret/configMap/projected volumes' defaultMode


def _obj(parent: Any, key: str) -> Obj | None:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else None


def _objs(parent: Any, key: str) -> list[Obj]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def image_pull_policy(image: str) -> str:
    """Same as upstream SetDefaults_Container: Always for `:latest` or an untagged image,
    IfNotPresent for a tag or a digest."""
    if "@" in image:
        return "IfNotPresent"
    name = image.rsplit("/", 1)[-1]
    tag = name.partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _probe(probe: Obj | None) -> None:
    if probe is None:
        return
    for key, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1),
                       ("failureThreshold", 3)):
        probe.setdefault(key, value)
    http = _obj(probe, "httpGet")
    if http is not None:
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def default_container(c: Obj) -> None:
    """SetDefaults_Container, ContainerPort, Probe and EnvVar's fieldRef."""
    if isinstance(c.get("image"), str):
        c.setdefault("imagePullPolicy", image_pull_policy(c["image"]))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in _objs(c, "ports"):
        port.setdefault("protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(_obj(c, key))
    for env in _objs(c, "env"):
        field_ref = _obj(_obj(env, "valueFrom"), "fieldRef")
        if field_ref is not None:
            field_ref.setdefault("apiVersion", "v1")
    resources = _obj(c, "resources")
    limits = _obj(resources, "limits")
    if resources is not None and limits:
        # same as upstream SetDefaults_Pod: requests default to the limits
        requests = resources.setdefault("requests", {})
        if isinstance(requests, dict):
            for name, value in limits.items():
                requests.setdefault(name, value)


def _volume(v: Obj) -> None:
    sources = [k for k in v if k != "name"]
    if not sources:
        v["emptyDir"] = {}  # same as upstream SetDefaults_Volume
    for key in ("secret", "configMap", "projected", "downwardAPI"):
        source = _obj(v, key)
        if source is not None:
            source.setdefault("defaultMode", DEFAULT_MODE)


def default_pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec plus the container, volume and service-link defaults of a pod."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", DEFAULT_TERMINATION_GRACE)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", SCHEDULER)
    spec.setdefault("enableServiceLinks", True)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in _objs(spec, key):
            default_container(c)
    for v in _objs(spec, "volumes"):
        _volume(v)


def default_pod_template_spec(template: Any) -> None:
    """A PodTemplateSpec inside a workload: its pod spec's defaults."""
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))


def _rolling(spec: Obj, key: str, **rolling: Any) -> None:
    """An update strategy `key` of type RollingUpdate by default, with these defaults."""
    strategy = spec.setdefault(key, {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            params = strategy.setdefault("rollingUpdate", {})
            if isinstance(params, dict):
                for name, value in rolling.items():
                    params.setdefault(name, value)


def default_pod(obj: Obj) -> None:
    """SetDefaults_Pod (core/v1): the pod spec's defaults."""
    default_pod_spec(obj.get("spec"))


def default_pod_template(obj: Obj) -> None:
    """A PodTemplate (core/v1): its template's pod spec defaults."""
    default_pod_template_spec(obj.get("template"))


def _replicas(spec: Obj) -> None:
    spec.setdefault("replicas", 1)


def default_deployment(obj: Obj) -> None:
    """SetDefaults_Deployment (apps/v1)."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    _replicas(spec)
    _rolling(spec, "strategy", maxUnavailable="25%", maxSurge="25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    default_pod_template_spec(spec.get("template"))


def default_replica_set(obj: Obj) -> None:
    """SetDefaults_ReplicaSet (apps/v1): one replica, the template's defaults."""
    spec = _obj(obj, "spec")
    if spec is not None:
        _replicas(spec)
        default_pod_template_spec(spec.get("template"))


def default_stateful_set(obj: Obj) -> None:
    """SetDefaults_StatefulSet (apps/v1)."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    _replicas(spec)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    _rolling(spec, "updateStrategy", partition=0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy",
                    {"whenDeleted": "Retain", "whenScaled": "Retain"})
    default_pod_template_spec(spec.get("template"))


def default_daemon_set(obj: Obj) -> None:
    """SetDefaults_DaemonSet (apps/v1)."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    _rolling(spec, "updateStrategy", maxUnavailable=1, maxSurge=0)
    spec.setdefault("revisionHistoryLimit", 10)
    default_pod_template_spec(spec.get("template"))


def default_job_spec(spec: Any) -> None:
    """SetDefaults_Job (batch/v1): one pod to completion, six retries, NonIndexed."""
    if not isinstance(spec, dict):
        return
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    if not spec.get("podFailurePolicy"):
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    default_pod_template_spec(spec.get("template"))


def default_job(obj: Obj) -> None:
    """SetDefaults_Job (batch/v1) of a Job object."""
    default_job_spec(obj.get("spec"))


def default_cron_job(obj: Obj) -> None:
    """SetDefaults_CronJob (batch/v1)."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = _obj(spec, "jobTemplate")
    if job_template is not None:
        default_job_spec(job_template.get("spec"))


def default_service(obj: Obj) -> None:
    """SetDefaults_Service: ClusterIP, no affinity, TCP ports whose targetPort is the port."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for port in _objs(spec, "ports"):
        port.setdefault("protocol", "TCP")
        if "targetPort" not in port and "port" in port:
            port["targetPort"] = port["port"]


def default_secret(obj: Obj) -> None:
    """SetDefaults_Secret (core/v1): type Opaque."""
    obj.setdefault("type", "Opaque")


def default_persistent_volume_claim(obj: Obj) -> None:
    """SetDefaults_PersistentVolumeClaim (core/v1): a Filesystem volume."""
    spec = _obj(obj, "spec")
    if spec is not None:
        spec.setdefault("volumeMode", "Filesystem")


def default_persistent_volume(obj: Obj) -> None:
    """SetDefaults_PersistentVolume (core/v1): Retain, a Filesystem volume."""
    spec = _obj(obj, "spec")
    if spec is not None:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")


def default_replication_controller(obj: Obj) -> None:
    """SetDefaults_ReplicationController (core/v1): one replica, the template's defaults."""
    spec = _obj(obj, "spec")
    if spec is not None:
        _replicas(spec)
        default_pod_template_spec(spec.get("template"))


def default_horizontal_pod_autoscaler(obj: Obj) -> None:
    """SetDefaults_HorizontalPodAutoscaler (autoscaling/v2): one replica at least, and 80%
    CPU utilization when no metric is given."""
    spec = _obj(obj, "spec")
    if spec is None:
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]
