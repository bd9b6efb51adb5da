"""Session fixtures: a real `fakeapi serve` process and the real kubectl v1.37 pointed at it
(what they stand on is in `tests.support`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.support.kubectl import Kubectl, require_kubectl
from tests.support.processes import ServerProcess, start_server
from tests.support.seeds import SEED_GATES


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    """The kubectl v1.37 binary (skip locally, fail under CI, when it is missing)."""
    return require_kubectl()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One HTTPS server process for the session, with the gates the seed examples need and
    no emulated kubelets (their drivers would take over the seeds' slices of their pools, as a
    real driver's controller does, and they would adopt the nodes API tests create)."""
    srv = start_server(tmp_path_factory.mktemp("fakeapi-data"), "--feature-gates", SEED_GATES,
                       "--nodes", "0", "--no-adopt-nodes")
    yield srv
    assert srv.stop() == 0


@pytest.fixture(scope="session")
def kubectl(kubectl_binary: str, server: ServerProcess) -> Kubectl:
    """The real kubectl v1.37 talking to the session server."""
    return Kubectl(kubectl_binary, server.kubeconfig)


@pytest.fixture
def fresh_namespace(kubectl: Kubectl) -> Iterator[str]:
    """A namespace of its own for one test on the session server, deleted afterwards."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false")
