"""The devices a fake driver has on one node, in their ResourceSlice wire form.

Pure functions of (driver profile, node name): the same node always gets the same devices,
UUIDs included (drawn from a seed derived from the node name, as the dra-example-driver
does). The example-driver types follow its profiles (kubernetes-sigs/dra-example-driver,
internal/profiles/{gpu,net,cpu}): device names, attributes, capacities, request policies,
partitions on shared counters and shares.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import uuid
from collections.abc import Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from fakeapi.machinery.quantity import parse_quantity
from kubelet_emu.attributes import attribute_value

if TYPE_CHECKING:
    from kubelet_emu.profile import DriverProfile

Obj = dict[str, Any]

GPU_MEMORY = "80Gi"
GPU_COMPUTE = "100"
GPU_MODEL = "LATEST-GPU-MODEL"
NET_MODEL = "LATEST-NET-MODEL"
NIC_MODEL = "LATEST-NIC-MODEL"
DRIVER_VERSION = "1.0.0"
BINDING_CONDITION = "BindingConditions"
BINDING_FAILURE_CONDITION = "BindingFailureConditions"


@dataclasses.dataclass(frozen=True, kw_only=True)
class DriverPool:
    """One driver's pool on one node: its devices and shared counter sets (wire dicts)."""

    driver: DriverProfile
    node: str
    devices: tuple[Obj, ...]
    counter_sets: tuple[Obj, ...] = ()

    @property
    def pool(self) -> str:
        """The pool name: the node's name, as the example driver names it."""
        return self.node

    def device(self, name: str) -> Obj | None:
        """One device by name."""
        return self.by_name.get(name)

    @functools.cached_property
    def by_name(self) -> Mapping[str, Obj]:
        """Devices by name."""
        return {d["name"]: d for d in self.devices}


def seeded_uuids(seed: str, prefix: str, count: int) -> list[str]:
    """`count` deterministic UUID strings `<prefix>-<uuid>` for a seed (a node name): the
    example driver's GenerateUUIDs scheme (a 31-multiplier string hash seeds the stream)."""
    h = 0
    for c in seed:
        h = (31 * h + ord(c)) & 0xFFFFFFFFFFFFFFFF
    rng = random.Random(h)
    return [f"{prefix}-{uuid.UUID(bytes=rng.randbytes(16))}" for _ in range(count)]


def format_binary(value: Fraction) -> str:
    """A byte quantity as upstream prints BinarySI (`20Gi`; a plain number when not exact)."""
    n = int(value)
    if n != value:
        return str(value.numerator // value.denominator)
    for suffix, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30),
                         ("Mi", 2**20), ("Ki", 2**10)):
        if n and n % size == 0:
            return f"{n // size}{suffix}"
    return str(n)


def _numa(index: int, count: int, numa_nodes: int) -> int:
    """Devices spread evenly over NUMA nodes, in index order."""
    return index * numa_nodes // max(count, 1)


def _range_policy(value: str, minimum: str, step: str) -> Obj:
    return {"default": value, "validRange": {"min": minimum, "step": step, "max": value}}


def _extra(driver: DriverProfile) -> Obj:
    return {k: attribute_value(k, v) for k, v in driver.attributes.items()}


def _gpu_capacity(memory: str, compute: str, shareable: bool) -> Obj:
    """memory and compute; with shares, request policies of 1Gi and 1 steps (example gpu)."""
    cap: Obj = {"memory": {"value": memory}, "compute": {"value": compute}}
    if shareable:
        cap["memory"]["requestPolicy"] = _range_policy(memory, "1Gi", "1Gi")
        cap["compute"]["requestPolicy"] = _range_policy(compute, "1", "1")
    return cap


def example_gpus(driver: DriverProfile, node: str) -> DriverPool:
    """The example driver's gpu profile: `gpu-<n>`, or with partitions `gpu-<n>-partition-<m>`
    plus `gpu-<n>-full`, all drawing on the counter set `gpu-<n>-counters`."""
    devices: list[Obj] = []
    counters: list[Obj] = []
    memory = parse_quantity(GPU_MEMORY)
    compute = parse_quantity(GPU_COMPUTE)
    shareable = driver.allow_multiple_allocations
    for i, gpu_uuid in enumerate(seeded_uuids(node, "gpu", driver.count)):
        attrs: Obj = {"index": {"int": i}, "uuid": {"string": gpu_uuid},
                      "model": {"string": GPU_MODEL}, "driverVersion": {"version": DRIVER_VERSION},
                      "numa": {"int": _numa(i, driver.count, driver.numa_nodes)},
                      **_extra(driver)}
        if not driver.partitions:
            devices.append({"name": f"gpu-{i}", "attributes": attrs,
                            "allowMultipleAllocations": shareable,
                            "capacity": _gpu_capacity(GPU_MEMORY, GPU_COMPUTE, shareable)})
            continue
        counter_set = f"gpu-{i}-counters"
        counters.append({"name": counter_set, "counters": {
            "memory": {"value": GPU_MEMORY}, "compute": {"value": GPU_COMPUTE}}})
        part_memory = format_binary(memory / driver.partitions)
        part_compute = str(int(compute / driver.partitions))
        for j in range(driver.partitions):
            devices.append({
                "name": f"gpu-{i}-partition-{j}",
                "attributes": {**attrs, "partition": {"int": j}, "partitionable": {"bool": True}},
                "allowMultipleAllocations": shareable,
                "capacity": _gpu_capacity(part_memory, part_compute, shareable),
                "consumesCounters": [{"counterSet": counter_set, "counters": {
                    "memory": {"value": part_memory}, "compute": {"value": part_compute}}}]})
        devices.append({
            "name": f"gpu-{i}-full",
            "attributes": {**attrs, "partitionable": {"bool": True}, "full": {"bool": True}},
            "allowMultipleAllocations": shareable,
            "capacity": _gpu_capacity(GPU_MEMORY, GPU_COMPUTE, shareable),
            "consumesCounters": [{"counterSet": counter_set, "counters": {
                "memory": {"value": GPU_MEMORY}, "compute": {"value": GPU_COMPUTE}}}]})
    if driver.binding_conditions:
        for d in devices:
            d["bindingConditions"] = [BINDING_CONDITION]
            d["bindingFailureConditions"] = [BINDING_FAILURE_CONDITION]
    return DriverPool(driver=driver, node=node, devices=tuple(devices),
                      counter_sets=tuple(counters))


def _bandwidth() -> Obj:
    return {"value": "100G", "requestPolicy": {
        "default": "1G", "validRange": {"min": "100M", "max": "100G", "step": "1M"}}}


def _nic(i: int, nic_uuid: str, model: str, driver: DriverProfile, **extra: Obj) -> Obj:
    """A shareable `nic-<n>` with the example driver's identity attributes."""
    return {"name": f"nic-{i}", "allowMultipleAllocations": True,
            "attributes": {"index": {"int": i}, "uuid": {"string": nic_uuid},
                           "model": {"string": model},
                           "driverVersion": {"version": DRIVER_VERSION},
                           **extra.get("attributes", {}), **_extra(driver)},
            "capacity": extra["capacity"]}


def example_nets(driver: DriverProfile, node: str) -> DriverPool:
    """The example driver's net profile: shareable `nic-<n>` with vfs and bandwidth."""
    capacity = {"vfs": {"value": "100", "requestPolicy": {"default": "1", "validValues": ["1"]}},
                "ingressBandwidth": _bandwidth(), "egressBandwidth": _bandwidth()}
    return DriverPool(driver=driver, node=node, devices=tuple(
        _nic(i, u, NET_MODEL, driver, capacity=capacity)
        for i, u in enumerate(seeded_uuids(node, "net", driver.count))))


def cpu_capacity_key(driver: DriverProfile) -> str:
    """The example cpu profile's capacity name: `<driver>/cpu`."""
    return f"{driver.name}/cpu"


def example_cpus(driver: DriverProfile, node: str) -> DriverPool:
    """The example driver's cpu profile: shareable `numa-<n>` with `<driver>/cpu` capacity
    that maps onto the node's allocatable cpu."""
    key = cpu_capacity_key(driver)
    devices = [{
        "name": f"numa-{i}",
        "allowMultipleAllocations": True,
        "attributes": {"numaNodeID": {"int": i}, **_extra(driver)},
        "capacity": {key: {"value": str(driver.cpus_per_numa_node)}},
        "nodeAllocatableResources": {"cpu": {"mapping": {
            "capacityKey": key, "capacityMultiplier": "1"}}},
    } for i in range(driver.count)]
    return DriverPool(driver=driver, node=node, devices=tuple(devices))


def nics(driver: DriverProfile, node: str) -> DriverPool:
    """The seeds' NIC: shareable `nic-<n>` with `numaNode` and consumable bandwidth."""
    capacity = {"bandwidth": {"value": "100G", "requestPolicy": {
        "default": "1G", "validRange": {"min": "1M", "max": "100G", "step": "1M"}}}}
    return DriverPool(driver=driver, node=node, devices=tuple(
        _nic(i, u, NIC_MODEL, driver, capacity=capacity, attributes={
            "numaNode": {"int": _numa(i, driver.count, driver.numa_nodes)}})
        for i, u in enumerate(seeded_uuids(node, "nic", driver.count))))


def custom(driver: DriverProfile, node: str) -> DriverPool:
    """Devices listed in the profile, as they are written there."""
    devices = []
    for d in driver.devices:
        out: Obj = {"name": d.name}
        attrs = {**_extra(driver), **{k: attribute_value(k, v) for k, v in d.attributes.items()}}
        if attrs:
            out["attributes"] = attrs
        if d.capacity:
            out["capacity"] = {k: c.to_wire() for k, c in d.capacity.items()}
        if d.allow_multiple_allocations:
            out["allowMultipleAllocations"] = True
        if d.consumes_counters:
            out["consumesCounters"] = [dict(c) for c in d.consumes_counters]
        devices.append(out)
    counters = [{"name": c.name, "counters": {k: {"value": v} for k, v in c.counters.items()}}
                for c in driver.shared_counters]
    return DriverPool(driver=driver, node=node, devices=tuple(devices),
                      counter_sets=tuple(counters))


BUILDERS = {"example-gpu": example_gpus, "example-net": example_nets,
            "example-cpu": example_cpus, "nic": nics, "custom": custom}


def inventory(driver: DriverProfile, node: str) -> DriverPool:
    """The devices `driver` has on `node`."""
    return BUILDERS[driver.type](driver, node)
