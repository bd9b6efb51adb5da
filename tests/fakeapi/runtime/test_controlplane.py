"""The composition root: component selection, supervision seen over HTTP, quiescence."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from fakeapi.catalog import ALL_COMPONENTS
from fakeapi.cli.main import build_parser
from fakeapi.cluster import ClusterConfig
from fakeapi.controlplane import ControlPlane
from fakeapi.http.app import create_app
from fakeapi.machinery.clock import VirtualClock
from fakeapi.runtime.component import ComponentContext, Controller
from fakeapi.runtime.spec import ComponentSelectionError, ComponentSpec, select

SPECS = (ComponentSpec(name="a", build=Controller), ComponentSpec(name="b", build=Controller),
         ComponentSpec(name="c", build=Controller, enabled_by_default=False))


@pytest.mark.parametrize("selection,enabled", [
    ("*", ["a", "b"]),
    ("", []),
    ("a", ["a"]),
    ("*,c", ["a", "b", "c"]),
    ("*,-a", ["b"]),
    ("-a", []),
    ("c,-c", []),
    (["*", "-b"], ["a"]),
    (" * , -a ", ["b"]),
])
def test_selection_follows_the_controllers_flag_syntax(selection: Any,
                                                       enabled: list[str]) -> None:
    assert [s.name for s in select(SPECS, selection)] == enabled


@pytest.mark.parametrize("selection", ["d", "*,-d", "a,x,-y"])
def test_unknown_components_are_refused(selection: str) -> None:
    with pytest.raises(ComponentSelectionError, match="not in the list of known components"):
        select(SPECS, selection)


def test_the_cli_refuses_an_unknown_component(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(["serve", "--components", "*,-no-such"])
    assert e.value.code == 2
    assert "'no-such' not in the list of known components" in capsys.readouterr().err
    args = build_parser().parse_args(["serve", "--components", "*,-garbage-collector"])
    assert [s.name for s in select(ALL_COMPONENTS, args.components)] == [
        s.name for s in ALL_COMPONENTS if s.enabled_by_default and s.name != "garbage-collector"]


class Crashy(Controller[str]):
    """Watches config maps and crashes once on the first one it reconciles."""

    def __init__(self, ctx: ComponentContext) -> None:
        super().__init__(ctx)
        self.watch("configmaps")
        self.crashed = False
        self.reconciled: list[str] = []

    async def run(self) -> None:
        if not self.crashed:
            self.crashed = True
            await self.clock.sleep(0.5)
            raise RuntimeError("crashed on purpose")
        await super().run()

    async def reconcile(self, key: str) -> None:
        self.reconciled.append(key)


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    specs = (*ALL_COMPONENTS, ComponentSpec(name="crashy", build=Crashy,
                                            service_account="generic-garbage-collector"))
    p = ControlPlane(ClusterConfig(seed=1, retention=50), clock=VirtualClock(), specs=specs)
    await p.start()
    yield p
    await p.stop()


async def test_a_crash_is_logged_restarted_and_shown_in_readyz_and_metrics(
        plane: ControlPlane, aiohttp_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    api = await aiohttp_client(create_app(plane.cluster, checks=plane.health,
                                          metrics=plane.metrics_text))
    await plane.cluster.client("test").create("configmaps", {
        "metadata": {"name": "x", "namespace": "default"}})
    assert isinstance(plane.clock, VirtualClock)
    await plane.clock.advance(0.5)  # crashy crashes and backs off
    reply = await api.get("/readyz", params={"verbose": "1"})
    text = await reply.text()
    assert reply.status == 500
    assert "[-]crashy failed: crashed (RuntimeError: crashed on purpose), restarting" in text
    assert "[+]namespace-controller ok" in text and "[+]informer:namespaces ok" in text
    assert text.endswith("readyz check failed\n")
    assert (await api.get("/livez")).status == 200
    assert (await api.get("/readyz/namespace-controller")).status == 200
    assert (await api.get("/readyz/crashy")).status == 500
    assert (await api.get("/readyz/nothing")).status == 404
    [record] = [r for r in caplog.records if r.getMessage().startswith("component crashy")]
    assert record.exc_info is not None
    await plane.clock.advance(1.0)  # restarted: resyncs what the informer holds
    crashy = plane.components["crashy"]
    assert isinstance(crashy, Crashy) and crashy.reconciled == ["default/x"]
    reply = await api.get("/readyz", params={"verbose": ""})
    assert reply.status == 200 and (await reply.text()).endswith("readyz check passed\n")
    metrics = await (await api.get("/metrics")).text()
    assert 'fakeapi_component_crashes_total{component="crashy"} 1' in metrics
    assert 'fakeapi_component_crashes_total{component="garbage-collector"} 0' in metrics
    assert 'kubernetes_feature_enabled{name="DynamicResourceAllocation",stage=""} 1' in metrics


async def test_one_shared_informer_per_kind(plane: ControlPlane) -> None:
    await plane.settle()
    resources = [i.resource for i in plane.informers.all()]
    assert len(resources) == len(set(resources))
    assert "configmaps" in resources and "namespaces" in resources


async def test_a_namespace_deleted_after_a_window_of_other_writes_is_finalized(
        plane: ControlPlane, caplog: pytest.LogCaptureFixture) -> None:
    """The namespaces watch is quiet while 4 retention windows of other kinds go by."""
    caplog.set_level(logging.INFO)
    client = plane.cluster.client("test")
    await client.create("namespaces", {"metadata": {"name": "team"}})
    await plane.settle()
    for i in range(200):
        await client.create("priorityclasses.scheduling.k8s.io", {
            "metadata": {"name": f"p{i}"}, "value": i})
    await plane.settle()
    await client.delete("namespaces", "team")
    await plane.settle()
    assert await client.list("namespaces", field_selector="metadata.name=team") == []
    assert plane.informers.get("namespaces").relists == 0
    assert all(u.crashes == 0 for u in plane.supervisor.units.values())


async def test_settle_waits_for_every_queue(plane: ControlPlane) -> None:
    client = plane.cluster.client("test")
    owner = await client.create("configmaps", {"metadata": {"name": "o",
                                                            "namespace": "default"}})
    for i in range(20):
        await client.create("configmaps", {"metadata": {
            "name": f"d{i}", "namespace": "default", "ownerReferences": [{
                "apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                "uid": owner["metadata"]["uid"]}]}})
    await client.delete("configmaps", "o", "default")
    await plane.settle()
    assert not plane.busy()
    assert [c["metadata"]["name"] for c in await client.list("configmaps", "default")] == []
    await asyncio.sleep(0)
