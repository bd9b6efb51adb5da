"""A DRA kubelet plugin served over gRPC, as a real driver's plugin is: the registration
service on `<registry>/<driver>-reg.sock` (type DRAPlugin, versions v1 and v1beta1, the
endpoint below), and the DRA service (v1 and v1beta1) and the device health service (v1
and v1alpha1) on `<plugins>/<driver>/dra.sock`. What it serves is any `DRAPlugin`: the
built-in fake drivers (`fakeapi serve --drivers grpc`, `fakeapi driver`).

The directory names are those a real node's kubelet and the dra-example-kubeletplugin
use: `--kubelet-registrar-directory-path` (`/var/lib/kubelet/plugins_registry`) and
`--kubelet-plugins-directory-path` (`/var/lib/kubelet/plugins`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc

import kubelet_emu.plugin_wire as wire
import kubelet_emu.pluginapi as api
import kubelet_emu.sockets as sockets
from kubelet_emu.node_dirs import registration_socket, service_socket
from kubelet_emu.plugin import DeviceHealth, DRAPlugin
from kubelet_emu.pluginapi import dra_pb2, health_pb2, registration_pb2

log = logging.getLogger(__name__)

SUPPORTED_VERSIONS = ("v1.DRAPlugin", "v1beta1.DRAPlugin", "v1.DRAResourceHealth",
                      "v1alpha1.DRAResourceHealth")
"""What the plugin registers with: the gRPC services it implements, newest first."""


def _unary(call: Callable[[Any, Any], Any], request: Any, response: Any) -> Any:
    return grpc.unary_unary_rpc_method_handler(
        call, request_deserializer=request.FromString,
        response_serializer=response.SerializeToString)


class PluginServer:
    """One driver's plugin on one node, served over gRPC (see the module docstring)."""

    def __init__(self, *, plugin: DRAPlugin, registry: Path, plugins: Path) -> None:
        self.plugin = plugin
        self.driver = plugin.driver_name
        self.registration_socket = registration_socket(registry, self.driver)
        self.service_socket = service_socket(plugins, self.driver)
        self._servers: list[Any] = []

    # ----- the services -----------------------------------------------------------------

    async def _get_info(self, request: registration_pb2.InfoRequest,
                        context: Any) -> registration_pb2.PluginInfo:
        return registration_pb2.PluginInfo(type=api.PLUGIN_TYPE, name=self.driver,
                                           endpoint=str(self.service_socket),
                                           supported_versions=SUPPORTED_VERSIONS)

    async def _notify(self, request: registration_pb2.RegistrationStatus,
                      context: Any) -> registration_pb2.RegistrationStatusResponse:
        if not request.plugin_registered:
            log.warning("%s: the kubelet did not register the plugin: %s", self.driver,
                        request.error)
        return registration_pb2.RegistrationStatusResponse()

    async def _prepare(self, request: dra_pb2.NodePrepareResourcesRequest,
                       context: Any) -> dra_pb2.NodePrepareResourcesResponse:
        results = await self.plugin.node_prepare_resources(wire.claims_from_wire(request.claims))
        return wire.prepare_to_wire(results)

    async def _unprepare(self, request: dra_pb2.NodeUnprepareResourcesRequest,
                         context: Any) -> dra_pb2.NodeUnprepareResourcesResponse:
        errors = await self.plugin.node_unprepare_resources(wire.claims_from_wire(request.claims))
        return wire.unprepare_to_wire(errors)

    async def _watch(self, request: health_pb2.NodeWatchResourcesRequest,
                     context: Any) -> AsyncIterator[health_pb2.NodeWatchResourcesResponse]:
        updates: asyncio.Queue[list[DeviceHealth]] = asyncio.Queue()
        stop = self.plugin.node_watch_resources(lambda devices: updates.put_nowait(
            list(devices)))
        try:
            while True:
                yield wire.health_to_wire(await updates.get())
        finally:
            stop()

    def _handlers(self) -> list[Any]:
        dra = {"NodePrepareResources": _unary(self._prepare, dra_pb2.NodePrepareResourcesRequest,
                                              dra_pb2.NodePrepareResourcesResponse),
               "NodeUnprepareResources": _unary(self._unprepare,
                                                dra_pb2.NodeUnprepareResourcesRequest,
                                                dra_pb2.NodeUnprepareResourcesResponse)}
        health = {"NodeWatchResources": grpc.unary_stream_rpc_method_handler(
            self._watch, request_deserializer=health_pb2.NodeWatchResourcesRequest.FromString,
            response_serializer=health_pb2.NodeWatchResourcesResponse.SerializeToString)}
        return [grpc.method_handlers_generic_handler(service, methods)
                for service, methods in ((api.DRA_V1, dra), (api.DRA_V1BETA1, dra),
                                         (api.HEALTH_V1, health), (api.HEALTH_V1ALPHA1, health))]

    def _registration_handlers(self) -> list[Any]:
        return [grpc.method_handlers_generic_handler(api.REGISTRATION, {
            "GetInfo": _unary(self._get_info, registration_pb2.InfoRequest,
                              registration_pb2.PluginInfo),
            "NotifyRegistrationStatus": _unary(self._notify, registration_pb2.RegistrationStatus,
                                               registration_pb2.RegistrationStatusResponse)})]

    # ----- start and stop ---------------------------------------------------------------

    async def start(self) -> None:
        """Serve DRA and health, then registration (the kubelet may call at once)."""
        for socket, handlers in ((self.service_socket, self._handlers()),
                                 (self.registration_socket, self._registration_handlers())):
            server = grpc.aio.server()
            server.add_generic_rpc_handlers(handlers)
            sockets.listen(server, socket)
            await server.start()
            sockets.link(socket)
            self._servers.append(server)

    async def stop(self) -> None:
        """Stop serving and remove the sockets (the kubelet deregisters the plugin)."""
        servers, self._servers = self._servers, []
        for server in reversed(servers):
            await server.stop(None)
        for socket in (self.registration_socket, self.service_socket):
            sockets.release(socket)
