"""Device health and faults through kubectl v1.37: `kubectl apply` of a DeviceFault turns the
pod's allocatedResourcesStatus Unhealthy with the message, `kubectl delete` heals it; the
fault kinds are in discovery, `kubectl get` columns and `kubectl explain`; a bad fault is
refused with the field named; deleting the pod removes its files (the node lifecycle and a
stopped stream's timeout run on the virtual clock: tests/kubelet_emu)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.support.demos import manifest
from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll

SCENARIO = {"name": "faults", "manifest": [
    {"kind": "ResourceClaim", "name": "gpu-claim", "requests": [{"name": "gpu"}]},
    {"kind": "Pod", "name": "pod0", "claims": [{"name": "gpu", "claim": "gpu-claim"}],
     "containers": ["ctr0"]}]}
FAULT: dict[str, Any] = {
    "apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
    "metadata": {"name": "gpu-0-ecc"},
    "spec": {"nodeName": "worker-0", "driver": "gpu.example.com", "device": "gpu-0",
             "message": "ECC error count exceeded threshold"}}


def fault_for(device: str) -> dict[str, Any]:
    """The fault, for the device the scheduler allocated."""
    return {**FAULT, "metadata": {"name": f"{device}-ecc"},
            "spec": {**FAULT["spec"], "device": device}}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_server(tmp_path_factory.mktemp("faults"), "--nodes", "1")
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def k(kubectl_binary: str, srv: ServerProcess) -> Kubectl:
    return Kubectl(kubectl_binary, srv.kubeconfig)


def health(k: Kubectl) -> list[dict[str, Any]]:
    pod = json.loads(k("get", "pod", "pod0", "-n", "faults", "-o", "json"))
    return pod["status"]["containerStatuses"][0].get("allocatedResourcesStatus") or []


def wait_health(k: Kubectl, want: str, timeout: float = 30) -> list[dict[str, Any]]:
    """The pod's device health, once it is `want`."""

    def reached(got: list[dict[str, Any]]) -> bool:
        return bool(got) and got[0]["resources"][0]["health"] == want

    return poll(lambda: health(k), until=reached, timeout=timeout, interval=0.1,
                what=f"the pod's device health {want}")


def test_a_device_fault_shows_in_the_pod_and_deleting_it_heals(
        k: Kubectl, srv: ServerProcess) -> None:
    k("wait", "--for=create", "node/worker-0", "--timeout=30s")  # registers after the ready line
    k("wait", "--for=condition=Ready", "node/worker-0", "--timeout=30s")
    k("apply", "-f", "-", input=yaml.safe_dump_all(manifest(SCENARIO)))
    k("wait", "--for=condition=Ready", "pod/pod0", "-n", "faults", "--timeout=60s")
    [result] = json.loads(k("get", "resourceclaim", "gpu-claim", "-n", "faults", "-o", "json"))[
        "status"]["allocation"]["devices"]["results"]  # the scheduler's pick
    device = result["device"]
    assert (result["driver"], result["pool"]) == ("gpu.example.com", "worker-0")
    assert wait_health(k, "Healthy") == [{"name": "claim:gpu", "resources": [
        {"resourceID": f"gpu.example.com/worker-0/{device}", "health": "Healthy"}]}]

    k("apply", "-f", "-", input=yaml.safe_dump(fault_for(device)))
    [entry] = wait_health(k, "Unhealthy")
    assert entry["resources"][0]["message"] == "ECC error count exceeded threshold"
    table = k("get", "devicefaults").splitlines()
    assert table[0].split() == ["NAME", "NODE", "DRIVER", "DEVICE", "MODE", "AGE"]
    assert table[1].split()[:5] == [f"{device}-ecc", "worker-0", "gpu.example.com", device,
                                    "Unhealthy"]
    assert f"{device}-ecc" in k("get", "faults")  # the kinds' category

    k("delete", "devicefault", f"{device}-ecc")
    assert "message" not in wait_health(k, "Healthy")[0]["resources"][0]

    files = lambda: list((srv.data_dir / "nodes" / "worker-0").rglob(  # noqa: E731
        "*metadata*.json"))
    assert len(files()) == 2  # the metadata file and its CDI spec
    k("delete", "pod", "pod0", "-n", "faults", "--timeout=60s")
    assert files() == []


def test_the_fault_kinds_are_discoverable_and_explained(k: Kubectl) -> None:
    resources = k("api-resources", "--api-group=emulator.fakeapi.dev").splitlines()
    assert [line.split()[0] for line in resources[1:]] == ["clocks", "devicefaults",
                                                          "nodefaults"]  # and the Clock
    explained = k("explain", "devicefault.spec")
    assert "KIND:       DeviceFault" in explained
    for field in ("nodeName", "driver", "device", "mode", "message", "durationSeconds"):
        assert field in explained
    assert "StopHeartbeat" in k("explain", "nodefault.spec.mode")


def test_a_bad_fault_is_refused_with_the_field(k: Kubectl) -> None:
    bad = {**FAULT, "metadata": {"name": "bad"}, "spec": {**FAULT["spec"], "mode": "Melt"}}
    res = k.run("apply", "-f", "-", input=yaml.safe_dump(bad), check=False)
    assert res.returncode == 1
    assert 'spec.mode: Unsupported value: "Melt"' in res.stderr
    assert "bad" not in k("get", "devicefaults", "-o", "name")
