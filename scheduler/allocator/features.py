"""The allocator's feature set, as upstream's `AllocatorFeatures()` maps the scheduler's gates."""

from __future__ import annotations

import dataclasses

from fakeapi.machinery.features import GateReader


@dataclasses.dataclass(frozen=True, kw_only=True)
class AllocatorFeatures:
    """Which optional allocator behaviours are on; the defaults are Kubernetes 1.37's."""

    admin_access: bool = True  # DRAAdminAccess
    prioritized_list: bool = True  # DRAPrioritizedList
    partitionable_devices: bool = True  # DRAPartitionableDevices
    device_taints: bool = True  # DRADeviceTaints
    device_taint_rules: bool = True  # DRADeviceTaintRules
    consumable_capacity: bool = True  # DRAConsumableCapacity
    binding_conditions: bool = True  # DRADeviceBindingConditions && DRAResourceClaimDeviceStatus
    list_type_attributes: bool = False  # DRAListTypeAttributes
    derived_attributes: bool = False  # DRADerivedAttributes
    extended_resource: bool = True  # DRAExtendedResource

    @classmethod
    def from_gates(cls, gates: GateReader) -> AllocatorFeatures:
        """Same as upstream's AllocatorFeatures(): one flag per gate, binding conditions only
        when both DRADeviceBindingConditions and DRAResourceClaimDeviceStatus are on."""
        on = gates.enabled
        return cls(
            admin_access=on("DRAAdminAccess"),
            prioritized_list=on("DRAPrioritizedList"),
            partitionable_devices=on("DRAPartitionableDevices"),
            device_taints=on("DRADeviceTaints"),
            device_taint_rules=on("DRADeviceTaints") and on("DRADeviceTaintRules"),
            consumable_capacity=on("DRAConsumableCapacity"),
            binding_conditions=(on("DRADeviceBindingConditions")
                                and on("DRAResourceClaimDeviceStatus")),
            list_type_attributes=on("DRAListTypeAttributes"),
            derived_attributes=on("DRADerivedAttributes"),
            extended_resource=on("DRAExtendedResource"),
        )
