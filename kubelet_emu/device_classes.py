"""The fake drivers' DeviceClasses, installed once as their Helm charts would (the example
driver's chart: one class selecting every device of the driver); an existing class is left
as it is, and one deleted later is not made again. One key: `CLASSES`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import DEVICE_CLASSES
from fakeapi.runtime.component import ComponentContext, Controller
from kubelet_emu.node_state import EmulatedNodes, NodeState
from kubelet_emu.settings import INSTALLER_ACCOUNT

if TYPE_CHECKING:
    from kubelet_emu.profile import DriverProfile

Obj = dict[str, Any]
DEVICE_CLASSES_ID = DEVICE_CLASSES.resource_id
CLASSES = "classes"
"""The one key: install what is missing."""


def device_class(driver: DriverProfile) -> Obj:
    """The DeviceClass a driver's installation creates (the example driver's chart: every
    device of the driver)."""
    spec: Obj = {"selectors": [{"cel": {"expression": driver.device_class.selector
                                        or f"device.driver == '{driver.name}'"}}]}
    if driver.device_class.extended_resource_name:
        spec["extendedResourceName"] = driver.device_class.extended_resource_name
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": driver.class_name}, "spec": spec}


class DeviceClassInstaller(Controller[str]):
    """Installs the DeviceClass of every driver of the emulated nodes (see the module
    docstring)."""

    def __init__(self, ctx: ComponentContext, *, nodes: EmulatedNodes) -> None:
        super().__init__(ctx)
        self.nodes = nodes
        self.installed: set[str] = set()
        """The drivers whose class is installed."""

    def node_added(self, state: NodeState) -> None:
        """Install the classes of a new node's drivers, if it brings one not installed."""
        if any(d.name not in self.installed for d in state.drivers()):
            self.queue.add(CLASSES)

    def _all_drivers(self) -> list[DriverProfile]:
        seen: dict[str, DriverProfile] = {}
        for d in self.nodes.settings.node_profile().drivers if self.nodes.configured else ():
            seen.setdefault(d.name, d)
        for state in self.nodes.by_name.values():
            for d in state.drivers():
                seen.setdefault(d.name, d)
        return list(seen.values())

    async def reconcile(self, key: str) -> None:
        """Create each driver's DeviceClass once (an existing one is left as it is)."""
        client = self.nodes.client(INSTALLER_ACCOUNT, None)
        for driver in self._all_drivers():
            if driver.name in self.installed:
                continue
            try:
                await client.create(DEVICE_CLASSES_ID, device_class(driver))
            except ApiError as e:
                if e.code != 409:
                    raise
            self.installed.add(driver.name)
