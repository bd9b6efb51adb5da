"""A driver author's test with the fakeapi pytest plugin: a claim gets a GPU, a DeviceFault
shows in the pod's allocatedResourcesStatus, a device that stops reporting is Unknown after
its health timeout, and the whole run matches a golden log."""

from typing import Any

import pytest
from kubernetes import client, utils

from fakeapi.testing import FakeapiCluster, assert_matches_golden

DRIVER = "gpu.example.com"
FAULTS = ("emulator.fakeapi.dev", "v1alpha1", "devicefaults")

TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "single-gpu"},
    "spec": {"spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}},
}
POD = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod0"},
    "spec": {
        "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
        "containers": [{
            "name": "ctr0", "image": "ubuntu:24.04",
            "command": ["bash", "-c", "export; trap 'exit 0' TERM; sleep 9999 & wait"],
            "resources": {"claims": [{"name": "gpu"}]}}],
    },
}


def device_fault(name: str, device: str, **spec: Any) -> dict[str, Any]:
    """A DeviceFault on `device` of worker-0 (the emulator's fault injection)."""
    return {"apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
            "metadata": {"name": name},
            "spec": {"nodeName": "worker-0", "driver": DRIVER, "device": device, **spec}}


def read_pod(core: client.CoreV1Api) -> dict[str, Any]:
    """pod0 as the API serves it (the fields named as in YAML)."""
    return core.read_namespaced_pod("pod0", "default").to_dict(serialize=True)


def device_health(core: client.CoreV1Api) -> dict[str, tuple[str, str | None]]:
    """The (health, message) of each device pod0's container uses, by resource ID."""
    [container] = read_pod(core)["status"]["containerStatuses"]
    return {r["resourceID"]: (r["health"], r["message"])
            for claim in container["allocatedResourcesStatus"] for r in claim["resources"]}


@pytest.mark.fakeapi(node_profile="gpu", nodes=1)
def test_a_claim_gets_a_gpu_whose_health_shows_in_the_pod(
        fakeapi_cluster: FakeapiCluster) -> None:
    core = client.CoreV1Api(fakeapi_cluster.client)
    resource = client.ResourceV1Api(fakeapi_cluster.client)
    faults = client.CustomObjectsApi(fakeapi_cluster.client)

    utils.create_from_dict(fakeapi_cluster.client, TEMPLATE)
    utils.create_from_dict(fakeapi_cluster.client, POD)
    fakeapi_cluster.settle()  # the claim is made, allocated and reserved, the pod bound

    pod = read_pod(core)
    assert pod["status"]["phase"] == "Running"
    [claim_status] = pod["status"]["resourceClaimStatuses"]
    claim = resource.read_namespaced_resource_claim(claim_status["resourceClaimName"],
                                                    "default").to_dict(serialize=True)
    [result] = claim["status"]["allocation"]["devices"]["results"]
    assert result["driver"] == DRIVER
    device = result["device"]
    assert f'declare -x GPU_DEVICE_0="{device}"' in core.read_namespaced_pod_log(
        "pod0", "default")
    gpu = f"{DRIVER}/{result['pool']}/{device}"
    assert device_health(core) == {gpu: ("Healthy", None)}

    faults.create_cluster_custom_object(*FAULTS, device_fault(
        "ecc", device, message="ECC error count exceeded threshold"))
    fakeapi_cluster.settle()
    assert device_health(core) == {gpu: ("Unhealthy", "ECC error count exceeded threshold")}
    faults.delete_cluster_custom_object(*FAULTS, "ecc")
    fakeapi_cluster.settle()
    assert device_health(core) == {gpu: ("Healthy", None)}

    faults.create_cluster_custom_object(*FAULTS, device_fault(
        "quiet", device, mode="StopReporting"))
    fakeapi_cluster.advance("30s")  # the driver's health timeout: 30 s without a report
    assert device_health(core) == {gpu: ("Unknown", None)}

    assert_matches_golden(fakeapi_cluster, "golden/test_example.yaml",
                          ignore=["metadata.managedFields"])
