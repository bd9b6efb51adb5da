"""The fake DRA drivers: one `FakeDriver` per driver per node, a `DRAPlugin` the kubelet
calls, which acts on the API with the node's `dra-kubelet-plugin` identity.

Preparing a claim does what the dra-example-driver does (cmd/dra-example-kubeletplugin:
state.go, cdi.go): read the claim, check its allocation, apply the opaque configs, write a
CDI spec for the claim (plus the driver's common spec), write the device-metadata files of
KEP-5304, and return the devices with their CDI ids. The example gpu driver can publish
uuid, model and driverVersion into `status.devices[].data`; the seeds' NIC driver writes
`status.devices` with NetworkReady and networkData once the pod's sandbox exists, and
updates the metadata with the network data then (deferred metadata).

Health: each driver streams its devices' health (DRAResourceHealth.NodeWatchResources) on
every change and every third of the health timeout; faults make a device Unhealthy or
silence it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import kubelet_emu.cdi as cdi
import kubelet_emu.example_config as ex
from fakeapi.client import ObjectClient
from fakeapi.machinery.clock import Clock, Timer
from fakeapi.machinery.errors import ApiError
from fakeapi.machinery.timestamps import rfc3339
from fakeapi.registry.kinds import RESOURCE_CLAIMS
from kubelet_emu.driver_kinds import BINDING_CONDITIONS_PLUGIN
from kubelet_emu.inventory import DriverPool, cpu_capacity_key
from kubelet_emu.metadata import MetadataWriter
from kubelet_emu.plugin import (
    Claim,
    DeviceHealth,
    HealthStatus,
    HealthStream,
    PreparedDevice,
    PrepareResult,
    base_request,
)

log = logging.getLogger(__name__)

Obj = dict[str, Any]
CLAIMS = RESOURCE_CLAIMS.resource_id
CLASSES = {"example-gpu": "gpu", "example-net": "net", "example-cpu": "cpu", "nic": "nic"}
KNOWN_CONFIGS = {"example-gpu": {"GpuConfig": ex.GPU_API},
                 "example-net": {"NetConfig": ex.NET_API}}
NETWORK_READY = "NetworkReady"
STATUS_RETRIES = 5


@dataclasses.dataclass(kw_only=True)
class Prepared:
    """What the driver keeps about a prepared claim."""

    claim: Claim
    results: list[Obj]
    devices: tuple[PreparedDevice, ...]


@dataclasses.dataclass(kw_only=True)
class DeviceState:
    """One device's health as the driver sees it."""

    health: HealthStatus = HealthStatus.HEALTHY
    message: str = ""
    reporting: bool = True


class FakeDriver:
    """One fake driver on one node (see the module docstring)."""

    def __init__(self, *, inv: DriverPool, cdi_dir: Path, plugins_dir: Path,
                 client: ObjectClient, clock: Clock,
                 cached: Callable[[str, str], Obj | None] | None = None) -> None:
        """`cdi_dir` and `plugins_dir` are the node's (`--cdi-root`,
        `--kubelet-plugins-directory-path`); the driver's own folder is below the latter."""
        self.inventory = inv
        self.cached = cached
        """A watch-fed cache of claims (name, namespace → claim), read before the API."""
        self.driver = inv.driver
        self.driver_name = inv.driver.name
        self.node = inv.node
        self.client = client
        self.clock = clock
        self.cdi_dir = cdi_dir
        self.plugin_dir = plugins_dir / self.driver_name
        self.metadata = MetadataWriter(driver=self.driver_name, plugin_dir=self.plugin_dir,
                                       cdi_dir=self.cdi_dir)
        self.klass = CLASSES.get(self.driver.type) or self.driver_name.split(".", 1)[0]
        self.kind = f"k8s.{self.driver_name}/{self.klass}"
        self.prepared: dict[str, Prepared] = {}
        self.devices: dict[str, DeviceState] = {name: DeviceState() for name in inv.by_name}
        self._streams: list[HealthStream] = []
        self._timer: Timer | None = None
        self._common_written = False

    # ----- CDI --------------------------------------------------------------------------

    @property
    def common_device(self) -> str:
        """The CDI id of the driver's common device (node name and driver name)."""
        return cdi.qualified(self.kind, "common")

    def _spec_file(self, name: str) -> str:
        return f"k8s.{self.driver_name}-{self.klass}_{name}.json"

    def _write_common(self) -> None:
        if self._common_written:
            return
        cdi.write_spec(self.cdi_dir, self._spec_file("common"), cdi.spec(self.kind, [{
            "name": "common", "containerEdits": {"env": [
                f"KUBERNETES_NODE_NAME={self.node}",
                f"DRA_RESOURCE_DRIVER_NAME={self.driver_name}"]}}]))
        self._common_written = True

    # ----- configuration ----------------------------------------------------------------

    def _device_env(self, claim: Obj, results: list[Obj]) -> dict[int, list[str]]:
        """Per result (by position): the driver's environment for it."""
        allocation = claim["status"]["allocation"]
        known = KNOWN_CONFIGS.get(self.driver.type)
        configs: list[ex.Config] = []
        if known is not None:
            configs = ex.opaque_configs(self.driver_name,
                                        (allocation.get("devices") or {}).get("config") or [],
                                        known)
        elif any((c.get("opaque") or {}).get("driver") == self.driver_name
                 for c in (allocation.get("devices") or {}).get("config") or []):
            raise ex.ConfigError("configuration not allowed")
        out: dict[int, list[str]] = {}
        for i, result in enumerate(results):
            chosen = ex.config_for(result["request"], configs)
            if self.driver.type == "example-gpu":
                out[i] = ex.gpu_env(chosen.body if chosen else ex.DEFAULT_GPU_CONFIG, result)
            elif self.driver.type == "example-net":
                out[i] = ex.net_env(chosen.body if chosen else ex.DEFAULT_NET_CONFIG, result)
            elif self.driver.type == "example-cpu":
                out[i] = ex.cpu_env(cpu_capacity_key(self.driver), result)
            elif self.driver.type == "nic":
                out[i] = [f"NIC_DEVICE_{result['device'][4:]}={result['device']}"]
            else:
                out[i] = []
        return out

    # ----- NodePrepareResources ----------------------------------------------------------

    async def node_prepare_resources(self, claims: Sequence[Claim]) -> dict[str, PrepareResult]:
        """Prepare each claim (idempotent: a prepared claim is prepared again the same way)."""
        out = {}
        for ref in claims:
            try:
                out[ref.uid] = PrepareResult(devices=await self._prepare(ref))
            except (ex.ConfigError, ApiError, OSError) as e:
                out[ref.uid] = PrepareResult(
                    error=f"error preparing devices for claim {ref.uid}: {e}")
        return out

    async def _read_claim(self, ref: Claim) -> Obj:
        """The claim to prepare: from the watch cache when it holds this one allocated (as
        the kubelet just checked it), else read from the API."""
        claim = self.cached(ref.name, ref.namespace) if self.cached is not None else None
        if claim is not None and claim["metadata"].get("uid") == ref.uid and (
                claim.get("status") or {}).get("allocation"):
            return claim
        return await self.client.get(CLAIMS, ref.name, ref.namespace)

    async def _prepare(self, ref: Claim) -> tuple[PreparedDevice, ...]:
        claim = await self._read_claim(ref)
        if claim["metadata"]["uid"] != ref.uid:
            raise ex.ConfigError(f"claim {ref.namespace}/{ref.name} has UID "
                                 f"{claim['metadata']['uid']}, not {ref.uid}")
        allocation = (claim.get("status") or {}).get("allocation")
        if not allocation:
            raise ex.ConfigError("prepare failed: claim not yet allocated")
        results = [r for r in (allocation.get("devices") or {}).get("results") or []
                   if r.get("driver") == self.driver_name]
        for r in results:
            if r.get("pool") != self.inventory.pool or r["device"] not in self.inventory.by_name:
                raise ex.ConfigError(
                    f"prepare failed: requested device is not allocatable: {r['device']}")
        envs = self._device_env(claim, results)
        admin = any(r.get("adminAccess") for r in results)
        uid = ref.uid
        self._write_common()
        cdi_devices = []
        device_ids = []
        for i, r in enumerate(results):
            device_id = _device_id(r)
            key = "".join(c if c.isalnum() else "_" for c in r["device"]).upper()
            cdi_devices.append({"name": f"{uid}-{device_id}", "containerEdits": {"env": [
                f"{self.klass.upper()}_DEVICE_{key}_RESOURCE_CLAIM={uid}",
                f"DRA_ADMIN_ACCESS={'true' if admin else 'false'}", *envs[i]]}})
            device_ids.append(cdi.qualified(self.kind, f"{uid}-{device_id}"))
        cdi.write_spec(self.cdi_dir, self._spec_file(uid), cdi.spec(self.kind, cdi_devices))
        by_request: dict[str, list[Obj]] = {}
        for r in results:
            by_request.setdefault(r["request"], []).append(self._metadata_device(r))
        meta_ids = self.metadata.write(claim, by_request)
        devices = tuple(
            PreparedDevice(request_names=(r["request"],), pool_name=r["pool"],
                           device_name=r["device"],
                           cdi_device_ids=tuple(x for x in (
                               self.common_device, device_ids[i],
                               meta_ids.get(base_request(r["request"]))) if x),
                           share_id=r.get("shareID"))
            for i, r in enumerate(results))
        self.prepared[uid] = Prepared(claim=ref, results=results, devices=devices)
        if self.driver.type == "example-gpu" and self.driver.device_status and results:
            await self._write_device_status(ref, [self._gpu_status(r) for r in results], claim)
        return devices

    def _metadata_device(self, result: Obj, network: Obj | None = None) -> Obj:
        device: Obj = {"driver": self.driver_name, "pool": result["pool"],
                       "name": result["device"]}
        attributes = (self.inventory.by_name.get(result["device"]) or {}).get("attributes")
        if attributes:
            device["attributes"] = attributes
        if network:
            device["networkData"] = network
        return device

    def _gpu_status(self, result: Obj) -> Obj:
        """The example gpu driver's BuildDeviceStatus: uuid, model, driverVersion in data."""
        attrs = (self.inventory.by_name.get(result["device"]) or {}).get("attributes") or {}
        entry: Obj = {"driver": self.driver_name, "pool": result["pool"],
                      "device": result["device"],
                      "data": {k: attrs[k] for k in ("uuid", "model", "driverVersion")
                               if k in attrs}}
        if result.get("shareID"):
            entry["shareID"] = result["shareID"]
        return entry

    async def _write_device_status(self, ref: Claim, entries: list[Obj],
                                   claim: Obj | None = None) -> None:
        """Put these entries into the claim's status.devices: an entry of this driver for
        the same device (and share) is replaced, keeping the conditions the new one doesn't
        set (a binding condition stays True); other entries stay."""
        def change(status: Obj) -> list[Obj]:
            mine = {_entry_key(e): e for e in entries}
            out = []
            for old in status.get("devices") or []:
                new = mine.get(_entry_key(old)) if old.get("driver") == self.driver_name \
                    else None
                if new is None:
                    out.append(old)
                    continue
                types = {c.get("type") for c in new.get("conditions") or ()}
                kept = [c for c in old.get("conditions") or () if c.get("type") not in types]
                if kept:
                    mine[_entry_key(old)] = {**new, "conditions": kept + list(
                        new.get("conditions") or ())}
            return out + list(mine.values())
        await self._change_device_status(ref, change, claim)

    async def _change_device_status(self, ref: Claim,
                                    change: Callable[[Obj], list[Obj] | None],
                                    claim: Obj | None = None) -> None:
        """Set the claim's status.devices to `change(status)` (None: nothing to write),
        starting from `claim` as just read when given, reading it again on a conflict."""
        for _ in range(STATUS_RETRIES):
            if claim is None:
                claim = await self.client.get(CLAIMS, ref.name, ref.namespace)
            if claim["metadata"]["uid"] != ref.uid:
                return
            claim = {**claim, "status": dict(claim.get("status") or {})}
            status = claim["status"]
            devices = change(status)
            if devices is None:
                return
            status["devices"] = devices
            try:
                await self.client.update(CLAIMS, claim, subresource="status", copy=False)
                return
            except ApiError as e:
                if e.code != 409:
                    raise
                claim = None

    # ----- the driver's controller ------------------------------------------------------

    @property
    def satisfies_binding_conditions(self) -> bool:
        """Whether the driver's controller runs its BindingConditions plugin."""
        return BINDING_CONDITIONS_PLUGIN in self.driver.controller_plugins

    def unsatisfied_bindings(self, status: Obj) -> list[tuple[tuple[str, str, str], str]]:
        """((driver, pool, device), condition) for each binding condition of this driver's
        allocated devices in this pool that a claim's status.devices doesn't show True."""
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        true = {(d.get("driver"), d.get("pool"), d.get("device"), c.get("type"))
                for d in status.get("devices") or () for c in d.get("conditions") or ()
                if c.get("status") == "True"}
        return [((r["driver"], r["pool"], r.get("device", "")), cond) for r in results
                if r.get("driver") == self.driver_name and r.get("pool") == self.inventory.pool
                for cond in r.get("bindingConditions") or ()
                if (r["driver"], r["pool"], r.get("device"), cond) not in true]

    async def satisfy_binding_conditions(self, ref: Claim) -> None:
        """The example driver's BindingConditions controller plugin: each binding condition
        of this driver's allocated devices becomes True (reason Ready, "Device is ready") on
        the device's status.devices entry, which is added when missing. A real driver would
        first check that the device is ready (attached, for a fabric device)."""
        now = rfc3339(self.clock.now())

        def change(status: Obj) -> list[Obj] | None:
            missing = self.unsatisfied_bindings(status)
            if not missing:
                return None
            devices = [dict(d) for d in status.get("devices") or ()]
            for key, cond in missing:
                entry = next((d for d in devices
                              if (d.get("driver"), d.get("pool"), d.get("device")) == key), None)
                if entry is None:
                    entry = {"driver": key[0], "pool": key[1], "device": key[2]}
                    devices.append(entry)
                entry["conditions"] = [c for c in entry.get("conditions") or ()
                                       if c.get("type") != cond] + [{
                    "type": cond, "status": "True", "reason": "Ready",
                    "message": "Device is ready", "lastTransitionTime": now}]
            return devices
        await self._change_device_status(ref, change)

    # ----- the NRI hook -----------------------------------------------------------------

    async def run_pod_sandbox(self, pod: Obj, claims: Sequence[Claim]) -> None:
        """The NIC driver configures the pod's interfaces once its sandbox exists: it writes
        NetworkReady and networkData into status.devices and the network data into the
        metadata files (the next generation of each)."""
        if self.driver.type != "nic":
            return
        ordinal = 0
        for ref in claims:
            prepared = self.prepared.get(ref.uid)
            if prepared is None or not prepared.results:
                continue
            entries = []
            by_request: dict[str, list[Obj]] = {}
            for r in prepared.results:
                ordinal += 1
                network = self._network_data(pod, r, ordinal)
                entry: Obj = {"driver": self.driver_name, "pool": r["pool"],
                              "device": r["device"], "networkData": network,
                              "conditions": [{
                                  "type": NETWORK_READY, "status": "True",
                                  "reason": NETWORK_READY,
                                  "message": "Device successfully allocated and assigned to "
                                             "the pod",
                                  "lastTransitionTime": rfc3339(self.clock.now())}]}
                if r.get("shareID"):
                    entry["shareID"] = r["shareID"]
                entries.append(entry)
                by_request.setdefault(r["request"], []).append(
                    self._metadata_device(r, network))
            await self._write_device_status(ref, entries)
            claim = await self.client.get(CLAIMS, ref.name, ref.namespace)
            for request, devices in by_request.items():
                try:
                    self.metadata.update(claim, request, devices)
                except FileNotFoundError:
                    log.warning("%s: no metadata file for %s/%s request %s", self.driver_name,
                                ref.namespace, ref.name, request)

    def _network_data(self, pod: Obj, result: Obj, ordinal: int) -> Obj:
        seed = hashlib.sha256(f"{pod['metadata']['uid']}/{result['device']}/"
                              f"{result.get('shareID') or ''}".encode()).digest()
        index = int.from_bytes(seed[:2], "big") % 250 + 2
        subnet = int(result["device"].rsplit("-", 1)[-1]) + 10 if result["device"][-1:].isdigit() \
            else 10
        mac = "00:01:ec:" + ":".join(f"{b:02x}" for b in seed[2:5])
        return {"interfaceName": f"net{ordinal}",
                "ips": [f"10.{subnet}.1.{index}/24", f"2001:db8::{index:x}/64"],
                "hardwareAddress": mac}

    # ----- NodeUnprepareResources --------------------------------------------------------

    async def node_unprepare_resources(self, claims: Sequence[Claim]) -> dict[str, str]:
        """Remove each claim's CDI spec and metadata files."""
        out = {}
        for ref in claims:
            try:
                cdi.remove(self.cdi_dir / self._spec_file(ref.uid))
                self.metadata.remove(ref.namespace, ref.name, ref.uid)
                self.prepared.pop(ref.uid, None)
                out[ref.uid] = ""
            except OSError as e:
                out[ref.uid] = f"error unpreparing devices for claim {ref.uid}: {e}"
        return out

    # ----- DRAResourceHealth -------------------------------------------------------------

    def node_watch_resources(self, stream: HealthStream) -> Callable[[], None]:
        """Stream health now, on every change and every third of the timeout."""
        self._streams.append(stream)
        self._send()

        def stop() -> None:
            if stream in self._streams:
                self._streams.remove(stream)
        return stop

    def set_health(self, device: str, health: HealthStatus, message: str = "",
                   reporting: bool = True) -> None:
        """A fault (or its end) on one device; streamed at once."""
        state = self.devices.get(device)
        if state is None:
            return
        state.health, state.message, state.reporting = health, message, reporting
        self._send()

    def health_snapshot(self) -> list[DeviceHealth]:
        """The NodeWatchResourcesResponse the driver sends now (silenced devices missing)."""
        now = int(self.clock.now().timestamp())
        timeout = self.driver.health_check_timeout_seconds
        return [DeviceHealth(pool_name=self.inventory.pool, device_name=name,
                             health=s.health, last_updated_time=now,
                             health_check_timeout_seconds=timeout, message=s.message)
                for name, s in self.devices.items() if s.reporting]

    def _send(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._streams:
            return
        snapshot = self.health_snapshot()
        for stream in list(self._streams):
            stream(snapshot)
        period = max(1.0, self.driver.health_check_timeout_seconds / 3)
        self._timer = self.clock.call_later(period, self._send)

    def stop(self) -> None:
        """Stop streaming (the component stops)."""
        self._streams.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _entry_key(entry: Obj) -> tuple[Any, Any, str]:
    """What identifies a status.devices entry of one driver: pool, device and share."""
    return entry.get("pool"), entry.get("device"), entry.get("shareID") or ""


def _device_id(result: Obj) -> str:
    """The example driver's GetCDIDeviceID: the device, plus the share when shared."""
    share = result.get("shareID")
    return f"{result['device']}-{share}" if share else result["device"]
