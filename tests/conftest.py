"""Shared fixtures: a real `fakeapi serve` process and the real kubectl v1.37 pointed at it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The 1.37 gates off by default that the seed examples use (RPSR, PodGroup claims, list and
#: derived attributes, partition types).
SEED_GATES = ("DRAResourcePoolStatus=true,DRAPartitionableDevicesType=true,GenericWorkload=true,"
              "DRAWorkloadResourceClaims=true,DRAListTypeAttributes=true,DRADerivedAttributes=true")


def kubectl_path() -> str | None:
    """KUBECTL from the environment, else the project's installed copy."""
    candidate = os.environ.get("KUBECTL") or str(ROOT / ".cache" / "kubectl" / "kubectl")
    return candidate if Path(candidate).exists() else None


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
    binary = kubectl_path()
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl v1.37 is not installed: run scripts/install_kubectl.py")
        pytest.skip("kubectl v1.37 not installed (scripts/install_kubectl.py)")
    assert shutil.which(binary) or Path(binary).exists()
    return Kubectl(binary, server.kubeconfig)
