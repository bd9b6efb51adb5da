"""The kubelet plugin API's messages ↔ the emulator's values (`kubelet_emu.plugin`): what
the kubelet's gRPC client (`grpc_plugin`) and the plugin server (`plugin_server`) send and
read, in one place. Pure: protobuf messages in, dataclasses out, and back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubelet_emu.plugin import Claim, DeviceHealth, HealthStatus, PreparedDevice, PrepareResult
from kubelet_emu.pluginapi import dra_pb2, health_pb2


def claims_to_wire(claims: Iterable[Claim]) -> list[dra_pb2.Claim]:
    """dra.v1.Claim of each claim."""
    return [dra_pb2.Claim(namespace=c.namespace, uid=c.uid, name=c.name) for c in claims]


def claims_from_wire(claims: Iterable[dra_pb2.Claim]) -> list[Claim]:
    """The claims of a request."""
    return [Claim(namespace=c.namespace, uid=c.uid, name=c.name) for c in claims]


def prepare_to_wire(results: Mapping[str, PrepareResult]) -> dra_pb2.NodePrepareResourcesResponse:
    """A NodePrepareResourcesResponse of results by claim UID."""
    out = dra_pb2.NodePrepareResourcesResponse()
    for uid, result in results.items():
        entry = out.claims[uid]
        entry.error = result.error
        for d in result.devices:
            entry.devices.add(request_names=d.request_names, pool_name=d.pool_name,
                              device_name=d.device_name, cdi_device_ids=d.cdi_device_ids)
    return out


def prepare_from_wire(response: dra_pb2.NodePrepareResourcesResponse) -> dict[str, PrepareResult]:
    """Results by claim UID."""
    return {uid: PrepareResult(devices=tuple(
        PreparedDevice(request_names=tuple(d.request_names), pool_name=d.pool_name,
                       device_name=d.device_name, cdi_device_ids=tuple(d.cdi_device_ids))
        for d in entry.devices), error=entry.error)
        for uid, entry in response.claims.items()}


def unprepare_to_wire(errors: Mapping[str, str]) -> dra_pb2.NodeUnprepareResourcesResponse:
    """A NodeUnprepareResourcesResponse of errors by claim UID ("" for none)."""
    out = dra_pb2.NodeUnprepareResourcesResponse()
    for uid, error in errors.items():
        out.claims[uid].error = error
    return out


def health_to_wire(devices: Sequence[DeviceHealth]) -> health_pb2.NodeWatchResourcesResponse:
    """One NodeWatchResourcesResponse."""
    return health_pb2.NodeWatchResourcesResponse(devices=[health_pb2.DeviceHealth(
        device=health_pb2.DeviceIdentifier(pool_name=d.pool_name, device_name=d.device_name),
        health=health_pb2.HealthStatus.Name(int(d.health)),
        last_updated_time=d.last_updated_time,
        health_check_timeout_seconds=d.health_check_timeout_seconds, message=d.message)
        for d in devices])


def health_from_wire(response: health_pb2.NodeWatchResourcesResponse) -> list[DeviceHealth]:
    """The devices of one NodeWatchResourcesResponse (an unknown health value is Unknown)."""
    known = {int(h) for h in HealthStatus}
    return [DeviceHealth(pool_name=d.device.pool_name, device_name=d.device.device_name,
                         health=HealthStatus(d.health if d.health in known else 0),
                         last_updated_time=d.last_updated_time,
                         health_check_timeout_seconds=d.health_check_timeout_seconds,
                         message=d.message)
            for d in response.devices]
