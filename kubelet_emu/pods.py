"""Running pods on an emulated node, as upstream's kubelet does (pod workers, the DRA
manager, the status manager):

1. admission: every claim of the pod exists, is allocated and reserved for the pod (or its
   PodGroup); until then the pod stays Pending, its containers waiting in ContainerCreating;
2. each claim is prepared by its drivers' plugins (NodePrepareResources), which write the
   CDI specs and device-metadata files; a claim shared by pods is prepared once per node;
3. the sandbox gets an IP from the node's pod CIDR (drivers' NRI hooks run here), init
   containers run to completion, then the containers start, each with the environment and
   mounts of its claims' CDI devices;
4. the status goes Running and Ready in one write: PodReadyToStartContainers, Initialized,
   ContainersReady, Ready; containerStatuses running with startedAt; podIP and hostIP.

Containers exit when their command does (restartPolicy decides what follows: Succeeded,
Failed, or a restart after a CrashLoopBackOff delay). Graceful deletion: SIGTERM, SIGKILL at
the end of the grace period, claims unprepared, the final status, then the pod is deleted
with grace 0 (upstream's status manager).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import kubelet_emu.cdi as cdi
import kubelet_emu.logs as logs
import kubelet_emu.shell as shell
from fakeapi.clock import Clock, parse_time, rfc3339
from fakeapi.errors import ApiError
from fakeapi.runtime.workqueue import Retry, WorkQueue
from kubelet_emu.node_state import NodeState
from kubelet_emu.plugin import Claim, PreparedDevice
from kubelet_emu.process import Process, Progress
from kubelet_emu.settings import KUBELET_ACCOUNT, RUN_SECONDS_ANNOTATION

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CLAIMS = "resourceclaims.resource.k8s.io"
PODS = "pods"
DEFAULT_GRACE = 30
BACKOFF_BASE, BACKOFF_MAX = 10.0, 300.0
"""Upstream's CrashLoopBackOff: 10 s doubling up to 5 min."""
SERVICE_ENV = {
    "KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://10.96.0.1:443",
    "KUBERNETES_PORT_443_TCP": "tcp://10.96.0.1:443", "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
    "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": "10.96.0.1"}
"""The `kubernetes` service's environment every container gets (service links)."""
KUBELET_CONDITIONS = frozenset({"PodReadyToStartContainers", "Initialized", "Ready",
                                "ContainersReady"})
"""Same as upstream's PodConditionByKubelet: the pod conditions the kubelet writes."""
IMAGE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


class Host(Protocol):
    """What the pod worker needs from the kubelet component it works for."""

    clock: Clock
    queue: WorkQueue[tuple[str, ...]]
    nodes: dict[str, NodeState]
    pod_informer: Any
    claim_informer: Any

    def node_client(self, account: str, node: str | None) -> Any: ...
    def node_root(self, node: str) -> Path: ...
    def cdi_registry(self, node: str) -> cdi.SpecCache: ...
    def allocate_slot(self, state: NodeState, uid: str) -> int: ...
    def release_slot(self, state: NodeState, uid: str) -> None: ...
    def health_for(self, record: PodRecord) -> dict[str, list[Obj]]: ...
    async def event(self, node: str, obj: Obj, reason: str, message: str, *,
                    warning: bool = False) -> None: ...


class NotReady(Exception):
    """The pod can't start yet; the message says why (it shows in an event and the log)."""


@dataclasses.dataclass
class PreparedClaim:
    """One of the pod's claims on the node, resolved and prepared."""

    pod_claim: str
    """The pod's name for it (spec.resourceClaims[].name)."""
    claim: Claim
    devices: dict[str, tuple[PreparedDevice, ...]] = dataclasses.field(default_factory=dict)
    """Prepared devices by driver."""


@dataclasses.dataclass
class ContainerRun:
    """One container of a running pod: its current run and history."""

    spec: Obj
    init: bool
    process: Process | None = None
    restarts: int = 0
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    last_state: Obj | None = None
    waiting_reason: str = "ContainerCreating"
    wake_at: float | None = None
    """Monotonic clock time the process must be resumed at."""
    container_id: str = ""
    cdi_devices: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The container's name."""
        return str(self.spec["name"])

    @property
    def running(self) -> bool:
        """Started and not exited."""
        return bool(self.started_at) and self.exit_code is None


@dataclasses.dataclass
class PodRecord:
    """What the kubelet keeps about a pod it runs."""

    uid: str
    namespace: str
    name: str
    node: str
    claims: list[PreparedClaim]
    slot: int
    ip: str
    started: str
    init: list[ContainerRun]
    containers: list[ContainerRun]
    restart_policy: str
    mappings: tuple[Obj, ...] = ()
    """The special claim's request mappings (see `request_mappings`)."""
    terminating: bool = False
    kill_at: float | None = None
    finished: bool = False
    """Terminal phase reached (claims unprepared)."""
    last_status: Obj | None = None
    health: dict[str, list[Obj]] | None = None
    """allocatedResourcesStatus as last written; kept once the pod has terminated."""
    timer: Any = None

    def runs(self) -> list[ContainerRun]:
        """Init containers, then containers."""
        return [*self.init, *self.containers]


# ----- claims ----------------------------------------------------------------------------


EXTENDED_CLAIM = ""
"""The pod claim name the kubelet gives the special claim of a pod's DRA-backed extended
resources (pod claim names are DNS labels, never empty)."""


def request_mappings(pod: Obj) -> tuple[Obj, ...]:
    """`status.extendedResourceClaimStatus.requestMappings`: which request of the special
    claim serves which container's extended resource."""
    status = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    return tuple(m for m in status.get("requestMappings") or () if isinstance(m, dict))


def claim_refs(container: Obj, mappings: Sequence[Obj]) -> list[tuple[str, str]]:
    """(pod claim, request or "") per claim a container uses (`resources.claims`), then the
    special claim's requests mapped to it, as upstream's DRA manager resolves the claims of
    a container with extended resources."""
    refs = [(str(r.get("name") or ""), str(r.get("request") or ""))
            for r in (container.get("resources") or {}).get("claims") or []]
    refs += [(EXTENDED_CLAIM, str(m.get("requestName") or ""))
             for m in mappings if m.get("containerName") == container.get("name")]
    return refs


def claim_names(pod: Obj) -> list[tuple[str, str | None]]:
    """(pod claim name, ResourceClaim name) per pod claim; the name is None for a template
    claim whose ResourceClaim doesn't exist yet. Claims the status says aren't needed
    (a status entry without resourceClaimName) are left out. The special claim of the
    pod's extended resources (`status.extendedResourceClaimStatus`, written by the scheduler
    before it binds) comes last, as EXTENDED_CLAIM."""
    statuses = {s.get("name"): s for s in (pod.get("status") or {}).get(
        "resourceClaimStatuses") or []}
    out: list[tuple[str, str | None]] = []
    for rc in (pod.get("spec") or {}).get("resourceClaims") or []:
        if rc.get("resourceClaimName"):
            out.append((rc["name"], rc["resourceClaimName"]))
        elif rc.get("resourceClaimTemplateName"):
            status = statuses.get(rc["name"])
            if status is None:
                out.append((rc["name"], None))
            elif status.get("resourceClaimName"):
                out.append((rc["name"], status["resourceClaimName"]))
    extended = ((pod.get("status") or {}).get("extendedResourceClaimStatus") or {}).get(
        "resourceClaimName")
    if extended:
        out.append((EXTENDED_CLAIM, extended))
    return out


def reserved_for_pod(claim: Obj, pod: Obj) -> bool:
    """Same as upstream's kubelet check: the claim is reserved for this pod, or (workload
    claims) for the pod's PodGroup."""
    meta = pod["metadata"]
    group = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
    for ref in (claim.get("status") or {}).get("reservedFor") or []:
        if ref.get("resource") == "pods" and ref.get("uid") == meta["uid"]:
            return True
        if group and ref.get("resource") == "podgroups" and ref.get("name") == group:
            return True
    return False


def check_claims(pod: Obj, lookup: Any) -> list[tuple[str, Obj]]:
    """The pod's claims, each allocated and reserved for it; NotReady says what is missing."""
    ns = pod["metadata"]["namespace"]
    out = []
    for pod_claim, name in claim_names(pod):
        if name is None:
            raise NotReady(f"waiting for the ResourceClaim of pod claim {pod_claim} to be "
                           "created")
        claim = lookup(name, ns)
        if claim is None:
            raise NotReady(f'failed to fetch ResourceClaim {name} referenced by pod {ns}/'
                           f'{pod["metadata"]["name"]}: resourceclaim.resource.k8s.io '
                           f'"{name}" not found')
        if not (claim.get("status") or {}).get("allocation"):
            raise NotReady(f"claim {ns}/{name} is not allocated")
        if not reserved_for_pod(claim, pod):
            raise NotReady(f"pod {pod['metadata']['name']} ({pod['metadata']['uid']}) is not "
                           f"allowed to use ResourceClaim {ns}/{name}")
        out.append((pod_claim, claim))
    return out


def devices_for(claim: PreparedClaim, request: str) -> list[tuple[str, PreparedDevice]]:
    """(driver, device) of a claim's prepared devices, or of those of one request
    (subrequests included) when `request` is given."""
    return [(driver, d) for driver, devices in claim.devices.items() for d in devices
            if not request or any(r == request or r.startswith(request + "/")
                                  for r in d.request_names)]


def container_cdi_devices(container: Obj, claims: Sequence[PreparedClaim],
                          mappings: Sequence[Obj] = ()) -> tuple[str, ...]:
    """The CDI devices of a container's claims (all of a claim's devices, or those of the
    request it names, subrequests included) and of the special claim's requests `mappings`
    give it, as the kubelet's DRA manager hands them over."""
    by_name = {c.pod_claim: c for c in claims}
    out: list[str] = []
    for name, request in claim_refs(container, mappings):
        claim = by_name.get(name)
        if claim is None:
            continue
        for _, d in devices_for(claim, request):
            out += d.cdi_device_ids
    return tuple(dict.fromkeys(out))


# ----- environment -----------------------------------------------------------------------


def field_value(pod: Obj, path: str, host_ip: str, pod_ip: str) -> str:
    """An env var's fieldRef (the downward API)."""
    meta = pod["metadata"]
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": pod["spec"].get("nodeName"),
              "spec.serviceAccountName": pod["spec"].get("serviceAccountName") or "default",
              "status.hostIP": host_ip, "status.podIP": pod_ip,
              "status.hostIPs": host_ip, "status.podIPs": pod_ip}
    if path in simple:
        return str(simple[path] or "")
    for prefix, values in (("metadata.labels", meta.get("labels")),
                           ("metadata.annotations", meta.get("annotations"))):
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((values or {}).get(path[len(prefix) + 2:-2], ""))
    return ""


def container_env(pod: Obj, container: Obj, edits: cdi.ContainerEdits, *, host_ip: str,
                  pod_ip: str, config: dict[str, dict[str, str]]) -> dict[str, str | None]:
    """What the container's process sees: the image's PATH, bash's own variables, the
    service links, the pod spec's env (with `$(VAR)` references), then the CDI edits."""
    env: dict[str, str | None] = {**IMAGE_ENV, "HOSTNAME": pod["metadata"]["name"],
                                  "HOME": "/root", "PWD": "/", "SHLVL": "1", "OLDPWD": None,
                                  **SERVICE_ENV}
    for source in container.get("envFrom") or []:
        ref = source.get("configMapRef") or source.get("secretRef") or {}
        for k, v in (config.get(ref.get("name", "")) or {}).items():
            env[(source.get("prefix") or "") + k] = v
    for var in container.get("env") or []:
        name = var.get("name")
        if not name:
            continue
        if "value" in var:
            env[name] = _dependent(str(var["value"]), env)
        elif var.get("valueFrom", {}).get("fieldRef"):
            env[name] = field_value(pod, var["valueFrom"]["fieldRef"].get("fieldPath", ""),
                                    host_ip, pod_ip)
        elif var.get("valueFrom", {}).get("configMapKeyRef"):
            ref = var["valueFrom"]["configMapKeyRef"]
            env[name] = (config.get(ref.get("name", "")) or {}).get(ref.get("key", ""), "")
        else:
            env[name] = ""
    for entry in edits.env:
        k, _, v = entry.partition("=")
        env[k] = v
    return env


def _dependent(value: str, env: dict[str, str | None]) -> str:
    """`$(VAR)` references to variables defined before, as upstream expands them."""
    out, i = "", 0
    while i < len(value):
        if value.startswith("$$", i):
            out += "$"
            i += 2
        elif value.startswith("$(", i) and ")" in value[i:]:
            end = value.index(")", i)
            name = value[i + 2:end]
            known = env.get(name)
            out += known if known is not None else value[i:end + 1]
            i = end + 1
        else:
            out += value[i]
            i += 1
    return out


def view_lines(env: dict[str, str | None], mounts: Sequence[Obj]) -> list[str]:
    """What a service container prints: its environment and its mounted metadata files."""
    lines = shell.environment_lines({k: v for k, v in env.items() if v is not None})
    lines += [f"mounted {m.get('containerPath')} (ro)" for m in mounts]
    return lines


def container_id(pod_uid: str, name: str, restarts: int) -> str:
    """A stable containerd id for one run of a container."""
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restarts}".encode()).hexdigest()


def image_ref(image: str) -> tuple[str, str]:
    """(image, imageID) as containerd reports them (`ubuntu:22.04` is
    `docker.io/library/ubuntu:22.04`)."""
    first, slash, _ = image.partition("/")
    if not slash or not ("." in first or ":" in first or first == "localhost"):
        image = f"docker.io/{image if slash else 'library/' + image}"
    if ":" not in image.rsplit("/", 1)[-1] and "@" not in image:
        image += ":latest"
    digest = hashlib.sha256(image.encode()).hexdigest()
    return image, f"{image.rsplit(':', 1)[0]}@sha256:{digest}"


# ----- status ----------------------------------------------------------------------------


def _cond(type_: str, status: bool, since: str, reason: str = "") -> Obj:
    c: Obj = {"type": type_, "status": "True" if status else "False",
              "lastTransitionTime": since}
    if reason:
        c["reason"] = reason
    return c


def container_status(run: ContainerRun, health: list[Obj] | None = None) -> Obj:
    """One entry of containerStatuses / initContainerStatuses."""
    image, image_id = image_ref(str(run.spec.get("image") or ""))
    out: Obj = {"name": run.name, "image": image, "imageID": image_id if run.started_at else "",
                "ready": run.running and not run.init, "restartCount": run.restarts,
                "started": run.running, "lastState": run.last_state or {}}
    if run.container_id:
        out["containerID"] = run.container_id
    if run.running:
        out["state"] = {"running": {"startedAt": run.started_at}}
    elif run.exit_code is not None and run.finished_at and not run.waiting_reason:
        out["state"] = {"terminated": _terminated(run)}
    else:
        out["state"] = {"waiting": {"reason": run.waiting_reason}}
    if health:
        out["allocatedResourcesStatus"] = health
    return out


def _terminated(run: ContainerRun) -> Obj:
    code = run.exit_code or 0
    out: Obj = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                "finishedAt": run.finished_at, "containerID": run.container_id}
    if run.started_at:  # (null when it never started: the server's merge patch drops it)
        out["startedAt"] = run.started_at
    return out


def phase_of(record: PodRecord) -> str:
    """Same as upstream's getPhase: Running while a container runs or will restart; once all
    are done, Succeeded when every one exited 0, else Failed; Pending during init."""
    if any(not r.started_at or r.running or r.exit_code is None for r in record.init):
        return "Pending"
    runs = record.containers
    if any(r.running or r.exit_code is None for r in runs):
        return "Running"
    if record.terminating or record.restart_policy == "Never" or (
            record.restart_policy == "OnFailure" and all(r.exit_code == 0 for r in runs)):
        return "Succeeded" if all(r.exit_code == 0 for r in runs) else "Failed"
    return "Running"  # restarting


def pod_status(pod: Obj, record: PodRecord, host_ip: str,
               health: dict[str, list[Obj]] | None = None) -> Obj:
    """The status the kubelet writes for a pod it runs."""
    status = dict(pod.get("status") or {})
    phase = phase_of(record)
    initialized = phase != "Pending"
    ready = phase == "Running" and all(r.running for r in record.containers)
    # same as upstream's status manager: conditions the kubelet does not own (PodScheduled,
    # DisruptionTarget, readiness gates) are kept as they are
    # (their null fields, as the scheduler writes `lastProbeTime: null`, are left out: the
    # server's merge patch drops them, and the status must compare equal to what it keeps)
    others = [{k: v for k, v in c.items() if v is not None}
              for c in status.get("conditions") or [] if c.get("type") not in KUBELET_CONDITIONS]
    since = record.started
    conditions = [
        _cond("PodReadyToStartContainers", not record.finished, since),
        _cond("Initialized", initialized, since,
              "" if initialized else "ContainersNotInitialized"),
        _cond("Ready", ready, since, "" if ready else (
            "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady")),
        _cond("ContainersReady", ready, since, "" if ready else (
            "PodCompleted" if phase in ("Succeeded", "Failed") else "ContainersNotReady")),
        *others]
    previous = {c.get("type"): c for c in status.get("conditions") or []}
    for c in conditions:
        old = previous.get(c["type"])
        if old is not None and old.get("status") == c["status"] and old.get(
                "lastTransitionTime"):
            c["lastTransitionTime"] = old["lastTransitionTime"]
    health = health or {}
    status.update({
        "phase": phase, "conditions": conditions, "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}], "podIP": record.ip, "podIPs": [{"ip": record.ip}],
        "startTime": record.started,
        "containerStatuses": [container_status(r, health.get(r.name))
                              for r in record.containers]})
    if record.init:
        status["initContainerStatuses"] = [container_status(r) for r in record.init]
    generation = pod["metadata"].get("generation")
    if generation is not None:
        status["observedGeneration"] = generation
    return status


def pending_status(pod: Obj, reason: str = "ContainerCreating") -> Obj:
    """The status of a pod admitted to the node but not started (claims not ready)."""
    status = dict(pod.get("status") or {})
    status["phase"] = "Pending"
    status["containerStatuses"] = [{
        "name": c["name"], "image": image_ref(str(c.get("image") or ""))[0], "imageID": "",
        "ready": False, "restartCount": 0, "started": False, "lastState": {},
        "state": {"waiting": {"reason": reason}}} for c in pod["spec"].get("containers") or []]
    return status


# ----- the pod worker --------------------------------------------------------------------


class PodWorker:
    """Runs the pods bound to the emulator's nodes (keys `("pod", namespace/name)`)."""

    def __init__(self, kubelet: Host) -> None:
        self.kubelet = kubelet
        self.clock = kubelet.clock
        self.records: dict[str, PodRecord] = {}
        """Running pods by namespace/name."""
        self.prepared: dict[tuple[str, str], dict[str, set[str]]] = {}
        """(node, claim uid) → driver → pod uids using it (a claim is prepared once)."""
        self.waiting: dict[str, set[str]] = {}
        """namespace/claim name → pod keys waiting for it."""
        self.pending_written: dict[str, str] = {}
        """Pod key → the reason of the Pending status last written."""

    # ----- helpers ---------------------------------------------------------------------

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _client(self, node: str) -> Any:
        return self.kubelet.node_client(KUBELET_ACCOUNT, node)

    def _claim(self, name: str, namespace: str) -> Obj | None:
        return self.kubelet.claim_informer.cache.get(name, namespace)

    def root(self, node: str) -> Path:
        """The node's root folder."""
        return self.kubelet.node_root(node)

    # ----- sync ------------------------------------------------------------------------

    async def sync(self, key: str) -> None:
        """Bring one pod forward: admit and start it, advance its containers, terminate it."""
        namespace, _, name = key.partition("/")
        pod = self.kubelet.pod_informer.cache.get(name, namespace)
        record = self.records.get(key)
        if record is not None and (pod is None or pod["metadata"]["uid"] != record.uid):
            await self._forget(key, record)
            record = None
        if pod is None:
            self.pending_written.pop(key, None)
            return
        node = (pod.get("spec") or {}).get("nodeName") or ""
        state = self.kubelet.nodes.get(node)
        if state is None or state.heartbeat_stopped:
            return
        if pod["metadata"].get("deletionTimestamp"):
            await self._terminate(key, pod, record, state)
            return
        if record is None:
            if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                return
            await self._start(key, pod, state)
            return
        await self._advance(key, pod, record, state)

    async def _start(self, key: str, pod: Obj, state: NodeState) -> None:
        try:
            claims = check_claims(pod, self._claim)
        except NotReady as e:
            self._wait_for_claims(key, pod)
            await self._write_pending(key, pod, state, str(e))
            return
        self._stop_waiting(key)
        pod_claims = await self._prepare(pod, state, claims)
        if pod_claims is None:
            raise Retry(reason="claims not prepared")
        slot = self.kubelet.allocate_slot(state, pod["metadata"]["uid"])
        now = self._now()
        spec = pod["spec"]
        record = PodRecord(
            uid=pod["metadata"]["uid"], namespace=pod["metadata"]["namespace"],
            name=pod["metadata"]["name"], node=state.name, claims=pod_claims, slot=slot,
            ip=state.where.pod_ip(slot), started=now,
            init=[ContainerRun(spec=c, init=True) for c in spec.get("initContainers") or []],
            containers=[ContainerRun(spec=c, init=False) for c in spec.get("containers") or []],
            restart_policy=spec.get("restartPolicy") or "Always",
            mappings=request_mappings(pod))
        self.records[key] = record
        for driver, claims_of in self._claims_by_driver(record).items():
            plugin = state.plugins.get(driver)
            if plugin is not None:
                await plugin.run_pod_sandbox(pod, claims_of)
        config = await self._config_maps(pod)
        self._run_next(pod, record, state, config)
        await self._write_status(pod, record, state)

    def _claims_by_driver(self, record: PodRecord) -> dict[str, list[Claim]]:
        out: dict[str, list[Claim]] = {}
        for c in record.claims:
            for driver in c.devices:
                out.setdefault(driver, []).append(c.claim)
        return out

    async def _prepare(self, pod: Obj, state: NodeState,
                       claims: list[tuple[str, Obj]]) -> list[PreparedClaim] | None:
        """Prepare each claim with its drivers (NodePrepareResources); None after a failure
        (an event says why; the pod is retried)."""
        out = []
        for pod_claim, claim in claims:
            meta = claim["metadata"]
            ref = Claim(namespace=meta["namespace"], uid=meta["uid"], name=meta["name"])
            results = claim["status"]["allocation"].get("devices", {}).get("results") or []
            drivers = sorted({r["driver"] for r in results})
            prepared = PreparedClaim(pod_claim=pod_claim, claim=ref)
            for driver in drivers:
                plugin = state.plugins.get(driver)
                if plugin is None:
                    await self._event(pod, state, "FailedPrepareDynamicResources",
                                      f"Failed to prepare dynamic resources: DRA driver "
                                      f"{driver} is not registered", warning=True)
                    return None
                result = (await plugin.node_prepare_resources([ref]))[ref.uid]
                if result.error:
                    await self._event(pod, state, "FailedPrepareDynamicResources",
                                      f"Failed to prepare dynamic resources: prepare dynamic "
                                      f"resources: NodePrepareResources failed for "
                                      f"ResourceClaim {ref.name}: {result.error}", warning=True)
                    return None
                prepared.devices[driver] = result.devices
                self.prepared.setdefault((state.name, ref.uid), {}).setdefault(
                    driver, set()).add(pod["metadata"]["uid"])
            out.append(prepared)
        return out

    async def _unprepare(self, record: PodRecord) -> None:
        """NodeUnprepareResources for claims no other pod on the node uses any more."""
        state = self.kubelet.nodes.get(record.node)
        for c in record.claims:
            users = self.prepared.get((record.node, c.claim.uid)) or {}
            for driver in list(c.devices):
                pods = users.get(driver) or set()
                pods.discard(record.uid)
                if pods:
                    continue
                users.pop(driver, None)
                plugin = state.plugins.get(driver) if state is not None else None
                if plugin is not None:
                    errors = await plugin.node_unprepare_resources([c.claim])
                    if errors.get(c.claim.uid):
                        log.warning("%s", errors[c.claim.uid])
            if not users:
                self.prepared.pop((record.node, c.claim.uid), None)

    # ----- containers ------------------------------------------------------------------

    def _run_next(self, pod: Obj, record: PodRecord, state: NodeState,
                  config: dict[str, dict[str, str]]) -> None:
        """Start init containers one at a time, then every container (each resumed up to
        its first wait)."""
        for run in record.init:
            if run.exit_code == 0:
                continue
            if not run.started_at:
                self._launch(pod, record, run, state, config)
            if run.exit_code == 0 and not run.waiting_reason:
                continue
            return
        for run in record.containers:
            if not run.started_at and run.exit_code is None:
                self._launch(pod, record, run, state, config)

    def _launch(self, pod: Obj, record: PodRecord, run: ContainerRun, state: NodeState,
                config: dict[str, dict[str, str]]) -> None:
        devices = container_cdi_devices(run.spec, record.claims, record.mappings)
        registry = self.kubelet.cdi_registry(state.name)
        edits, missing = registry.resolve(devices)
        if missing:
            log.warning("pod %s/%s: unresolvable CDI devices %s", record.namespace,
                        record.name, missing)
        env = container_env(pod, run.spec, edits, host_ip=state.where.internal_ip,
                            pod_ip=record.ip, config=config)
        mounts = {str(m["containerPath"]): str(m["hostPath"]) for m in edits.mounts}
        fs = shell.FileSystem(mounts, _read_text)
        sh = shell.Shell(env=env, fs=fs, now=self._now)
        argv = [str(a) for a in (run.spec.get("command") or []) + (run.spec.get("args") or [])]
        # args alone run as the command when they name one the interpreter knows (`kubectl
        # run --image=busybox -- sh -c ...`: an image without an entrypoint); otherwise they
        # are arguments to the image's own program, a service
        script = shell.script_of(argv) if run.spec.get("command") or argv else None
        annotations = pod["metadata"].get("annotations") or {}
        run_seconds = _seconds(annotations.get(RUN_SECONDS_ANNOTATION))
        view = view_lines(env, edits.mounts) if devices and script is None else []
        run.process = Process(script=script, sh=sh, view=view, run_seconds=run_seconds)
        run.cdi_devices = devices
        run.started_at = self._now()
        run.finished_at = ""
        run.exit_code = None
        run.waiting_reason = ""
        run.container_id = container_id(record.uid, run.name, run.restarts)
        path = self._log_path(record, run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        self._apply(record, run, run.process.resume())

    def _log_path(self, record: PodRecord, run: ContainerRun) -> Path:
        return logs.log_dir(self.root(record.node), record.namespace, record.name,
                            record.uid, run.name) / f"{run.restarts}.log"

    def _apply(self, record: PodRecord, run: ContainerRun, progress: Progress) -> None:
        """Record a process's output and exit; schedule its next wake-up."""
        now = self.clock.now()
        logs.append(self._log_path(record, run),
                    [(now, o.stderr, o.text) for o in progress.output])
        if progress.exit_code is not None:
            run.exit_code = progress.exit_code
            run.finished_at = rfc3339(now)
            run.wake_at = None
        elif progress.wake_after is not None:
            run.wake_at = self.clock.monotonic() + progress.wake_after
        else:
            run.wake_at = None

    def _schedule(self, key: str, record: PodRecord) -> None:
        """One timer per pod, at its earliest wake-up (a container, a restart, a kill)."""
        if record.timer is not None:
            record.timer.cancel()
            record.timer = None
        times = [r.wake_at for r in record.runs() if r.wake_at is not None]
        if record.kill_at is not None:
            times.append(record.kill_at)
        if times:
            delay = max(0.0, min(times) - self.clock.monotonic())
            record.timer = self.clock.call_later(
                delay, lambda: self.kubelet.queue.add(("pod", key)))

    async def _advance(self, key: str, pod: Obj, record: PodRecord, state: NodeState) -> None:
        """Resume containers whose time has come, handle exits and restarts."""
        if record.finished:
            return
        now = self.clock.monotonic()
        config: dict[str, dict[str, str]] | None = None
        for run in record.runs():
            if run.wake_at is None or run.wake_at > now:
                continue
            if run.exit_code is not None:  # a restart's back-off is over
                config = config if config is not None else await self._config_maps(pod)
                run.restarts += 1
                run.started_at = ""
                run.exit_code = None
                self._launch(pod, record, run, state, config)
            elif run.process is not None:
                self._apply(record, run, run.process.resume())
        for run in record.containers:
            if run.exit_code is not None and run.wake_at is None and self._restarts(record,
                                                                                    run):
                run.wake_at = now + min(BACKOFF_BASE * 2 ** run.restarts, BACKOFF_MAX)
                run.waiting_reason = "CrashLoopBackOff"
                run.last_state = {"terminated": _terminated(run)}
        if any(r.exit_code == 0 and not r.waiting_reason for r in record.init) or any(
                not r.started_at and r.exit_code is None for r in record.containers):
            config = config if config is not None else await self._config_maps(pod)
            self._run_next(pod, record, state, config)
        if phase_of(record) in ("Succeeded", "Failed"):
            record.finished = True
            await self._unprepare(record)
        await self._write_status(pod, record, state)
        self._schedule(key, record)

    def _restarts(self, record: PodRecord, run: ContainerRun) -> bool:
        if record.terminating:
            return False
        return record.restart_policy == "Always" or (
            record.restart_policy == "OnFailure" and run.exit_code != 0)

    # ----- termination -----------------------------------------------------------------

    async def _terminate(self, key: str, pod: Obj, record: PodRecord | None,
                         state: NodeState) -> None:
        """Graceful deletion: TERM now, KILL at the deadline, then unprepare, the final
        status, and the deletion with grace 0."""
        self._stop_waiting(key)
        if record is None:
            await self._finish_deletion(pod, state)
            return
        deadline = parse_time(pod["metadata"]["deletionTimestamp"])
        if not record.terminating:
            record.terminating = True
            for run in record.runs():
                if run.running and run.process is not None:
                    # same as upstream's killContainer: an Event per container it stops
                    await self._event(pod, state, "Killing", f"Stopping container {run.name}")
                    answer = run.process.terminate()
                    if answer is not None:
                        self._apply(record, run, answer)
                run.wake_at = None if run.exit_code is not None else run.wake_at
            record.kill_at = self.clock.monotonic() + max(
                0.0, (deadline - self.clock.now()).total_seconds())
        if self.clock.monotonic() >= (record.kill_at or 0) or self.clock.now() >= deadline:
            for run in record.runs():
                if run.running and run.process is not None:
                    self._apply(record, run, run.process.kill())
        for run in record.runs():
            if run.exit_code is None and run.started_at:
                run.wake_at = None
        if any(r.running for r in record.runs()):
            self._schedule(key, record)
            return
        for run in record.runs():
            run.waiting_reason = ""
        if record.timer is not None:
            record.timer.cancel()
        if not record.finished:
            record.finished = True
            await self._unprepare(record)
        await self._write_status(pod, record, state)
        self.kubelet.release_slot(state, record.uid)
        await self._finish_deletion(pod, state)
        self.records.pop(key, None)

    async def _finish_deletion(self, pod: Obj, state: NodeState) -> None:
        meta = pod["metadata"]
        try:
            await self._client(state.name).delete(
                PODS, meta["name"], meta["namespace"], grace_period_seconds=0,
                preconditions={"uid": meta["uid"]})
        except ApiError as e:
            if e.code not in (404, 409):
                raise

    async def _forget(self, key: str, record: PodRecord) -> None:
        """The pod object went (or was replaced): stop its containers, unprepare."""
        if record.timer is not None:
            record.timer.cancel()
        if not record.finished:
            await self._unprepare(record)
        state = self.kubelet.nodes.get(record.node)
        if state is not None:
            self.kubelet.release_slot(state, record.uid)
        self.records.pop(key, None)

    # ----- API writes ------------------------------------------------------------------

    async def _write_status(self, pod: Obj, record: PodRecord, state: NodeState) -> None:
        # upstream: device health stops being updated once the pod has terminated
        if not record.finished or record.health is None:
            record.health = self.kubelet.health_for(record)
        status = pod_status(pod, record, state.where.internal_ip, record.health)
        if status == pod.get("status") or status == record.last_status and (
                pod.get("status") or {}).get("conditions") == status["conditions"]:
            return
        try:
            await self._patch_status(pod, state, status)
        except ApiError as e:
            if e.code != 404:
                raise
            return
        record.last_status = status

    async def _patch_status(self, pod: Obj, state: NodeState, status: Obj) -> None:
        """Write a status computed from `pod`, unless the pod changed since: the status
        carries every condition of that copy, and another writer's newer condition (an
        evictor's DisruptionTarget) must not be lost; a 409 brings the key back with the
        newer pod."""
        meta = pod["metadata"]
        await self._client(state.name).patch(
            PODS, meta["name"], {"metadata": {"resourceVersion": meta["resourceVersion"]},
                                 "status": status},
            namespace=meta["namespace"], subresource="status", copy=False)

    async def _write_pending(self, key: str, pod: Obj, state: NodeState, why: str) -> None:
        if self.pending_written.get(key) == why:
            return
        status = pending_status(pod)
        if status != pod.get("status"):
            await self._patch_status(pod, state, status)
        self.pending_written[key] = why
        await self._event(pod, state, "FailedPrepareDynamicResources", why, warning=True)

    async def _event(self, pod: Obj, state: NodeState, reason: str, message: str, *,
                     warning: bool = False) -> None:
        await self.kubelet.event(state.name, pod, reason, message, warning=warning)

    async def _config_maps(self, pod: Obj) -> dict[str, dict[str, str]]:
        """The ConfigMaps the pod's containers take env from."""
        names: set[str] = set()
        for c in (pod["spec"].get("initContainers") or []) + (pod["spec"].get("containers")
                                                              or []):
            for source in c.get("envFrom") or []:
                if source.get("configMapRef"):
                    names.add(source["configMapRef"].get("name", ""))
            for var in c.get("env") or []:
                ref = (var.get("valueFrom") or {}).get("configMapKeyRef")
                if ref:
                    names.add(ref.get("name", ""))
        out: dict[str, dict[str, str]] = {}
        client = self._client(pod["spec"]["nodeName"])
        for name in sorted(n for n in names if n):
            try:
                cm = await client.get("configmaps", name, pod["metadata"]["namespace"])
                out[name] = dict(cm.get("data") or {})
            except ApiError:
                out[name] = {}
        return out

    # ----- waiting for claims ----------------------------------------------------------

    def _wait_for_claims(self, key: str, pod: Obj) -> None:
        ns = pod["metadata"]["namespace"]
        for _, name in claim_names(pod):
            if name:
                self.waiting.setdefault(f"{ns}/{name}", set()).add(key)

    def _stop_waiting(self, key: str) -> None:
        for keys in self.waiting.values():
            keys.discard(key)
        self.pending_written.pop(key, None)

    def claim_changed(self, namespace: str, name: str) -> list[str]:
        """The pods waiting for this claim."""
        return sorted(self.waiting.get(f"{namespace}/{name}", ()))


def _seconds(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _read_text(path: str) -> str | None:
    try:
        return Path(path).read_text()
    except OSError:
        return None
