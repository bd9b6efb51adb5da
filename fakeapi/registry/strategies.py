"""Which strategy each kind uses (the default one unless a kind has its own rules)."""

from __future__ import annotations

from fakeapi.kinds import Kind
from fakeapi.registry.core import (
    NamespaceFinalizeStrategy,
    NamespaceStrategy,
    NodeStrategy,
    PodStrategy,
)
from fakeapi.registry.strategy import StatusStrategy, Strategy, StrategyEnv

_MAIN: dict[str, type[Strategy]] = {
    "namespaces": NamespaceStrategy,
    "nodes": NodeStrategy,
    "pods": PodStrategy,
}
_SUB: dict[tuple[str, str], type[StatusStrategy]] = {
    ("namespaces", "finalize"): NamespaceFinalizeStrategy,
}


def strategy_for(kind: Kind, env: StrategyEnv) -> Strategy:
    """The main-resource strategy of a kind."""
    return _MAIN.get(kind.resource_id, Strategy)(kind, env)


def subresource_strategy_for(kind: Kind, subresource: str, env: StrategyEnv) -> StatusStrategy:
    """The strategy of a writable subresource (`status`, `finalize`)."""
    return _SUB.get((kind.resource_id, subresource), StatusStrategy)(kind, env)
