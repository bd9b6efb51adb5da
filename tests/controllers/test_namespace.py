"""The namespace controller on a virtual clock: empties a Terminating namespace, waits for
finalizers without polling, finalizes it, leaves everything else alone, survives restarts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from controllers.namespace import NamespaceController
from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from fakeapi.machinery.errors import ApiError
from tests.support.plane import running_plane

CLAIMS = "resourceclaims.resource.k8s.io"
CONTENTS: list[tuple[str, dict[str, Any]]] = [
    ("configmaps", {}),
    ("pods", {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
    ("serviceaccounts", {}),
    ("leases.coordination.k8s.io", {}),
    (CLAIMS, {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com"}}]}}}),
    ("roles.rbac.authorization.k8s.io", {"rules": []}),
]


@pytest.fixture
async def plane() -> AsyncIterator[ControlPlane]:
    async with running_plane("namespace-controller", seed=2) as p:
        yield p


@pytest.fixture
def client(plane: ControlPlane) -> Client:
    return plane.cluster.client("test")


async def fill(client: Client, namespace: str, **extra_meta: Any) -> None:
    await client.create("namespaces", {"metadata": {"name": namespace}})
    for resource, body in CONTENTS:
        await client.create(resource, {"metadata": {"name": "x", "namespace": namespace,
                                                    **extra_meta}, **body})


async def names(client: Client, namespace: str) -> dict[str, list[str]]:
    """What is left in a namespace, per resource (resources with nothing left omitted)."""
    left = {resource: [o["metadata"]["name"] for o in await client.list(resource, namespace)]
            for resource, _ in CONTENTS}
    return {r: n for r, n in left.items() if n}


async def exists(client: Client, namespace: str) -> bool:
    try:
        await client.get("namespaces", namespace)
        return True
    except ApiError as e:
        assert e.code == 404
        return False


async def test_a_deleted_namespace_is_emptied_and_removed_and_others_are_untouched(
        plane: ControlPlane, client: Client) -> None:
    await fill(client, "team")
    await fill(client, "bystander")
    await client.delete("namespaces", "team")
    await plane.settle()
    assert not await exists(client, "team")
    assert await names(client, "team") == {}
    assert await names(client, "bystander") == {r: ["x"] for r, _ in CONTENTS}
    assert (await client.get("namespaces", "bystander"))["status"]["phase"] == "Active"


async def test_contents_held_by_finalizers_keep_it_terminating_until_they_go(
        plane: ControlPlane, client: Client) -> None:
    await fill(client, "held", finalizers=["example.com/hold"])
    await client.delete("namespaces", "held")
    await plane.settle()
    ns = await client.get("namespaces", "held")
    assert ns["status"]["phase"] == "Terminating" and ns["spec"]["finalizers"] == ["kubernetes"]
    left = await client.list("configmaps", "held")
    assert left[0]["metadata"]["deletionTimestamp"], "deleted, waiting for its finalizer"
    for resource, _ in CONTENTS:
        await client.patch(resource, "x", {"metadata": {"finalizers": None}}, namespace="held")
    await plane.settle()  # no time passes: the last deletion itself brings the namespace back
    assert not await exists(client, "held")


async def test_a_namespace_finalized_by_someone_else_or_not_deleted_is_left_alone(
        plane: ControlPlane, client: Client) -> None:
    await client.create("namespaces", {"metadata": {"name": "quiet"}})
    controller = plane.components["namespace-controller"]
    assert isinstance(controller, NamespaceController)
    await controller.reconcile("quiet")  # not terminating: nothing to do
    await controller.reconcile("never-existed")
    assert (await client.get("namespaces", "quiet"))["status"]["phase"] == "Active"


async def test_a_restart_mid_way_converges(plane: ControlPlane, client: Client) -> None:
    await fill(client, "team", finalizers=["example.com/hold"])
    await client.delete("namespaces", "team")
    await plane.settle()
    await plane.supervisor.stop()  # the controller (and its informers) go away mid-way
    for resource, _ in CONTENTS:
        await client.patch(resource, "x", {"metadata": {"finalizers": None}}, namespace="team")
    assert await exists(client, "team")
    plane.supervisor.start()
    await plane.settle()
    assert not await exists(client, "team")
