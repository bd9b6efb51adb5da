"""kubectl v1.37 against an in-process server on a loopback port with a virtual clock, so
emulated time (an hour, a toleration's 300 s) passes at once: kubectl runs in a thread while
the event loop serves it, and the test moves the clock between kubectl calls."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from fakeapi.auth import authn
from fakeapi.auth.kubeconfig import write_kubeconfig
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from kubelet_emu.settings import EmulatorSettings
from tests.support.kubectl import Kubectl
from tests.support.seeds import SEED_GATE_MAP


class Session:
    """kubectl against the in-process server, and the clock behind it."""

    def __init__(self, kubectl: Kubectl, plane: ControlPlane, clock: VirtualClock) -> None:
        self.kubectl = kubectl
        self.plane = plane
        self.clock = clock

    async def __call__(self, *args: str, input: str | None = None) -> str:
        """Run kubectl (in a thread: the loop keeps serving); its stdout."""
        return await asyncio.to_thread(self.kubectl, *args, input=input)

    async def fails(self, *args: str, input: str | None = None) -> str:
        """Run kubectl expecting an error; its stderr."""
        res = await asyncio.to_thread(self.kubectl.run, *args, check=False, input=input)
        assert res.returncode != 0, res.stdout
        return res.stderr

    async def json(self, *args: str) -> Any:
        return json.loads(await self("get", *args, "-o", "json"))


@contextlib.asynccontextmanager
async def serving(tmp_path: Path, kubectl_binary: str, components: str,
                  emulator: EmulatorSettings | None = None, *,
                  feature_gates: Mapping[str, bool] = SEED_GATE_MAP,
                  runtime_config: Mapping[str, str] | None = None) -> AsyncIterator[Session]:
    """An in-process server on a virtual clock running `components`, and kubectl for it
    (the gates: the seed examples' unless given; `runtime_config`: `--runtime-config`'s
    keys and values)."""
    clock = VirtualClock()
    config = ClusterConfig(feature_gates=dict(feature_gates),
                           runtime_config=dict(runtime_config or {}), seed=9)
    plane = ControlPlane(config, clock=clock, components=components, emulator=emulator)
    app = create_app(plane.cluster, authenticator=authn.Authenticator(fallback=authn.UNSECURED),
                     checks=plane.health, metrics=plane.metrics_text)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    await plane.start()
    await plane.settle()
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, server=f"http://127.0.0.1:{port}", pki=None)
    try:
        yield Session(Kubectl(kubectl_binary, kubeconfig), plane, clock)
    finally:
        await runner.cleanup()
        await plane.stop()
