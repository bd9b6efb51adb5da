"""Which strategy each kind uses (the default one unless a kind has its own rules)."""

from __future__ import annotations

from fakeapi.kinds import Kind
from fakeapi.registry.core import (
    NamespaceFinalizeStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PodStrategy,
)
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
from fakeapi.registry.strategy import StatusStrategy, Strategy, StrategyEnv

_MAIN: dict[str, type[Strategy]] = {
    "namespaces": NamespaceStrategy,
    "nodes": NodeStrategy,
    "pods": PodStrategy,
    "deviceclasses.resource.k8s.io": DeviceClassStrategy,
    "resourceclaims.resource.k8s.io": ResourceClaimStrategy,
    "resourceclaimtemplates.resource.k8s.io": ResourceClaimTemplateStrategy,
    "resourceslices.resource.k8s.io": ResourceSliceStrategy,
    "devicetaintrules.resource.k8s.io": DeviceTaintRuleStrategy,
    "resourcepoolstatusrequests.resource.k8s.io": ResourcePoolStatusRequestStrategy,
    "podgroups.scheduling.k8s.io": PodGroupStrategy,
    "workloads.scheduling.k8s.io": WorkloadStrategy,
}
_SUB: dict[tuple[str, str], type[StatusStrategy]] = {
    ("namespaces", "finalize"): NamespaceFinalizeStrategy,
    ("resourceclaims.resource.k8s.io", "status"): ResourceClaimStatusStrategy,
    ("devicetaintrules.resource.k8s.io", "status"): DeviceTaintRuleStatusStrategy,
    ("resourcepoolstatusrequests.resource.k8s.io", "status"):
        ResourcePoolStatusRequestStatusStrategy,
    ("podgroups.scheduling.k8s.io", "status"): PodGroupStatusStrategy,
}


def strategy_for(kind: Kind, env: StrategyEnv) -> Strategy:
    """The main-resource strategy of a kind."""
    return _MAIN.get(kind.resource_id, Strategy)(kind, env)


def subresource_strategy_for(kind: Kind, subresource: str, env: StrategyEnv) -> StatusStrategy:
    """The strategy of a writable subresource (`status`, `finalize`)."""
    return _SUB.get((kind.resource_id, subresource), StatusStrategy)(kind, env)
