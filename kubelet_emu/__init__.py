"""Emulated kubelets with fake DRA drivers: nodes, their Leases and ResourceSlices, pods run
to Running with prepared claims, CDI specs and device-metadata files, device health and
fault injection (see README.md, "Emulated nodes").

Declared here with builders that import the emulator only when it is built.

Imports (every component package): `fakeapi.client`, `fakeapi.runtime`, `fakeapi.machinery`,
`fakeapi.kube`, `fakeapi.cel` and the kind table `fakeapi.registry.kinds`; never another
component package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakeapi.runtime.spec import ComponentSpec
from kubelet_emu.settings import KUBELET_ACCOUNT

if TYPE_CHECKING:
    from fakeapi.runtime.component import ComponentContext
    from fakeapi.runtime.supervisor import Component
    from kubelet_emu.settings import EmulatorSettings


def components(settings: EmulatorSettings | None = None) -> tuple[ComponentSpec, ...]:
    """The node emulator's components, configured by `settings` (None: 2 nodes of the
    `default` profile, made when the kubelet is built)."""

    def kubelet(ctx: ComponentContext) -> Component:
        from kubelet_emu.kubelet import Kubelet
        from kubelet_emu.settings import EmulatorSettings
        return Kubelet(ctx, settings or EmulatorSettings())

    return (
        ComponentSpec(name="kubelet", build=kubelet, service_account=KUBELET_ACCOUNT,
                      help="emulated kubelets: nodes, leases, fake DRA drivers, pods"),
        ComponentSpec(name="node-lifecycle-controller", build=_node_lifecycle,
                      service_account="node-controller",
                      help="marks silent nodes Unknown and taints them unreachable"),
        ComponentSpec(name="taint-eviction-controller", build=_taint_eviction,
                      help="evicts pods from nodes with NoExecute taints they don't tolerate"),
    )


def _node_lifecycle(ctx: ComponentContext) -> Component:
    from kubelet_emu.node_lifecycle import NodeLifecycleController
    return NodeLifecycleController(ctx)


def _taint_eviction(ctx: ComponentContext) -> Component:
    from kubelet_emu.node_lifecycle import TaintEvictionController
    return TaintEvictionController(ctx)


COMPONENTS: tuple[ComponentSpec, ...] = components()
"""The node emulator's components with the default settings."""
