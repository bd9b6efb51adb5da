"""The emulate composition root (`fakeapi.emulation`) against a served cluster in this test's
loop: `auto` identities pick the service accounts on a fakeapi server, the chosen components
are built and supervised, `--components none` selects nothing, and the CLI's choices are the
root's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fakeapi.catalog import ALL_COMPONENTS
from fakeapi.cli.emulate import IDENTITY_CHOICES
from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.emulation import IDENTITIES, EmulatedPlane
from fakeapi.http.serving import Listener, listen
from fakeapi.remote_client import RemoteClient
from fakeapi.runtime.spec import select
from kubelet_emu.settings import EmulatorSettings
from tests.support.waiting import poll_async


@pytest.fixture
async def listener(tmp_path: Path) -> AsyncIterator[Listener]:
    cluster = Cluster(ClusterConfig(seed=4))
    served = await listen(cluster, host="127.0.0.1", port=0, pki_dir=tmp_path / "pki",
                          kubeconfig=tmp_path / "kubeconfig")
    yield served
    await served.close()
    await cluster.close()


@pytest.mark.parametrize(("identities", "expected"), [
    ("auto", "service-accounts"), ("kubeconfig", "kubeconfig"),
    ("service-accounts", "service-accounts")])
async def test_the_plane_starts_its_components_with_the_identities_chosen(
        listener: Listener, tmp_path: Path, identities: str, expected: str) -> None:
    plane = EmulatedPlane(RemoteClient.from_kubeconfig(listener.kubeconfig),
                          components="scheduler,resource-claim-controller",
                          emulator=EmulatorSettings(nodes=0, state_dir=tmp_path),
                          identities=identities)
    await plane.start()
    try:
        assert plane.identities == expected
        assert sorted(plane.components) == ["resource-claim-controller", "scheduler"]
        await poll_async(lambda: all(h.ok for h in plane.health()), what="all ready")
    finally:
        await plane.stop()


def test_none_selects_no_component_and_the_cli_offers_the_roots_identities() -> None:
    assert select(ALL_COMPONENTS, "none") == []
    assert IDENTITY_CHOICES == IDENTITIES
