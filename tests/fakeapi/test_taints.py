"""Upstream's ToleratesTaint and getMinTolerationTime, case by case."""

from __future__ import annotations

from typing import Any

import pytest

from fakeapi.kube.taints import tolerates, toleration_seconds, untolerated

T = {"key": "gpu", "value": "bad", "effect": "NoSchedule"}
CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    ("equal key value effect", {"key": "gpu", "value": "bad", "effect": "NoSchedule"}, T, True),
    ("default operator is Equal", {"key": "gpu", "value": "bad"}, T, True),
    ("value differs", {"key": "gpu", "value": "good"}, T, False),
    ("empty value matches empty", {"key": "gpu"}, {"key": "gpu", "effect": "NoSchedule"}, True),
    ("exists ignores the value", {"key": "gpu", "operator": "Exists"}, T, True),
    ("empty key with Exists matches all", {"operator": "Exists"}, T, True),
    ("empty key with Equal matches nothing", {"operator": "Equal", "value": "bad"}, T, False),
    ("effect differs", {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}, T, False),
    ("empty effect matches any", {"key": "gpu", "operator": "Exists", "effect": ""}, T, True),
    ("other key", {"key": "nic", "operator": "Exists"}, T, False),
    ("unknown operator", {"key": "gpu", "operator": "Gt", "value": "1"}, T, False),
]


@pytest.mark.parametrize(("toleration", "taint", "want"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_tolerates(toleration: dict[str, Any], taint: dict[str, Any], want: bool) -> None:
    assert tolerates(toleration, taint) is want


def test_untolerated_skips_soft_effects_and_tolerated_taints() -> None:
    soft = {"key": "a", "effect": "PreferNoSchedule"}
    hard = {"key": "b", "effect": "NoExecute"}
    assert untolerated([soft, T, hard], [{"key": "gpu", "operator": "Exists"}]) == hard
    assert untolerated([soft], []) is None


@pytest.mark.parametrize(("tolerations", "want"), [
    ([{"operator": "Exists"}], None),
    ([{"operator": "Exists", "tolerationSeconds": 30}], 30.0),
    ([{"operator": "Exists", "tolerationSeconds": 30}, {"operator": "Exists"}], 30.0),
    ([{"operator": "Exists", "tolerationSeconds": 30},
      {"key": "gpu", "operator": "Exists", "tolerationSeconds": 10}], 10.0),
    ([{"operator": "Exists", "tolerationSeconds": -5}], 0.0),
    ([{"key": "nic", "operator": "Exists", "tolerationSeconds": 5},
      {"operator": "Exists", "tolerationSeconds": 60}], 60.0),
])
def test_toleration_seconds(tolerations: list[dict[str, Any]], want: float | None) -> None:
    assert toleration_seconds(tolerations, T) == want


def test_no_matching_toleration_means_evict_now() -> None:
    with pytest.raises(LookupError):
        toleration_seconds([{"key": "nic", "operator": "Exists"}], T)
