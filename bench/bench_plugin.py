"""The pytest plugin's costs: what loading it adds to every pytest run, a test's cluster from
start to close, a GPU pod through the `kubernetes` client, an hour of virtual time, and the
log reads and golden rendering of `assert_matches_golden`.

Run with `.venv/bin/python bench/bench_plugin.py [--runs N] [--events N]`. No target is set
by the issue; the figures say what a driver author's test pays.

- load: `pytest --collect-only` in an empty folder, with the plugin and with `-p no:fakeapi`,
  N child processes each (bytecode cached), and the plugin's own import time.
- cluster: `FakeapiCluster` start to close with no node, with the 2 default nodes and with
  one `gpu` node (the first start, which imports the server, apart).
- pod: the example's pod (a ResourceClaimTemplate, one GPU) created through the client to
  Running after `settle()`; then `advance("1h")` with it running (lease renewals, health
  reports, status): virtual seconds per real second.
- golden: N ConfigMaps written in process, then `events()` and `render()` over them.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from benchlib import ROOT, child_env, configmap, header

from fakeapi.testing.cluster import ClusterSettings, FakeapiCluster
from fakeapi.testing.golden import render

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "single-gpu"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod0"},
       "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}],
                "containers": [{"name": "ctr0", "image": "ubuntu:24.04",
                                "resources": {"claims": [{"name": "gpu"}]}}]}}


def timed(action: Callable[[], object]) -> float:
    """Real seconds `action` took."""
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


def spread(seconds: list[float]) -> str:
    """`median 0.123 s (min 0.100, max 0.150)`."""
    return (f"median {statistics.median(seconds):.3f} s (min {min(seconds):.3f}, "
            f"max {max(seconds):.3f})")


def bench_load(runs: int) -> None:
    """What the entry point adds to a pytest run that uses no cluster."""
    env = child_env()
    with tempfile.TemporaryDirectory() as empty:
        for label, extra in (("with the plugin", []), ("-p no:fakeapi", ["-p", "no:fakeapi"])):
            command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                       "no:cacheprovider", *extra]
            times = [timed(functools.partial(subprocess.run, command, cwd=empty, env=env,
                                             capture_output=True))
                     for _ in range(runs)]
            print(f"pytest --collect-only, {label:<16} {spread(times)}")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c",
                          "import pytest; import fakeapi.testing.plugin"], env=env,
                         capture_output=True, text=True).stderr
    [own] = [line for line in out.splitlines() if line.endswith("| fakeapi.testing.plugin")]
    print(f"importing fakeapi.testing.plugin (after pytest): "
          f"{int(own.split('|')[1]) / 1000:.1f} ms cumulative")


def bench_cluster(runs: int) -> None:
    """A test's cluster from start to close."""
    first = timed(lambda: FakeapiCluster(ClusterSettings(nodes=0)).start().close())
    print(f"first cluster (imports the server)        {first:.3f} s")
    for label, settings in (("no node", ClusterSettings(nodes=0)),
                            ("2 default nodes", ClusterSettings()),
                            ("1 gpu node", ClusterSettings(nodes=1, node_profile="gpu"))):
        starts, closes = [], []
        for _ in range(runs):
            cluster = FakeapiCluster(settings)
            starts.append(timed(cluster.start))
            closes.append(timed(cluster.close))
        print(f"cluster with {label:<16} start {spread(starts)}, close "
              f"{statistics.median(closes):.3f} s")


def bench_pod() -> None:
    """The example's GPU pod to Running, then an hour of virtual time with it running."""
    from kubernetes import client, utils

    with FakeapiCluster(ClusterSettings(nodes=1, node_profile="gpu")) as cluster:
        core = client.CoreV1Api(cluster.client)

        def to_running() -> None:
            utils.create_from_dict(cluster.client, TEMPLATE)
            utils.create_from_dict(cluster.client, POD)
            cluster.settle()

        took = timed(to_running)
        assert core.read_namespaced_pod("pod0", "default").to_dict()["status"][
            "phase"] == "Running"
        print(f"GPU pod created to Running (client + settle) {took * 1e3:.1f} ms")
        before = len(cluster.events())
        hour = timed(lambda: cluster.advance("1h"))
        events = len(cluster.events()) - before
        print(f"advance('1h') with the pod running         {hour:.3f} s: "
              f"{3600 / hour:,.0f} virtual s per real s, {events} events written")


def bench_golden(count: int) -> None:
    """events() and render() over `count` ConfigMap creations."""
    with FakeapiCluster(ClusterSettings(nodes=0)) as cluster:
        async def write() -> None:
            c = cluster.plane.cluster.client("bench")
            for i in range(count):
                await c.create("configmaps", configmap(f"cm-{i}"))

        cluster.call(write())
        read = timed(lambda: cluster.events(cluster.ready_revision))
        events = cluster.events(cluster.ready_revision)
        t0 = time.perf_counter()
        text = render(events, replacements=[(cluster.url, "<server>")])
        rendered = time.perf_counter() - t0
        print(f"events() of {count:,} events                   {count / read:>10,.0f} events/s")
        print(f"render() of {count:,} events                   {count / rendered:>10,.0f} "
              f"events/s ({len(text) / count:,.0f} bytes of golden text each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=5000)
    args = parser.parse_args()
    os.chdir(ROOT)
    header("pytest plugin")
    bench_load(args.runs)
    bench_cluster(args.runs)
    bench_pod()
    bench_golden(args.events)


if __name__ == "__main__":
    main()
