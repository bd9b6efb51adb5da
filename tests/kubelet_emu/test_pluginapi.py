"""The kubelet plugin API's modules are what grpcio-tools makes of the `.proto` files beside
them (nobody edits generated code), and their services are upstream's method paths."""

from __future__ import annotations

from kubelet_emu.pluginapi import dra_pb2, health_pb2, registration_pb2
from scripts import gen_pluginapi


def test_the_generated_modules_are_current() -> None:
    assert gen_pluginapi.main(["--check"]) == 0


def test_the_services_are_upstreams() -> None:
    services = {f.services_by_name[name].full_name: sorted(
        m.name for m in f.services_by_name[name].methods)
        for f in (dra_pb2.DESCRIPTOR, health_pb2.DESCRIPTOR, registration_pb2.DESCRIPTOR)
        for name in f.services_by_name}
    assert services == {
        "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin": ["NodePrepareResources",
                                                     "NodeUnprepareResources"],
        "v1.DRAResourceHealth": ["NodeWatchResources"],
        "pluginregistration.Registration": ["GetInfo", "NotifyRegistrationStatus"]}
