"""Shared fixtures: a real `fakeapi serve` process and the real kubectl v1.37 pointed at it;
shared test data: a claim manifest and upstream's name and label syntax messages."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypedDict, Unpack

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
#: The 1.37 gates off by default that the seed examples use (RPSR, PodGroup claims, list and
#: derived attributes, partition types).
SEED_GATES = ("DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true,GenericWorkload=true,"
              "DRAWorkloadResourceClaims=true,DRAListTypeAttributes=true,DRADerivedAttributes=true")

# Upstream's messages for malformed names and labels, spelled out independently of
# fakeapi.machinery.names so that the tests check its output against upstream's text.
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
KEY_NAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def claim_manifest(name: str, **metadata: Any) -> str:
    """A ResourceClaim for one device of class gpu.example.com, as YAML for `kubectl -f -`;
    `metadata` adds fields (namespace, labels) next to the name."""
    return yaml.safe_dump({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, **metadata},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
    }, sort_keys=False)


KUBECTL_INSTALLED = ROOT / ".cache" / "kubectl" / "kubectl"
"""Where scripts/install_kubectl.py puts kubectl v1.37."""


def kubectl_path() -> str | None:
    """The kubectl to test with: $KUBECTL (a path, or a command on PATH), else the project's
    installed copy; None when that is not an executable file."""
    wanted = os.environ.get("KUBECTL") or str(KUBECTL_INSTALLED)
    found = wanted if os.sep in wanted else shutil.which(wanted)
    if found is None or not Path(found).is_file() or not os.access(found, os.X_OK):
        return None
    return found


def in_ci() -> bool:
    """Whether the tests run under CI: $CI set to anything but empty, 0, false or no."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_kubectl() -> str:
    """The kubectl v1.37 binary. Without it the test is skipped locally, and fails under CI
    (a CI run must never pass by skipping the tests that drive the real kubectl)."""
    binary = kubectl_path()
    if binary is None:
        where = os.environ.get("KUBECTL") or str(KUBECTL_INSTALLED)
        message = f"kubectl not found at {where}: run scripts/install_kubectl.py or set KUBECTL"
        if in_ci():
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return binary


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    """The kubectl v1.37 binary (skip locally, fail under CI, when it is missing)."""
    return require_kubectl()


class LineReader:
    """Reads a child process's output lines on a thread, so that a test can wait for the line
    it expects (with a deadline) instead of sleeping for a fixed time."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._eof = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def wait_for(self, done: Callable[[list[str]], bool], timeout: float = 30) -> list[str]:
        """Block until `done(lines so far)` holds; fail at the deadline or at end of output."""
        with self._changed:
            self._changed.wait_for(lambda: done(self.lines) or self._eof, timeout)
            if not done(self.lines):
                state = "output ended" if self._eof else f"nothing after {timeout} s"
                raise AssertionError(f"{state}; lines so far: {self.lines}")
            return list(self.lines)

    def rest(self, timeout: float = 30) -> list[str]:
        """Every line, once the output has ended (the process has exited or closed it)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), f"output still open after {timeout} s"
        return list(self.lines)


@dataclasses.dataclass
class ServerProcess:
    """A running `fakeapi serve` child process."""

    proc: subprocess.Popen[str]
    url: str
    kubeconfig: Path
    data_dir: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        """Signal the server and wait for it to exit; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)


def start_server(data_dir: Path, *extra: str, http: bool = False) -> ServerProcess:
    """Start a server on a free loopback port and wait for its ready line."""
    args = [sys.executable, "-m", "fakeapi.cli", "serve", "--port", "0", "--data-dir",
            str(data_dir), *extra]
    if http:
        args.append("--http")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    if not line.startswith("fakeapi ready at "):
        proc.kill()
        raise RuntimeError(f"server failed to start: {line}{proc.stderr.read()}")
    url, _, kubeconfig = line.removeprefix("fakeapi ready at ").strip().partition(" kubeconfig=")
    return ServerProcess(proc, url, Path(kubeconfig), data_dir)


class RunOptions(TypedDict, total=False):
    """The keyword options of `Kubectl.run` (for the calls that pass them on)."""

    input: str | None
    check: bool
    env: dict[str, str] | None
    timeout: float


@dataclasses.dataclass
class Kubectl:
    """Runs the real kubectl binary against one server."""

    binary: str
    kubeconfig: Path

    def run(self, *args: str, input: str | None = None, check: bool = True,
            env: dict[str, str] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run kubectl; with check=True a non-zero exit fails the test with its stderr."""
        full_env = {**os.environ, "KUBECONFIG": str(self.kubeconfig), **(env or {})}
        res = subprocess.run([self.binary, *args], input=input, capture_output=True, text=True,
                             env=full_env, timeout=timeout)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n"
                                 f"{res.stdout}\n{res.stderr}")
        return res

    def __call__(self, *args: str, **options: Unpack[RunOptions]) -> str:
        """Run kubectl and return its stdout."""
        return self.run(*args, **options).stdout


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
