"""The plugin server and the kubelet's gRPC client together, over real unix sockets: a
`DRAPlugin` served by `PluginServer` is registered and called through `GrpcPlugin` exactly
as in process (prepare, unprepare, health), for socket paths on both sides of the system's
limit (a path too long to bind is bound in the temporary folder behind a link)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import kubelet_emu.pluginapi as api
from fakeapi.machinery.clock import RealClock
from kubelet_emu import sockets
from kubelet_emu.grpc_plugin import GrpcPlugin
from kubelet_emu.plugin import (
    Claim,
    DeviceHealth,
    HealthStatus,
    HealthStream,
    PluginCallError,
    PreparedDevice,
    PrepareResult,
)
from kubelet_emu.plugin_server import PluginServer

CLAIM = Claim(namespace="ns", uid="u-1", name="c")


class Recorder:
    """A plugin that answers from fixed data and records what it was asked."""

    driver_name = "rec.example.com"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.streams: list[HealthStream] = []

    async def node_prepare_resources(self, claims: Sequence[Claim]) -> dict[str, PrepareResult]:
        self.calls.append(("prepare", [c.uid for c in claims]))
        return {c.uid: PrepareResult(devices=(PreparedDevice(
            request_names=("r",), pool_name="p", device_name="d-0",
            cdi_device_ids=("rec.example.com/dev=d-0",)),)) for c in claims}

    async def node_unprepare_resources(self, claims: Sequence[Claim]) -> dict[str, str]:
        self.calls.append(("unprepare", [c.uid for c in claims]))
        return {c.uid: "busy" for c in claims}

    def node_watch_resources(self, stream: HealthStream) -> Callable[[], None]:
        self.streams.append(stream)
        stream([DeviceHealth(pool_name="p", device_name="d-0", health=HealthStatus.UNHEALTHY,
                             last_updated_time=1, health_check_timeout_seconds=7,
                             message="hot")])
        return lambda: self.streams.remove(stream)

    async def run_pod_sandbox(self, pod: dict[str, object], claims: Sequence[Claim]) -> None:
        """Not served over gRPC."""


def folder_for(length: int) -> Path:
    """A temporary folder whose plugin socket path (`plugins/rec.example.com/dra.sock`) has
    `length` characters."""
    base = Path(tempfile.mkdtemp(prefix="pg-"))
    tail = len("/plugins/rec.example.com/dra.sock")
    pad = length - len(str(base)) - tail - 1
    return base / ("d" * pad) if pad > 0 else base


@pytest.mark.parametrize("length", [90, 105, 106, 107, 108, 160])
async def test_a_served_plugin_is_called_over_grpc_as_in_process(length: int) -> None:
    root = folder_for(length)
    plugin = Recorder()
    server = PluginServer(plugin=plugin, registry=root / "registry", plugins=root / "plugins")
    await server.start()
    try:
        assert len(str(server.service_socket)) == length
        assert server.service_socket.is_symlink() is (length > sockets.MAX_SOCKET_PATH)
        client = GrpcPlugin(driver_name=plugin.driver_name, endpoint=server.service_socket,
                            service=api.DRA_V1BETA1, health=api.HEALTH_V1, clock=RealClock())
        got = await client.node_prepare_resources([CLAIM])
        assert got == await plugin.node_prepare_resources([CLAIM])
        assert await client.node_unprepare_resources([CLAIM]) == {"u-1": "busy"}
        seen: asyncio.Queue[list[DeviceHealth]] = asyncio.Queue()
        stop = client.node_watch_resources(lambda d: seen.put_nowait(list(d)))
        [health] = await asyncio.wait_for(seen.get(), 10)
        assert (health.health, health.message, health.health_check_timeout_seconds) == (
            HealthStatus.UNHEALTHY, "hot", 7)
        stop()
        await client.close()
    finally:
        await server.stop()
        shutil.rmtree(root.parent if root.name.startswith("d") else root, ignore_errors=True)
    assert not server.service_socket.exists() and not server.registration_socket.exists()
    assert plugin.calls[0] == ("prepare", ["u-1"])


async def test_a_plugin_that_is_gone_fails_the_call_in_the_kubelets_words() -> None:
    root = Path(tempfile.mkdtemp(prefix="pg-"))
    client = GrpcPlugin(driver_name="gone.example.com", endpoint=root / "dra.sock",
                        service=api.DRA_V1, health=None, clock=RealClock())
    with pytest.raises(PluginCallError) as e:
        await client.node_prepare_resources([CLAIM])
    assert str(e.value).startswith("NodePrepareResources: rpc error: code = Unavailable desc = ")
    await client.close()
    shutil.rmtree(root)
