"""The e2e cases' objects as the API stores them: each is accepted by the real registry
(validation, defaulting, feature-gate field dropping at the 1.37 defaults), and the allocator
gives the expected outcome for the stored objects, as the scheduler will see them."""

from __future__ import annotations

import pytest

from fakeapi.cluster import Cluster, ClusterConfig
from scheduler.allocator import AllocationError, NodeUnschedulable
from tests.support.allocator_cases import (
    ERRORS,
    Case,
    check_results,
    claims_for,
    e2e_cases,
    inventory_for,
    run,
    state_for,
)

CASES = e2e_cases()
RESOURCES = (("nodes", "node"), ("deviceclasses.resource.k8s.io", "classes"),
             ("resourceslices.resource.k8s.io", "slices"),
             ("devicetaintrules.resource.k8s.io", "taint_rules"),
             ("resourceclaims.resource.k8s.io", "claims"))


async def stored(case: Case) -> Case:
    """The case with every object replaced by what the API server stored for it."""
    cluster = Cluster(ClusterConfig(seed=1))
    client = cluster.client("admin")
    out: dict[str, object] = {}
    try:
        for resource, field in RESOURCES:
            objects = getattr(case, field)
            single = isinstance(objects, dict)
            created = [await client.create(resource, obj) for obj in
                       ([objects] if single else objects)]
            out[field] = created[0] if single else created
        if case.pod is not None:
            pod = {**case.pod, "metadata": {k: v for k, v in case.pod["metadata"].items()
                                            if k != "uid"}}
            out["pod"] = await client.create("pods", pod)
    finally:
        await cluster.close()
    return Case(**{**case.__dict__, **out})


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_e2e_case_objects_are_accepted(case: Case) -> None:
    """Created through the registry without error, and allocated as the case expects."""
    assert not case.allocated, "e2e cases can't start with devices in use"
    api = await stored(case)
    inv = inventory_for(api)
    claims = claims_for(api, inv)
    if case.error is not None:
        with pytest.raises((AllocationError, NodeUnschedulable)) as raised:
            run(api, inv, state_for(api), claims)
        assert type(raised.value) is ERRORS[case.error_type]
        assert case.error in str(raised.value)
    else:
        check_results(run(api, inv, state_for(api), claims), case.expect)
