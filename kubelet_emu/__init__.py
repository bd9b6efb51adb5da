"""Emulated kubelets with fake DRA drivers: nodes, their Leases and ResourceSlices, pods run
to Running with prepared claims, CDI specs and device-metadata files, device health and
fault injection (see README.md, "Emulated nodes")."""

from __future__ import annotations

from fakeapi.runtime.component import ComponentContext, ComponentSpec
from fakeapi.runtime.supervisor import Component
from kubelet_emu.kubelet import Kubelet
from kubelet_emu.node_lifecycle import NodeLifecycleController, TaintEvictionController
from kubelet_emu.settings import KUBELET_ACCOUNT, EmulatorSettings


def components(settings: EmulatorSettings | None = None) -> tuple[ComponentSpec, ...]:
    """The node emulator's components, configured by `settings` (defaults: 2 nodes of the
    `default` profile)."""
    config = settings or EmulatorSettings()

    def kubelet(ctx: ComponentContext) -> Component:
        return Kubelet(ctx, config)

    return (
        ComponentSpec(name="kubelet", build=kubelet, service_account=KUBELET_ACCOUNT,
                      help="emulated kubelets: nodes, leases, fake DRA drivers, pods"),
        ComponentSpec(name="node-lifecycle-controller", build=NodeLifecycleController,
                      service_account="node-controller",
                      help="marks silent nodes Unknown and taints them unreachable"),
        ComponentSpec(name="taint-eviction-controller", build=TaintEvictionController,
                      help="evicts pods from nodes with NoExecute taints they don't tolerate"),
    )


COMPONENTS: tuple[ComponentSpec, ...] = components()
"""The node emulator's components with the default settings."""
