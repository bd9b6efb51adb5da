"""Node profiles: what one emulated node offers (its allocatable resources, labels and the
fake DRA drivers with their devices), as YAML validated by pydantic models.

A profile is named (one of the files shipped in `kubelet_emu/profiles/`) or given as a path
(`fakeapi serve --node-profile FILE`). Every field is checked with a clear error naming the
field (`ProfileError`); unknown fields are refused, so a typo never passes silently.
README.md documents the format.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from fakeapi.machinery import names
from fakeapi.machinery.quantity import is_quantity
from kubelet_emu.attributes import attribute_value
from kubelet_emu.driver_kinds import ControllerPlugin, DriverType

PROFILE_DIR = "profiles"

class ProfileError(ValueError):
    """A profile that can't be loaded: the source and every problem, one per line."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _quantity(value: object) -> str:
    """A resource quantity as a string (YAML numbers accepted), refused when malformed."""
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if not is_quantity(text):
        raise ValueError(f"{value!r} is not a quantity (e.g. 8, 500m, 80Gi)")
    return text


class CapacityPolicy(_Model):
    """A consumable capacity's request policy (resource.k8s.io CapacityRequestPolicy)."""

    default: str | None = None
    valid_values: list[str] | None = Field(default=None, alias="validValues")
    min: str | None = None
    max: str | None = None
    step: str | None = None

    @field_validator("default", "min", "max", "step", mode="before")
    @classmethod
    def _quantities(cls, value: object) -> object:
        return None if value is None else _quantity(value)

    @field_validator("valid_values", mode="before")
    @classmethod
    def _values(cls, value: object) -> object:
        if value is None:
            return None
        if not isinstance(value, list):
            raise ValueError("must be a list of quantities")
        return [_quantity(v) for v in value]

    def to_wire(self) -> dict[str, Any]:
        """The DeviceCapacity.requestPolicy dict."""
        out: dict[str, Any] = {}
        if self.default is not None:
            out["default"] = self.default
        if self.valid_values is not None:
            out["validValues"] = list(self.valid_values)
        span = {k: v for k, v in (("min", self.min), ("max", self.max), ("step", self.step))
                if v is not None}
        if span:
            out["validRange"] = span
        return out


class CustomDeviceCapacity(_Model):
    """A device capacity: a quantity, optionally consumable with a request policy."""

    value: str
    request_policy: CapacityPolicy | None = Field(default=None, alias="requestPolicy")

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: object) -> object:
        return _quantity(value)

    def to_wire(self) -> dict[str, Any]:
        """The DeviceCapacity dict."""
        out: dict[str, Any] = {"value": self.value}
        if self.request_policy is not None:
            out["requestPolicy"] = self.request_policy.to_wire()
        return out


def _check_attributes(value: dict[str, Any]) -> dict[str, Any]:
    """Every attribute has a value `attribute_value` accepts."""
    for k, v in value.items():
        attribute_value(k, v)
    return value


def _capacity(value: object) -> object:
    """`memory: 80Gi` is short for `memory: {value: 80Gi}`."""
    return value if isinstance(value, dict) else {"value": value}


class CustomDevice(_Model):
    """One device of a `custom` driver, listed as it is published."""

    name: str
    attributes: dict[str, Any] = Field(default_factory=dict)
    capacity: dict[str, CustomDeviceCapacity] = Field(default_factory=dict)
    allow_multiple_allocations: bool = Field(default=False, alias="allowMultipleAllocations")
    consumes_counters: list[dict[str, Any]] = Field(default_factory=list,
                                                    alias="consumesCounters")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        errors = names.dns1123_label_errors(value)
        if errors:
            raise ValueError(errors[0])
        return value

    @field_validator("capacity", mode="before")
    @classmethod
    def _capacities(cls, value: object) -> object:
        if isinstance(value, dict):
            return {k: _capacity(v) for k, v in value.items()}
        return value

    _attributes = field_validator("attributes")(classmethod(lambda cls, v: _check_attributes(v)))


class SharedCounterSet(_Model):
    """Shared counters (resource.k8s.io CounterSet) that partitionable devices draw on."""

    name: str
    counters: dict[str, str]

    @field_validator("counters", mode="before")
    @classmethod
    def _counters(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError("must map counter names to quantities")
        return {k: _quantity(v) for k, v in value.items()}


class DeviceClassProfile(_Model):
    """The DeviceClass the driver's installation creates (as the example driver's chart)."""

    name: str = ""
    """The class name (the driver's name when empty)."""
    selector: str = ""
    """Its CEL selector (`device.driver == '<driver>'` when empty)."""
    extended_resource_name: str = Field(default="", alias="extendedResourceName")


class DriverProfile(_Model):
    """One fake DRA driver on the node and the devices it publishes."""

    name: str
    type: DriverType
    count: int = Field(default=8, ge=0, le=4096)
    """Devices (GPUs, NICs) or, for example-cpu, NUMA nodes."""
    partitions: int = Field(default=0, ge=0, le=64)
    """example-gpu: partitions per GPU drawing on shared counters (0: whole GPUs)."""
    allow_multiple_allocations: bool = Field(default=False, alias="allowMultipleAllocations")
    """example-gpu: shareable GPUs with consumable memory and compute."""
    device_status: bool = Field(default=False, alias="deviceStatus")
    """example-gpu: write uuid, model and driverVersion into the claim's status.devices."""
    binding_conditions: bool = Field(default=False, alias="bindingConditions")
    """example-gpu: every device is published with the binding condition `BindingConditions`
    and the failure condition `BindingFailureConditions` (kubeletPlugin.bindingConditions)."""
    controller_plugins: list[ControllerPlugin] = Field(default_factory=list,
                                                       alias="controllerPlugins")
    """The driver's controller plugins (the example chart's controller.plugins):
    `BindingConditions` sets the binding conditions of its allocated devices True."""
    numa_nodes: int = Field(default=1, ge=1, le=64, alias="numaNodes")
    """Devices are spread evenly over this many NUMA nodes (attribute `numa`/`numaNode`)."""
    cpus_per_numa_node: int = Field(default=4, ge=1, le=1024, alias="cpusPerNumaNode")
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Extra attributes every device gets (short form `model: X` or `{version: 1.0.0}`)."""
    devices: list[CustomDevice] = Field(default_factory=list)
    shared_counters: list[SharedCounterSet] = Field(default_factory=list, alias="sharedCounters")
    device_class: DeviceClassProfile = Field(default_factory=DeviceClassProfile,
                                             alias="deviceClass")
    health_check_timeout_seconds: int = Field(default=30, ge=1, alias="healthCheckTimeoutSeconds")
    """How long the kubelet waits for a health update before a device is Unknown."""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        errors = names.dns1123_subdomain_errors(value)
        if errors:
            raise ValueError(errors[0])
        return value

    _attributes = field_validator("attributes")(classmethod(lambda cls, v: _check_attributes(v)))

    @property
    def class_name(self) -> str:
        """The DeviceClass name."""
        return self.device_class.name or self.name


class NodeResources(_Model):
    """What the Node object says about itself."""

    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    capacity: dict[str, str] = Field(default_factory=lambda: {
        "cpu": "32", "memory": "256Gi", "pods": "110", "ephemeral-storage": "500Gi"})
    allocatable: dict[str, str] | None = None
    """Defaults to the capacity."""

    @field_validator("capacity", "allocatable", mode="before")
    @classmethod
    def _quantities(cls, value: object) -> object:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError("must map resource names to quantities")
        return {k: _quantity(v) for k, v in value.items()}

    @field_validator("labels")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        for k, v in value.items():
            errors = names.label_key_errors(k) + names.label_value_errors(str(v))
            if errors:
                raise ValueError(f"label {k}={v}: {errors[0]}")
        return value


class NodeProfile(_Model):
    """A whole node profile."""

    name: str
    description: str = ""
    node: NodeResources = Field(default_factory=NodeResources)
    drivers: list[DriverProfile] = Field(default_factory=list)

    @field_validator("drivers")
    @classmethod
    def _unique(cls, value: list[DriverProfile]) -> list[DriverProfile]:
        seen: set[str] = set()
        for d in value:
            if d.name in seen:
                raise ValueError(f"driver {d.name} is listed twice")
            seen.add(d.name)
        return value


def shipped_profiles() -> list[str]:
    """The names of the profiles shipped with the package."""
    folder = resources.files("kubelet_emu") / PROFILE_DIR
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir()
                  if p.name.endswith(".yaml"))


def parse_profile(text: str, source: str) -> NodeProfile:
    """Validate one profile's YAML; ProfileError lists every problem with its field path."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ProfileError(f"{source}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"{source}: a profile is a mapping with name, node and drivers")
    try:
        return NodeProfile.model_validate(data)
    except ValidationError as e:
        lines = [f"{source}: invalid node profile:"]
        for err in e.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top)"
            lines.append(f"  {where}: {err['msg'].removeprefix('Value error, ')}")
        raise ProfileError("\n".join(lines)) from None


@functools.cache
def _shipped(name: str) -> NodeProfile:
    path = resources.files("kubelet_emu") / PROFILE_DIR / f"{name}.yaml"
    return parse_profile(path.read_text(), f"profile {name!r}")


def load_profile(name_or_path: str) -> NodeProfile:
    """A shipped profile by name, or a profile file by path (anything with a `/` or `.yaml`)."""
    if "/" in name_or_path or name_or_path.endswith((".yaml", ".yml")):
        path = Path(name_or_path)
        try:
            text = path.read_text()
        except OSError as e:
            raise ProfileError(f"{name_or_path}: {e.strerror}") from None
        return parse_profile(text, str(path))
    if name_or_path not in shipped_profiles():
        raise ProfileError(f"unknown node profile {name_or_path!r}: the shipped profiles are "
                           f"{', '.join(shipped_profiles())}; or give a file path")
    return _shipped(name_or_path)
