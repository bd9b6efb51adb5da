"""The remote client (`fakeapi.remote_client`) against a real HTTPS server (the pytest plugin's
cluster, with no components): its writes and reads are the API's, an error Status comes back
as the very ApiError the in-process client raises, the kubeconfig's credentials work inline
or as files, and a server it can't reach or verify is `Unreachable`."""

from __future__ import annotations

import base64
import ssl
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.client import ObjectClient
from fakeapi.machinery.errors import ApiError
from fakeapi.registry.kinds import CONFIG_MAPS, NODES
from fakeapi.remote_client import RemoteClient, Unreachable
from fakeapi.testing import FakeapiCluster

CM = CONFIG_MAPS.resource_id
Obj = dict[str, Any]
Call = Callable[[ObjectClient], Coroutine[Any, Any, Obj]]
QUIET = pytest.mark.fakeapi(nodes=0, components="")


def cm(name: str, **extra: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default"}, **extra}


@QUIET
async def test_writes_and_reads_are_the_apis(fakeapi_cluster: FakeapiCluster) -> None:
    async with RemoteClient.from_kubeconfig(fakeapi_cluster.kubeconfig) as api:
        made = await api.create(CM, cm("a", data={"k": "1"}))
        assert await api.get(CM, "a", "default") == made
        await api.create(CM, {**cm("b"), "metadata": {"name": "b", "labels": {"app": "x"}}},
                         "default")
        assert [o["metadata"]["name"] for o in await api.list(CM, "default")] == ["a", "b"]
        [b] = await api.list(CM, label_selector="app=x")
        assert (b["kind"], b["metadata"]["namespace"]) == ("ConfigMap", "default")
        assert (await api.update(CM, {**made, "data": {"k": "2"}}))["data"] == {"k": "2"}
        for patch_type, patch, data in [
            ("merge", {"data": {"m": "1"}}, {"k": "2", "m": "1"}),
            ("strategic", {"data": {"s": "1"}}, {"k": "2", "m": "1", "s": "1"}),
            ("json", [{"op": "remove", "path": "/data/m"}], {"k": "2", "s": "1"}),
            ("apply", cm("a", data={"k": "3"}), {"k": "3", "s": "1"}),
        ]:
            patched = await api.patch(CM, "a", patch, namespace="default",
                                      patch_type=patch_type, force=patch_type == "apply")
            assert patched["data"] == data, patch_type
        managers = {m["manager"] for m in patched["metadata"]["managedFields"]}
        assert "fakeapi" in managers  # the apply's field manager

        node = await api.create(NODES.resource_id, {"metadata": {"name": "n1"},
                                                    "spec": {"unschedulable": True}})
        status = await api.update(NODES.resource_id, {
            **node, "spec": {}, "status": {"capacity": {"cpu": "4"}}}, subresource="status")
        assert status["status"]["capacity"] == {"cpu": "4"}
        assert status["spec"] == {"unschedulable": True}  # a status write leaves the spec

        await api.delete(CM, "a", "default", preconditions={"uid": made["metadata"]["uid"]})
        with pytest.raises(ApiError) as gone:
            await api.get(CM, "a", "default")
        assert gone.value.code == 404
    actors = {e.actor for e in fakeapi_cluster.events(fakeapi_cluster.ready_revision)}
    assert actors == {"kubernetes-admin"}


@QUIET
@pytest.mark.parametrize(("setup", "call"), [
    ([], lambda c: c.get(CM, "nope", "default")),
    ([cm("dup")], lambda c: c.create(CM, cm("dup"))),
    ([cm("stale")], lambda c: c.update(CM, {**cm("stale"), "metadata": {
        "name": "stale", "namespace": "default", "resourceVersion": "1"}})),
    ([], lambda c: c.create(CM, cm("Not_A_Name"))),
    ([], lambda c: c.delete(CM, "nope", "default")),
    ([cm("kept")], lambda c: c.delete(CM, "kept", "default", preconditions={"uid": "other"})),
    ([], lambda c: c.get("widgets.example.com", "w")),
], ids=["not found", "already exists", "conflict", "invalid", "delete not found",
        "precondition", "unknown resource"])
async def test_an_error_is_the_one_the_in_process_client_raises(
        fakeapi_cluster: FakeapiCluster, setup: list[Obj], call: Call) -> None:
    local = fakeapi_cluster.plane.cluster.client("kubernetes-admin")
    async with RemoteClient.from_kubeconfig(fakeapi_cluster.kubeconfig) as api:
        for obj in setup:
            await api.create(CM, obj)
        with pytest.raises(ApiError) as remote:
            await call(api)
    with pytest.raises(ApiError) as in_process:
        fakeapi_cluster.call(call(local))
    assert remote.value.to_status() == in_process.value.to_status()


def _as_files(kubeconfig: Path, folder: Path) -> Path:
    """The kubeconfig with its CA, certificate and key in files beside it (relative paths)."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    for entry, field, file in ((cluster, "certificate-authority", "ca.crt"),
                               (user, "client-certificate", "admin.crt"),
                               (user, "client-key", "admin.key")):
        (folder / file).write_bytes(base64.b64decode(entry.pop(f"{field}-data")))
        entry[field] = file
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


def _insecure(kubeconfig: Path, folder: Path) -> Path:
    """The kubeconfig without its CA, skipping verification."""
    config = yaml.safe_load(kubeconfig.read_text())
    cluster = config["clusters"][0]["cluster"]
    del cluster["certificate-authority-data"]
    cluster["insecure-skip-tls-verify"] = True
    path = folder / "kubeconfig"
    path.write_text(yaml.safe_dump(config))
    return path


@QUIET
@pytest.mark.parametrize("variant", [lambda k, d: k, _as_files, _insecure],
                         ids=["inline", "files", "insecure-skip-tls-verify"])
async def test_the_kubeconfigs_credentials_inline_or_in_files(
        fakeapi_cluster: FakeapiCluster, tmp_path: Path,
        variant: Callable[[Path, Path], Path]) -> None:
    async with RemoteClient.from_kubeconfig(variant(fakeapi_cluster.kubeconfig, tmp_path)) as api:
        assert (await api.get("namespaces", "default"))["metadata"]["name"] == "default"


@QUIET
@pytest.mark.parametrize(("server", "why"), [
    ("https://127.0.0.1:1", "Cannot connect to host 127.0.0.1:1"),
    (None, "certificate verify failed"),  # the server's CA is not the system's
], ids=["nothing listening", "an unknown CA"])
async def test_a_server_it_cannot_reach_or_verify_is_unreachable(
        fakeapi_cluster: FakeapiCluster, server: str | None, why: str) -> None:
    url = server or fakeapi_cluster.url
    async with RemoteClient(server=url, ssl_context=ssl.create_default_context()) as api:
        with pytest.raises(Unreachable) as e:
            await api.get("namespaces", "default")
    assert str(e.value).startswith(f"cannot reach the API server at {url}: ")
    assert why in str(e.value)
