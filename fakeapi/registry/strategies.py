"""The strategy classes that kind rows name (`Kind.strategy`, `Kind.subresources`), by name.

The rows live below the registry (`fakeapi.registry.kinds`), so they name their strategies; this is
the one place the names resolve. A kind with its own rules adds its class to a tuple here.
"""

from __future__ import annotations

from collections.abc import Mapping

from fakeapi.registry.core import (
    NamespaceFinalizeStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PodBindingStrategy,
    PodStrategy,
)
from fakeapi.registry.custom import (
    CustomResourceDefinitionStrategy,
    CustomResourceScaleStrategy,
    CustomResourceStatusStrategy,
    CustomResourceStrategy,
)
from fakeapi.registry.emulator import DeviceFaultStrategy, NodeFaultStrategy
from fakeapi.registry.identity import (
    CertificateApprovalStrategy,
    CertificateSigningRequestStrategy,
    TokenRequestStrategy,
)
from fakeapi.registry.kinds import Kind
from fakeapi.registry.pods import (
    EphemeralContainersStrategy,
    EvictionStrategy,
    PodAttachStrategy,
    PodExecStrategy,
    PodLogStrategy,
    PodPortForwardStrategy,
)
from fakeapi.registry.rbac import RoleBindingStrategy, RoleStrategy
from fakeapi.registry.resource import (
    DeviceClassStrategy,
    DeviceTaintRuleStatusStrategy,
    DeviceTaintRuleStrategy,
    ResourceClaimStatusStrategy,
    ResourceClaimStrategy,
    ResourceClaimTemplateStrategy,
    ResourcePoolStatusRequestStatusStrategy,
    ResourcePoolStatusRequestStrategy,
    ResourceSliceStrategy,
)
from fakeapi.registry.scheduling import PodGroupStatusStrategy, PodGroupStrategy, WorkloadStrategy
from fakeapi.registry.strategy import (
    ConnectStrategy,
    CreateSubresourceStrategy,
    StatusStrategy,
    Strategy,
    StrategyEnv,
)
from fakeapi.registry.workloads import (
    JobStrategy,
    PodControllerStrategy,
    ScaleStrategy,
    SecretStrategy,
    ServiceStrategy,
)

SubresourceStrategy = StatusStrategy | CreateSubresourceStrategy | ConnectStrategy

STRATEGIES: Mapping[str, type[Strategy]] = {cls.__name__: cls for cls in (
    Strategy, NamespaceStrategy, NodeStrategy, PodStrategy, DeviceClassStrategy,
    ResourceClaimStrategy, ResourceClaimTemplateStrategy, ResourceSliceStrategy,
    DeviceTaintRuleStrategy, ResourcePoolStatusRequestStrategy, PodGroupStrategy,
    WorkloadStrategy, RoleStrategy, RoleBindingStrategy, DeviceFaultStrategy,
    NodeFaultStrategy, JobStrategy, SecretStrategy, ServiceStrategy,
    CustomResourceDefinitionStrategy, CertificateSigningRequestStrategy,
    CustomResourceStrategy, PodControllerStrategy)}
"""Object strategies by class name."""

SUBRESOURCE_STRATEGIES: Mapping[str, type[SubresourceStrategy]] = {
    cls.__name__: cls for cls in (
        StatusStrategy, NamespaceFinalizeStrategy, ResourceClaimStatusStrategy,
        DeviceTaintRuleStatusStrategy, ResourcePoolStatusRequestStatusStrategy,
        PodGroupStatusStrategy, PodBindingStrategy, ScaleStrategy, EvictionStrategy,
        PodLogStrategy, PodExecStrategy, PodAttachStrategy, PodPortForwardStrategy,
        EphemeralContainersStrategy, TokenRequestStrategy, CertificateApprovalStrategy,
        CustomResourceStatusStrategy, CustomResourceScaleStrategy)}
"""Subresource strategies by class name: `/status`-like updates and POSTed bodies."""


def strategy_for(kind: Kind, env: StrategyEnv) -> Strategy:
    """The object strategy the kind's row names (KeyError for a name that isn't here)."""
    return STRATEGIES[kind.strategy](kind, env)


def subresource_strategies_for(kind: Kind, env: StrategyEnv) -> dict[str, SubresourceStrategy]:
    """The strategy of each subresource the kind's row lists."""
    return {name: SUBRESOURCE_STRATEGIES[cls](kind, env)
            for name, cls in kind.subresources.items()}
