"""The `fakeapi_cluster` fixture in the suite itself: the real kubectl talks to it through its
kubeconfig, `advance()` moves the virtual clock (and refuses bad durations without moving
it), `events()` reads the log, a real-clock cluster refuses `advance()`, and a closed cluster
says so."""

from __future__ import annotations

import pytest
from kubernetes import client

from fakeapi.machinery.durations import DurationError
from fakeapi.testing import ClusterSettings, FakeapiCluster
from tests.support.kubectl import Kubectl

LEASES = "leases.coordination.k8s.io"


def renewed(cluster: FakeapiCluster) -> str:
    """When worker-0's kubelet last renewed its Lease (clock time)."""
    spec = client.CoordinationV1Api(cluster.client).read_namespaced_lease(
        "worker-0", "kube-node-lease").spec
    assert spec is not None and spec.renew_time is not None
    return spec.renew_time.isoformat()


@pytest.mark.fakeapi(nodes=1)
def test_kubectl_talks_to_the_cluster_over_https_as_the_admin(
        fakeapi_cluster: FakeapiCluster, kubectl_binary: str) -> None:
    kubectl = Kubectl(kubectl_binary, fakeapi_cluster.kubeconfig)
    assert fakeapi_cluster.url.startswith("https://127.0.0.1:")
    assert kubectl("get", "nodes", "-o", "name").split() == ["node/worker-0"]
    assert kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}") == \
        "kubernetes-admin"
    kubectl("create", "configmap", "made-by-kubectl", "--from-literal=a=b")
    [made] = [e for e in fakeapi_cluster.events(fakeapi_cluster.ready_revision)
              if e.name == "made-by-kubectl"]
    assert (made.type, made.resource, made.actor) == ("ADDED", "configmaps",
                                                      "kubernetes-admin")


@pytest.mark.fakeapi(nodes=1)
@pytest.mark.parametrize(("duration", "renewed_at"), [
    ("10s", "2026-01-01T00:00:10+00:00"), (10, "2026-01-01T00:00:10+00:00"),
    (25.5, "2026-01-01T00:00:20+00:00"), ("1m", "2026-01-01T00:01:00+00:00"),
    ("1h0m5s", "2026-01-01T01:00:00+00:00"), ("0", "2026-01-01T00:00:00+00:00"),
])
def test_advance_moves_the_virtual_clock_and_the_timers_fire(
        fakeapi_cluster: FakeapiCluster, duration: str | float, renewed_at: str) -> None:
    fakeapi_cluster.advance(duration)  # the kubelet renews its Lease every 10 s
    assert renewed(fakeapi_cluster) == renewed_at


@pytest.mark.fakeapi(nodes=1)
@pytest.mark.parametrize(("duration", "error", "message"), [
    ("-5s", ValueError, "advance('-5s'): a clock can't go back"),
    (-1, ValueError, "advance(-1): a clock can't go back"),
    ("5", DurationError, 'time: missing unit in duration "5"'),
    ("5 minutes", DurationError, 'time: unknown unit " minutes" in duration "5 minutes"'),
    ("", DurationError, 'time: invalid duration ""'),
])
def test_a_bad_duration_is_refused_and_the_clock_stays(
        fakeapi_cluster: FakeapiCluster, duration: str | float, error: type[Exception],
        message: str) -> None:
    before = fakeapi_cluster.events()
    with pytest.raises(error) as e:
        fakeapi_cluster.advance(duration)
    assert str(e.value) == message
    fakeapi_cluster.advance("9s")  # the clock is where it was: no renewal yet
    assert renewed(fakeapi_cluster) == "2026-01-01T00:00:00+00:00"
    assert fakeapi_cluster.events() == before


@pytest.mark.fakeapi(nodes=0)
def test_events_are_the_log_from_the_bootstrap_on_as_copies(
        fakeapi_cluster: FakeapiCluster) -> None:
    everything = fakeapi_cluster.events()
    assert [e.revision for e in everything] == list(range(1, fakeapi_cluster.ready_revision + 1))
    first = everything[0]
    assert (first.type, first.resource, first.name, first.actor) == (
        "ADDED", "namespaces", "default", "system:apiserver")
    assert fakeapi_cluster.events(fakeapi_cluster.ready_revision) == []

    client.CoreV1Api(fakeapi_cluster.client).create_namespace(
        client.V1Namespace(metadata=client.V1ObjectMeta(name="mine")))
    [mine] = [e for e in fakeapi_cluster.events(fakeapi_cluster.ready_revision)
              if e.resource == "namespaces"]  # its service account may follow
    assert (mine.revision, mine.name, mine.object["metadata"]["resourceVersion"]) == (
        fakeapi_cluster.ready_revision + 1, "mine", str(fakeapi_cluster.ready_revision + 1))
    mine.object["metadata"]["name"] = "changed"
    assert fakeapi_cluster.events(mine.revision - 1)[0].object["metadata"]["name"] == "mine"


@pytest.mark.fakeapi(clock="real", nodes=1)
def test_a_real_clock_cluster_settles_but_does_not_advance(
        fakeapi_cluster: FakeapiCluster) -> None:
    fakeapi_cluster.settle()
    nodes = client.CoreV1Api(fakeapi_cluster.client).list_node().to_dict(serialize=True)
    assert [n["metadata"]["name"] for n in nodes["items"]] == ["worker-0"]
    with pytest.raises(RuntimeError, match=r"advance\(\) needs the virtual clock"):
        fakeapi_cluster.advance("1s")


def test_a_closed_cluster_says_it_is_not_running() -> None:
    cluster = FakeapiCluster(ClusterSettings(nodes=0)).start()
    cluster.close()
    cluster.close()  # twice is harmless
    for use in (lambda: cluster.url, cluster.settle, cluster.events):
        with pytest.raises(RuntimeError, match="the cluster is not running"):
            use()
