"""The dra-example-driver's demo scenarios through kubectl v1.37 against `fakeapi serve
--node-profile <the profile its README names>` (with the gates it names), with the assertions
of the driver's README and test/e2e (commit 31914ce): the `declare -x GPU_DEVICE_<id>="gpu-<n>"`
lines, distinct or shared GPUs, sharing strategies, DRA_ADMIN_ACCESS, NET_DEVICE rates,
consumed capacity and share ids, the device status data, the metadata files, the extended
resources' special claim, binding conditions, node-allocatable cpus, PodGroups' shared GPUs.

The whole control plane does its part, as on a cluster: the claim controller creates the
template claims (for pods and PodGroups), the deployment and replica-set controllers the
pods of Deployments, the scheduler allocates, reserves and binds, the driver's controller
satisfies binding conditions, the emulated kubelet prepares and runs. Each claim's
allocation is checked against tests/data/kubelet_emu/demos.yaml (its requests, consumed
capacity and share ids, admin access, the node selector, who it is reserved for) before the
README's checks. A profile that is not shipped is a file of tests/data/kubelet_emu/profiles
(the chart values the demo installs the driver with). The container logs are read with
`kubelet_emu.logs.read_log`, the log source of `kubectl logs`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.machinery.quantity import parse_quantity
from kubelet_emu.logs import read_log
from kubelet_emu.metadata import read_stream
from kubelet_emu.settings import DRIVER_MODES
from tests.support.demos import claim_driver, manifest
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll

DATA = ROOT / "tests" / "data" / "kubelet_emu"
EXAMPLES = ROOT / "tests" / "data" / "dra-example-driver" / "examples"
SCENARIOS = yaml.safe_load((DATA / "demos.yaml").read_text())
# the driver's e2e regexps (test/e2e/e2e_setup_test.go)
GPU_DEVICE = re.compile(r'(?m)^declare -x GPU_DEVICE_[A-Z0-9_]+="(gpu-.+)"$')
NET_RATE = re.compile(r'(?m)^declare -x NET_DEVICE_(\d+)_(INGRESS|EGRESS)_RATE="(\d+)"$')
NODE = "worker-0"
Obj = dict[str, Any]


# ----- what the scheduler and the claim controller did -------------------------------------


def get(k: Kubectl, *args: str) -> Obj:
    return json.loads(k("get", *args, "-o", "json"))


NODE_SELECTOR = {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}


def claim_name(k: Kubectl, ns: str, key: str) -> str:
    """The name of the claim a scenario key names: `claim/<name>`; `extended/<pod>` (the
    special claim of the pod's extended resources); `podgroup/<group>/<claim>` (the claim
    made for a PodGroup's claim); `<pod>/<pod claim>` (the claim made for the pod)."""
    owner, _, name = key.partition("/")
    if owner == "claim":
        return name
    if owner == "extended":
        return str(get(k, "pod", name, "-n", ns)["status"]["extendedResourceClaimStatus"][
            "resourceClaimName"])
    if owner == "podgroup":
        group, _, name = name.partition("/")
        statuses = get(k, "podgroup", group, "-n", ns)["status"]["resourceClaimStatuses"]
    else:
        statuses = get(k, "pod", owner, "-n", ns)["status"]["resourceClaimStatuses"]
    return str({s["name"]: s["resourceClaimName"] for s in statuses}[name])


def claim_of(k: Kubectl, ns: str, key: str) -> Obj:
    return get(k, "resourceclaim", claim_name(k, ns, key), "-n", ns)


def users_of(scenario: Obj, key: str) -> list[str]:
    """Who a claim is reserved for: the pod of a template or special claim, the PodGroup of
    a group's claim, every pod naming a claim."""
    owner, _, name = key.partition("/")
    if owner == "podgroup":
        return [name.partition("/")[0]]
    if owner != "claim":
        return [name if owner == "extended" else owner]
    return sorted(d["name"] for d in scenario["manifest"] if d["kind"] == "Pod"
                  and any(c.get("claim") == name for c in d.get("claims") or ()))


def amounts(capacity: dict[str, str]) -> dict[str, Fraction]:
    """Quantities by value (upstream writes a rounded-up amount in BinarySI: 10G is
    `9765625Ki`)."""
    return {name: parse_quantity(str(q)) for name, q in capacity.items()}


def check_allocations(k: Kubectl, scenario: Obj) -> None:
    ns = scenario["name"]
    share_ids: list[str] = []
    for key, wanted in scenario["allocated"].items():
        status = claim_of(k, ns, key)["status"]
        results = status["allocation"]["devices"]["results"]
        assert [[r["request"], *([amounts(r["consumedCapacity"])] if "consumedCapacity" in r
                                 else [])] for r in results] == [
            [w[0], *(amounts(c) for c in w[1:])] for w in wanted], (key, results)
        # a device that allows multiple allocations: each allocation has a share of its own
        assert all(bool(r.get("shareID")) == ("consumedCapacity" in r) for r in results)
        share_ids += [r["shareID"] for r in results if r.get("shareID")]
        assert all(r.get("adminAccess", False) == bool(scenario.get("admin_access"))
                   for r in results), results
        assert all(r["driver"] == claim_driver(scenario) and r["pool"] == NODE
                   for r in results), results
        assert status["allocation"]["nodeSelector"] == NODE_SELECTOR
        assert sorted(ref["name"] for ref in status["reservedFor"]) == users_of(scenario, key)
    assert len(set(share_ids)) == len(share_ids), share_ids  # distinct across claims too


# ----- the checks (after the driver's e2e helpers) ------------------------------------------


class Demo:
    """One scenario on its server: kubectl, the namespace, and the pods' logs."""

    def __init__(self, srv: ServerProcess, k: Kubectl, scenario: Obj) -> None:
        self.srv, self.k, self.scenario = srv, k, scenario
        self.ns: str = scenario["name"]

    def members(self, member: str) -> list[str]:
        """`pod/container`, or `label=value/container` for every pod with the label (the
        pods of a Deployment)."""
        pods, _, container = member.partition("/")
        if "=" not in pods:
            return [member]
        found = get(self.k, "pods", "-n", self.ns, "-l", pods)["items"]
        assert found, f"no pods with {pods}"
        return sorted(f"{p['metadata']['name']}/{container}" for p in found)

    def logs(self, member: str, timeout: float = 30) -> str:
        pod_name, _, container = member.partition("/")
        pod = get(self.k, "pod", pod_name, "-n", self.ns)
        text = poll(lambda: read_log(self.srv.data_dir / "nodes" / NODE, namespace=self.ns,
                                     pod=pod_name, uid=pod["metadata"]["uid"],
                                     container=container),
                    timeout=timeout, interval=0.1, what=f"a log of {self.ns}/{member}")
        assert text is not None
        return text

    def gpus(self, member: str) -> list[str]:
        return GPU_DEVICE.findall(self.logs(member))

    def pod(self, name: str) -> Obj:
        return get(self.k, "pod", name, "-n", self.ns)


def property_of(logs: str, gpu: str, name: str) -> str:
    ident = gpu.removeprefix("gpu-").replace("-", "_").upper()
    m = re.search(rf'(?m)^declare -x GPU_DEVICE_{ident}_{name}="(.+)"$', logs)
    return m.group(1) if m else ""


def check_gpus(d: Demo, check: Obj) -> None:
    for member in d.members(f"{check['pod']}/{check['container']}"):
        assert len(d.gpus(member)) == check["gpus"], d.logs(member)


def check_distinct(d: Demo, check: Obj) -> None:
    """No GPU seen by two entries (an entry: a pod's container, or a Deployment's pods)."""
    seen = [{g for m in d.members(entry) for g in d.gpus(m)} for entry in check["distinct"]]
    assert sum(len(s) for s in seen) == len(set().union(*seen)), seen


def check_shared(d: Demo, check: Obj) -> None:
    members = [m for entry in check["shared"] for m in d.members(entry)]
    gpus = [d.gpus(m) for m in members]
    assert all(len(g) == 1 for g in gpus) and len({g[0] for g in gpus}) == 1, gpus
    if "device" in check:
        assert re.fullmatch(check["device"], gpus[0][0]), gpus[0][0]
    for member in members:
        logs = d.logs(member)
        gpu = GPU_DEVICE.findall(logs)[0]
        assert property_of(logs, gpu, "SHARING_STRATEGY") == check["strategy"]
        for prop in ("TIMESLICE_INTERVAL", "PARTITION_COUNT"):
            if prop in check:
                assert property_of(logs, gpu, prop) == check[prop], (member, prop)


def check_admin_access(d: Demo, check: Obj) -> None:
    logs = d.logs(f"{check['pod']}/{check['container']}")
    assert re.search(rf'(?m)^declare -x DRA_ADMIN_ACCESS="{check["admin_access"]}"$', logs), logs


def check_lines(d: Demo, check: Obj) -> None:
    """The README's expected output, in this order (it abridges)."""
    logs = d.logs(f"{check['pod']}/{check['container']}")
    lines = iter(logs.splitlines())
    missing = [want for want in check["lines"] if want not in lines]
    assert missing == [], logs


def check_consumed(d: Demo, check: Obj) -> None:
    for member in check["consumed"]:
        logs = d.logs(member)
        gpu = GPU_DEVICE.findall(logs)[0]
        assert property_of(logs, gpu, "MEMORY") == check["MEMORY"]
        assert property_of(logs, gpu, "COMPUTE") == check["COMPUTE"]


def check_net_rates(d: Demo, check: Obj) -> None:
    rates = {(dev, dirn): v for dev, dirn, v in NET_RATE.findall(d.logs(check["net_rates"]))}
    assert rates == {("0", "INGRESS"): check["INGRESS"], ("0", "EGRESS"): check["EGRESS"]}


def check_device_status(d: Demo, check: Obj) -> None:
    [status] = d.pod(check["device_status"])["status"]["resourceClaimStatuses"]
    claim = get(d.k, "resourceclaim", status["resourceClaimName"], "-n", d.ns)
    for entry in claim["status"]["devices"]:
        assert entry["data"]["uuid"]["string"] and entry["data"]["model"]["string"]
        assert entry["data"]["driverVersion"]["version"]


def check_metadata(d: Demo, check: Obj) -> None:
    [status] = d.pod(check["metadata"])["status"]["resourceClaimStatuses"]
    host = (d.srv.data_dir / "nodes" / NODE / "var" / "lib" / "kubelet" / "plugins"
            / claim_driver(d.scenario) / "dra-device-metadata"
            / f"{d.ns}_{status['resourceClaimName']}" / check["request"] / "metadata.json")
    first = read_stream(host.read_text())[0]
    assert first["podClaimName"] == check["claim"]
    assert first["requests"][0]["name"] == check["full_request"]


def check_extended(d: Demo, check: Obj) -> None:
    """verifyExtendedResourceClaimStatus: the special claim is named, and a request mapping
    gives the container's extended resource a request."""
    status = d.pod(check["extended"])["status"]["extendedResourceClaimStatus"]
    assert status["resourceClaimName"]
    [mapping] = [m for m in status["requestMappings"] if m["containerName"] == check[
        "container"] and m["resourceName"] == check["resource"]]
    assert mapping["requestName"]


def check_slices(d: Demo, check: Obj) -> None:
    """verifyResourceSliceBindingConditions / verifyResourceSliceAllowMultipleAllocations:
    every device the driver publishes (listed with the field selector) has the fields."""
    listed = get(d.k, "resourceslices", "--field-selector",
                 f"spec.driver={claim_driver(d.scenario)}")["items"]
    devices = [dev for s in listed for dev in s["spec"].get("devices") or ()]
    assert devices, listed
    for dev in devices:
        for field in check["slices"]:
            assert dev.get(field), (dev["name"], field)
        for name in check.get("policies", ()):
            span = dev["capacity"][name]["requestPolicy"]["validRange"]
            assert span["min"] and span["step"] and span["max"], (dev["name"], name)


def check_binding(d: Demo, check: Obj) -> None:
    """The README's claim: allocated,reserved, results with the binding conditions, and each
    device's BindingConditions condition True."""
    name = claim_name(d.k, d.ns, check["binding"])
    assert d.k("get", "resourceclaim", name, "-n", d.ns).split()[-2] == "allocated,reserved"
    status = get(d.k, "resourceclaim", name, "-n", d.ns)["status"]
    results = status["allocation"]["devices"]["results"]
    assert all((r["bindingConditions"], r["bindingFailureConditions"]) == (
        ["BindingConditions"], ["BindingFailureConditions"]) for r in results), results
    entries = {(e["driver"], e["pool"], e["device"]): e for e in status["devices"]}
    for r in results:
        [cond] = entries[(r["driver"], r["pool"], r["device"])]["conditions"]
        assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
            "BindingConditions", "True", "Ready", "Device is ready")


def check_node_allocatable(d: Demo, check: Obj) -> None:
    """verifyNodeAllocatableResourceClaimStatus (in 1.37's shape: `mapping` entries) and
    getClaimDeviceShares: both requests share one device, each with a share id of its own."""
    pod_name, _, pod_claim = check["node_allocatable"].partition("/")
    name = claim_name(d.k, d.ns, check["node_allocatable"])
    [entry] = [s for s in d.pod(pod_name)["status"]["nodeAllocatableResourceClaimStatuses"]
               if s["resourceClaimName"] == name]
    assert check["container"] in entry["containers"]
    assert {m["name"]: parse_quantity(m["quantity"]) for m in entry["mapping"]} == amounts(
        check["resources"])
    results = get(d.k, "resourceclaim", name, "-n", d.ns)["status"]["allocation"]["devices"][
        "results"]
    assert len(results) == 2 and results[0]["device"] == results[1]["device"], results
    assert results[0]["shareID"] and results[1]["shareID"]
    assert results[0]["shareID"] != results[1]["shareID"]


def check_deployments(d: Demo, check: Obj) -> None:
    """The podgroup e2e's wait: each Deployment has observed its generation and has its
    replicas."""
    for name in check["deployments"]:
        dep = get(d.k, "deployment", name, "-n", d.ns)
        assert dep["status"]["observedGeneration"] == dep["metadata"]["generation"]
        assert dep["status"]["replicas"] == dep["spec"]["replicas"]


def check_not_served(d: Demo, check: Obj) -> None:
    """The demo's own API version, which a 1.37 API server doesn't serve."""
    api_version, kind = check["not_served"], check["kind"]
    res = d.k.run("apply", "-f", "-", check=False, input=yaml.safe_dump({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": "probe", "namespace": d.ns}, "spec": {}}))
    assert res.returncode != 0
    assert f'no matches for kind "{kind}" in version "{api_version}"' in res.stderr


CHECKS: dict[str, Callable[[Demo, Obj], None]] = {
    "gpus": check_gpus, "distinct": check_distinct, "shared": check_shared,
    "admin_access": check_admin_access, "lines": check_lines, "consumed": check_consumed,
    "net_rates": check_net_rates, "device_status": check_device_status,
    "metadata": check_metadata, "extended": check_extended, "slices": check_slices,
    "binding": check_binding, "node_allocatable": check_node_allocatable,
    "deployments": check_deployments, "not_served": check_not_served,
}
"""Each check of demos.yaml by the key that names it."""


def run_checks(srv: ServerProcess, k: Kubectl, scenario: Obj) -> None:
    demo = Demo(srv, k, scenario)
    for check in scenario["checks"]:
        [name] = [key for key in check if key in CHECKS]
        CHECKS[name](demo, check)


# ----- the servers and the test --------------------------------------------------------------


def server_key(scenario: Obj) -> tuple[str, str]:
    """(profile, feature gates) of the server a scenario runs on."""
    return scenario["profile"], scenario.get("gates", "")


def example_file(scenario: Obj) -> Path:
    """The example's manifest as the dra-example-driver ships it (tests/data, unchanged)."""
    name = scenario["name"]
    return EXAMPLES / name / f"{name}.yaml"


def manifest_text(scenario: Obj) -> str:
    """What the demo applies: the example's file as the driver ships it, unchanged (or, for a
    scenario marked `upstream_file: false`, its objects as the scenario describes them)."""
    if scenario.get("upstream_file", True):
        return example_file(scenario).read_text()
    return yaml.safe_dump_all(manifest(scenario))


def profile_drivers(profile: str) -> list[str]:
    """The names of a profile's drivers."""
    from kubelet_emu.profile import load_profile
    return [d.name for d in load_profile(profile_arg(profile)).drivers]


def profile_arg(profile: str) -> str:
    """A shipped profile's name, or the path of a test profile of that name."""
    path = DATA / "profiles" / f"{profile}.yaml"
    return str(path) if path.exists() else profile


ServerKey = tuple[str, str, str]
"""(profile, feature gates, --drivers)."""


@pytest.fixture(scope="module")
def servers(kubectl_binary: str, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[dict[ServerKey, tuple[ServerProcess, Kubectl]]]:
    """A server per profile, gates and driver mode, started when a scenario first needs it."""
    started: dict[ServerKey, tuple[ServerProcess, Kubectl]] = {}

    class Servers(dict[ServerKey, tuple[ServerProcess, Kubectl]]):
        def __missing__(self, key: ServerKey) -> tuple[ServerProcess, Kubectl]:
            profile, gates, drivers = key
            srv = start_server(tmp_path_factory.mktemp(profile), "--nodes", "1",
                               "--node-profile", profile_arg(profile), "--drivers", drivers,
                               *(("--feature-gates", gates) if gates else ()))
            started[key] = self[key] = (srv, Kubectl(kubectl_binary, srv.kubeconfig))
            return self[key]
    try:
        yield Servers()
    finally:
        for srv, _ in started.values():
            assert srv.stop() == 0


@pytest.mark.parametrize("drivers", DRIVER_MODES)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_the_example_drivers_demo_scenarios(
        servers: dict[ServerKey, tuple[ServerProcess, Kubectl]], scenario: Obj,
        drivers: str) -> None:
    """Each demo, with the built-in drivers in process and as gRPC plugins (the same
    outcome proves the two paths behave the same)."""
    srv, k = servers[(*server_key(scenario), drivers)]
    ns = scenario["name"]
    k("wait", "--for=condition=Ready", f"node/{NODE}", "--timeout=30s")
    if drivers == "grpc":  # every driver of the profile registered over gRPC
        sockets = srv.data_dir / "nodes" / NODE / "var" / "lib" / "kubelet" / "plugins_registry"
        want = sorted(f"{d}-reg.sock" for d in profile_drivers(scenario["profile"]))
        poll(lambda: sorted(p.name for p in sockets.iterdir()), what="the plugins' sockets",
             until=lambda names: names == want)
    k("apply", "-f", "-", input=manifest_text(scenario))
    for item in scenario["manifest"]:
        if item["kind"] == "Deployment":
            k("rollout", "status", f"deployment/{item['name']}", "-n", ns, "--timeout=60s")
    k("wait", "--for=condition=Ready", "pod", "--all", "-n", ns, "--timeout=60s")
    out = k("get", "pods", "-n", ns, "-o", "wide")
    assert all(line.split()[2] == "Running" and line.split()[6] == NODE
               for line in out.splitlines()[1:]), out
    check_allocations(k, scenario)
    run_checks(srv, k, scenario)
    # cleanup as the example's README does it (kubectl waits for the namespace, so for its
    # pods); the pods' claims are unprepared with them
    k("delete", "-f", "-", "--timeout=60s", "--ignore-not-found",
      input=manifest_text(scenario))
    leftovers = list((srv.data_dir / "nodes" / NODE).rglob("metadata.json"))
    assert [p for p in leftovers if f"{ns}_" in str(p)] == []
