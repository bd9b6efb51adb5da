"""Bring your own driver: a driver author's own kubelet plugin (`tests.support.external_driver`,
a separate process written against the generated gRPC modules, not our fake drivers) against
`fakeapi serve --node-profile empty`, over real unix sockets, with the real kubectl.

It registers through the node's plugins_registry folder (the settings come from `fakeapi
node env`), publishes its slice, is asked to prepare the claim of a pod, writes a CDI spec;
the pod runs with the injected env; its health stream makes the device Unhealthy, then
Unknown when it stops; deleting the pod calls unprepare. A plugin killed with -9 while it
prepares leaves the pod ContainerCreating with a FailedPrepareDynamicResources Event and
runs it once it is back. Bad plugins are refused with the kubelet's words and break nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from kubelet_emu import podresources as pr
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll

DRIVER = "ext.example.com"
NODE = "worker-0"
Obj = dict[str, Any]


def manifests(ns: str, driver: str = DRIVER) -> list[Obj]:
    """A DeviceClass of the driver, a claim template and a pod that prints its env."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
         "metadata": {"name": f"{ns}.{driver}"},
         "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{driver}'"}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "dev", "namespace": ns},
         "spec": {"spec": {"devices": {"requests": [
             {"name": "dev", "exactly": {"deviceClassName": f"{ns}.{driver}"}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod0", "namespace": ns},
         "spec": {"resourceClaims": [{"name": "dev", "resourceClaimTemplateName": "dev"}],
                  "containers": [{"name": "ctr0", "image": "ubuntu:24.04",
                                  "command": ["bash", "-c", "export; trap 'exit 0' TERM; "
                                              "sleep 9999 & wait"],
                                  "resources": {"claims": [{"name": "dev"}]}}]}},
    ]


class Plugin:
    """One run of the external driver process."""

    def __init__(self, flags: list[str], calls: Path, *extra: str) -> None:
        self.calls = calls
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.external_driver", *flags,
             "--calls", str(calls), *extra], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "external driver serving"

    def seen(self) -> list[Obj]:
        """The calls the kubelet made so far."""
        if not self.calls.exists():
            return []
        return [json.loads(line) for line in self.calls.read_text().splitlines()]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(10)


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    # a short data dir: the plugin binds its sockets below it (unix socket paths are short)
    data = Path(tempfile.mkdtemp(prefix="fa-", dir="/tmp"))
    srv = start_server(data, "--nodes", "1", "--node-profile", "empty")
    try:
        yield srv
    finally:
        assert srv.stop() == 0
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="module")
def k(kubectl_binary: str, server: ServerProcess) -> Kubectl:
    kubectl = Kubectl(kubectl_binary, server.kubeconfig)
    kubectl("wait", "--for=condition=Ready", f"node/{NODE}", "--timeout=30s")
    return kubectl


@pytest.fixture(scope="module")
def flags(server: ServerProcess) -> list[str]:
    """What `fakeapi node env -o flags` prints for the node."""
    out = subprocess.run([sys.executable, "-m", "fakeapi.cli", "node", "env", NODE,
                          "--kubeconfig", str(server.kubeconfig), "-o", "flags"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return out.split()


def get(k: Kubectl, *args: str) -> Obj:
    return json.loads(k("get", *args, "-o", "json"))


def events(k: Kubectl, ns: str, reason: str) -> list[Obj]:
    return [e for e in get(k, "events", "-n", ns)["items"] if e["reason"] == reason]


def health(k: Kubectl, ns: str) -> list[tuple[str, str]]:
    """(health, message) of each device the pod's container uses."""
    status = get(k, "pod", "pod0", "-n", ns)["status"]
    return [(r["health"], r.get("message", "")) for s in status.get("containerStatuses") or []
            for claim in s.get("allocatedResourcesStatus") or [] for r in claim["resources"]]


def test_node_env_prints_the_nodes_folders(flags: list[str], server: ServerProcess) -> None:
    root = server.data_dir / "nodes" / NODE
    assert flags == [f"--kubeconfig={server.kubeconfig.resolve()}", f"--node-name={NODE}",
                     f"--kubelet-registrar-directory-path={root}/var/lib/kubelet/plugins_registry",
                     f"--kubelet-plugins-directory-path={root}/var/lib/kubelet/plugins",
                     f"--cdi-root={root}/var/run/cdi"]


def pod_resources(server: ServerProcess) -> Obj:
    """The node's PodResources List, over its socket."""
    socket = server.data_dir / "nodes" / NODE / pr.SOCKET

    async def call() -> Obj:
        async with grpc.aio.insecure_channel(f"unix://{os.path.realpath(socket)}") as channel:
            return await channel.unary_unary(
                f"/{pr.SERVICE}/List",
                request_serializer=lambda m: pr.encode("ListPodResourcesRequest", m),
                response_deserializer=lambda b: pr.decode("ListPodResourcesResponse", b))({})
    return asyncio.run(call())


def uid_of(k: Kubectl, claim: str) -> str:
    return str(get(k, "resourceclaim", claim, "-n", "ext")["metadata"]["uid"])


def test_an_external_plugin_prepares_runs_reports_health_and_unprepares(
        k: Kubectl, flags: list[str], tmp_path: Path, server: ServerProcess) -> None:
    plugin = Plugin(flags, tmp_path / "calls.jsonl")
    try:
        poll(plugin.seen, what="registered", until=lambda c: {"call": "registered", "ok": True,
                                                              "error": ""} in c)
        slices = poll(lambda: [s for s in get(k, "resourceslices")["items"]
                               if s["spec"]["driver"] == DRIVER], what="the plugin's slice")
        assert slices[0]["spec"]["nodeName"] == NODE
        k("apply", "-f", "-", input=yaml.safe_dump_all(manifests("ext")))
        k("wait", "--for=condition=Ready", "pod/pod0", "-n", "ext", "--timeout=60s")
        claim = get(k, "pod", "pod0", "-n", "ext")["status"]["resourceClaimStatuses"][0][
            "resourceClaimName"]
        assert {"call": "prepare", "claims": [claim]} in plugin.seen()
        device = get(k, "resourceclaim", claim, "-n", "ext")["status"]["allocation"]["devices"][
            "results"][0]["device"]
        logs = k("logs", "pod0", "-n", "ext")
        assert f'declare -x EXT_DEVICE_0="{device}"' in logs  # the device's own edits
        assert f'declare -x EXT_CLAIM="ext/{claim}"' in logs  # the spec's edits
        assert poll(lambda: health(k, "ext"), what="healthy") == [("Healthy", "")]
        [listed] = pod_resources(server)["pod_resources"]  # PodResources knows the device
        [resource] = listed["containers"][0]["dynamic_resources"][0]["claim_resources"]
        assert (resource["driver_name"], resource["device_name"]) == (DRIVER, device)
        assert resource["cdi_devices"] == [{"name": f"{DRIVER}/dev={uid_of(k, claim)}-{device}"}]

        plugin.proc.send_signal(signal.SIGUSR1)
        poll(lambda: health(k, "ext"), what="unhealthy",
             until=lambda h: h == [("Unhealthy", "overheated")])
        plugin.proc.send_signal(signal.SIGUSR2)  # silent: Unknown after its 2 s timeout
        poll(lambda: health(k, "ext"), what="unknown", until=lambda h: h == [("Unknown", "")])

        k("delete", "pod", "pod0", "-n", "ext", "--timeout=60s")
        poll(plugin.seen, what="unprepared",
             until=lambda c: {"call": "unprepare", "claims": [claim]} in c)
    finally:
        plugin.stop()
        k("delete", "namespace", "ext", "--ignore-not-found", "--timeout=60s")


def test_a_plugin_killed_while_it_prepares_runs_the_pod_once_it_is_back(
        k: Kubectl, flags: list[str], tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    plugin = Plugin(flags, calls, "--prepare-delay", "30")
    try:
        k("apply", "-f", "-", input=yaml.safe_dump_all(manifests("crash")))
        poll(plugin.seen, what="asked to prepare",
             until=lambda c: any(x["call"] == "prepare" for x in c))
        plugin.stop(signal.SIGKILL)
        failed = poll(lambda: events(k, "crash", "FailedPrepareDynamicResources"),
                      what="the prepare failure's Event")
        assert failed[0]["type"] == "Warning"
        assert "Failed to prepare dynamic resources: prepare dynamic resources: " \
               "NodePrepareResources: rpc error: code = Unavailable" in failed[0]["message"]
        [status] = get(k, "pod", "pod0", "-n", "crash")["status"]["containerStatuses"]
        assert status["state"] == {"waiting": {"reason": "ContainerCreating"}}
        plugin = Plugin(flags, calls)  # back, on the same sockets
        k("wait", "--for=condition=Ready", "pod/pod0", "-n", "crash", "--timeout=60s")
    finally:
        plugin.stop()
        k("delete", "namespace", "crash", "--ignore-not-found", "--timeout=60s")


def node_events(k: Kubectl, message: str) -> list[Obj]:
    """The Node's registration failures that say `message`."""
    return [e for e in get(k, "events", "-n", "default")["items"]
            if e["reason"] == "FailedPluginRegistration" and message in e["message"]]


def test_a_plugin_that_never_answers_get_info_is_not_registered(
        k: Kubectl, flags: list[str], tmp_path: Path) -> None:
    plugin = Plugin(flags, tmp_path / "calls.jsonl", "--driver", "mute.example.com",
                    "--hang-get-info")
    try:
        # (a first try may find the socket bound but not yet listening: Connection refused)
        events = poll(lambda: [e for e in node_events(k, "mute.example.com-reg.sock, err: rpc "
                                                         "error: code = DeadlineExceeded")],
                      what="the Node's Event")
        assert events[0]["message"].startswith(
            "RegisterPlugin error -- failed to get plugin info using RPC GetInfo at socket ")
        assert plugin.seen() == []  # not told: the kubelet could not ask it anything
    finally:
        plugin.stop(signal.SIGKILL)


def test_a_plugin_whose_driver_publishes_no_slice_is_reported(
        k: Kubectl, flags: list[str], tmp_path: Path) -> None:
    plugin = Plugin(flags, tmp_path / "calls.jsonl", "--driver", "sliceless.example.com",
                    "--no-slice")
    try:
        [event] = poll(lambda: [e for e in get(k, "events", "-n", "default")["items"]
                                if e["reason"] == "DRADriverWithoutResourceSlices"],
                       what="the Node's Event", timeout=30)
        assert event["message"] == ("DRA driver sliceless.example.com is registered but "
                                    f"publishes no ResourceSlice for node {NODE}")
        assert {"call": "registered", "ok": True, "error": ""} in plugin.seen()
    finally:
        plugin.stop()


def test_of_two_plugins_of_one_driver_the_newest_wins(
        k: Kubectl, flags: list[str], tmp_path: Path) -> None:
    older = Plugin(flags, tmp_path / "older.jsonl", "--registration-name", "older-reg.sock",
                   "--endpoint-name", "older.sock")
    newer = None
    try:
        poll(older.seen, what="the older registered",
             until=lambda c: any(x["call"] == "registered" for x in c))
        newer = Plugin(flags, tmp_path / "newer.jsonl", "--registration-name", "newer-reg.sock",
                       "--endpoint-name", "newer.sock")
        poll(newer.seen, what="the newer registered",
             until=lambda c: any(x["call"] == "registered" for x in c))
        k("apply", "-f", "-", input=yaml.safe_dump_all(manifests("two")))
        k("wait", "--for=condition=Ready", "pod/pod0", "-n", "two", "--timeout=60s")
        assert [x["call"] for x in newer.seen()] == ["registered", "prepare"]
        assert [x["call"] for x in older.seen()] == ["registered"]
        newer.stop()  # gone: the older one serves the driver again
        k("delete", "pod", "pod0", "-n", "two", "--timeout=60s")
        poll(older.seen, what="the older unprepared",
             until=lambda c: [x["call"] for x in c] == ["registered", "unprepare"])
    finally:
        older.stop()
        if newer is not None:
            newer.stop()
        k("delete", "namespace", "two", "--ignore-not-found", "--timeout=60s")


@pytest.mark.parametrize(("extra", "message"), [
    (("--type", "CSIPlugin"), "RegisterPlugin error -- no handler registered for plugin type: "
                              "CSIPlugin at socket "),
    (("--versions", "v9.DRAPlugin"),
     'RegisterPlugin error -- plugin validation failed with err: invalid supported gRPC '
     'versions of DRA driver plugin bad.example.com at endpoint '),
    (("--versions",), "empty list of supported gRPC services (aka supported versions)"),
], ids=["unknown type", "unknown version", "no version"])
def test_a_plugin_the_kubelet_refuses_is_told_why_and_breaks_nothing(
        k: Kubectl, flags: list[str], tmp_path: Path, extra: tuple[str, ...],
        message: str) -> None:
    plugin = Plugin(flags, tmp_path / "calls.jsonl", "--driver", "bad.example.com", *extra)
    try:
        told = poll(plugin.seen, what="told it was refused",
                    until=lambda c: any(x["call"] == "registered" for x in c))
        assert told[0]["ok"] is False and message in told[0]["error"]
        refused = poll(lambda: node_events(k, message), what="the Node's Event")
        assert refused[0]["involvedObject"]["kind"] == "Node"
        assert refused[0]["type"] == "Warning"
        assert get(k, "node", NODE)["status"]["conditions"][-1]["status"] == "True"
    finally:
        plugin.stop()


@pytest.mark.parametrize(("extra", "what"), [
    (("--bogus-device",), "returned device ext.example.com/worker-0/dev-99, which is not "
                          "allocated to the claim"),
    (("--unknown-cdi",), "unresolvable CDI devices ext.example.com/dev=nowhere-"),
], ids=["a device not allocated", "an unknown CDI device"])
def test_a_wrong_answer_of_a_plugin_keeps_the_pod_from_running(
        k: Kubectl, flags: list[str], tmp_path: Path, extra: tuple[str, ...], what: str) -> None:
    ns = "wrong-" + extra[0].strip("-")
    plugin = Plugin(flags, tmp_path / "calls.jsonl", *extra)
    try:
        k("apply", "-f", "-", input=yaml.safe_dump_all(manifests(ns)))
        seen = poll(lambda: [e for e in get(k, "events", "-n", ns)["items"]
                             if what in e["message"]], what="the Event")
        assert seen[0]["type"] == "Warning"
        assert get(k, "pod", "pod0", "-n", ns)["status"]["phase"] == "Pending"
    finally:
        plugin.stop()
        k("delete", "namespace", ns, "--ignore-not-found", "--timeout=60s")


def test_a_relative_data_dir_gives_the_node_absolute_sockets(tmp_path: Path) -> None:
    """`--data-dir .fakeapi`, as the README starts it: the node's sockets bind (a relative
    unix socket path does not) and `fakeapi node env` prints absolute paths."""
    proc = subprocess.Popen([sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0",
                             "--data-dir", ".fakeapi", "--nodes", "1"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("fakeapi ready at ")
        node = tmp_path / ".fakeapi" / "nodes" / NODE
        poll(lambda: (node / pr.SOCKET).is_socket(), what="the PodResources socket")
        out = subprocess.run([sys.executable, "-m", "fakeapi.cli", "node", "env", NODE,
                              "--kubeconfig", ".fakeapi/kubeconfig"], cwd=tmp_path,
                             capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
        assert f"export CDI_ROOT={node}/var/run/cdi\n" in out
        assert f"export KUBECONFIG={tmp_path}/.fakeapi/kubeconfig\n" in out
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
