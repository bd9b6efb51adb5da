"""The kubelet's plugin manager for DRA, per emulated node: plugins register by putting a
socket into the node's `var/lib/kubelet/plugins_registry/`, as on a real node.

- The folder is watched (inotify, on Linux) and scanned when the node registers; every
  entry that comes or goes is a key `(node, file name)`.
- A socket that appears is registered: `Registration.GetInfo` (type `DRAPlugin`, a DRA
  service version the kubelet speaks: v1, else v1beta1), then `NotifyRegistrationStatus`
  with the outcome. The plugin's endpoint (its own socket) gets a `GrpcPlugin`, which the
  pod worker calls from then on; its health stream feeds the health cache.
- Several plugins for one driver on a node: the newest registration wins, the others stay
  behind it (a built-in in-process driver is the oldest), as upstream.
- A socket that goes away deregisters its plugin; a restarted plugin (a new socket at the
  same path) is registered again. 30 s after a driver's last plugin went, its ResourceSlices
  of the node are deleted (unless one registered again), as upstream's kubelet does.
- A registered driver that has published no ResourceSlice for the node 10 s later gets a
  log line and a Warning Event on the Node (nothing could be allocated from it there).
- A plugin that can't be registered (no answer, another type, no version the kubelet
  speaks) is told why, logged, and reported as a Warning Event on the Node; the node and
  its other plugins go on. The key is retried with back-off while the socket stays.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kubelet_emu.pluginapi as api
import kubelet_emu.sockets as sockets
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import RESOURCE_SLICES
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.events import WARNING
from fakeapi.runtime.workqueue import Retry
from kubelet_emu.health import HealthCache
from kubelet_emu.node_dirs import REGISTRY
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.settings import PLUGIN_ACCOUNT

log = logging.getLogger(__name__)

SLICES = RESOURCE_SLICES.resource_id
Obj = dict[str, Any]
Key = tuple[str, str]
"""(node, file name in its plugins_registry)."""
GET_INFO_TIMEOUT = 1.0
NOTIFY_TIMEOUT = 5.0
"""Same as upstream's plugin manager: how long GetInfo and NotifyRegistrationStatus may take."""
SERVICES = {"v1.DRAPlugin": api.DRA_V1, "v1beta1.DRAPlugin": api.DRA_V1BETA1}
"""The DRA service versions the kubelet speaks, by the name plugins register them with."""
HEALTH_SERVICES = {"v1.DRAResourceHealth": api.HEALTH_V1,
                   "v1alpha1.DRAResourceHealth": api.HEALTH_V1ALPHA1}
"""The device health services, preferred first."""
WIPING_DELAY = 30.0
"""Same as upstream: how long after a driver's last plugin went its ResourceSlices of the
node are deleted (unless a plugin for it registers again)."""
WIPE = "/wipe/"
"""Key prefix (a name no file has) of the wiping of a driver's slices: `(node, /wipe/DRIVER)`."""
CHECK = "/check/"
"""Key prefix of the look, a while after a plugin registered, for its driver's slices."""
SLICE_CHECK_DELAY = 10.0
"""How long after registering a plugin should have published its node's ResourceSlices."""
NO_SLICES = "DRADriverWithoutResourceSlices"
"""The Warning Event on the Node when a registered driver publishes no slice for it."""
FAILED = "FailedPluginRegistration"
"""The Warning Event on the Node when a plugin can't be registered."""


class RegistrationError(Exception):
    """A plugin was refused; the message is what the kubelet tells it."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Registered:
    """A plugin registered through a socket of the registry folder."""

    driver: str
    identity: tuple[int, int]
    """The socket's (inode, change time): a restarted plugin's new socket differs."""
    plugin: Any
    """Its `grpc_plugin.GrpcPlugin`."""


def go_quoted(names: list[str]) -> str:
    """A list of strings as Go's `%q` prints a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(n) for n in names) + "]"


def choose_service(versions: list[str]) -> str:
    """The DRA service to speak with a plugin that registers `versions` (service names,
    `v1.DRAPlugin`...): the first of the plugin's list the kubelet speaks, as upstream."""
    if not versions:
        raise RegistrationError("empty list of supported gRPC services (aka supported "
                                "versions)")
    for name in versions:
        if name in SERVICES:
            return SERVICES[name]
    raise RegistrationError(f"none of services supported by the plugin ({go_quoted(versions)}) "
                            f"are supported by the kubelet ({go_quoted(list(SERVICES))})")


def health_service(versions: list[str]) -> str | None:
    """The health service to stream from (upstream's pickHealthService): v1 when the plugin
    lists it, else v1alpha1, else none."""
    for name, service in HEALTH_SERVICES.items():
        if name in versions:
            return service
    return None


def socket_identity(path: Path) -> tuple[int, int] | None:
    """(inode, change time) of the socket at `path` (through its link), None if none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_ctime_ns) if stat.S_ISSOCK(st.st_mode) else None


class PluginRegistrar(Controller[Key]):
    """Registers and deregisters the plugins of every emulated node (module docstring)."""

    workers = 2

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes, health: HealthCache,
                 registered: Callable[[str], None]) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.health = health
        self._registered = registered
        """Called with the node's name when a plugin registered on it."""
        self.registered: dict[Key, Registered] = {}
        self._watcher: Any = None
        self._watches: dict[str, Any] = {}

    # ----- the registry folders ---------------------------------------------------------

    def registry(self, node: str) -> Path:
        """The node's plugins_registry folder."""
        return self.nodes.root(node) / REGISTRY

    def node_added(self, state: NodeState) -> None:
        """Watch the node's registry folder and look at what is in it already."""
        folder = self.registry(state.name)
        folder.mkdir(parents=True, exist_ok=True)
        self._watch(state.name, folder)
        for entry in sorted(os.listdir(folder)):
            self.queue.add((state.name, entry))

    def node_forgotten(self, node: str) -> None:
        """Stop watching a node's folder and drop its registrations (its kubelet stopped)."""
        watch = self._watches.pop(node, None)
        if watch is not None and self._watcher is not None:
            try:
                self._watcher.rm_watch(watch)
            except OSError:
                pass
        for key in [k for k in self.registered if k[0] == node]:
            asyncio.get_running_loop().create_task(self.registered.pop(key).plugin.close())

    async def close(self) -> None:
        """Close every registered plugin's channel (the kubelet stops)."""
        registered, self.registered = self.registered, {}
        for entry in registered.values():
            await entry.plugin.close()

    def _watch(self, node: str, folder: Path) -> None:
        if self._watcher is None or node in self._watches:
            return
        import asyncinotify
        mask = (asyncinotify.Mask.CREATE | asyncinotify.Mask.DELETE |
                asyncinotify.Mask.MOVED_TO | asyncinotify.Mask.MOVED_FROM)
        self._watches[node] = self._watcher.add_watch(folder, mask)

    async def run(self) -> None:
        """Run the workers and turn the folders' changes into keys (inotify, where there is
        one; elsewhere a folder is scanned only when its node registers)."""
        try:
            import asyncinotify
            self._watcher = asyncinotify.Inotify()
        except (ImportError, OSError) as e:
            log.info("plugin registry folders are not watched: %s", e)
        for state in list(self.nodes.by_name.values()):
            self._watch(state.name, self.registry(state.name))
        tasks = [asyncio.ensure_future(super().run())]
        if self._watcher is not None:
            tasks.append(asyncio.ensure_future(self._read_changes()))
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None
                self._watches.clear()

    async def _read_changes(self) -> None:
        assert self._watcher is not None
        while True:
            event = await self._watcher.get()
            node = next((n for n, w in self._watches.items() if w is event.watch), None)
            if node is not None and event.name is not None:
                self.queue.add((node, str(event.name)))

    # ----- reconcile --------------------------------------------------------------------

    async def reconcile(self, key: Key) -> None:
        """Register the plugin whose socket is there, deregister the one whose socket went
        (and wipe a driver's slices once no plugin for it is left)."""
        node, name = key
        state = self.nodes.get(node)
        if state is None or name.startswith("."):
            return
        if name.startswith(WIPE):
            await self._wipe(state, name.removeprefix(WIPE))
            return
        if name.startswith(CHECK):
            await self._check_slices(state, name.removeprefix(CHECK))
            return
        path = self.registry(node) / name
        identity = socket_identity(path)
        current = self.registered.get(key)
        if current is not None and current.identity == identity:
            return
        if current is not None:
            await self._deregister(state, key, current)
        if identity is None:
            return
        try:
            self.registered[key] = await self._register(state, path, identity)
        except RegistrationError as e:
            log.warning("node %s: plugin at %s not registered: %s", node, path, e)
            await self._event(node, f"RegisterPlugin error -- {e}")
            raise Retry(reason=str(e)) from e

    async def _register(self, state: NodeState, path: Path,
                        identity: tuple[int, int]) -> Registered:
        import grpc  # when a node first has a plugin, not when the emulator is built

        from kubelet_emu.grpc_plugin import GrpcPlugin, go_status
        from kubelet_emu.pluginapi import registration_pb2
        async with grpc.aio.insecure_channel(sockets.dial_target(path)) as channel:
            get_info = channel.unary_unary(
                f"/{api.REGISTRATION}/GetInfo",
                request_serializer=registration_pb2.InfoRequest.SerializeToString,
                response_deserializer=registration_pb2.PluginInfo.FromString)
            notify = channel.unary_unary(
                f"/{api.REGISTRATION}/NotifyRegistrationStatus",
                request_serializer=registration_pb2.RegistrationStatus.SerializeToString,
                response_deserializer=registration_pb2.RegistrationStatusResponse.FromString)
            try:
                info = await get_info(registration_pb2.InfoRequest(), timeout=GET_INFO_TIMEOUT)
            except grpc.aio.AioRpcError as e:
                raise RegistrationError(f"failed to get plugin info using RPC GetInfo at "
                                        f"socket {path}, err: {go_status(e)}") from e
            try:
                if info.type != api.PLUGIN_TYPE:
                    raise RegistrationError(f"no handler registered for plugin type: "
                                            f"{info.type} at socket {path}")
                if not info.name:
                    raise RegistrationError("plugin validation failed with err: "
                                            "the plugin has no driver name")
                try:
                    service = choose_service(list(info.supported_versions))
                except RegistrationError as e:
                    raise RegistrationError(
                        f"plugin validation failed with err: invalid supported gRPC versions "
                        f"of DRA driver plugin {info.name} at endpoint "
                        f"{info.endpoint or path}: {e}") from e
            except RegistrationError as e:
                await self._notify(notify, False, f"RegisterPlugin error -- {e}")
                raise
            endpoint = Path(info.endpoint) if info.endpoint else path
            plugin = GrpcPlugin(driver_name=info.name, endpoint=endpoint, service=service,
                                health=health_service(list(info.supported_versions)),
                                clock=self.clock)
            state.register_plugin(info.name, plugin)
            plugin.node_watch_resources(functools.partial(self.health.update, state.name,
                                                          info.name))
            self._registered(state.name)
            self.queue.add_after((state.name, CHECK + info.name), SLICE_CHECK_DELAY)
            log.info("node %s: registered DRA plugin %s (%s) at %s", state.name, info.name,
                     service, endpoint)
            await self._notify(notify, True, "")
        return Registered(driver=info.name, identity=identity, plugin=plugin)

    async def _notify(self, notify: Callable[..., Any], registered: bool, error: str) -> None:
        import grpc

        from kubelet_emu.grpc_plugin import go_status
        from kubelet_emu.pluginapi import registration_pb2
        try:
            await notify(registration_pb2.RegistrationStatus(plugin_registered=registered,
                                                             error=error),
                         timeout=NOTIFY_TIMEOUT)
        except grpc.aio.AioRpcError as e:
            log.warning("NotifyRegistrationStatus failed: %s", go_status(e))

    async def _deregister(self, state: NodeState, key: Key, current: Registered) -> None:
        del self.registered[key]
        state.deregister_plugin(current.driver, current.plugin)
        log.info("node %s: deregistered DRA plugin %s", state.name, current.driver)
        await current.plugin.close()
        if state.plugin(current.driver) is None:
            self.queue.add_after((state.name, WIPE + current.driver), WIPING_DELAY)

    async def _slices_of(self, state: NodeState, driver: str) -> list[Obj]:
        client = self.nodes.client(PLUGIN_ACCOUNT, state.name)
        return [s for s in await client.list(SLICES)
                if ((s.get("spec") or {}).get("nodeName"), (s.get("spec") or {}).get("driver"))
                == (state.name, driver)]

    async def _check_slices(self, state: NodeState, driver: str) -> None:
        """A registered driver that publishes nothing for its node: nothing can be allocated
        from it there; said in the log and a Warning Event on the Node (not an error: it may
        publish later, or only network-attached pools)."""
        if state.plugin(driver) is None or driver in state.fakes:
            return
        if not await self._slices_of(state, driver):
            log.warning("node %s: DRA driver %s is registered but publishes no ResourceSlice "
                        "for the node", state.name, driver)
            await self._event(state.name, f"DRA driver {driver} is registered but publishes no "
                                          f"ResourceSlice for node {state.name}", NO_SLICES)

    async def _wipe(self, state: NodeState, driver: str) -> None:
        """Delete the driver's ResourceSlices of the node, as upstream's kubelet does when
        no plugin for the driver is left (a built-in driver's are its own to keep)."""
        if state.plugin(driver) is not None or driver in state.fakes:
            return
        client = self.nodes.client(PLUGIN_ACCOUNT, state.name)
        for item in await self._slices_of(state, driver):
            try:
                await client.delete(SLICES, item["metadata"]["name"])
            except ApiError as e:
                if e.code != 404:
                    raise
        log.info("node %s: deleted the ResourceSlices of DRA driver %s (no plugin)",
                 state.name, driver)

    async def _event(self, node: str, message: str, reason: str = FAILED) -> None:
        ref = {"kind": "Node", "apiVersion": "v1", "name": node, "uid": node}  # as upstream
        await self.nodes.recorder(node, self.clock).event(ref, WARNING, reason, message)
