"""`fakeapi driver`: our gpu driver as a standalone kubelet plugin process, with the settings
`fakeapi node env -o flags` prints, against `fakeapi serve --node-profile empty`, over HTTPS
and real unix sockets, with the real kubectl. It publishes the slice the emulator would for
the profile; the dra-example-driver's gpu-test1 runs with its GPU env; deleting a pod removes
its claim's CDI spec; SIGTERM removes the plugin's sockets. Bad input exits 2, saying why.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubelet_emu.device_classes import device_class
from kubelet_emu.inventory import inventory
from kubelet_emu.profile import load_profile
from kubelet_emu.slices import desired_specs
from tests.support.demos import manifest
from tests.support.kubectl import Kubectl
from tests.support.paths import ROOT
from tests.support.processes import LineReader, ServerProcess, start_server
from tests.support.waiting import poll

NODE = "worker-0"
GPU = load_profile("gpu").drivers[0]
DEMO = next(s for s in yaml.safe_load((ROOT / "tests" / "data" / "kubelet_emu" / "demos.yaml")
                                      .read_text()) if s["name"] == "basic-resourceclaimtemplate")
"""gpu-test1 of the dra-example-driver: two pods, one GPU each, from a claim template."""
Obj = dict[str, Any]


def fakeapi(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fakeapi.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


@pytest.fixture(scope="module")
def node() -> Iterator[tuple[ServerProcess, list[str]]]:
    """A server with one empty node, and the node's plugin flags. Its data dir is short: the
    plugin binds its sockets below it (a unix socket path is at most 107 bytes)."""
    data = Path(tempfile.mkdtemp(prefix="fa-", dir="/tmp"))
    server = start_server(data, "--nodes", "1", "--node-profile", "empty")
    try:
        env = fakeapi("node", "env", NODE, "--kubeconfig", str(server.kubeconfig), "-o", "flags")
        yield server, env.stdout.split()
    finally:
        assert server.stop() == 0
        shutil.rmtree(data, ignore_errors=True)


def items(k: Kubectl, *args: str) -> list[Obj]:
    return list(json.loads(k("get", *args, "-o", "json"))["items"])


def test_the_gpu_driver_as_a_plugin_process_runs_the_gpu_demo(
        kubectl_binary: str, node: tuple[ServerProcess, list[str]]) -> None:
    server, flags = node
    k = Kubectl(kubectl_binary, server.kubeconfig)
    proc = subprocess.Popen([sys.executable, "-m", "fakeapi.cli", "driver", "--profile", "gpu",
                             *flags], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    LineReader(proc.stdout).wait_for(lambda lines: any(
        line.startswith(f"fakeapi driver ready: {GPU.name} on node {NODE}") for line in lines))
    cdi = server.data_dir / "nodes" / NODE / "var" / "run" / "cdi"
    registration = server.data_dir / "nodes" / NODE / "var" / "lib" / "kubelet" / \
        "plugins_registry" / f"{GPU.name}-reg.sock"
    try:
        [published] = items(k, "resourceslices")
        assert published["metadata"]["name"].startswith(f"{NODE}-{GPU.name}-")
        assert published["metadata"]["ownerReferences"][0]["name"] == NODE
        pool = published["spec"].pop("pool")
        assert (pool["name"], pool["resourceSliceCount"]) == (NODE, 1)
        assert [published["spec"]] == desired_specs(inventory(GPU, NODE))  # the emulator's

        k("apply", "-f", "-", input=yaml.safe_dump_all([device_class(GPU), *manifest(DEMO)]))
        ns = DEMO["name"]
        k("wait", "--for=condition=Ready", "pod/pod0", "pod/pod1", "-n", ns, "--timeout=60s")
        assert 'declare -x GPU_DEVICE_0="gpu-' in k("logs", "pod0", "-n", ns)
        [claim] = [c for c in items(k, "resourceclaims", "-n", ns)
                   if c["status"]["reservedFor"][0]["name"] == "pod0"]
        spec = cdi / f"k8s.{GPU.name}-gpu_{claim['metadata']['uid']}.json"
        assert spec.exists()
        k("delete", "pod", "pod0", "-n", ns, "--timeout=60s")
        poll(lambda: not spec.exists(), what="the claim's CDI spec removed")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        k("delete", "namespace", DEMO["name"], "--ignore-not-found", "--timeout=60s")
    assert not registration.exists()


@pytest.mark.parametrize(("args", "message"), [
    (("--profile", "nope"), "argument --profile: unknown node profile 'nope': the shipped "
                            "profiles are "),
    (("--profile", "gpu", "--driver", "net.example.com"),
     "profile 'gpu' has no driver 'net.example.com': its drivers are gpu.example.com"),
    (("--profile", "default"), "profile 'default' has several drivers: pick one with --driver "
                               "(gpu.example.com, nic.example.com)"),
    (("--profile", "gpu", "--node", "worker-9"), "node 'worker-9' not found"),
], ids=["unknown profile", "driver not in the profile", "driver not chosen", "missing node"])
def test_bad_input_exits_2_saying_why(node: tuple[ServerProcess, list[str]],
                                      args: tuple[str, ...], message: str) -> None:
    done = fakeapi("driver", *node[1], *args)
    assert done.returncode == 2
    assert message in done.stderr
