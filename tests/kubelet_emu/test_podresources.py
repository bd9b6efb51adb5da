"""PodResources v1 of the emulated kubelets: the codec against hand-computed protobuf bytes
(upstream's field numbers), the List/Get/GetAllocatableResources answers for pods with DRA
claims, and a real gRPC client over the node's unix socket (when grpcio is installed)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import grpc
import pytest

from fakeapi.client import Client
from fakeapi.controlplane import ControlPlane
from kubelet_emu import podresources as pr
from kubelet_emu import sockets
from tests.support.emulated_nodes import CLAIMS, WITH_SCHEDULING, emulated_plane, kubelet_of

GPU = "gpu.example.com"


def test_the_codec_writes_upstreams_field_numbers() -> None:
    # ClaimResource{cdi_devices:[{name:"a"}], driver_name:"d", share_id:""}: field 1 (a
    # message), field 2 (a string), field 5 present though empty (proto3 optional)
    data = pr.encode("ClaimResource", {"cdi_devices": [{"name": "a"}], "driver_name": "d",
                                       "share_id": ""})
    assert data == bytes([0x0A, 3, 0x0A, 1, ord("a"), 0x12, 1, ord("d"), 0x2A, 0])
    # DynamicResource starts at field 2 (class_name, field 1, was removed upstream)
    assert pr.encode("DynamicResource", {"claim_name": "c"})[:1] == bytes([0x12])
    # repeated int64 are packed; negatives are ten-byte two's complement varints
    assert pr.encode("AllocatableResourcesResponse", {"cpu_ids": [1, 300]}) == bytes(
        [0x12, 3, 1, 0xAC, 0x02])
    assert pr.decode("NUMANode", pr.encode("NUMANode", {"ID": -1})) == {"ID": -1}


def test_decode_reads_what_encode_writes_and_skips_unknown_fields() -> None:
    msg = {"pod_resources": [{"name": "p", "namespace": "ns", "containers": [
        {"name": "c", "dynamic_resources": [{"claim_name": "g", "claim_namespace": "ns",
                                             "claim_resources": [{
                                                 "cdi_devices": [{"name": "k/x=y"}],
                                                 "driver_name": GPU, "pool_name": "w",
                                                 "device_name": "gpu-0"}]}]}]}]}
    data = pr.encode("ListPodResourcesResponse", msg)
    assert pr.decode("ListPodResourcesResponse", data) == msg
    unknown = bytes([0x78, 5]) + pr.encode("CDIDevice", {"name": "x"})  # field 15, varint
    assert pr.decode("CDIDevice", unknown) == {"name": "x"}
    with pytest.raises(ValueError):
        pr.decode("CDIDevice", bytes([0x0A, 5, 1]) + bytes([0x80]))


async def run_gpu_pod(plane: ControlPlane) -> None:
    """A pod with a claim for two GPUs, scheduled (the first two of the empty node's pool:
    gpu-0 and gpu-1) and running."""
    c: Client = plane.cluster.client("test-admin")
    await c.create(CLAIMS, {"metadata": {"name": "g", "namespace": "default"},
                            "spec": {"devices": {"requests": [
                                {"name": "gpu", "exactly": {"deviceClassName": GPU,
                                                            "count": 2}}]}}})
    await c.create("pods", {"metadata": {"name": "p", "namespace": "default"}, "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimName": "g"}],
        "containers": [{"name": "ctr0", "image": "x", "resources": {"claims": [{"name": "gpu"}]}},
                       {"name": "plain", "image": "x"}]}})
    await plane.settle()
    assert (await c.get("pods", "p", "default"))["status"]["phase"] == "Running"


def expected_dynamic(uid: str) -> list[dict[str, Any]]:
    return [{"claim_name": "g", "claim_namespace": "default", "claim_resources": [
        {"cdi_devices": [{"name": f"k8s.{GPU}/gpu=common"},
                         {"name": f"k8s.{GPU}/gpu={uid}-{dev}"},
                         {"name": f"{GPU}/metadata={uid}_gpu"}],
         "driver_name": GPU, "pool_name": "worker-0", "device_name": dev}
        for dev in ("gpu-0", "gpu-1")]}]


async def test_list_and_get_report_the_dra_devices(tmp_path: Path) -> None:
    async with emulated_plane(tmp_path, nodes=1, components=WITH_SCHEDULING) as plane:
        await run_gpu_pod(plane)
        kubelet = kubelet_of(plane)
        lister = pr.Lister(lambda: kubelet.pod_views("worker-0"), lambda: 4)
        uid = (await plane.cluster.client("a").get(CLAIMS, "g", "default"))["metadata"]["uid"]
        listed = lister.list({})
        assert listed == {"pod_resources": [{"name": "p", "namespace": "default", "containers": [
            {"name": "ctr0", "dynamic_resources": expected_dynamic(uid)}, {"name": "plain"}]}]}
        assert lister.get({"pod_name": "p", "pod_namespace": "default"}) == {
            "pod_resources": listed["pod_resources"][0]}
        with pytest.raises(pr.NotFound, match="pod q in namespace default not found"):
            lister.get({"pod_name": "q", "pod_namespace": "default"})
        assert lister.allocatable({}) == {"cpu_ids": [0, 1, 2, 3]}


@pytest.mark.parametrize("depth", [0, 8], ids=["short-path", "path-too-long-for-a-socket"])
async def test_a_grpc_client_lists_over_the_nodes_socket(depth: int) -> None:
    base = state = Path(tempfile.mkdtemp(prefix="pr-"))
    for i in range(depth):  # deep enough that the socket path can't be bound as it is
        state = state / f"deeper-folder-{i}"
    async with emulated_plane(state, nodes=1, components=WITH_SCHEDULING) as plane:
        await run_gpu_pod(plane)
        socket = state / "nodes" / "worker-0" / pr.SOCKET
        assert socket.exists()
        assert socket.is_symlink() is (len(str(socket)) > sockets.MAX_SOCKET_PATH)
        target = os.path.realpath(socket)
        async with grpc.aio.insecure_channel(f"unix://{target}") as channel:
            def call(method: str, req: str, resp: str) -> Any:
                return channel.unary_unary(
                    f"/{pr.SERVICE}/{method}",
                    request_serializer=lambda m: pr.encode(req, m),
                    response_deserializer=lambda b: pr.decode(resp, b))
            listed = await call("List", "ListPodResourcesRequest",
                                "ListPodResourcesResponse")({})
            [pod] = listed["pod_resources"]
            assert (pod["name"], pod["namespace"]) == ("p", "default")
            assert [d["device_name"] for d in pod["containers"][0]["dynamic_resources"][0][
                "claim_resources"]] == ["gpu-0", "gpu-1"]
            got = await call("Get", "GetPodResourcesRequest", "GetPodResourcesResponse")(
                {"pod_name": "p", "pod_namespace": "default"})
            assert got["pod_resources"] == pod
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await call("Get", "GetPodResourcesRequest", "GetPodResourcesResponse")(
                    {"pod_name": "nope", "pod_namespace": "default"})
            assert e.value.code() == grpc.StatusCode.NOT_FOUND
            cpus = await call("GetAllocatableResources", "AllocatableResourcesRequest",
                              "AllocatableResourcesResponse")({})
            assert cpus["cpu_ids"] == list(range(64))
    # the server stopped with the plane: a stand-in socket bound elsewhere is gone too
    assert not os.path.exists(target) or target == str(socket)
    assert not socket.is_symlink()
    shutil.rmtree(base)
