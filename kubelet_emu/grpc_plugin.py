"""The kubelet's client of one registered DRA plugin over gRPC: a `DRAPlugin` the pod worker
calls as it calls a built-in driver, on the plugin's endpoint socket.

- NodePrepareResources and NodeUnprepareResources on the DRA service version chosen at
  registration (v1, else v1beta1: the same messages), each with upstream's call timeout; a
  failed call raises `PluginCallError` with the gRPC status as Go prints it
  (`NodePrepareResources: rpc error: code = Unavailable desc = ...`).
- NodeWatchResources on the health service the plugin registered (v1, else v1alpha1; none
  when it lists neither): every response goes to the stream; a broken stream is opened
  again after 5 s on the kubelet's clock (Unimplemented ends it), so devices go Unknown by
  the health cache's timeout while the plugin is away, and healthy again when it is back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

import kubelet_emu.plugin_wire as wire
import kubelet_emu.sockets as sockets
from fakeapi.machinery.clock import Clock
from kubelet_emu.plugin import Claim, HealthStream, PluginCallError, PrepareResult
from kubelet_emu.pluginapi import dra_pb2, health_pb2

log = logging.getLogger(__name__)

CALL_TIMEOUT = 45.0
"""Same as upstream's kubelet: how long a NodePrepareResources or NodeUnprepareResources call
may take."""
HEALTH_RETRY = 5.0
"""Same as upstream's kubelet: the wait before a broken health stream is opened again."""


def go_status(e: grpc.aio.AioRpcError) -> str:
    """A gRPC error as grpc-go prints it: `rpc error: code = Unavailable desc = ...`."""
    code = "".join(part.capitalize() for part in e.code().name.split("_"))
    return f"rpc error: code = {code} desc = {e.details() or ''}"


async def _call(name: str, method: Any, request: Any) -> Any:
    """One call with upstream's timeout; a failure is a `PluginCallError` in its words."""
    try:
        return await method(request, timeout=CALL_TIMEOUT)
    except grpc.aio.AioRpcError as e:
        raise PluginCallError(f"{name}: {go_status(e)}") from e


class GrpcPlugin:
    """One driver's plugin, reached over gRPC (see the module docstring)."""

    def __init__(self, *, driver_name: str, endpoint: Path, service: str, health: str | None,
                 clock: Clock) -> None:
        self.driver_name = driver_name
        self.endpoint = endpoint
        self.service = service
        """The DRA service it speaks (`pluginapi.DRA_V1` or `DRA_V1BETA1`)."""
        self.health_service = health
        """The health service it streams from (`pluginapi.HEALTH_V1`...; None: none)."""
        self.clock = clock
        self.channel: Any = grpc.aio.insecure_channel(sockets.dial_target(endpoint))
        self._prepare = self.channel.unary_unary(
            f"/{service}/NodePrepareResources",
            request_serializer=dra_pb2.NodePrepareResourcesRequest.SerializeToString,
            response_deserializer=dra_pb2.NodePrepareResourcesResponse.FromString)
        self._unprepare = self.channel.unary_unary(
            f"/{service}/NodeUnprepareResources",
            request_serializer=dra_pb2.NodeUnprepareResourcesRequest.SerializeToString,
            response_deserializer=dra_pb2.NodeUnprepareResourcesResponse.FromString)
        self._health: asyncio.Task[None] | None = None

    async def node_prepare_resources(self, claims: Sequence[Claim]) -> dict[str, PrepareResult]:
        """NodePrepareResources for these claims; results by claim UID."""
        request = dra_pb2.NodePrepareResourcesRequest(claims=wire.claims_to_wire(claims))
        response = await _call("NodePrepareResources", self._prepare, request)
        return wire.prepare_from_wire(response)

    async def node_unprepare_resources(self, claims: Sequence[Claim]) -> dict[str, str]:
        """NodeUnprepareResources for these claims; an error text per claim UID."""
        request = dra_pb2.NodeUnprepareResourcesRequest(claims=wire.claims_to_wire(claims))
        response = await _call("NodeUnprepareResources", self._unprepare, request)
        return {uid: entry.error for uid, entry in response.claims.items()}

    def node_watch_resources(self, stream: HealthStream) -> Callable[[], None]:
        """Keep a NodeWatchResources stream open (when the plugin registered a health
        service), each response to `stream`; returns the call that stops it."""
        if self.health_service is not None:
            self._health = asyncio.get_running_loop().create_task(
                self._watch(stream, self.health_service),
                name=f"health {self.driver_name} {self.endpoint}")
        return self.stop_health

    async def _watch(self, stream: HealthStream, service: str) -> None:
        call = self.channel.unary_stream(
            f"/{service}/NodeWatchResources",
            request_serializer=health_pb2.NodeWatchResourcesRequest.SerializeToString,
            response_deserializer=health_pb2.NodeWatchResourcesResponse.FromString)
        while True:
            try:
                async for response in call(health_pb2.NodeWatchResourcesRequest()):
                    stream(wire.health_from_wire(response))
            except grpc.aio.AioRpcError as e:
                if e.code() == grpc.StatusCode.UNIMPLEMENTED:  # as upstream: for good
                    log.info("%s: no health stream: %s", self.driver_name, go_status(e))
                    return
                log.info("%s: health stream broke (%s); again in %.0f s", self.driver_name,
                         go_status(e), HEALTH_RETRY)
            await self.clock.sleep(HEALTH_RETRY)

    def stop_health(self) -> None:
        """Stop the health stream."""
        if self._health is not None:
            self._health.cancel()
            self._health = None

    async def run_pod_sandbox(self, pod: dict[str, Any], claims: Sequence[Claim]) -> None:
        """Not part of the kubelet plugin API (a driver's NRI plugin would do it)."""

    async def close(self) -> None:
        """Stop the health stream and close the channel (the plugin was deregistered)."""
        self.stop_health()
        await self.channel.close()
