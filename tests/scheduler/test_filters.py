"""The scheduler's node filters, requests and FitError messages, case by case."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from fakeapi.kube.nodeselector import selector_matches
from scheduler.filters import Rejection, pod_requests, run_filters
from scheduler.fiterror import fit_error

Obj = dict[str, Any]


def node(name: str = "n1", *, labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         unschedulable: bool = False, allocatable: dict[str, str] | None = None) -> Obj:
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec,
            "status": {"allocatable": allocatable or {"cpu": "4", "memory": "8Gi",
                                                        "pods": "110"}}}


def pod(**spec: Any) -> Obj:
    return {"metadata": {"name": "p", "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}


def cpu(value: str, **extra: Any) -> Obj:
    return {"name": "c", "image": "x", "resources": {"requests": {"cpu": value}}, **extra}


TAINT = {"key": "gpu", "value": "broken", "effect": "NoSchedule"}
AFFINITY = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                 "values": ["a"]}]}]}}}

FILTERS: list[tuple[str, Obj, Obj, dict[str, str], int, tuple[str, ...] | None]] = [
    ("plain pod fits", pod(), node(), {}, 0, None),
    ("unschedulable node", pod(), node(unschedulable=True), {}, 0,
     ("node(s) were unschedulable",)),
    ("unschedulable tolerated", pod(tolerations=[{
        "key": "node.kubernetes.io/unschedulable", "operator": "Exists"}]),
     node(unschedulable=True), {}, 0, None),
    ("other node name", pod(nodeName="n2"), node(), {}, 0,
     ("node(s) didn't match the requested node name",)),
    ("untolerated taint", pod(), node(taints=[TAINT]), {}, 0,
     ("node(s) had untolerated taint {gpu: broken}",)),
    ("tolerated taint", pod(tolerations=[{"key": "gpu", "operator": "Exists"}]),
     node(taints=[TAINT]), {}, 0, None),
    ("soft taint is ignored", pod(), node(taints=[{"key": "a", "effect": "PreferNoSchedule"}]),
     {}, 0, None),
    ("node selector mismatch", pod(nodeSelector={"zone": "a"}), node(labels={"zone": "b"}),
     {}, 0, ("node(s) didn't match Pod's node affinity/selector",)),
    ("node selector match", pod(nodeSelector={"zone": "a"}), node(labels={"zone": "a"}),
     {}, 0, None),
    ("required affinity mismatch", pod(affinity=AFFINITY), node(labels={"zone": "b"}), {}, 0,
     ("node(s) didn't match Pod's node affinity/selector",)),
    ("required affinity match", pod(affinity=AFFINITY), node(labels={"zone": "a"}), {}, 0,
     None),
    ("insufficient cpu", pod(containers=[cpu("3")]), node(), {"cpu": "2"}, 1,
     ("Insufficient cpu",)),
    ("cpu fits exactly", pod(containers=[cpu("2")]), node(), {"cpu": "2"}, 1, None),
    ("too many pods", pod(), node(allocatable={"pods": "3"}), {}, 3, ("Too many pods",)),
    ("too many pods and insufficient memory",
     pod(containers=[{"name": "c", "image": "x", "resources": {"limits": {"memory": "9Gi"}}}]),
     node(allocatable={"pods": "1", "memory": "8Gi"}), {}, 1,
     ("Too many pods", "Insufficient memory")),
    ("extended resource missing", pod(containers=[{"name": "c", "image": "x", "resources": {
        "requests": {"example.com/gpu": "1"}}}]), node(), {}, 0,
     ("Insufficient example.com/gpu",)),
    ("taint checked before resources", pod(containers=[cpu("9")]), node(taints=[TAINT]), {},
     0, ("node(s) had untolerated taint {gpu: broken}",)),
    ("a node with no capacity at all takes any pod", pod(containers=[cpu("9")]),
     {"metadata": {"name": "bare"}}, {}, 5, None),
]


@pytest.mark.parametrize(("p", "n", "used", "count", "want"), [c[1:] for c in FILTERS],
                         ids=[c[0] for c in FILTERS])
def test_filters(p: Obj, n: Obj, used: dict[str, str], count: int,
                 want: tuple[str, ...] | None) -> None:
    got = run_filters(p, n, requests=pod_requests(p),
                      used={k: Fraction(v) for k, v in used.items()}, pod_count=count)
    assert (got.reasons if got else None) == want
    if got is not None:
        assert got.resolvable is (got.plugin == "NodeResourcesFit")


@pytest.mark.parametrize(("spec", "want"), [
    ({"containers": [cpu("1"), cpu("500m")]}, {"cpu": Fraction(3, 2)}),
    ({"containers": [cpu("1")], "initContainers": [cpu("2")]}, {"cpu": Fraction(2)}),
    ({"containers": [cpu("1")], "initContainers": [cpu("500m", restartPolicy="Always"),
                                                    cpu("1")]}, {"cpu": Fraction(3, 2)}),
    ({"containers": [cpu("1")], "initContainers": [cpu("1", restartPolicy="Always"),
                                                    cpu("3")]}, {"cpu": Fraction(4)}),
    ({"containers": [cpu("1")], "overhead": {"cpu": "250m"}}, {"cpu": Fraction(5, 4)}),
    ({"containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]},
     {"cpu": Fraction(2)}),
])
def test_pod_requests(spec: Obj, want: dict[str, Fraction]) -> None:
    assert pod_requests({"spec": spec}) == want


TERM_A = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}


@pytest.mark.parametrize(("selector", "labels", "want"), [
    (None, {}, True),
    ({"nodeSelectorTerms": []}, {}, False),
    ({"nodeSelectorTerms": [{}]}, {"zone": "a"}, False),
    ({"nodeSelectorTerms": [TERM_A]}, {"zone": "a"}, True),
    ({"nodeSelectorTerms": [TERM_A]}, {"zone": "b"}, False),
    ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn",
                                                   "values": ["a"]}]}]}, {}, True),
    ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Gt",
                                                   "values": ["3"]}]}]}, {"gpus": "4"}, True),
    ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Lt",
                                                   "values": ["3"]}]}]}, {"gpus": "x"}, False),
    ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]},
                            TERM_A]}, {"x": "1", "zone": "a"}, True),
    ({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                              "values": ["n1"]}]}]}, {}, True),
    ({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                              "values": ["n2"]}]}]}, {}, False),
    ({"nodeSelectorTerms": [{"matchFields": [{"key": "spec.x", "operator": "Exists"}]}]}, {},
     False),
])
def test_node_selector(selector: Obj | None, labels: dict[str, str], want: bool) -> None:
    assert selector_matches(selector, node(labels=labels)) is want


R_CPU = Rejection(plugin="NodeResourcesFit", reasons=("Insufficient cpu",), resolvable=True)
R_TAINT = Rejection(plugin="TaintToleration", reasons=("node(s) had untolerated taint {a: }",))
R_DRA = Rejection(plugin="DynamicResources", reasons=("cannot allocate all claims",))


@pytest.mark.parametrize(("kwargs", "want"), [
    ({"total": 0}, "no nodes available to schedule pods"),
    ({"total": 3, "rejections": [R_CPU, R_TAINT, R_CPU]},
     "0/3 nodes are available: 1 node(s) had untolerated taint {a: }, 2 Insufficient cpu. "
     "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
     "2 No preemption victims found for incoming pod."),
    ({"total": 2, "rejections": [R_DRA, R_DRA], "post_filter": "still not schedulable"},
     "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
     "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    ({"total": 2, "prefilter": 'pod "ns/p": ResourceClaim not created yet'},
     '0/2 nodes are available: pod "ns/p": ResourceClaim not created yet. preemption: 0/2 '
     "nodes are available: 2 Preemption is not helpful for scheduling."),
])
def test_fit_error(kwargs: dict[str, Any], want: str) -> None:
    assert fit_error(**kwargs) == want
