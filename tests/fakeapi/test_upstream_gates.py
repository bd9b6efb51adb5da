"""Our gate table against upstream's 1.37 gate list (tests/data/features, with its sources)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import pytest

from fakeapi.machinery.features import GATES, FeatureGateError, Gate, Stage, parse_feature_gates
from tests.support.paths import DATA

UPSTREAM_FILE = DATA / "features" / "upstream-1.37-gates.tsv"


@dataclasses.dataclass(frozen=True)
class UpstreamGate:
    """One row of the upstream list: the spec in effect at 1.37."""

    name: str
    stage: Stage
    default: bool
    locked: bool


def read_upstream() -> list[UpstreamGate]:
    """The data file's rows (comments and blank lines skipped)."""
    rows = []
    for line in UPSTREAM_FILE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, stage, default, locked = line.split("\t")
        rows.append(UpstreamGate(name=name, stage=Stage[stage], default=default == "true",
                                 locked=locked == "true"))
    return rows


def differences(upstream: list[UpstreamGate], ours: Mapping[str, Gate]) -> list[str]:
    """What our table gets wrong about each upstream gate: missing, or another stage,
    default or lock."""
    out = []
    for u in upstream:
        gate = ours.get(u.name)
        if gate is None:
            out.append(f"{u.name}: missing")
            continue
        for what, theirs, mine in (("stage", u.stage, gate.stage),
                                   ("default", u.default, gate.default),
                                   ("locked", u.locked, gate.locked)):
            if theirs != mine:
                out.append(f"{u.name}: {what} is {mine}, upstream {theirs}")
    return out


UPSTREAM = read_upstream()


def test_the_list_is_read() -> None:
    names = [u.name for u in UPSTREAM]
    assert len(names) == len(set(names)) and len(names) > 30
    assert "GangScheduling" in names


@pytest.mark.parametrize("gate", UPSTREAM, ids=lambda u: u.name)
def test_every_upstream_gate_is_ours_with_its_stage_default_and_lock(gate: UpstreamGate) -> None:
    assert differences([gate], GATES) == []


@pytest.mark.parametrize(("change", "expected"), [
    (lambda t: t.pop("GangScheduling"), "GangScheduling: missing"),
    (lambda t: t.update(VolumeLimitScaling=dataclasses.replace(
        t["VolumeLimitScaling"], default=False)),
     "VolumeLimitScaling: default is False, upstream True"),
    (lambda t: t.update(NodeDeclaredFeatures=dataclasses.replace(
        t["NodeDeclaredFeatures"], stage=Stage.BETA)),
     "NodeDeclaredFeatures: stage is Stage.BETA, upstream Stage.GA"),
    (lambda t: t.update(DRAAdminAccess=dataclasses.replace(t["DRAAdminAccess"], locked=False)),
     "DRAAdminAccess: locked is False, upstream True"),
])
def test_the_comparison_catches_a_wrong_table(change: Callable[[dict[str, Gate]], object],
                                              expected: str) -> None:
    table = dict(GATES)
    change(table)
    assert differences(UPSTREAM, table) == [expected]


@pytest.mark.parametrize(("text", "error"), [
    ("GangScheduling=true,GenericWorkload=true", None),
    ("GangScheduling=true", "GangScheduling is enabled, but depends on features that are "
                            "disabled: [GenericWorkload]"),
    ("AllAlpha=true,AllBeta=true", None),
    ("CompositePodGroup=true,GenericWorkload=true",
     "CompositePodGroup is enabled, but depends on features that are disabled: "
     "[TopologyAwareWorkloadScheduling]"),
    ("NodeDeclaredFeatures=false",
     "cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true"),
])
def test_new_gates_on_the_command_line(text: str, error: str | None) -> None:
    if error is None:
        parse_feature_gates(text)
    else:
        with pytest.raises(FeatureGateError) as e:
            parse_feature_gates(text)
        assert str(e.value) == error
