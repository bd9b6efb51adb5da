"""A clock users can drive, through kubectl v1.37 and `fakeapi clock` against real
`fakeapi serve --clock virtual` processes: emulated time stands still until `fakeapi clock
advance` (or a ClockAdvance POSTed with kubectl) moves it, so the 30 s health timeout, a
300 s NoExecute toleration, the 10 min binding-condition timeout and the one-hour cleanup of
ResourcePoolStatusRequests pass at once, each timer at its own time; `virtual:auto` moves by
itself while the cluster is idle; an advance is an event in the log by its caller; HTTP
clients don't hang on a clock that stands still (what waits on it is the emulated time a
request asks for, e.g. a watch's timeoutSeconds); bad durations, a real clock and users that
aren't cluster-admin are refused, and nothing moves."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakeapi.cluster import Cluster, ClusterConfig
from fakeapi.machinery.clock import VirtualClock
from fakeapi.machinery.timestamps import parse_time
from tests.support.kubectl import Kubectl, token_kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll

ADVANCE = "/apis/emulator.fakeapi.dev/v1alpha1/clocks/cluster/advance"
GPU = "gpu.example.com"
TOKENS = 'alice-token,alice,1001,"dev"\ncarol-token,carol,1002\n'
UNREACHABLE = "node.kubernetes.io/unreachable"
EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
"""Where a virtual clock starts."""


@dataclasses.dataclass
class Cli:
    """kubectl and `fakeapi clock` for one server."""

    k: Kubectl
    srv: ServerProcess

    def clock(self, *args: str, kubeconfig: Path | None = None,
              check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run `fakeapi clock ARGS --kubeconfig K`."""
        res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "clock", *args,
                              "--kubeconfig", str(kubeconfig or self.srv.kubeconfig)],
                             capture_output=True, text=True, cwd=ROOT, timeout=120)
        if check:
            assert res.returncode == 0, res.stderr
        return res

    def advance(self, duration: str) -> str:
        """`fakeapi clock advance DURATION`; its line."""
        return self.clock("advance", duration).stdout

    def now(self) -> str:
        """The server's clock now (`fakeapi clock show -o json`)."""
        return str(json.loads(self.clock("show", "-o", "json").stdout)["now"])

    def json(self, *args: str) -> Any:
        return json.loads(self.k("get", *args, "-o", "json"))


Start = Callable[..., Cli]


@pytest.fixture
def start(kubectl_binary: str, tmp_path: Path) -> Iterator[Start]:
    """Start servers (`--clock virtual` unless told otherwise), each stopped at the end."""
    started: list[ServerProcess] = []

    def run(*args: str, clock: str = "virtual") -> Cli:
        data = tmp_path / f"server-{len(started)}"
        srv = start_server(data, "--clock", clock, *args)
        started.append(srv)
        return Cli(Kubectl(kubectl_binary, srv.kubeconfig), srv)

    yield run
    for srv in started:
        assert srv.stop() == 0


def gpu_pod(cli: Cli, name: str = "p", **pod_spec: Any) -> dict[str, Any]:
    """A pod whose claim has one GPU, Ready on worker-0; the claim's allocation result."""
    cli.k("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": f"{name}-gpu", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu",
                                            "exactly": {"deviceClassName": GPU}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
         "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10",
                                  "resources": {"claims": [{"name": "gpu"}]}}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}],
                  **pod_spec}}]))
    cli.k("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s")
    [result] = cli.json("resourceclaim", f"{name}-gpu")["status"]["allocation"]["devices"][
        "results"]
    return dict(result)


def health(cli: Cli, name: str = "p") -> str:
    status = cli.json("pod", name)["status"]["containerStatuses"][0]
    return str(status["allocatedResourcesStatus"][0]["resources"][0]["health"])


def test_the_health_timeout_passes_at_once(start: Start) -> None:
    cli = start("--nodes", "1")
    device = gpu_pod(cli)["device"]
    assert cli.now() == "2026-01-01T00:00:00.000000Z"
    poll(lambda: health(cli), until=lambda h: h == "Healthy", what="a healthy device")
    cli.k("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
        "metadata": {"name": "quiet"},
        "spec": {"nodeName": "worker-0", "driver": GPU, "device": device,
                 "mode": "StopReporting"}}))
    assert cli.advance("25s") == "advanced 25s: now 2026-01-01T00:00:25.000000Z (virtual)\n"
    assert health(cli) == "Healthy"
    cli.advance("10s")
    assert health(cli) == "Unknown"  # 30 s without a health update from the driver


def test_a_node_fault_evicts_after_the_300s_toleration(start: Start) -> None:
    cli = start("--nodes", "1")
    gpu_pod(cli)
    tolerations = {(t["key"], t.get("tolerationSeconds"))
                   for t in cli.json("pod", "p")["spec"]["tolerations"]}
    assert (UNREACHABLE, 300) in tolerations  # upstream's DefaultTolerationSeconds
    cli.k("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "NodeFault",
        "metadata": {"name": "down"}, "spec": {"nodeName": "worker-0"}}))
    cli.advance("70s")  # past the node monitor's 50 s grace
    node = cli.json("node", "worker-0")
    [taint] = [t for t in node["spec"]["taints"] if t["effect"] == "NoExecute"]
    assert taint["key"] == UNREACHABLE
    added = taint["timeAdded"]  # RFC 3339 seconds: the eviction is due 300 s after it
    assert not cli.json("pod", "p")["metadata"].get("deletionTimestamp")
    due = _seconds(added) + 300 - _seconds(cli.now())
    cli.advance(f"{due - 1}s")
    assert not cli.json("pod", "p")["metadata"].get("deletionTimestamp")
    cli.advance("2s")
    evicted = cli.json("pod", "p")
    assert evicted["metadata"]["deletionTimestamp"]
    [target] = [c for c in evicted["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target["reason"] == "DeletionByTaintManager"


def _seconds(rfc3339: str) -> int:
    """Whole seconds since the virtual clock's start."""
    return int((parse_time(rfc3339) - EPOCH).total_seconds())


def test_the_binding_condition_timeout_passes_at_once(start: Start, tmp_path: Path) -> None:
    profile = tmp_path / "waiting-gpus.yaml"  # binding conditions nobody sets True
    profile.write_text(yaml.safe_dump({"name": "waiting-gpus", "drivers": [
        {"name": GPU, "type": "example-gpu", "count": 2, "bindingConditions": True}]}))
    cli = start("--nodes", "1", "--node-profile", str(profile))
    cli.k("wait", "--for=create", "deviceclass/gpu.example.com", "--timeout=30s")
    cli.k("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "gpu",
                                            "exactly": {"deviceClassName": GPU}}]}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
         "spec": {"containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]}}]))
    first = poll(lambda: cli.json("resourceclaim", "c").get("status", {}).get("allocation"),
                 what="the claim allocated")["allocationTimestamp"]
    cli.advance("9m59s")
    assert "nodeName" not in cli.json("pod", "p")["spec"]  # still waiting for the conditions
    assert "binding timeout" not in cli.k("get", "events", "--field-selector",
                                          "involvedObject.name=p")
    cli.advance("2s")
    events = cli.json("events", "--field-selector", "involvedObject.name=p")["items"]
    assert ["FailedScheduling", "binding timeout: the device binding conditions did not "
            "become true"] in [[e["reason"], e["message"]] for e in events]
    again = cli.json("resourceclaim", "c")["status"]["allocation"]["allocationTimestamp"]
    assert again > first  # deallocated, then allocated again by the retry


def test_a_completed_pool_status_request_is_cleaned_up_after_an_hour(start: Start) -> None:
    cli = start("--nodes", "1", "--feature-gates", "DRAResourcePoolStatus=true")
    cli.k("apply", "-f", str(ROOT / "tests" / "data" / "seeds" / "09-check-gpus-rpsr.yaml"))
    cli.k("wait", "--for=condition=Complete", "resourcepoolstatusrequest/check-gpus",
          "--timeout=30s")
    cli.advance("59m59s")
    assert "check-gpus" in cli.k("get", "resourcepoolstatusrequests")
    cli.advance("2s")
    res = cli.k.run("get", "resourcepoolstatusrequest/check-gpus", check=False)
    assert res.returncode == 1
    assert 'resourcepoolstatusrequests.resource.k8s.io "check-gpus" not found' in res.stderr


def test_virtual_auto_moves_by_itself_while_idle(start: Start) -> None:
    cli = start("--nodes", "1", clock="virtual:auto")
    first = cli.now()
    later = poll(cli.now, until=lambda now: now > first, what="the clock moving by itself")
    assert later > first
    assert json.loads(cli.clock("show", "-o", "json").stdout)["mode"] == "virtual:auto"
    device = gpu_pod(cli)["device"]
    cli.k("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "emulator.fakeapi.dev/v1alpha1", "kind": "DeviceFault",
        "metadata": {"name": "quiet"},
        "spec": {"nodeName": "worker-0", "driver": GPU, "device": device,
                 "mode": "StopReporting"}}))
    poll(lambda: health(cli), until=lambda h: h == "Unknown",
         what="the device Unknown with no advance")


def test_an_advance_is_an_event_in_the_log_by_its_caller(start: Start, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    cli = start("--nodes", "0", "--token-auth-file", str(tokens))
    cli.k("create", "clusterrolebinding", "carol-admin", "--clusterrole=cluster-admin",
          "--user=carol")
    cli.advance("5m")  # the admin client certificate: kubernetes-admin
    body = tmp_path / "advance.json"
    body.write_text(json.dumps({"apiVersion": "emulator.fakeapi.dev/v1alpha1",
                                "kind": "ClockAdvance", "duration": "1.5h"}))
    out = token_kubectl(cli.k, "carol-token")("create", "--raw", ADVANCE, "-f", str(body))
    assert json.loads(out)["status"] == "Success"
    assert cli.now() == "2026-01-01T01:35:00.000000Z"
    cli.srv.stop()
    recorded = Cluster(ClusterConfig(data_dir=cli.srv.data_dir), clock=VirtualClock())
    advances = [(e.actor, parse_time(e.time), e.object["status"]["now"])
                for e in recorded.log.since(0) if e.resource == "clocks.emulator.fakeapi.dev"]
    assert advances == [
        ("system:apiserver", EPOCH, "2026-01-01T00:00:00.000000Z"),
        ("kubernetes-admin", EPOCH + dt.timedelta(minutes=5), "2026-01-01T00:05:00.000000Z"),
        ("carol", EPOCH + dt.timedelta(minutes=95), "2026-01-01T01:35:00.000000Z")]
    assert recorded.clock.now() == EPOCH + dt.timedelta(minutes=95)  # a restart resumes there
    asyncio.run(recorded.close())


def test_http_clients_dont_hang_while_virtual_time_stands_still(start: Start) -> None:
    cli = start("--nodes", "1")
    cli.k("wait", "--for=create", "node/worker-0", "--timeout=30s")  # after the ready line
    cli.k("wait", "--for=condition=Ready", "node/worker-0", "--timeout=30s")
    cli.k("apply", "-f", "-", input=yaml.safe_dump_all([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "once"},
         "spec": {"restartPolicy": "Never", "containers": [
             {"name": "c", "image": "ubuntu", "command": ["bash", "-c", "echo hello"]}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ticker"},
         "spec": {"containers": [{"name": "c", "image": "ubuntu", "command": [
             "bash", "-c", "echo start; sleep 60; echo a minute later; sleep 3600"]}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                  "template": {"metadata": {"labels": {"app": "web"}},
                               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}]))
    cli.k("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/once", "--timeout=30s")
    cli.k("rollout", "status", "deployment/web", "--timeout=30s")
    cli.k("wait", "--for=condition=Ready", "pod/ticker", "--timeout=30s")
    assert cli.k("logs", "-f", "once", timeout=30) == "hello\n"  # an ended container's
    assert cli.k("exec", "ticker", "--", "echo", "hi") == "hi\n"
    assert cli.k("logs", "ticker") == "start\n"
    cli.advance("1m")
    assert cli.k("logs", "ticker") == "start\na minute later\n"
    cli.k("delete", "deployment", "web", "--timeout=30s")
    # a watch's timeoutSeconds is emulated time: it ends when the clock passes it
    watch = subprocess.Popen([cli.k.binary, "get", "--raw",
                              "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=5"],
                             env={**os.environ, "KUBECONFIG": str(cli.srv.kubeconfig)},
                             stdout=subprocess.PIPE, text=True)
    with pytest.raises(subprocess.TimeoutExpired):
        watch.wait(0.5)
    cli.advance("6s")
    assert watch.wait(30) == 0


BAD = [
    ("negative", "-5m", "a clock can't go back: \"-5m\" is negative",
     "ClockAdvance: a clock can't go back: duration \"-5m\" (-5m0s) is negative"),
    ("malformed", "5x", 'time: unknown unit "x" in duration "5x"',
     'ClockAdvance: time: unknown unit "x" in duration "5x"'),
    ("no unit", "300", 'time: missing unit in duration "300"',
     'ClockAdvance: time: missing unit in duration "300"'),
]


@pytest.mark.parametrize(("duration", "cli_says", "server_says"), [b[1:] for b in BAD],
                         ids=[b[0] for b in BAD])
def test_bad_durations_are_refused_by_the_cli_and_the_server(
        start: Start, tmp_path: Path, duration: str, cli_says: str, server_says: str) -> None:
    cli = start("--nodes", "0")
    res = cli.clock("advance", duration, check=False)
    assert res.returncode == 2
    assert f"argument DURATION: {cli_says}" in res.stderr
    body = tmp_path / "advance.json"
    body.write_text(json.dumps({"kind": "ClockAdvance", "duration": duration}))
    res = cli.k.run("create", "--raw", ADVANCE, "-f", str(body), check=False)
    assert res.returncode == 1
    assert f"Error from server (BadRequest): {server_says}" in res.stderr
    assert cli.now() == "2026-01-01T00:00:00.000000Z"


def test_only_cluster_admin_may_read_or_advance_the_clock(start: Start, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.csv"
    tokens.write_text(TOKENS)
    cli = start("--nodes", "0", "--token-auth-file", str(tokens))
    cli.k("create", "clusterrolebinding", "alice-view", "--clusterrole=view", "--user=alice")
    alice = token_kubectl(cli.k, "alice-token")
    for args in (("advance", "5m"), ("show",)):
        res = cli.clock(*args, kubeconfig=alice.kubeconfig, check=False)
        assert res.returncode == 1
        assert res.stderr.startswith('Error from server (Forbidden): clocks.emulator.fakeapi.dev '
                                     '"cluster" is forbidden: User "alice" cannot ')
    res = cli.k.run("get", "clock", "--as=alice", check=False)
    assert res.returncode == 1 and "(Forbidden)" in res.stderr
    assert cli.now() == "2026-01-01T00:00:00.000000Z"


def test_a_real_clock_says_how_to_get_a_virtual_one(start: Start) -> None:
    cli = start("--nodes", "0", clock="real")
    res = cli.clock("advance", "5m", check=False)
    assert res.returncode == 1
    assert res.stderr == ("Error from server (BadRequest): the cluster runs on the real clock, "
                          "which can't be advanced: start the server with --clock virtual (or "
                          "--clock virtual:auto)\n")
    table = cli.k("get", "clock").splitlines()
    assert table[0].split() == ["NAME", "NOW", "MODE", "AGE"]
    assert table[1].split()[::2] == ["cluster", "real"]


def test_serve_refuses_an_unknown_clock() -> None:
    res = subprocess.run([sys.executable, "-m", "fakeapi.cli", "serve", "--clock", "fast"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2
    assert ("argument --clock: unknown clock 'fast': one of real, virtual, virtual:auto"
            in res.stderr)


def test_the_python_client_reads_and_advances_the_clock(start: Start) -> None:
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    cli = start("--nodes", "0")
    api = config.new_client_from_config(str(cli.srv.kubeconfig))
    clocks = client.CustomObjectsApi(api)

    def post(duration: str) -> Any:
        """POST a ClockAdvance as the client's generated methods do (no method of its own)."""
        method, url, headers, body, _ = api.param_serialize(
            "POST", ADVANCE, body={"apiVersion": "emulator.fakeapi.dev/v1alpha1",
                                   "kind": "ClockAdvance", "duration": duration},
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"])
        response = api.call_api(method, url, headers, body)
        response.read()
        return api.response_deserialize(response, {"201": "object"}).data

    assert post("1.5h")["status"] == "Success"
    clock: Any = clocks.get_cluster_custom_object("emulator.fakeapi.dev", "v1alpha1", "clocks",
                                                  "cluster")
    assert clock["status"] == {"now": "2026-01-01T01:30:00.000000Z", "mode": "virtual"}
    with pytest.raises(ApiException) as e:
        post("-1s")
    assert e.value.status == 400
    assert json.loads(e.value.body or "{}")["message"] == (
        "ClockAdvance: a clock can't go back: duration \"-1s\" (-1s) is negative")
    api.close()
