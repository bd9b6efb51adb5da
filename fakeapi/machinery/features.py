"""Feature gates: the Kubernetes 1.37 defaults of the DRA family, overrides, and their checks.

Behaves like kube-apiserver's `--feature-gates`: an unknown name or a locked gate set to
its non-default value is refused, dependencies are checked once every setting is known,
and `AllAlpha` / `AllBeta` switch a whole stage (explicit settings win). Known: the DRA
family, the workload gates DRA builds on, `GangScheduling`, and every gate of upstream's
1.37 kube-scheduler list (`tests/data/features/upstream-1.37-gates.tsv` says where each
comes from; `tests/fakeapi/test_upstream_gates.py` holds this table to it). A gate this
server has no behaviour for is accepted and reported, as a flag kube-apiserver would take.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

KUBERNETES_RELEASE = "1.37"
ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"
METRIC = "kubernetes_feature_enabled"


class Stage(enum.Enum):
    """Maturity of a gate; the value is the `stage` label of the upstream metric."""

    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"

    @property
    def title(self) -> str:
        """Human name: Alpha, Beta, GA, Deprecated."""
        return "GA" if self is Stage.GA else self.value.capitalize()


@dataclasses.dataclass(frozen=True)
class Gate:
    """One gate as of 1.37: default, stage, since which release, lock, and what it needs."""

    name: str
    default: bool
    stage: Stage
    since: str
    locked: bool = False
    requires: tuple[str, ...] = ()


class FeatureGateError(ValueError):
    """A `--feature-gates` value kube-apiserver would refuse at start."""


class GateReader(Protocol):
    """What field dropping and strategies need: whether a gate is on."""

    def enabled(self, name: str) -> bool: ...


DRA = "DynamicResourceAllocation"
WORKLOAD = "GenericWorkload"
GANG = "GangScheduling"
A, B, GA = Stage.ALPHA, Stage.BETA, Stage.GA


def _gate(name: str, stage: Stage, default: bool, since: str, *requires: str,
          locked: bool = False) -> Gate:
    return Gate(name=name, default=default, stage=stage, since=since, locked=locked,
                requires=tuple(requires))


# Sources: pkg/features/kube_features.go and the scheduler's feature list at 1.37 (stages,
# defaults, locks), the 1.37 feature-gate reference, and upstream's dependency map. Where
# upstream's 1.37 dependency entry was not available, a DRA gate is declared to need
# DynamicResourceAllocation (its parent), which never changes behaviour because that gate is
# locked on; the few non-obvious ones say where they come from.
_TABLE: tuple[Gate, ...] = (
    _gate(DRA, GA, True, "1.35", locked=True),
    _gate("DRAAdminAccess", GA, True, "1.36", DRA, locked=True),
    _gate("DRAPrioritizedList", GA, True, "1.37", DRA, locked=True),
    _gate("DRAResourceClaimDeviceStatus", GA, True, "1.37", locked=True),
    _gate("DRAExtendedResource", GA, True, "1.37", DRA, locked=True),
    _gate("DRADeviceTaints", GA, True, "1.37", DRA),
    _gate("DRADeviceTaintRules", GA, True, "1.37", "DRADeviceTaints"),
    _gate("DRAConsumableCapacity", B, True, "1.36", DRA),
    _gate("DRAPartitionableDevices", B, True, "1.36", DRA),
    _gate("DRADeviceBindingConditions", B, True, "1.36", DRA, "DRAResourceClaimDeviceStatus"),
    _gate("DRAResourceClaimGranularStatusAuthorization", B, True, "1.36", DRA),
    _gate("DRASchedulerFilterTimeout", B, True, "1.34", DRA),
    _gate("ResourceHealthStatus", B, True, "1.36", DRA),
    # Beta in 1.37 but on by default only once the minimum compatibility version is 1.37.
    _gate("DRAFractionalCapacityRange", B, False, "1.37", "DRAConsumableCapacity"),
    # PodGroup claims live in the Workload API (seed: "requires DRAWorkloadResourceClaims").
    _gate("DRAWorkloadResourceClaims", B, False, "1.37", DRA, WORKLOAD),
    _gate("DRAListTypeAttributes", A, False, "1.36", DRA),
    _gate("DRANodeAllocatableResources", A, False, "1.36", DRA),
    _gate("DRAResourcePoolStatus", A, False, "1.36", DRA),
    _gate("DRADerivedAttributes", A, False, "1.37", DRA),
    # "DRAPartitionableDevices also needs to be enabled" (the gate's upstream comment).
    _gate("DRADeviceCompatibilityGroups", A, False, "1.37", "DRAPartitionableDevices"),
    _gate("DRAOptionalNodeOperations", A, False, "1.37", DRA),
    # Documented: needs both DRAResourcePoolStatus and DRAPartitionableDevices.
    _gate("DRAPartitionableDevicesType", A, False, "1.37", "DRAResourcePoolStatus",
          "DRAPartitionableDevices"),
    _gate(WORKLOAD, B, False, "1.37"),
    # The scheduler's dependency test: CompositePodGroup needs TopologyAwareWorkloadScheduling.
    _gate("CompositePodGroup", A, False, "1.37", WORKLOAD, "TopologyAwareWorkloadScheduling"),
    # pkg/features (1.35 spec; see the data file): the gang plugin needs the Workload API.
    _gate(GANG, A, False, "1.35", WORKLOAD),
    _gate("PodGroupPreemptionPolicy", A, False, "1.37", WORKLOAD),
    _gate("TopologyAwareWorkloadScheduling", A, False, "1.36", WORKLOAD),
    _gate("WorkloadWithJob", A, False, "1.36", WORKLOAD),
    # The rest of kube-scheduler's 1.37 list: accepted, no behaviour here.
    _gate("InPlacePodLevelResourcesVerticalScaling", B, True, "1.36"),
    _gate("InPlacePodVerticalScaling", GA, True, "1.35", locked=True),
    _gate("InPlacePodVerticalScalingSchedulerPreemption", A, False, "1.37"),
    _gate("InterPodAffinityHostnameFastPath", A, False, "1.37"),
    _gate("MatchLabelKeysInPodTopologySpread", B, True, "1.27"),
    _gate("NodeDeclaredFeatures", GA, True, "1.37", locked=True),
    _gate("NodeInclusionPolicyInPodTopologySpread", GA, True, "1.33", locked=True),
    _gate("NominatedNodeNameForExpectation", B, True, "1.35"),
    _gate("OpportunisticBatching", B, True, "1.35"),
    _gate("PodLevelResources", B, True, "1.34"),
    _gate("SchedulerAsyncAPICalls", B, False, "1.34"),
    _gate("SchedulerAsyncPreemption", B, True, "1.33"),
    _gate("SchedulerPopFromBackoffQ", B, True, "1.33"),
    _gate("SchedulerPreQueueingHints", A, False, "1.37"),
    _gate("StorageCapacityScoring", B, True, "1.37"),
    _gate("TaintTolerationComparisonOperators", A, False, "1.35"),
    _gate("VolumeAttributesClass", GA, True, "1.36", locked=True),
    _gate("VolumeLimitScaling", B, True, "1.37"),
)
GATES: dict[str, Gate] = {g.name: g for g in _TABLE}
"""Every known gate by name, in table order."""

_STAGE_SWITCHES = {ALL_ALPHA: Stage.ALPHA, ALL_BETA: Stage.BETA}
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_feature_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false` → {"A": True, "B": False}, validated as kube-apiserver does at start."""
    gates: dict[str, bool] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = (s.strip() for s in item.partition("="))
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        if value not in _TRUE + _FALSE:
            raise FeatureGateError(f"invalid value of {name}={value}, err: strconv.ParseBool: "
                                   f'parsing "{value}": invalid syntax')
        gates[name] = value in _TRUE
    FeatureGates(gates)
    return gates


def _aggregate(errors: list[str]) -> str:
    """One message, or `[a, b]` for several (as upstream's error aggregate prints them)."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class FeatureGates:
    """The gates in effect: explicit settings over the 1.37 defaults."""

    def __init__(self, overrides: Mapping[str, bool] | None = None, *,
                 check: bool = True) -> None:
        """Apply `overrides`; raises FeatureGateError unless `check` is False.

        `check=False` skips the lock and dependency checks (never the unknown-name check),
        like upstream's test helpers that force a gate; it exists for tests only.
        """
        self.overrides = dict(overrides or {})
        unknown = [n for n in self.overrides if n not in GATES and n not in _STAGE_SWITCHES]
        if unknown:
            raise FeatureGateError(f"unrecognized feature gate: {unknown[0]}")
        self._enabled = {name: self._resolve(gate) for name, gate in GATES.items()}
        if check:
            self._check()

    def _resolve(self, gate: Gate) -> bool:
        if gate.name in self.overrides:
            return self.overrides[gate.name]
        for switch, stage in _STAGE_SWITCHES.items():
            if gate.stage is stage and switch in self.overrides:
                return self.overrides[switch]
        return gate.default

    def _check(self) -> None:
        locked = [f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                  f"{_go_bool(GATES[name].default)}"
                  for name, value in self.overrides.items()
                  if name in GATES and GATES[name].locked and value != GATES[name].default]
        if locked:
            raise FeatureGateError(_aggregate(locked))
        broken = []
        for name in sorted(GATES):
            missing = [dep for dep in GATES[name].requires if not self._enabled[dep]]
            if self._enabled[name] and missing:
                broken.append(f"{name} is enabled, but depends on features that are disabled: "
                              f"[{' '.join(missing)}]")
        if broken:
            raise FeatureGateError(_aggregate(broken))

    def enabled(self, name: str) -> bool:
        """Whether a gate is on; asking for a gate the table lacks is a programming error."""
        try:
            return self._enabled[name]
        except KeyError:
            raise KeyError(f"feature {name!r} is not registered in FeatureGates") from None

    def as_dict(self) -> dict[str, bool]:
        """Every known gate and whether it is on, in table order."""
        return dict(self._enabled)

    def states(self) -> Iterator[tuple[Gate, bool]]:
        """(gate, enabled) for every known gate, in table order."""
        return ((GATES[name], on) for name, on in self._enabled.items())

    def metrics_text(self) -> str:
        """The upstream `kubernetes_feature_enabled` gauge in Prometheus text format."""
        lines = [f"# HELP {METRIC} [BETA] Whether each feature gate is enabled, with its "
                 "stage (empty for GA).", f"# TYPE {METRIC} gauge"]
        rows: Iterable[tuple[str, str, bool]] = (
            *((g.name, g.stage.value, on) for g, on in self.states()),
            *((s, st.value, self.overrides.get(s, False)) for s, st in _STAGE_SWITCHES.items()))
        lines += [f'{METRIC}{{name="{name}",stage="{stage}"}} {int(on)}'
                  for name, stage, on in sorted(rows)]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return f"FeatureGates({self.overrides!r})"


def _go_bool(value: bool) -> str:
    return "true" if value else "false"
