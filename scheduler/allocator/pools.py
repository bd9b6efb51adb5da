"""Which devices a node can use: upstream's GatherPools (incubating/experimental variant).

A pool is (driver, pool name). Only the slices of its newest generation count; a pool is
complete when that generation has `resourceSliceCount` slices, obsolete when a newer
generation exists elsewhere, incomplete otherwise; it is invalid when its devices or counter
sets are duplicated or a device consumes an unknown counter. Pools are ordered by (driver,
pool), those with binding conditions last; slices by name; devices as their slice lists them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction

from fakeapi.kube.nodeselector import NodeSelector, NodeSelectorError

from .devices import Device, Slice
from .errors import AllocationError
from .features import AllocatorFeatures


def node_matches(name: str, labels: Mapping[str, str], node_name: str, all_nodes: bool,
                 selector: NodeSelector | NodeSelectorError | None) -> bool:
    """Same as upstream's NodeMatches: a node name, all nodes, or a node selector."""
    if node_name:
        return name == node_name
    if all_nodes:
        return True
    if selector is not None:
        if isinstance(selector, NodeSelectorError):
            raise selector
        return selector.matches(name, labels)
    return False


class Pool:
    """A pool as one node sees it."""

    __slots__ = ("driver", "name", "id", "incomplete", "invalid", "invalid_reason", "slices",
                 "other_slices", "counter_sets", "binding", "devices", "available")

    def __init__(self, driver: str, name: str) -> None:
        self.driver = driver
        self.name = name
        self.id = f"{driver}/{name}"
        self.incomplete = False
        self.invalid = False
        self.invalid_reason = ""
        self.slices: list[Slice] = []
        """Device slices targeting the node, by name (what is allocated from)."""
        self.other_slices: list[Slice] = []
        """The pool's device slices for other nodes (their allocations use shared counters)."""
        self.counter_sets: dict[str, dict[str, Fraction]] = {}
        self.binding = False
        self.devices: tuple[Device, ...] = ()
        self.available: tuple[object, dict[str, dict[str, Fraction]]] | None = None
        """Counters left after the allocated devices, cached per AllocatedState version."""


class NodeView:
    """The pools for one node and the devices to search, flattened in search order."""

    __slots__ = ("pools", "devices", "device_pools", "mismatch", "labels")

    def __init__(self, pools: list[Pool], mismatch: frozenset[str],
                 labels: Mapping[str, str]) -> None:
        self.pools = pools
        usable = [p for p in pools if not (p.incomplete or p.invalid)]
        self.devices: tuple[Device, ...] = tuple(d for p in usable for d in p.devices)
        self.device_pools: tuple[Pool, ...] = tuple(p for p in usable for _ in p.devices)
        self.mismatch = mismatch
        """Keys of per-device-node-selection devices that don't select this node."""
        self.labels = labels


def gather_pools(node_name: str, labels: Mapping[str, str], slices: Iterable[Slice],
                 pool_slices: Mapping[tuple[str, str], Iterable[Slice]],
                 features: AllocatorFeatures) -> NodeView:
    """The node's view of `slices` (its own plus those without a node name); `pool_slices`
    holds every slice of each pool, for the completeness check of multi-node pools."""
    by_pool: dict[tuple[str, str], list[Slice]] = {}
    mismatch: set[str] = set()
    for s in slices:
        if not features.partitionable_devices and (s.per_device_set or s.has_counters):
            continue
        if s.node_name or s.all_nodes or s.node_selector is not None:
            relevant = _matches(node_name, labels, s.node_name, s.all_nodes, s.node_selector,
                                f"slice {s.name}")
        elif s.per_device:
            relevant = False
            for d in s.devices:
                if _matches(node_name, labels, d.node_name, d.all_nodes, d.node_selector,
                            f"device {d.name} in slice {s.name}"):
                    relevant = True
                else:
                    mismatch.add(d.key)
        else:
            continue
        if not relevant:
            continue
        key = (s.driver, s.pool)
        group = by_pool.get(key)
        if group is None or s.generation > group[0].generation:
            by_pool[key] = [s]
        elif s.generation == group[0].generation:
            group.append(s)
    plain: list[Pool] = []
    binding: list[Pool] = []
    for (driver, name), group in by_pool.items():
        generation, wanted = group[0].generation, group[0].slice_count
        if len(group) == wanted:
            pool = _build(driver, name, group, (), features)
        else:
            everything = list(pool_slices.get((driver, name), ()))
            if any(s.generation > generation for s in everything):
                continue  # obsolete: a newer generation is being published elsewhere
            same = [s for s in everything if s.generation == generation]
            if len(same) != wanted:
                pool = Pool(driver, name)
                pool.incomplete = True
                pool.devices = tuple(d for s in _by_name(group) for d in s.devices)
                plain.append(pool)
                continue
            mine = {s.name for s in group}
            pool = _build(driver, name, group, [s for s in same if s.name not in mine],
                          features)
        (binding if pool.binding else plain).append(pool)
    plain.sort(key=_pool_order)
    binding.sort(key=_pool_order)
    return NodeView(plain + binding, frozenset(mismatch), labels)


def _pool_order(pool: Pool) -> tuple[str, str]:
    return pool.driver, pool.name


def _by_name(slices: Iterable[Slice]) -> list[Slice]:
    return sorted(slices, key=lambda s: s.name)


def _matches(node_name: str, labels: Mapping[str, str], want_name: str, all_nodes: bool,
             selector: NodeSelector | NodeSelectorError | None, what: str) -> bool:
    try:
        return node_matches(node_name, labels, want_name, all_nodes, selector)
    except NodeSelectorError as e:
        raise AllocationError(f"gather pool information: failed to perform node selection "
                              f"for {what}: failed to parse node selector: {e}") from None


def _build(driver: str, name: str, mine: list[Slice], others: Iterable[Slice],
           features: AllocatorFeatures) -> Pool:
    """Same as upstream's buildPool, including which slices its validation looks at."""
    pool = Pool(driver, name)
    counter_slices: list[Slice] = []
    for s in _by_name(mine):
        if features.partitionable_devices and s.has_counters:
            counter_slices.append(s)
        else:
            pool.slices.append(s)
    for s in others:
        if features.partitionable_devices and s.has_counters:
            counter_slices.append(s)
        else:
            pool.other_slices.append(s)
    pool.devices = tuple(d for s in pool.slices for d in s.devices)
    pool.binding = any(d.wire.get("bindingConditions") is not None for d in pool.devices)
    problem = _duplicate([d.name for d in pool.devices], "duplicate device name")
    if not problem and features.partitionable_devices:
        problem = _duplicate([n for s in counter_slices for n, _ in s.counter_sets],
                             "duplicate counter set name")
        if not problem:
            pool.counter_sets = {n: c for s in counter_slices for n, c in s.counter_sets}
            problem = _unknown_counters(pool.counter_sets, pool.slices) or _unknown_counters(
                pool.counter_sets, pool.other_slices)
    if problem:
        pool.invalid = True
        pool.invalid_reason = problem
    return pool


def _duplicate(names: list[str], what: str) -> str:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            return f"{what} {n}"
        seen.add(n)
    return ""


def _unknown_counters(counter_sets: Mapping[str, Mapping[str, Fraction]],
                      slices: Iterable[Slice]) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.consumes:
                known = counter_sets.get(set_name)
                if known is None:
                    return f"counter set {set_name} not found"
                for counter in counters:
                    if counter not in known:
                        return f"counter {counter} not found in counter set {set_name}"
    return ""
