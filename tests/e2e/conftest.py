"""Fixtures of the `fakeapi emulate` tests: an API-only server per module and emulate
processes against it."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.processes import EmulateProcess, ServerProcess, start_emulate, start_server


@pytest.fixture(scope="module")
def api_only() -> Iterator[ServerProcess]:
    """The API-only server (short data dir: the nodes' sockets live under emulate's)."""
    data = Path(tempfile.mkdtemp(prefix="fa-", dir="/tmp"))
    server = start_server(data / "srv", "--components", "none", "--nodes", "0")
    yield server
    assert server.stop() == 0
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture
def emulate(api_only: ServerProcess) -> Iterator[Callable[..., EmulateProcess]]:
    """Starts emulate processes against the server; stops them all afterwards."""
    started: list[EmulateProcess] = []

    def start(*args: str) -> EmulateProcess:
        data = Path(tempfile.mkdtemp(prefix="em", dir=api_only.data_dir.parent))
        proc = start_emulate(api_only.kubeconfig, data, *args)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()
