"""Shared fixtures: a real `fakeapi serve` process and the real kubectl v1.37 pointed at it;
shared test data: a claim manifest and upstream's name and label syntax messages."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
#: The 1.37 gates off by default that the seed examples use (RPSR, PodGroup claims, list and
#: derived attributes, partition types).
SEED_GATES = ("DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true,GenericWorkload=true,"
              "DRAWorkloadResourceClaims=true,DRAListTypeAttributes=true,DRADerivedAttributes=true")

# Upstream's messages for malformed names and labels, spelled out independently of
# fakeapi.names so that the tests check its output against upstream's text.
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


def kubectl_path() -> str | None:
    """KUBECTL from the environment, else the project's installed copy."""
    candidate = os.environ.get("KUBECTL") or str(ROOT / ".cache" / "kubectl" / "kubectl")
    return candidate if Path(candidate).exists() else None


def require_kubectl() -> str:
    """The kubectl v1.37 binary; without it the test is skipped (failed on CI)."""
    binary = kubectl_path()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl v1.37 is not installed: run scripts/install_kubectl.py")
        pytest.skip("kubectl v1.37 not installed (scripts/install_kubectl.py)")
    return binary


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
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("fakeapi ready at "):
        proc.kill()
        raise RuntimeError(f"server failed to start: {line}{proc.stderr.read()}")
    url, _, kubeconfig = line.removeprefix("fakeapi ready at ").strip().partition(" kubeconfig=")
    return ServerProcess(proc, url, Path(kubeconfig), data_dir)


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

    def __call__(self, *args: str, **kw: object) -> str:
        """Run kubectl and return its stdout."""
        return self.run(*args, **kw).stdout  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One HTTPS server process for the session, with the gates the seed examples need."""
    srv = start_server(tmp_path_factory.mktemp("fakeapi-data"), "--feature-gates", SEED_GATES)
    yield srv
    assert srv.stop() == 0


@pytest.fixture(scope="session")
def kubectl(server: ServerProcess) -> Kubectl:
    """The real kubectl v1.37 talking to the session server."""
    binary = require_kubectl()
    assert shutil.which(binary) or Path(binary).exists()
    return Kubectl(binary, server.kubeconfig)
