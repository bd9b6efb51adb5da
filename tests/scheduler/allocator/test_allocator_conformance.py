"""The conformance suite against the pure allocator: every case of tests/data/allocator."""

from __future__ import annotations

import copy
import itertools

import pytest

from scheduler.allocator import (
    AllocationError,
    Diagnostics,
    NodeUnschedulable,
    allocate,
)
from tests.support.allocator_cases import (
    ERRORS,
    Case,
    check_results,
    claims_for,
    inventory_for,
    load_cases,
    run,
    state_for,
)

CASES = load_cases()
def test_enough_cases() -> None:
    """The issue's bar: at least 150 cases, 30 of them end to end, names unique per file."""
    assert len(CASES) >= 150
    assert sum(c.e2e for c in CASES) >= 30
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case(case: Case) -> None:
    """The case's outcome, the same again from warm caches, and unchanged with diagnostics;
    none of the inputs is modified."""
    inv = inventory_for(case)
    state = state_for(case)
    claims = claims_for(case, inv)
    before = copy.deepcopy((claims, case.slices, case.classes, case.node))
    for diagnostics in (None, None, Diagnostics()):
        if case.error is not None:
            with pytest.raises(ERRORS[case.error_type]) as raised:
                run(case, inv, state, claims, diagnostics)
            assert type(raised.value) is ERRORS[case.error_type]
            assert case.error in str(raised.value)
        else:
            results = run(case, inv, state, claims, diagnostics)
            check_results(results, case.expect)
            assert all("allocationTimestamp" not in r for r in results or ()), \
                "the scheduler adds the timestamp when it writes the allocation"
    assert (claims, case.slices, case.classes, case.node) == before
    if case.diagnostics is not None or case.steps is not None:
        diag = Diagnostics()
        try:
            run(case, inv, state, claims, diag)
        except (AllocationError, NodeUnschedulable):
            pass
        if case.diagnostics is not None:
            assert diag.as_dict() == case.diagnostics
        if case.steps is not None:
            assert diag.steps == case.steps, "combinations, not permutations, as upstream"


def test_results_use_new_share_ids() -> None:
    """Each share of a device gets a share ID of its own from `new_share_id`."""
    case = next(c for c in CASES if c.name == "capacity-two-shares-of-one-device")
    inv, state = inventory_for(case), state_for(case)
    counter = itertools.count(1)
    results = allocate(claims=case.claims, node=case.node, inventory=inv, allocated=state,
                       new_share_id=lambda: f"00000000-0000-4000-8000-{next(counter):012d}")
    assert results is not None
    ids = [r["shareID"] for result in results for r in result["devices"]["results"]]
    assert len(ids) == 2 and len(set(ids)) == 2
