"""The components seen by the real kubectl v1.37: `--components`, `/readyz?verbose`,
`/metrics`, and a namespace deleted through kubectl that the controllers finish."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.kubectl import Kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.waiting import poll


@pytest.fixture(scope="module")
def only_namespaces(tmp_path_factory: pytest.TempPathFactory,
                    kubectl_binary: str) -> Iterator[tuple[ServerProcess, Kubectl]]:
    """A server running every default component but the garbage collector."""
    srv = start_server(tmp_path_factory.mktemp("components"), "--components",
                       "*,-garbage-collector")
    yield srv, Kubectl(kubectl_binary, srv.kubeconfig)
    assert srv.stop() == 0


def ready_lines(kubectl: Kubectl, timeout: float = 20) -> list[str]:
    """`/readyz?verbose` once every check passes (components sync right after start)."""
    res = poll(lambda: kubectl.run("get", "--raw", "/readyz?verbose", check=False),
               until=lambda res: res.returncode == 0, timeout=timeout,
               what="/readyz passing every check")
    return res.stdout.splitlines()


def test_readyz_lists_the_selected_components(
        only_namespaces: tuple[ServerProcess, Kubectl]) -> None:
    _, kubectl = only_namespaces
    lines = ready_lines(kubectl)
    assert lines[0] == "[+]ping ok" and lines[-1] == "readyz check passed"
    assert "[+]namespace-controller ok" in lines
    assert "[+]informer:namespaces ok" in lines
    assert not [line for line in lines if "garbage-collector" in line]
    assert kubectl("get", "--raw", "/readyz/namespace-controller") == "ok"
    missing = kubectl.run("get", "--raw", "/readyz/garbage-collector", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_metrics_count_component_crashes(
        only_namespaces: tuple[ServerProcess, Kubectl]) -> None:
    _, kubectl = only_namespaces
    ready_lines(kubectl)
    metrics = kubectl("get", "--raw", "/metrics")
    assert 'fakeapi_component_crashes_total{component="namespace-controller"} 0' in metrics
    assert 'fakeapi_component_ready{component="namespace-controller"} 1' in metrics


def test_kubectl_delete_namespace_waits_until_the_controller_has_emptied_it(
        only_namespaces: tuple[ServerProcess, Kubectl], tmp_path: Path) -> None:
    _, kubectl = only_namespaces
    kubectl("create", "namespace", "team")
    kubectl("create", "configmap", "settings", "-n", "team", "--from-literal=a=b")
    kubectl("run", "worker", "-n", "team", "--image=busybox")
    # kubectl waits for the namespace to be gone (--wait is the default)
    assert kubectl("delete", "namespace", "team", "--timeout=30s").strip() == \
        'namespace "team" deleted'
    gone = kubectl.run("get", "namespace", "team", check=False)
    assert gone.returncode == 1 and 'namespaces "team" not found' in gone.stderr


def test_an_unknown_component_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="'nope' not in the list of known components"):
        start_server(tmp_path, "--components", "nope")
