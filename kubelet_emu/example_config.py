"""The dra-example-driver's opaque configuration and the container environment it yields.

Its GpuConfig (gpu.resource.example.com/v1alpha1) with the TimeSlicing and SpacePartitioning
sharing strategies and its NetConfig (net.resource.example.com/v1alpha1) are decoded,
normalized and validated as the driver does, with its error texts; configs are resolved as
its GetOpaqueDeviceConfigs does (class configs, then claim configs; the last one naming a
request exactly, or naming none, wins; the default config comes first). Each allocated
device gets the environment variables of the driver's ApplyConfig (`GPU_DEVICE_<id>`,
`_SHARING_STRATEGY`, `_TIMESLICE_INTERVAL`, `_PARTITION_COUNT`, `_MEMORY`, `_COMPUTE`,
`NET_DEVICE_<n>_*_RATE`, `CPU_DEVICE_<n>`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from fakeapi.machinery.quantity import parse_quantity

Obj = dict[str, Any]
GPU_API = "gpu.resource.example.com/v1alpha1"
NET_API = "net.resource.example.com/v1alpha1"
STRATEGIES = ("TimeSlicing", "SpacePartitioning")
INTERVALS = ("Default", "Short", "Medium", "Long")
MAX_BURST = 2**32 - 1


class ConfigError(ValueError):
    """A configuration the driver refuses (its message says why)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Config:
    """One decoded opaque configuration and the requests it names (none: every request)."""

    requests: tuple[str, ...]
    kind: str
    body: Obj


def decode(parameters: Any, known: dict[str, str]) -> tuple[str, Obj]:
    """(kind, object) of opaque parameters, for the kinds `known` maps to apiVersions."""
    if not isinstance(parameters, dict):
        raise ConfigError("error decoding config parameters: not a JSON object")
    api, kind = parameters.get("apiVersion"), parameters.get("kind")
    if not api or not kind:
        raise ConfigError("error decoding config parameters: Object 'Kind' is missing in "
                          f"'{_json(parameters)}'")
    if known.get(kind) != api:
        raise ConfigError(f"error decoding config parameters: no kind \"{kind}\" is "
                          f"registered for version \"{api}\" in scheme")
    return kind, dict(parameters)


def _json(obj: Obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def opaque_configs(driver: str, allocation_configs: Sequence[Obj],
                   known: dict[str, str]) -> list[Config]:
    """The driver's configs in increasing precedence: class configs, then claim configs,
    each in order (other drivers' configs are skipped)."""
    by_source: dict[str, list[Obj]] = {"FromClass": [], "FromClaim": []}
    for c in allocation_configs:
        source = c.get("source")
        if source not in by_source:
            raise ConfigError(f"invalid config source: {source}")
        by_source[source].append(c)
    out = []
    for c in by_source["FromClass"] + by_source["FromClaim"]:
        opaque = c.get("opaque")
        if opaque is None:
            raise ConfigError("only opaque parameters are supported by this driver")
        if opaque.get("driver") != driver:
            continue
        kind, body = decode(opaque.get("parameters"), known)
        out.append(Config(requests=tuple(c.get("requests") or ()), kind=kind, body=body))
    return out


def config_for(request: str, configs: Sequence[Config]) -> Config | None:
    """The config that applies to a result of `request`: the last one naming it exactly or
    naming no request (None: the default config)."""
    for c in reversed(configs):
        if not c.requests or request in c.requests:
            return c
    return None


# ----- GpuConfig -------------------------------------------------------------------------


def normalize_gpu(body: Obj) -> Obj:
    """GpuConfig.Normalize: TimeSlicing by default, interval Default, one partition."""
    sharing = dict(body.get("sharing") or {"strategy": "TimeSlicing"})
    if sharing.get("strategy") == "TimeSlicing" and sharing.get("timeSlicingConfig") is None:
        sharing["timeSlicingConfig"] = {"interval": "Default"}
    if (sharing.get("strategy") == "SpacePartitioning"
            and sharing.get("spacePartitioningConfig") is None):
        sharing["spacePartitioningConfig"] = {"partitionCount": 1}
    return {**body, "sharing": sharing}


def validate_gpu(body: Obj) -> None:
    """GpuConfig.Validate, with the driver's messages."""
    sharing = body.get("sharing")
    if sharing is None:
        raise ConfigError("no sharing strategy set")
    strategy = sharing.get("strategy")
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown GPU sharing strategy: {strategy}")
    if strategy == "TimeSlicing":
        interval = (sharing.get("timeSlicingConfig") or {}).get("interval", "")
        if interval not in INTERVALS:
            raise ConfigError(f"unknown time-slice interval: {interval}")
    else:
        count = (sharing.get("spacePartitioningConfig") or {}).get("partitionCount", 0)
        if not isinstance(count, int) or count < 0:
            raise ConfigError(f"invalid partition count: {count}")


DEFAULT_GPU_CONFIG: Obj = {"apiVersion": GPU_API, "kind": "GpuConfig", "sharing": {
    "strategy": "TimeSlicing", "timeSlicingConfig": {"interval": "Default"}}}


def env_id(device: str) -> str:
    """The env-var-safe id of a device: its name after `gpu-`, upper case, `-` as `_`."""
    return device[4:].replace("-", "_").upper()


def gpu_env(body: Obj, result: Obj) -> list[str]:
    """applyGpuConfig for one allocation result."""
    body = normalize_gpu(body)
    validate_gpu(body)
    sharing = body["sharing"]
    device = result["device"]
    ident = env_id(device)
    env = [f"GPU_DEVICE_{ident}={device}",
           f"GPU_DEVICE_{ident}_SHARING_STRATEGY={sharing['strategy']}"]
    if sharing["strategy"] == "TimeSlicing":
        if sharing.get("spacePartitioningConfig") is not None:
            raise ConfigError(f"unable to get time slicing config for device {device}: "
                              "cannot use SpacePartitioningConfig with the 'TimeSlicing' "
                              "strategy")
        env.append(f"GPU_DEVICE_{ident}_TIMESLICE_INTERVAL="
                   f"{sharing['timeSlicingConfig'].get('interval', '')}")
    else:
        if sharing.get("timeSlicingConfig") is not None:
            raise ConfigError(f"unable to get space partitioning config for device {device}: "
                              "cannot use TimeSlicingConfig with the 'SpacePartitioning' "
                              "strategy")
        env.append(f"GPU_DEVICE_{ident}_PARTITION_COUNT="
                   f"{sharing['spacePartitioningConfig'].get('partitionCount', 0)}")
    consumed = result.get("consumedCapacity") or {}
    if "memory" in consumed:
        env.append(f"GPU_DEVICE_{ident}_MEMORY={consumed['memory']}")
    if "compute" in consumed:
        env.append(f"GPU_DEVICE_{ident}_COMPUTE={consumed['compute']}")
    return env


# ----- NetConfig -------------------------------------------------------------------------

DEFAULT_NET_CONFIG: Obj = {"apiVersion": NET_API, "kind": "NetConfig", "bwBurst": {}}


def validate_net(body: Obj) -> Obj:
    """NetConfig.Normalize and Validate: bursts under 4 GB."""
    burst = dict(body.get("bwBurst") or {})
    for key, label in (("ingressBurst", "ingressBurst"), ("egressBurst", "egressBurst")):
        value = burst.get(key, 0)
        if not isinstance(value, int) or value < 0:
            raise ConfigError(f"invalid {label}: burst must be a non-negative integer")
        if value > 0 and value // 8 >= MAX_BURST:
            raise ConfigError(f"invalid {label}: burst cannot be more than 4GB")
    return burst


def net_env(body: Obj, result: Obj) -> list[str]:
    """applyNetConfig for one allocation result (rates in bits per second)."""
    burst = validate_net(body)
    ident = result["device"][4:]
    env = []
    if burst.get("ingressBurst", 0) > 0:
        env.append(f"NET_DEVICE_{ident}_INGRESS_BURST={burst['ingressBurst']}")
    if burst.get("egressBurst", 0) > 0:
        env.append(f"NET_DEVICE_{ident}_EGRESS_BURST={burst['egressBurst']}")
    consumed = result.get("consumedCapacity") or {}
    for key, label in (("ingressBandwidth", "INGRESS"), ("egressBandwidth", "EGRESS")):
        if key in consumed:
            env.append(f"NET_DEVICE_{ident}_{label}_RATE={int(parse_quantity(consumed[key]))}")
    return env


# ----- the cpu profile -------------------------------------------------------------------


def cpu_env(capacity_key: str, result: Obj) -> list[str]:
    """The cpu profile's ApplyConfig: the NUMA device and the CPUs consumed."""
    ident = result["device"][len("numa-"):]
    env = [f"CPU_DEVICE_{ident}={result['device']}"]
    consumed = (result.get("consumedCapacity") or {}).get(capacity_key)
    if consumed is not None:
        env.append(f"CPU_DEVICE_{ident}_CONSUMED_CPU={consumed}")
    return env
