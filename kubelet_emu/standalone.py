"""One fake driver of a node profile as a standalone kubelet plugin (`fakeapi driver`), as
the dra-example-kubeletplugin runs on a node: it publishes the driver's pool of that node as
ResourceSlices through the API (what the emulated kubelet's slice publisher writes for the
profile: the same devices, names and owner; checked again every `RESYNC_SECONDS`, so a manual
edit is overwritten) and serves registration, DRA and health with `PluginServer` on the
node's plugin folders, until it is stopped.

It reaches the API only through the client it is given (`ObjectClient`): the command hands
it a `fakeapi.remote_client.RemoteClient`, so the kubelet it serves may be an emulated node
of `fakeapi serve` or a real one. Its ResourceSlices stay when it stops: the kubelet deletes
a driver's slices once its plugin has been gone a while.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakeapi.client import ObjectClient
from fakeapi.machinery.clock import Clock
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import NODES, RESOURCE_SLICES
from kubelet_emu.drivers import FakeDriver
from kubelet_emu.inventory import inventory
from kubelet_emu.plugin_server import PluginServer
from kubelet_emu.slice_publisher import sync_pool

if TYPE_CHECKING:
    from kubelet_emu.profile import DriverProfile, NodeProfile

log = logging.getLogger(__name__)

Obj = dict[str, Any]
RESYNC_SECONDS = 30.0
"""How often the published slices are compared with the pool again."""


class DriverChoiceError(ValueError):
    """The profile has no such driver, or several and none was named."""


class NodeNotFound(LookupError):
    """The node the driver is to run on has no Node object."""


def pick_driver(profile: NodeProfile, name: str | None) -> DriverProfile:
    """The profile's driver called `name`, or its only one when `name` is None."""
    names = [d.name for d in profile.drivers]
    if name is not None:
        for driver in profile.drivers:
            if driver.name == name:
                return driver
        raise DriverChoiceError(f"profile {profile.name!r} has no driver {name!r}"
                                + (f": its drivers are {', '.join(names)}" if names else ""))
    if len(profile.drivers) == 1:
        return profile.drivers[0]
    if not names:
        raise DriverChoiceError(f"profile {profile.name!r} has no drivers")
    raise DriverChoiceError(f"profile {profile.name!r} has several drivers: pick one with "
                            f"--driver ({', '.join(names)})")


class StandaloneDriver:
    """One fake driver on one node as a plugin process (see the module docstring)."""

    def __init__(self, *, driver: DriverProfile, node: str, client: ObjectClient,
                 clock: Clock, registry: Path, plugins: Path, cdi: Path) -> None:
        self.node = node
        self.client = client
        self.clock = clock
        self.pool = inventory(driver, node)
        self.fake = FakeDriver(inv=self.pool, cdi_dir=cdi, plugins_dir=plugins, client=client,
                               clock=clock)
        self.server = PluginServer(plugin=self.fake, registry=registry, plugins=plugins)
        self.published: dict[str, str] = {}
        """The pool's slices as last published (name → resourceVersion)."""
        self._owner: Obj | None = None
        self._written: dict[str, str] | None = None
        self._resync: asyncio.Task[None] | None = None

    @property
    def driver_name(self) -> str:
        """The driver's name."""
        return self.pool.driver.name

    async def start(self) -> None:
        """Check the Node exists (`NodeNotFound`), publish the pool, then serve the plugin
        and keep the slices in line."""
        try:
            node = await self.client.get(NODES.resource_id, self.node)
        except ApiError as e:
            if e.code == 404:
                raise NodeNotFound(f"node {self.node!r} not found: the driver runs on an "
                                   "existing Node (see `kubectl get nodes`)") from None
            raise
        self._owner = {"metadata": {"name": self.node, "uid": node["metadata"]["uid"]}}
        await self.publish()
        try:
            await self.server.start()
        except BaseException:
            await self.server.stop()  # the socket that did start goes again
            raise
        self._resync = asyncio.get_running_loop().create_task(self._keep_published())

    async def publish(self) -> None:
        """Bring the published slices of the pool in line with it (as the slice publisher)."""
        published = await self.client.list(
            RESOURCE_SLICES.resource_id,
            field_selector=f"spec.nodeName={self.node},spec.driver={self.driver_name}")
        self.published, last = await sync_pool(self.client, self.pool, published,
                                               self._written, self._owner)
        self._written = self.published
        if last:
            log.info("%s: published %d ResourceSlices of node %s", self.driver_name,
                     len(self.published), self.node)

    async def _keep_published(self) -> None:
        while True:
            await self.clock.sleep(RESYNC_SECONDS)
            try:
                await self.publish()
            except (ApiError, OSError) as e:  # the server is away: try again next time
                log.warning("%s: publishing the ResourceSlices of node %s failed: %s",
                            self.driver_name, self.node, e)

    async def stop(self) -> None:
        """Stop serving (the sockets go, so the kubelet deregisters the plugin) and stop the
        health streams; the slices stay."""
        if self._resync is not None:
            self._resync.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._resync
            self._resync = None
        await self.server.stop()
        self.fake.stop()
