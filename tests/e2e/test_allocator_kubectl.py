"""The allocator conformance cases end to end: each case's objects applied with the real
kubectl v1.37, a pod using its claims pinned to the case's node, and then the claims'
`status.allocation` (or the pod's PodScheduled condition) compared with what upstream's
allocator gives. One server runs only the scheduler; each case gets a namespace of its own
and its cluster-scoped objects are removed before the next one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.support.allocator_cases import Case, check_results, e2e_cases
from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server

Obj = dict[str, Any]
CLAIMS = "resourceclaims.resource.k8s.io"
PER_FILE = 3
"""Cases run per data file: enough to cover every file's topic in CI time (the in-process
e2e-objects test runs all of them)."""


def _sample(cases: list[Case]) -> list[Case]:
    chosen: dict[str, list[Case]] = {}
    for case in cases:
        if case.pod is None and len(chosen.setdefault(case.source, [])) < PER_FILE:
            chosen[case.source].append(case)
    return [c for group in chosen.values() for c in group]


CASES = _sample(e2e_cases())


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory, kubectl_binary: str) -> Iterator[Kubectl]:
    """A server running only the scheduler (no emulated nodes, no other controllers)."""
    srv: ServerProcess = start_server(tmp_path_factory.mktemp("allocator"), "--components",
                                      "scheduler")
    yield Kubectl(kubectl_binary, srv.kubeconfig)
    assert srv.stop() == 0


def _in(namespace: str, obj: Obj) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def _pod(case: Case, namespace: str) -> Obj:
    node = case.node["metadata"]["name"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pinned",
                                                            "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                     "affinity": {"nodeAffinity": {
                         "requiredDuringSchedulingIgnoredDuringExecution": {
                             "nodeSelectorTerms": [{"matchFields": [{
                                 "key": "metadata.name", "operator": "In",
                                 "values": [node]}]}]}}},
                     "resourceClaims": [{"name": f"c{i}",
                                         "resourceClaimName": c["metadata"]["name"]}
                                        for i, c in enumerate(case.claims)]}}


def _cleanup(kubectl: Kubectl, case: Case, namespace: str) -> None:
    """Free the case's devices for the next case: deallocate and delete its claims (the
    delete-protection finalizer goes with the allocation), then its cluster objects."""
    kubectl("delete", "pod", "pinned", "-n", namespace, "--wait=false")
    for claim in case.claims:
        name = claim["metadata"]["name"]
        kubectl("patch", "resourceclaim", name, "-n", namespace, "--subresource=status",
                "--type=merge", "-p", '{"status":{"allocation":null,"reservedFor":null}}')
        kubectl("patch", "resourceclaim", name, "-n", namespace, "--type=merge", "-p",
                '{"metadata":{"finalizers":null}}')
    cluster_objects = [*case.classes, *case.slices, *case.taint_rules, case.node]
    kubectl("delete", "--ignore-not-found", "-f", "-", input=yaml.safe_dump_all(cluster_objects))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_through_kubectl(kubectl: Kubectl, case: Case) -> None:
    namespace = f"case-{CASES.index(case)}"
    kubectl("create", "namespace", namespace)
    docs = [case.node, *case.classes, *case.slices, *case.taint_rules,
            *(_in(namespace, c) for c in case.claims), _pod(case, namespace)]
    kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    try:
        kubectl("wait", "--for=jsonpath={.status.conditions[?(@.type=='PodScheduled')].status}",
                "pod/pinned", "-n", namespace, "--timeout=30s")
        pod = json.loads(kubectl("get", "pod", "pinned", "-n", namespace, "-o", "json"))
        condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
        if case.error is not None:
            assert condition["status"] == "False", condition
            assert case.error.replace("default/", f"{namespace}/") in condition["message"], (
                condition)
            assert condition["reason"] == ("SchedulerError" if case.error_type ==
                                           "AllocationError" else "Unschedulable")
            return
        if case.expect is None:
            assert condition["status"] == "False", condition
            assert "cannot allocate all claims" in condition["message"], condition
            return
        assert condition["status"] == "True", condition
        assert pod["spec"]["nodeName"] == case.node["metadata"]["name"]
        claims = json.loads(kubectl("get", CLAIMS, "-n", namespace, "-o", "json"))["items"]
        by_name = {c["metadata"]["name"]: c for c in claims}
        got = []
        for claim in case.claims:
            allocation = dict(by_name[claim["metadata"]["name"]]["status"]["allocation"])
            assert allocation.pop("allocationTimestamp")
            got.append(allocation)
        check_results(got, case.expect)
    finally:
        _cleanup(kubectl, case, namespace)
