"""A minimal external DRA driver, as a driver author would write one against the kubelet
plugin API, for the tests of "bring your own driver": its own process, the generated gRPC
modules (`kubelet_emu.pluginapi`) and the official Python client, nothing of the emulator.

    python -m tests.support.external_driver --kubeconfig K --node-name worker-0 \\
        --kubelet-registrar-directory-path R --kubelet-plugins-directory-path P --cdi-root C \\
        --calls CALLS.jsonl

It publishes one ResourceSlice (`--devices` devices `dev-0`... in pool NODE), serves
Registration on `R/<driver>-reg.sock` and DRA v1 plus health v1 on `P/<driver>/dra.sock`.
Preparing a claim writes a CDI spec (YAML, as the cdi library writes it) whose devices set
`EXT_DEVICE_<n>`; unpreparing removes it. Every call is appended to `--calls` as a JSON line
(`{"call": "prepare", "claims": [...]}`), so a test reads what the kubelet asked. SIGUSR1
makes every device Unhealthy; SIGUSR2 stops the health reports (the stream stays open).
`--prepare-delay` makes preparing slow (to kill it meanwhile); `--bogus-device` answers with
a device the claim was not given, `--unknown-cdi` with a CDI device no spec defines;
`--type` and `--versions` set what it registers as, `--hang-get-info` never answers GetInfo,
`--no-slice` publishes nothing,
and `--registration-name`/`--endpoint-name` let two instances of one driver run side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import yaml
from kubernetes import client, config, utils

from kubelet_emu.pluginapi import (
    dra_pb2,
    dra_pb2_grpc,
    health_pb2,
    health_pb2_grpc,
    registration_pb2,
    registration_pb2_grpc,
)

DRIVER = "ext.example.com"
KIND = f"{DRIVER}/dev"


class Driver(registration_pb2_grpc.RegistrationServicer, dra_pb2_grpc.DRAPluginServicer,
             health_pb2_grpc.DRAResourceHealthServicer):
    """The three services of the plugin."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.endpoint = Path(args.kubelet_plugins_directory_path) / args.driver / \
            args.endpoint_name
        self.unhealthy = threading.Event()
        self.silent = threading.Event()
        config.load_kube_config(args.kubeconfig)
        self.api = client.ApiClient()

    def record(self, call: str, **fields: Any) -> None:
        with open(self.args.calls, "a") as f:
            f.write(json.dumps({"call": call, **fields}) + "\n")

    # ----- registration -----------------------------------------------------------------

    def GetInfo(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC's names)
        if self.args.hang_get_info:
            time.sleep(3600)
        return registration_pb2.PluginInfo(type=self.args.type, name=self.args.driver,
                                           endpoint=str(self.endpoint),
                                           supported_versions=self.args.versions)

    def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.record("registered", ok=request.plugin_registered, error=request.error)
        return registration_pb2.RegistrationStatusResponse()

    # ----- DRA --------------------------------------------------------------------------

    def NodePrepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.record("prepare", claims=[c.name for c in request.claims])
        time.sleep(self.args.prepare_delay)
        out = dra_pb2.NodePrepareResourcesResponse()
        resource = client.ResourceV1Api(self.api)
        for ref in request.claims:
            claim = resource.read_namespaced_resource_claim(ref.name, ref.namespace).to_dict(
                serialize=True)
            results = [r for r in claim["status"]["allocation"]["devices"]["results"]
                       if r["driver"] == self.args.driver]
            devices = [{"name": f"{ref.uid}-{r['device']}", "containerEdits": {"env": [
                f"EXT_DEVICE_{i}={r['device']}"]}} for i, r in enumerate(results)]
            spec = {"cdiVersion": "0.5.0", "kind": KIND, "devices": devices,
                    "containerEdits": {"env": [f"EXT_CLAIM={ref.namespace}/{ref.name}"]}}
            Path(self.args.cdi_root).mkdir(parents=True, exist_ok=True)
            (Path(self.args.cdi_root) / f"{self.args.driver}-{ref.uid}.yaml").write_text(
                yaml.safe_dump(spec))
            entry = out.claims[ref.uid]
            for r in results:
                device = "dev-99" if self.args.bogus_device else r["device"]
                cdi = f"{KIND}={'nowhere' if self.args.unknown_cdi else ref.uid}-{r['device']}"
                entry.devices.add(request_names=[r["request"]], pool_name=r["pool"],
                                  device_name=device, cdi_device_ids=[cdi])
        return out

    def NodeUnprepareResources(self, request: Any, context: Any) -> Any:  # noqa: N802
        self.record("unprepare", claims=[c.name for c in request.claims])
        out = dra_pb2.NodeUnprepareResourcesResponse()
        for ref in request.claims:
            (Path(self.args.cdi_root) / f"{self.args.driver}-{ref.uid}.yaml").unlink(
                missing_ok=True)
            out.claims[ref.uid].error = ""
        return out

    # ----- health -----------------------------------------------------------------------

    def NodeWatchResources(self, request: Any, context: Any) -> Iterator[Any]:  # noqa: N802
        while context.is_active():
            bad = self.unhealthy.is_set()
            if not self.silent.is_set():
                yield health_pb2.NodeWatchResourcesResponse(devices=[health_pb2.DeviceHealth(
                    device=health_pb2.DeviceIdentifier(pool_name=self.args.node_name,
                                                       device_name=f"dev-{i}"),
                    health=health_pb2.UNHEALTHY if bad else health_pb2.HEALTHY,
                    last_updated_time=int(time.time()),
                    health_check_timeout_seconds=self.args.health_timeout,
                    message="overheated" if bad else "") for i in range(self.args.devices)])
            time.sleep(0.2)

    # ----- the slice --------------------------------------------------------------------

    def publish(self) -> None:
        name = f"{self.args.node_name}-{self.args.driver}"
        body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                "metadata": {"name": name},
                "spec": {"driver": self.args.driver, "nodeName": self.args.node_name,
                         "pool": {"name": self.args.node_name, "generation": 1,
                                  "resourceSliceCount": 1},
                         "devices": [{"name": f"dev-{i}", "attributes": {
                             "index": {"int": i}}} for i in range(self.args.devices)]}}
        try:
            utils.create_from_dict(self.api, body)
        except utils.FailToCreateError as e:
            if not all(getattr(x, "status", 0) == 409 for x in e.api_exceptions):
                raise


def serve(args: argparse.Namespace) -> None:
    """Publish, serve, register; run until SIGTERM."""
    driver = Driver(args)
    if not args.no_slice:
        driver.publish()
    signal.signal(signal.SIGUSR1, lambda *_: driver.unhealthy.set())
    signal.signal(signal.SIGUSR2, lambda *_: driver.silent.set())
    registration = Path(args.kubelet_registrar_directory_path) / (
        args.registration_name or f"{args.driver}-reg.sock")
    servers = []
    services = (dra_pb2_grpc.add_DRAPluginServicer_to_server,
                health_pb2_grpc.add_DRAResourceHealthServicer_to_server)
    registering = (registration_pb2_grpc.add_RegistrationServicer_to_server,)
    for socket, add in ((driver.endpoint, services), (registration, registering)):
        socket.parent.mkdir(parents=True, exist_ok=True)
        if socket.exists():
            socket.unlink()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        for adder in add:
            adder(driver, server)
        server.add_insecure_port(f"unix://{socket}")
        server.start()
        servers.append(server)
    print("external driver serving", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    for server in servers:
        server.stop(None)
    registration.unlink(missing_ok=True)  # deregisters, as the kubeletplugin helper does
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--node-name", required=True)
    parser.add_argument("--kubelet-registrar-directory-path", required=True)
    parser.add_argument("--kubelet-plugins-directory-path", required=True)
    parser.add_argument("--cdi-root", required=True)
    parser.add_argument("--calls", required=True)
    parser.add_argument("--driver", default=DRIVER)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--health-timeout", type=int, default=2)
    parser.add_argument("--prepare-delay", type=float, default=0.0)
    parser.add_argument("--bogus-device", action="store_true")
    parser.add_argument("--unknown-cdi", action="store_true")
    parser.add_argument("--type", default="DRAPlugin")
    parser.add_argument("--hang-get-info", action="store_true")
    parser.add_argument("--no-slice", action="store_true", help="publish no ResourceSlice")
    parser.add_argument("--registration-name", help="its socket's name in the registry folder")
    parser.add_argument("--endpoint-name", default="dra.sock",
                        help="its DRA socket's name in its plugin folder")
    parser.add_argument("--versions", nargs="*",
                        default=["v1.DRAPlugin", "v1.DRAResourceHealth"])
    serve(parser.parse_args())


if __name__ == "__main__":
    main()
