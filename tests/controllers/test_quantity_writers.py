"""Quantities the components write are upstream's canonical `Quantity.String()`: the
allocator's consumed capacity and the pool-status controller's shareable summary spell the
same value the same way (they had copies of the formatting that disagreed: 3/7 printed as
`428571428571428571428571428572e-30` and `428571429n`, 1e-10 as `100e-12` and `1n`)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controllers import poolstatus
from scheduler.allocator import AllocatedState, allocate
from tests.support.allocator_cases import FIXED_SHARE_ID, inventory_for, load_cases

CASE = next(c for c in load_cases() if c.name == "consumable-capacity-multi-allocatable-"
            "device-without-policy-with-capacity-request")
VALUES = [
    # what a claim requests (and a device offers), what upstream prints for it
    ("0.4285714285714285714285714285714", "428571429n"),  # 3/7 to 31 places: up to nano
    ("1e-10", "1e-9"),  # rounded up to nano, the DecimalExponent format kept
    ("1.5Gi", "1536Mi"),
    ("1e3", "1e3"),
    ("1E", "1E"),
    ("1500m", "1500m"),
]


def consumed_by_allocator(requested: str) -> str:
    """The allocator's consumedCapacity for one claim that requests `requested` of a
    shareable device without a request policy."""
    case = copy.deepcopy(CASE)
    claim = case.claims[0]
    claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"]["requests"] = {
        "capacity0": requested}
    case.slices[0]["spec"]["devices"][0]["capacity"]["capacity0"]["value"] = "2E"
    results = allocate(claims=[claim], node=case.node, inventory=inventory_for(case),
                       allocated=AllocatedState(), new_share_id=lambda: FIXED_SHARE_ID)
    assert results is not None
    [device] = results[0]["devices"]["results"]
    return str(device["consumedCapacity"]["capacity0"])


def pool_summary(capacity: str, consumed: str) -> dict[str, Any]:
    """The pool-status controller's shareable summary of one device of `capacity`, of which
    one allocation consumed `consumed`."""
    device = {"name": "d", "allowMultipleAllocations": True,
              "capacity": {"c": {"value": capacity}}}
    claim = {"status": {"allocation": {"devices": {"results": [
        {"driver": "x.example.com", "pool": "p", "device": "d", "consumedCapacity": {
            "c": consumed}}]}}}}
    slice_ = {"metadata": {"name": "s"}, "spec": {
        "driver": "x.example.com", "pool": {"name": "p", "generation": 1}, "devices": [device]}}
    status = poolstatus.compute(poolstatus.Inputs(spec={"driver": "x.example.com"},
                                                  slices=[slice_], claims=[claim]))
    [entry] = status["pools"][0]["shareableSummary"]["capacity"]
    return dict(entry)


@pytest.mark.parametrize(("text", "canonical"), VALUES)
def test_the_allocator_writes_upstreams_canonical_form(text: str, canonical: str) -> None:
    assert consumed_by_allocator(text) == canonical


@pytest.mark.parametrize(("text", "canonical"), VALUES)
def test_the_pool_status_controller_writes_upstreams_canonical_form(text: str,
                                                                     canonical: str) -> None:
    assert pool_summary(text, "0") == {"name": "c", "total": canonical, "consumed": "0",
                                       "available": canonical}
    assert pool_summary("2E", text)["consumed"] == canonical


def test_a_summary_keeps_the_format_of_its_first_term() -> None:
    """As upstream's Quantity.Add: the total and what is left print in the capacity's
    format, the consumed amount in the allocation's; a zero takes the other's format."""
    assert pool_summary("10Gi", "3G") == {"name": "c", "total": "10Gi", "consumed": "3G",
                                          "available": "7737418240"}
    assert pool_summary("1Gi", "512Mi") == {"name": "c", "total": "1Gi", "consumed": "512Mi",
                                            "available": "512Mi"}
    assert pool_summary("2G", "3G")["available"] == "0"  # never negative
