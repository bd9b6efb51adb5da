"""The dra-example-driver's demo scenarios through kubectl v1.37 against `fakeapi serve
--node-profile <the profile its README names>`, with the assertions of the driver's README
and test/e2e (commit 31914ce): the `declare -x GPU_DEVICE_<id>="gpu-<n>"` lines, distinct or
shared GPUs, sharing strategies, DRA_ADMIN_ACCESS, NET_DEVICE rates, consumed capacity, the
device status data, the metadata files.

The whole control plane does its part, as on a cluster: the claim controller creates the
template claims, the scheduler allocates, reserves and binds, the emulated kubelet prepares
and runs. Each claim's allocation is checked against tests/data/kubelet_emu/demos.yaml (its
requests, consumed capacity and share ids, admin access, the node selector, who it is
reserved for) before the README's checks. The container logs are read with
`kubelet_emu.logs.read_log`, the log source of `kubectl logs`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest
import yaml

from fakeapi.validation.quantity import parse_quantity
from kubelet_emu.logs import read_log
from kubelet_emu.metadata import read_stream
from tests.conftest import ROOT, Kubectl, ServerProcess, start_server

SCENARIOS = yaml.safe_load((ROOT / "tests" / "data" / "kubelet_emu" / "demos.yaml").read_text())
DEMO = "export; trap 'exit 0' TERM; sleep 9999 & wait"
ADMIN_SCRIPT = """export
echo "=== DRA Admin Access Demo ==="
echo "DRA Admin Access: $DRA_ADMIN_ACCESS"
echo ""
echo "GPU Environment Variables:"
env | grep GPU_ | sort
echo ""
echo "=== Sleeping to allow inspection ==="
trap 'exit 0' TERM
sleep 9999 & wait
"""
# the driver's e2e regexps (test/e2e/e2e_setup_test.go)
GPU_DEVICE = re.compile(r'(?m)^declare -x GPU_DEVICE_[A-Z0-9_]+="(gpu-.+)"$')
NET_RATE = re.compile(r'(?m)^declare -x NET_DEVICE_(\d+)_(INGRESS|EGRESS)_RATE="(\d+)"$')
NODE = "worker-0"
Obj = dict[str, Any]


# ----- our manifests -----------------------------------------------------------------------


def _requests(spec: Obj, device_class: str) -> list[Obj]:
    out = []
    for r in spec["requests"]:
        if "firstAvailable" in r:
            out.append({"name": r["name"], "firstAvailable": [
                {"name": s["name"], "deviceClassName": device_class,
                 **({"selectors": [{"cel": {"expression": e}} for e in s["selectors"]]}
                    if s.get("selectors") else {})} for s in r["firstAvailable"]]})
            continue
        exactly: Obj = {"deviceClassName": device_class}
        for key in ("count", "allocationMode", "adminAccess"):
            if key in r:
                exactly[key] = r[key]
        if r.get("selectors"):
            exactly["selectors"] = [{"cel": {"expression": e}} for e in r["selectors"]]
        if r.get("capacity"):
            exactly["capacity"] = {"requests": r["capacity"]}
        out.append({"name": r["name"], "exactly": exactly})
    return out


def _claim_spec(item: Obj, driver: str) -> Obj:
    devices: Obj = {"requests": _requests(item, item.get("class", driver))}
    if item.get("config"):
        devices["config"] = [{"requests": c["requests"], "opaque": {
            "driver": driver, "parameters": {
                "apiVersion": "gpu.resource.example.com/v1alpha1", "kind": "GpuConfig",
                "sharing": c["sharing"]}}} for c in item["config"]]
    return {"devices": devices}


def _container(entry: str, claim: str, script: str) -> Obj:
    name, _, request = entry.partition("/")
    ref: Obj = {"name": claim, **({"request": request} if request else {})}
    return {"name": name, "image": "ubuntu:22.04", "command": ["bash", "-c"], "args": [script],
            "resources": {"claims": [ref]}}


def manifest(scenario: Obj) -> list[Obj]:
    """The scenario's objects, as the example's YAML has them."""
    ns = scenario["name"]
    driver = scenario.get("driver", "gpu.example.com")
    labels = {"resource.kubernetes.io/admin-access": "true"} if scenario.get(
        "admin_namespace") else {}
    docs: list[Obj] = [{"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": ns, **({"labels": labels} if labels else {})}}]
    for item in scenario["manifest"]:
        meta = {"name": item["name"], "namespace": ns}
        if item["kind"] == "ResourceClaimTemplate":
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                         "metadata": meta, "spec": {"spec": _claim_spec(item, driver)}})
        elif item["kind"] == "ResourceClaim":
            docs.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                         "metadata": meta, "spec": _claim_spec(item, driver)})
        else:
            [pc] = item["claims"]
            script = ADMIN_SCRIPT if item.get("script") == "admin" else DEMO
            spec: Obj = {
                "containers": [_container(c, pc["name"], script) for c in item["containers"]],
                "resourceClaims": [{"name": pc["name"], **(
                    {"resourceClaimTemplateName": pc["template"]} if "template" in pc
                    else {"resourceClaimName": pc["claim"]})}]}
            if item.get("init"):
                spec["initContainers"] = [_container(c, pc["name"], "export")
                                          for c in item["init"]]
            docs.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {**meta, "labels": {"app": "pod"}}, "spec": spec})
    return docs


# ----- what the scheduler and the claim controller did -------------------------------------


def get(k: Kubectl, *args: str) -> Obj:
    return json.loads(k("get", *args, "-o", "json"))


NODE_SELECTOR = {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}


def claim_status(k: Kubectl, ns: str, key: str) -> Obj:
    """The status of the claim a scenario key names: `claim/<name>`, or `<pod>/<pod claim>`
    (the claim generated for the pod, as its status records)."""
    owner, _, name = key.partition("/")
    if owner != "claim":
        pod = get(k, "pod", owner, "-n", ns)
        name = {s["name"]: s["resourceClaimName"]
                for s in pod["status"]["resourceClaimStatuses"]}[name]
    return dict(get(k, "resourceclaim", name, "-n", ns)["status"])


def users_of(scenario: Obj, key: str) -> list[str]:
    """The pods a claim is for: the template claim's pod, or every pod naming the claim."""
    owner, _, name = key.partition("/")
    if owner != "claim":
        return [owner]
    return sorted(d["name"] for d in scenario["manifest"] if d["kind"] == "Pod"
                  and any(c.get("claim") == name for c in d["claims"]))


def amounts(capacity: dict[str, str]) -> dict[str, Fraction]:
    """Quantities by value (upstream writes a rounded-up amount in BinarySI: 10G is
    `9765625Ki`)."""
    return {name: parse_quantity(str(q)) for name, q in capacity.items()}


def check_allocations(k: Kubectl, scenario: Obj) -> None:
    ns = scenario["name"]
    for key, wanted in scenario["allocated"].items():
        status = claim_status(k, ns, key)
        results = status["allocation"]["devices"]["results"]
        assert [[r["request"], *([amounts(r["consumedCapacity"])] if "consumedCapacity" in r
                                 else [])] for r in results] == [
            [w[0], *(amounts(c) for c in w[1:])] for w in wanted], (key, results)
        # a device that allows multiple allocations: each allocation has a share of its own
        assert all(bool(r.get("shareID")) == ("consumedCapacity" in r) for r in results)
        assert len({r.get("shareID") for r in results if r.get("shareID")}) == len(
            [r for r in results if r.get("shareID")])
        assert all(r.get("adminAccess", False) == bool(scenario.get("admin_access"))
                   for r in results), results
        assert all(r["driver"] == claim_driver(scenario) and r["pool"] == NODE
                   for r in results), results
        assert status["allocation"]["nodeSelector"] == NODE_SELECTOR
        assert sorted(ref["name"] for ref in status["reservedFor"]) == users_of(scenario, key)


def claim_driver(scenario: Obj) -> str:
    return str(scenario.get("driver", "gpu.example.com"))


# ----- the checks (after the driver's e2e helpers) ------------------------------------------


def logs_of(srv: ServerProcess, k: Kubectl, ns: str, member: str, timeout: float = 30) -> str:
    pod_name, _, container = member.partition("/")
    pod = get(k, "pod", pod_name, "-n", ns)
    deadline = time.monotonic() + timeout
    while True:
        text = read_log(srv.data_dir / "nodes" / NODE, namespace=ns, pod=pod_name,
                        uid=pod["metadata"]["uid"], container=container)
        if text or time.monotonic() > deadline:
            assert text, f"no log for {ns}/{member}"
            return text
        time.sleep(0.1)


def property_of(logs: str, gpu: str, name: str) -> str:
    ident = gpu.removeprefix("gpu-").replace("-", "_").upper()
    m = re.search(rf'(?m)^declare -x GPU_DEVICE_{ident}_{name}="(.+)"$', logs)
    return m.group(1) if m else ""


def run_checks(srv: ServerProcess, k: Kubectl, scenario: Obj) -> None:
    ns = scenario["name"]
    for check in scenario["checks"]:
        if "gpus" in check:
            logs = logs_of(srv, k, ns, f"{check['pod']}/{check['container']}")
            assert len(GPU_DEVICE.findall(logs)) == check["gpus"], logs
        if "distinct" in check:
            seen = [GPU_DEVICE.findall(logs_of(srv, k, ns, m)) for m in check["distinct"]]
            flat = [g for gpus in seen for g in gpus]
            assert len(flat) == len(set(flat)), seen
        if "shared" in check:
            gpus = [GPU_DEVICE.findall(logs_of(srv, k, ns, m)) for m in check["shared"]]
            assert all(len(g) == 1 for g in gpus) and len({g[0] for g in gpus}) == 1, gpus
            for member in check["shared"]:
                logs = logs_of(srv, k, ns, member)
                gpu = GPU_DEVICE.findall(logs)[0]
                assert property_of(logs, gpu, "SHARING_STRATEGY") == check["strategy"]
                for prop in ("TIMESLICE_INTERVAL", "PARTITION_COUNT"):
                    if prop in check:
                        assert property_of(logs, gpu, prop) == check[prop], (member, prop)
        if "admin_access" in check:
            logs = logs_of(srv, k, ns, f"{check['pod']}/{check['container']}")
            assert re.search(rf'(?m)^declare -x DRA_ADMIN_ACCESS="{check["admin_access"]}"$',
                             logs), logs
        if "lines" in check:  # the README's expected output, in this order (it abridges)
            logs = logs_of(srv, k, ns, f"{check['pod']}/{check['container']}")
            lines = iter(logs.splitlines())
            missing = [want for want in check["lines"] if want not in lines]
            assert missing == [], logs
        if "consumed" in check:
            for member in check["consumed"]:
                logs = logs_of(srv, k, ns, member)
                gpu = GPU_DEVICE.findall(logs)[0]
                assert property_of(logs, gpu, "MEMORY") == check["MEMORY"]
                assert property_of(logs, gpu, "COMPUTE") == check["COMPUTE"]
        if "net_rates" in check:
            rates = {(d, dirn): v for d, dirn, v in NET_RATE.findall(
                logs_of(srv, k, ns, check["net_rates"]))}
            assert rates == {("0", "INGRESS"): check["INGRESS"], ("0", "EGRESS"): check["EGRESS"]}
        if "device_status" in check:
            pod = get(k, "pod", check["device_status"], "-n", ns)
            [status] = pod["status"]["resourceClaimStatuses"]
            claim = get(k, "resourceclaim", status["resourceClaimName"], "-n", ns)
            for d in claim["status"]["devices"]:
                assert d["data"]["uuid"]["string"] and d["data"]["model"]["string"]
                assert d["data"]["driverVersion"]["version"]
        if "metadata" in check:
            pod = get(k, "pod", check["metadata"], "-n", ns)
            [status] = pod["status"]["resourceClaimStatuses"]
            host = (srv.data_dir / "nodes" / NODE / "var" / "lib" / "kubelet" / "plugins"
                    / claim_driver(scenario) / "dra-device-metadata"
                    / f"{ns}_{status['resourceClaimName']}" / check["request"] / "metadata.json")
            first = read_stream(host.read_text())[0]
            assert first["podClaimName"] == check["claim"]
            assert first["requests"][0]["name"] == check["full_request"]


# ----- the servers and the test --------------------------------------------------------------


@pytest.fixture(scope="module")
def servers(kubectl_binary: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[dict[str, tuple[ServerProcess, Kubectl]]]:
    started: dict[str, tuple[ServerProcess, Kubectl]] = {}
    try:
        for profile in sorted({s["profile"] for s in SCENARIOS}):
            srv = start_server(tmp_path_factory.mktemp(profile), "--nodes", "1",
                               "--node-profile", profile)
            started[profile] = (srv, Kubectl(kubectl_binary, srv.kubeconfig))
        yield started
    finally:
        for srv, _ in started.values():
            assert srv.stop() == 0


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_the_example_drivers_demo_scenarios(
        servers: dict[str, tuple[ServerProcess, Kubectl]], scenario: Obj) -> None:
    srv, k = servers[scenario["profile"]]
    ns = scenario["name"]
    k("wait", "--for=condition=Ready", f"node/{NODE}", "--timeout=30s")
    k("apply", "-f", "-", input=yaml.safe_dump_all(manifest(scenario)))
    k("wait", "--for=condition=Ready", "pod", "--all", "-n", ns, "--timeout=60s")
    out = k("get", "pods", "-n", ns, "-o", "wide")
    assert all(line.split()[2] == "Running" and line.split()[6] == NODE
               for line in out.splitlines()[1:]), out
    check_allocations(k, scenario)
    run_checks(srv, k, scenario)
    # cleanup as the example's README does it; the pods' claims are unprepared with them
    k("delete", "-f", "-", "--timeout=60s", "--ignore-not-found",
      input=yaml.safe_dump_all(manifest(scenario)))
    leftovers = list((srv.data_dir / "nodes" / NODE).rglob("metadata.json"))
    assert [p for p in leftovers if f"{ns}_" in str(p)] == []
