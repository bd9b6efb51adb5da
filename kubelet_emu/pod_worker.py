"""The pod worker: runs the pods bound to the emulated nodes, as upstream's kubelet does
(pod workers, the DRA manager, the status manager); keys are pods (`namespace/name`).

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
with grace 0 (upstream's status manager). The worker also keeps the devices' health
(`HealthCache`, fed by the drivers' streams) that its containers' statuses show, and answers
for the pods it runs: PodResources views, logs and exec (`KubeletStreams`).

What the status, the environment and the claims are is computed by the pure modules
`pod_status`, `container_env` and `pod_claims`; this module holds what changes.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import kubelet_emu.cdi as cdi
import kubelet_emu.logs as logs
import kubelet_emu.node_dirs as node_dirs
import kubelet_emu.podresources as podresources
import kubelet_emu.shell as shell
import kubelet_emu.streams as streams
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import parse_time, rfc3339
from fakeapi.registry.kinds import RESOURCE_CLAIMS
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import NORMAL, WARNING, object_reference
from fakeapi.runtime.informer import object_key
from fakeapi.runtime.workqueue import Retry
from kubelet_emu.container_env import config_map_names, container_env, view_lines
from kubelet_emu.health import DeviceKey, HealthCache
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.nodes import NODE_INDEX, pod_node
from kubelet_emu.plugin import Claim, DRAPlugin, PluginCallError, PreparedDevice
from kubelet_emu.pod_claims import (
    NotReady,
    PreparedClaim,
    check_claims,
    claim_names,
    claim_refs,
    claims_by_driver,
    container_cdi_devices,
    devices_for,
    request_mappings,
    used_devices,
)
from kubelet_emu.pod_records import ContainerRun, PodRecord
from kubelet_emu.pod_status import (
    allocated_resources_status,
    container_id,
    crash_loop_delay,
    pending_status,
    phase_of,
    pod_status,
    restarts_after_exit,
    terminated_state,
)
from kubelet_emu.process import Process, Progress
from kubelet_emu.settings import KUBELET_ACCOUNT, RUN_SECONDS_ANNOTATION

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CLAIMS = RESOURCE_CLAIMS.resource_id
PODS = "pods"
RESYNC_SECONDS = 60.0
"""Same as upstream's --sync-frequency: when a pod whose claims could not be prepared is
tried again (sooner when a plugin registers on its node)."""


class PrepareError(Exception):
    """A claim could not be prepared; the message is the kubelet's text for the Event."""


class PodWorker(Controller[str]):
    """Runs the pods bound to the emulated nodes (see the module docstring)."""

    workers = 4

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.pod_informer = self.watch(PODS, self._pod_keys)
        self.pod_informer.cache.add_index(NODE_INDEX, pod_node)
        self.claim_informer = self.watch(CLAIMS, self._claim_keys)
        self.health = HealthCache(self.clock, self.devices_changed)
        """The devices' health as the drivers stream it (their containers' statuses show it)."""
        self.records: dict[str, PodRecord] = {}
        """Running pods by namespace/name."""
        self.prepared: dict[tuple[str, str], dict[str, set[str]]] = {}
        """(node, claim uid) → driver → pod uids using it (a claim is prepared once)."""
        self.waiting: dict[str, set[str]] = {}
        """namespace/claim name → pod keys waiting for it."""
        self.pending_written: dict[str, str] = {}
        """Pod key → the reason of the Pending status last written."""
        self._cdi: dict[str, cdi.SpecCache] = {}

    # ----- keys ------------------------------------------------------------------------

    def _pod_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        key = object_key(obj)
        if (obj.get("spec") or {}).get("nodeName") in self.nodes.by_name or key in self.records:
            return [key]
        return []

    def _claim_keys(self, type_: str, obj: Obj, old: Obj | None) -> Iterable[str]:
        meta = obj["metadata"]
        return self.claim_changed(meta.get("namespace", ""), meta["name"])

    def devices_changed(self, node: str, keys: set[DeviceKey]) -> None:
        """Rewrite the status of the pods on `node` that use a device whose health moved."""
        for key, record in self.records.items():
            if record.node == node and used_devices(record.claims) & keys:
                self.queue.add(key)

    def resync(self, node: str) -> None:
        """Look at every pod bound to `node` again."""
        for pod in self.pod_informer.cache.by_index(NODE_INDEX, node):
            self.queue.add(object_key(pod))

    # ----- helpers ---------------------------------------------------------------------

    def _now(self) -> str:
        return rfc3339(self.clock.now())

    def _client(self, node: str) -> Any:
        return self.nodes.client(KUBELET_ACCOUNT, node)

    def _claim(self, name: str, namespace: str) -> Obj | None:
        return self.claim_informer.cache.get(name, namespace)

    def cdi_specs(self, node: str) -> cdi.SpecCache:
        """The container runtime's view of the node's CDI specs."""
        specs = self._cdi.get(node)
        if specs is None:
            specs = self._cdi[node] = cdi.SpecCache(self.nodes.root(node) / node_dirs.CDI)
        return specs

    def health_for(self, record: PodRecord) -> dict[str, list[Obj]]:
        """Per container: its allocatedResourcesStatus (see
        `pod_status.allocated_resources_status`)."""
        return allocated_resources_status(record, functools.partial(self.health.get,
                                                                    record.node))

    async def event(self, node: str, obj: Obj, reason: str, message: str, *,
                    warning: bool = False, field_path: str = "") -> None:
        """Record an Event about `obj` (a part of it: `field_path`), from the node's kubelet
        (a repeat counts up)."""
        ref = object_reference(obj, api_version=obj.get("apiVersion") or "v1",
                               kind=obj.get("kind") or "Pod")
        if field_path:
            ref["fieldPath"] = field_path
        await self.nodes.recorder(node, self.clock).event(
            ref, WARNING if warning else NORMAL, reason, message)

    # ----- what the node's services read -----------------------------------------------

    def pod_views(self, node: str) -> list[podresources.PodView]:
        """What the node runs, as the PodResources service reports it."""
        views = []
        for record in self.records.values():
            if record.node != node or record.finished:
                continue
            by_name = {c.pod_claim: c for c in record.claims}
            containers = []
            for run in record.runs():
                claims = []
                for name, request in claim_refs(run.spec, record.mappings):
                    claim = by_name.get(name)
                    if claim is None:
                        continue
                    devices = tuple(
                        podresources.DeviceView(driver=driver, pool=d.pool_name,
                                                device=d.device_name, share_id=d.share_id,
                                                cdi_devices=d.cdi_device_ids)
                        for driver, d in devices_for(claim, request))
                    claims.append((claim.claim.name, claim.claim.namespace, devices))
                containers.append(podresources.ContainerView(run.name, tuple(claims)))
            views.append(podresources.PodView(name=record.name, namespace=record.namespace,
                                              containers=tuple(containers)))
        return sorted(views)

    def container(self, namespace: str, pod: str, name: str) -> streams.Container | None:
        """The record and run of one container of a pod this kubelet runs."""
        record = self.records.get(f"{namespace}/{pod}" if namespace else pod)
        if record is None:
            return None
        run = next((r for r in record.runs() if r.name == name), None)
        return streams.Container(record=record, run=run) if run is not None else None

    def container_log(self, namespace: str, pod: str, container: str, *,
                      previous: bool = False, timestamps: bool = False) -> str | None:
        """What `kubectl logs` shows for a container on an emulated node (None: no such
        container has run here) — the log source for the API server's pods/log."""
        obj = self.pod_informer.cache.get(pod, namespace)
        if obj is None or (obj.get("spec") or {}).get("nodeName") not in self.nodes.by_name:
            return None
        return logs.read_log(self.nodes.root(obj["spec"]["nodeName"]), namespace=namespace,
                             pod=pod, uid=obj["metadata"]["uid"], container=container,
                             previous=previous, timestamps=timestamps)

    def pod_streams(self, node: str) -> streams.KubeletStreams:
        """Logs and exec of the pods `node` runs (what it registers with `fakeapi.kube.podio`)."""
        return streams.KubeletStreams(
            node=node, clock=self.clock, find=self.container,
            read_log=lambda ns, pod, c, previous, timestamps: self.container_log(
                ns, pod, c, previous=previous, timestamps=timestamps))

    # ----- sync ------------------------------------------------------------------------

    async def reconcile(self, key: str) -> None:
        """Bring one pod forward: admit and start it, advance its containers, terminate it."""
        namespace, _, name = key.partition("/")
        pod = self.pod_informer.cache.get(name, namespace)
        record = self.records.get(key)
        if record is not None and (pod is None or pod["metadata"]["uid"] != record.uid):
            await self._forget(key, record)
            record = None
        if pod is None:
            self.pending_written.pop(key, None)
            return
        node = (pod.get("spec") or {}).get("nodeName") or ""
        state = self.nodes.by_name.get(node)
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
        if pod_claims is None:  # as upstream: at the pod's next resync (or a plugin's coming)
            raise Retry(after=RESYNC_SECONDS, reason="claims not prepared")
        slot = state.allocate_slot(pod["metadata"]["uid"])
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
        for driver, claims_of in claims_by_driver(record.claims).items():
            plugin = state.fakes.get(driver)  # the NRI hook of a built-in driver
            if plugin is not None:
                await plugin.run_pod_sandbox(pod, claims_of)
        config = await self._config_maps(pod)
        self._run_next(pod, record, state, config)
        await self._write_status(pod, record, state)

    async def _prepare(self, pod: Obj, state: NodeState,
                       claims: list[tuple[str, Obj]]) -> list[PreparedClaim] | None:
        """Prepare the pod's claims as upstream's DRA manager does: one NodePrepareResources
        call per driver with every claim of the pod that has devices of it. None after a
        failure (a Warning Event says why; the pod is tried again)."""
        out = [PreparedClaim(pod_claim=name, claim=Claim(
            namespace=c["metadata"]["namespace"], uid=c["metadata"]["uid"],
            name=c["metadata"]["name"])) for name, c in claims]
        results = {p.claim.uid: c["status"]["allocation"].get("devices", {}).get("results")
                   or [] for p, (_, c) in zip(out, claims, strict=True)}
        by_driver: dict[str, list[PreparedClaim]] = {}
        for prepared in out:
            for driver in sorted({r["driver"] for r in results[prepared.claim.uid]}):
                by_driver.setdefault(driver, []).append(prepared)
        try:
            for driver, batch in sorted(by_driver.items()):
                plugin = state.plugin(driver)
                if plugin is None:
                    raise PrepareError(f"DRA driver {driver} is not registered")
                devices = await self._prepare_with(plugin, [p.claim for p in batch], results)
                for prepared in batch:
                    prepared.devices[driver] = devices[prepared.claim.uid]
        except PrepareError as e:
            status = pending_status(pod)  # its containers show ContainerCreating meanwhile
            if status != pod.get("status"):
                await self._patch_status(pod, state, status)
            await self._event(pod, state, "FailedPrepareDynamicResources",
                              f"Failed to prepare dynamic resources: prepare dynamic "
                              f"resources: {e}", warning=True)
            return None
        for prepared in out:
            for driver in prepared.devices:
                self.prepared.setdefault((state.name, prepared.claim.uid), {}).setdefault(
                    driver, set()).add(pod["metadata"]["uid"])
        return out

    async def _prepare_with(self, plugin: DRAPlugin, claims: list[Claim],
                            results: dict[str, list[Obj]]
                            ) -> dict[str, tuple[PreparedDevice, ...]]:
        """One driver's NodePrepareResources of a pod's claims, its answer checked as
        upstream's kubelet checks it (an entry per claim, none for a claim not asked for, no
        error), and each device checked against the claim's allocation by this driver (each
        gets the allocation's share ID); the devices by claim UID."""
        try:
            answers = await plugin.node_prepare_resources(claims)
        except PluginCallError as e:
            raise PrepareError(str(e)) from e
        names = {c.uid: c.name for c in claims}
        out: dict[str, tuple[PreparedDevice, ...]] = {}
        for uid, result in answers.items():
            if uid not in names:
                raise PrepareError(f"NodePrepareResources returned result for unknown claim "
                                   f"UID {uid}")
            if result.error:
                raise PrepareError(f"NodePrepareResources failed for ResourceClaim "
                                   f"{names[uid]}: {result.error}")
            shares = {(r.get("pool"), r.get("device")): r.get("shareID") for r in results[uid]
                      if r.get("driver") == plugin.driver_name}
            devices = []
            for d in result.devices:
                if (d.pool_name, d.device_name) not in shares:
                    raise PrepareError(
                        f"NodePrepareResources for ResourceClaim {names[uid]} returned device "
                        f"{plugin.driver_name}/{d.pool_name}/{d.device_name}, which is not "
                        f"allocated to the claim")
                share = d.share_id or shares[(d.pool_name, d.device_name)]
                devices.append(d if share == d.share_id else
                               dataclasses.replace(d, share_id=share))
            out[uid] = tuple(devices)
        if len(out) < len(claims):
            raise PrepareError(f"NodePrepareResources skipped {len(claims) - len(out)} "
                               f"ResourceClaims")
        return out

    async def _unprepare(self, record: PodRecord) -> None:
        """NodeUnprepareResources for claims no other pod on the node uses any more."""
        state = self.nodes.by_name.get(record.node)
        for c in record.claims:
            users = self.prepared.get((record.node, c.claim.uid)) or {}
            for driver in list(c.devices):
                pods = users.get(driver) or set()
                pods.discard(record.uid)
                if pods:
                    continue
                users.pop(driver, None)
                plugin = state.plugin(driver) if state is not None else None
                if plugin is not None:
                    try:
                        errors = await plugin.node_unprepare_resources([c.claim])
                    except PluginCallError as e:
                        errors = {c.claim.uid: str(e)}
                    if errors.get(c.claim.uid):
                        log.warning("unprepare of claim %s/%s: %s", c.claim.namespace,
                                    c.claim.name, errors[c.claim.uid])
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
        if run.waiting_message and run.wake_at is not None and \
                run.wake_at > self.clock.monotonic():
            return  # its creation failed: tried again when the back-off is over
        self._pull(record, run, state)
        devices = container_cdi_devices(run.spec, record.claims, record.mappings)
        edits, missing = self.cdi_specs(state.name).resolve(devices)
        if missing:  # as containerd refuses to create the container; retried with back-off
            run.waiting_reason = "CreateContainerError"
            run.waiting_message = (f"failed to create containerd container: CDI device "
                                   f"injection failed: unresolvable CDI devices "
                                   f"{', '.join(missing)}")
            run.wake_at = self.clock.monotonic() + crash_loop_delay(run.restarts)
            record.events.append(run.event(WARNING, "Failed", f"Error: {run.waiting_message}"))
            return
        run.waiting_message = ""
        env = container_env(pod, run.spec, edits, host_ip=state.where.internal_ip,
                            pod_ip=record.ip, config=config)
        mounts = {str(m["containerPath"]): str(m["hostPath"]) for m in edits.mounts}
        mounts.update({str(n["path"]): str(n.get("hostPath") or n["path"])
                       for n in edits.device_nodes})
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
        record.events += [run.event(NORMAL, "Created", "Container created"),
                          run.event(NORMAL, "Started", "Container started")]
        self._apply(record, run, run.process.resume())

    @staticmethod
    def _pull(record: PodRecord, run: ContainerRun, state: NodeState) -> None:
        """The image pull before a container is created, as the kubelet's image manager
        reports it: pulled when the policy says Always or the node doesn't have it yet (in
        no time: the images are emulated); `Never` finds every image present."""
        image = str(run.spec.get("image") or "")
        policy = run.spec.get("imagePullPolicy") or "IfNotPresent"
        if policy == "Always" or (policy == "IfNotPresent" and image not in state.images):
            state.images.add(image)
            record.events += [
                run.event(NORMAL, "Pulling", f'Pulling image "{image}"'),
                run.event(NORMAL, "Pulled", f'Successfully pulled image "{image}" in 0s (0s '
                          'including waiting). Image size: 0 bytes.')]
        else:
            record.events.append(run.event(
                NORMAL, "Pulled", f'Container image "{image}" already present on machine '
                'and can be accessed by the pod'))

    def _log_path(self, record: PodRecord, run: ContainerRun) -> Path:
        return logs.log_dir(self.nodes.root(record.node), record.namespace, record.name,
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
                delay, lambda: self.queue.add(key))

    async def _advance(self, key: str, pod: Obj, record: PodRecord, state: NodeState) -> None:
        """Resume containers whose time has come, handle exits and restarts."""
        if record.finished:
            return
        now = self.clock.monotonic()
        config: dict[str, dict[str, str]] | None = None
        for run in record.runs():
            if run.wake_at is None or run.wake_at > now:
                continue
            if not run.started_at and run.exit_code is None:  # creation failed: again
                config = config if config is not None else await self._config_maps(pod)
                self._launch(pod, record, run, state, config)
            elif run.exit_code is not None:  # a restart's back-off is over
                config = config if config is not None else await self._config_maps(pod)
                run.restarts += 1
                run.started_at = ""
                run.exit_code = None
                self._launch(pod, record, run, state, config)
            elif run.process is not None:
                self._apply(record, run, run.process.resume())
        for run in record.containers:
            if run.exit_code is not None and run.wake_at is None and restarts_after_exit(
                    record, run):
                run.wake_at = now + crash_loop_delay(run.restarts)
                run.waiting_reason = "CrashLoopBackOff"
                run.last_state = {"terminated": terminated_state(run)}
                record.events.append(run.event(
                    WARNING, "BackOff", f"Back-off restarting failed container {run.name} "
                    f"in pod {record.name}_{record.namespace}({record.uid})"))
        if any(r.exit_code == 0 and not r.waiting_reason for r in record.init) or any(
                not r.started_at and r.exit_code is None for r in record.containers):
            config = config if config is not None else await self._config_maps(pod)
            self._run_next(pod, record, state, config)
        if phase_of(record) in ("Succeeded", "Failed"):
            record.finished = True
            await self._unprepare(record)
        await self._write_status(pod, record, state)
        self._schedule(key, record)

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
                    await self.event(state.name, pod, "Killing",
                                     f"Stopping container {run.name}",
                                     field_path=run.field_path)
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
        state.release_slot(record.uid)
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
        state = self.nodes.by_name.get(record.node)
        if state is not None:
            state.release_slot(record.uid)
        self.records.pop(key, None)

    # ----- API writes ------------------------------------------------------------------

    async def _write_status(self, pod: Obj, record: PodRecord, state: NodeState) -> None:
        events, record.events = record.events, []
        for e in events:
            await self.event(state.name, pod, e.reason, e.message, warning=e.type == WARNING,
                             field_path=e.field_path)
        # upstream: device health stops being updated once the pod has terminated
        if not record.finished or record.health is None:
            record.health = self.health_for(record)
        status = pod_status(pod, record, state.where.internal_ip, record.health, self._now())
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
        await self.event(state.name, pod, reason, message, warning=warning)

    async def _config_maps(self, pod: Obj) -> dict[str, dict[str, str]]:
        """The ConfigMaps the pod's containers take env from."""
        out: dict[str, dict[str, str]] = {}
        client = self._client(pod["spec"]["nodeName"])
        for name in config_map_names(pod):
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
